import type { PtyProviderBufferSnapshot } from '../contracts/index.js'

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

/** The slice of `@xterm/headless` a session uses. */
type HeadlessTerminal = {
  readonly cols: number
  readonly rows: number
  write(data: string, callback?: () => void): void
  resize(cols: number, rows: number): void
  clear(): void
  loadAddon(addon: unknown): void
  onTitleChange(listener: (title: string) => void): unknown
  dispose(): void
}

/** The slice of `@xterm/addon-serialize` a session uses. */
type SerializeAddonLike = { serialize(options?: { scrollback?: number }): string }

/** The two constructors, loaded once per host (only the host ever loads them). */
export type HeadlessXtermModules = {
  /** `Terminal` of `@xterm/headless`. */
  Terminal: new (options: Record<string, unknown>) => HeadlessTerminal
  /** `SerializeAddon` of `@xterm/addon-serialize`. */
  SerializeAddon: new () => SerializeAddonLike
}

/** Load `@xterm/headless` and `@xterm/addon-serialize` (CommonJS packages, so through their default export). */
export async function loadHeadlessXterm(): Promise<HeadlessXtermModules> {
  const [headless, serialize] = await Promise.all([import('@xterm/headless'), import('@xterm/addon-serialize')])
  const pick = <T>(module: unknown, name: string): T => {
    const direct = (module as Record<string, unknown>)[name]
    return (direct ?? ((module as { default?: Record<string, unknown> }).default ?? {})[name]) as T
  }
  return {
    Terminal: pick(headless, 'Terminal'),
    SerializeAddon: pick(serialize, 'SerializeAddon'),
  }
}

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
 * bounded ring of the latest raw output for replay, and a headless terminal fed the same stream
 * for screen snapshots.
 */
export class SessionHistory {
  /** Absolute count of raw output chars produced so far. */
  seq = 0
  readonly #limitChars: number
  #chunks: { start: number; data: string }[] = []
  #head = 0
  #retained = 0
  readonly #terminal: HeadlessTerminal
  readonly #serializer: SerializeAddonLike
  #lastTitle: string | undefined
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
    this.#terminal.write(data)
  }

  /** Start a history for a screen of `cols` × `rows`. */
  constructor(xterm: HeadlessXtermModules, options: { cols: number; rows: number; limitChars: number; scrollbackRows: number }) {
    this.#limitChars = options.limitChars
    this.#terminal = new xterm.Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollbackRows,
      allowProposedApi: true,
    })
    this.#serializer = new xterm.SerializeAddon()
    this.#terminal.loadAddon(this.#serializer)
    this.#terminal.onTitleChange((title) => {
      this.#lastTitle = title
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
    this.#terminal.resize(cols, rows)
  }

  /** Clear the screen's scrollback (the replay ring is kept: it is the raw stream). */
  clear(): void {
    this.#feed()
    this.#terminal.clear()
  }

  /**
   * The screen at the current sequence. Why through a write callback: xterm parses asynchronously;
   * the callback of an empty write runs once everything written before it was parsed, and the
   * serialization runs in that same callback, so the screen is exactly the one at `seq`.
   */
  snapshot(scrollbackRows: number | undefined): Promise<PtyProviderBufferSnapshot> {
    const seq = this.seq
    this.#feed()
    return new Promise((resolve, reject) => {
      this.#terminal.write('', () => {
        try {
          const snapshot: PtyProviderBufferSnapshot = {
            data: this.#serializer.serialize(scrollbackRows === undefined ? {} : { scrollback: scrollbackRows }),
            cols: this.#terminal.cols,
            rows: this.#terminal.rows,
            seq,
            source: 'headless',
          }
          if (this.#lastTitle !== undefined) snapshot.lastTitle = this.#lastTitle
          resolve(snapshot)
        } catch (error) {
          reject(error)
        }
      })
    })
  }

  /** Release the headless terminal. */
  dispose(): void {
    clearTimeout(this.#feedTimer)
    this.#unfed = []
    this.#unfedChars = 0
    this.#terminal.dispose()
    this.#chunks = []
    this.#head = 0
    this.#retained = 0
  }
}
