import type { PtyProviderBufferSnapshot } from '../contracts/index.js'
import type { HeadlessScreen, HeadlessScreenFactory } from './headless-screen.js'

/** How many raw output chars a session keeps for replay by default (1 Mi chars). */
export const PTY_HOST_DEFAULT_HISTORY_CHARS = 1024 * 1024

/** Scrollback rows the headless screen keeps by default. */
export const PTY_HOST_DEFAULT_SCROLLBACK_ROWS = 1_000

/**
 * Output waits this long (or until {@link SCREEN_FEED_CHARS} chars are waiting) before it is fed to
 * the headless screen: a flood of small reads is parsed in few large writes (xterm's cost per
 * write call is large next to its cost per char). A snapshot feeds what waits first.
 */
const SCREEN_FEED_DELAY_MS = 5

/** Feed the headless screen at once past this many waiting chars. */
const SCREEN_FEED_CHARS = 256 * 1024

/** What a replay request gets: the output from `replayFrom` on, and how much had fallen out of the ring. */
export type HistoryReplay = {
  /** The absolute sequence the replayed data starts at. */
  replayFrom: number
  /** Chars between the asked sequence and `replayFrom` that are no longer kept (0 when none). */
  lostChars: number
  /** The retained output from `replayFrom` to the current sequence. */
  data: string
}

/**
 * One session's history in the host: the absolute output sequence (raw chars produced so far), a
 * bounded ring of the latest raw output for replay, and a headless screen fed the same stream for
 * snapshots.
 */
export class SessionHistory {
  /** Absolute count of raw output chars produced so far. */
  seq = 0
  readonly #limitChars: number
  #chunks: { start: number; data: string }[] = []
  #head = 0
  #retained = 0
  readonly #screen: HeadlessScreen
  /** Chars handed to the screen, and chars it reported parsed: their difference is its lag. */
  #screenFed = 0
  #screenParsed = 0
  readonly #onScreenLag: ((lagChars: number) => void) | undefined
  /** Output not yet fed to the headless screen, and how many chars it holds. */
  #unfed: string[] = []
  #unfedChars = 0
  #feedTimer: NodeJS.Timeout | undefined
  readonly #feed = (): void => {
    clearTimeout(this.#feedTimer)
    this.#feedTimer = undefined
    if (this.#unfedChars === 0) return
    const data = this.#unfed.length === 1 ? this.#unfed[0]! : this.#unfed.join('')
    this.#unfed = []
    this.#unfedChars = 0
    this.#screen.write(data)
    this.#screenFed += data.length
    this.#onScreenLag?.(this.#screenFed - this.#screenParsed)
  }

  /**
   * Start a history for a screen of `cols` × `rows`, opened from `screens`. `onScreenLag` hears
   * how many chars the screen has been given and not yet parsed (the host pauses a PTY whose
   * screen falls too far behind).
   */
  constructor(
    screens: HeadlessScreenFactory,
    options: { cols: number; rows: number; limitChars: number; scrollbackRows: number; onScreenLag?: (lagChars: number) => void },
  ) {
    this.#limitChars = options.limitChars
    this.#onScreenLag = options.onScreenLag
    this.#screen = screens({ cols: options.cols, rows: options.rows, scrollbackRows: options.scrollbackRows }, (chars) => {
      this.#screenParsed += chars
      this.#onScreenLag?.(this.#screenFed - this.#screenParsed)
    })
  }

  /** The oldest sequence still kept. */
  get retainedFrom(): number {
    return this.seq - this.#retained
  }

  /** Record output; returns the new sequence (the end of this chunk). */
  append(data: string): number {
    if (data.length === 0) return this.seq
    this.#chunks.push({ start: this.seq, data })
    this.seq += data.length
    this.#retained += data.length
    this.#unfed.push(data)
    this.#unfedChars += data.length
    if (this.#unfedChars >= SCREEN_FEED_CHARS) this.#feed()
    else if (this.#feedTimer === undefined) this.#feedTimer = setTimeout(this.#feed, SCREEN_FEED_DELAY_MS)
    while (this.#retained - this.#chunks[this.#head]!.data.length >= this.#limitChars && this.#head < this.#chunks.length - 1) {
      this.#retained -= this.#chunks[this.#head]!.data.length
      this.#head += 1
    }
    if (this.#retained > this.#limitChars) {
      // Trim the oldest chunk itself, so the ring never holds more than the limit.
      const oldest = this.#chunks[this.#head]!
      const drop = this.#retained - this.#limitChars
      this.#chunks[this.#head] = { start: oldest.start + drop, data: oldest.data.slice(drop) }
      this.#retained -= drop
    }
    if (this.#head > 64 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head)
      this.#head = 0
    }
    return this.seq
  }

  /** The output from `fromSeq` on (`null`: everything retained), and what fell out of the ring. */
  replay(fromSeq: number | null): HistoryReplay {
    const retainedFrom = this.retainedFrom
    const asked = fromSeq === null ? retainedFrom : Math.min(fromSeq, this.seq)
    const replayFrom = Math.max(asked, retainedFrom)
    const parts: string[] = []
    for (let index = this.#head; index < this.#chunks.length; index++) {
      const chunk = this.#chunks[index]!
      const end = chunk.start + chunk.data.length
      if (end <= replayFrom) continue
      parts.push(chunk.start >= replayFrom ? chunk.data : chunk.data.slice(replayFrom - chunk.start))
    }
    return { replayFrom, lostChars: replayFrom - asked, data: parts.join('') }
  }

  /** Follow a resize of the PTY. */
  resize(cols: number, rows: number): void {
    this.#feed()
    this.#screen.resize(cols, rows)
  }

  /** Clear the screen's scrollback (the replay ring is kept: it is the raw stream). */
  clear(): void {
    this.#feed()
    this.#screen.clear()
  }

  /**
   * The screen at the current sequence: what waits is fed first, and the screen serializes after
   * parsing everything it was given, so the snapshot is exactly the screen at `seq`.
   */
  async snapshot(scrollbackRows: number | undefined): Promise<PtyProviderBufferSnapshot> {
    const seq = this.seq
    this.#feed()
    const screen = await this.#screen.snapshot(scrollbackRows)
    const snapshot: PtyProviderBufferSnapshot = { data: screen.data, cols: screen.cols, rows: screen.rows, seq, source: 'headless' }
    if (screen.lastTitle !== undefined) snapshot.lastTitle = screen.lastTitle
    return snapshot
  }

  /** Release the headless terminal. */
  dispose(): void {
    clearTimeout(this.#feedTimer)
    this.#unfed = []
    this.#unfedChars = 0
    this.#screen.dispose()
    this.#chunks = []
    this.#head = 0
    this.#retained = 0
  }
}
