import type { PtyProviderBufferSnapshot } from '../contracts/index.js'
import type { HeadlessScreenFactory } from './headless-screen.js'
import { ScreenCursor, type ScreenRing, type ScreenScheduler } from './screen-cursor.js'

/** How many raw output chars a session keeps for replay by default (1 Mi chars). */
export const PTY_HOST_DEFAULT_HISTORY_CHARS = 1024 * 1024

/** Scrollback rows the headless screen keeps by default. */
export const PTY_HOST_DEFAULT_SCROLLBACK_ROWS = 1_000

/** Compact the ring's chunk array once this many evicted slots lead it (and they are most of it). */
const COMPACT_AFTER_EVICTED_CHUNKS = 64

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
 * A snapshot of a session's screen as the host answers it: the contract's fields, and how many
 * output chars the screen never parsed because the ring dropped them before it got to them.
 */
export type PtyHostBufferSnapshot = PtyProviderBufferSnapshot & {
  /**
   * Output chars the headless screen skipped since the spawn: a flood faster than the screen's
   * parse budget and longer than the history. `0`: the screen is exactly the whole stream's. Above
   * 0: it shows the last `historyChars` of output applied on the state before the skip.
   */
  skippedChars: number
}

/**
 * One session's history in the host: the absolute output sequence (raw chars produced so far), a
 * bounded ring of the latest raw output for replay, and a headless screen that parses the ring
 * behind the stream (a {@link ScreenCursor}, fed by the host's screen scheduler).
 *
 * `append` is the output hot path: it stores the chunk (no copy), evicts past the limit, and
 * tells the cursor. Nothing is parsed there.
 */
export class SessionHistory implements ScreenRing {
  /** Absolute count of raw output chars produced so far. */
  seq = 0
  readonly #limitChars: number
  /** The retained chunks are `#chunks[#head…]`; the first may be a trimmed tail of a chunk. */
  #chunks: string[] = []
  #head = 0
  #retained = 0
  readonly #screen: ScreenCursor

  /**
   * Start a history for a screen of `cols` × `rows`, opened from `screens`, its background parsing
   * scheduled by `scheduler`.
   */
  constructor(screens: HeadlessScreenFactory, scheduler: ScreenScheduler, options: { cols: number; rows: number; limitChars: number; scrollbackRows: number }) {
    this.#limitChars = options.limitChars
    this.#screen = new ScreenCursor(this, screens({ cols: options.cols, rows: options.rows, scrollbackRows: options.scrollbackRows }), scheduler)
  }

  /** The oldest sequence still kept. */
  get retainedFrom(): number {
    return this.seq - this.#retained
  }

  /** The session's screen: its parse position and skip count. */
  get screen(): ScreenCursor {
    return this.#screen
  }

  /** Record output; returns the new sequence (the end of this chunk). */
  append(data: string): number {
    if (data.length === 0) return this.seq
    this.#chunks.push(data)
    this.seq += data.length
    this.#retained += data.length
    if (this.#retained > this.#limitChars) this.#evict()
    this.#screen.noteOutput()
    return this.seq
  }

  /** Drop the oldest output until the ring holds at most the limit. */
  #evict(): void {
    const chunks = this.#chunks
    while (this.#retained - chunks[this.#head]!.length >= this.#limitChars && this.#head < chunks.length - 1) {
      this.#retained -= chunks[this.#head]!.length
      chunks[this.#head] = ''
      this.#head += 1
    }
    if (this.#retained > this.#limitChars) {
      // Trim the oldest chunk itself, so the ring never holds more than the limit.
      const drop = this.#retained - this.#limitChars
      chunks[this.#head] = chunks[this.#head]!.slice(drop)
      this.#retained -= drop
    }
    if (this.#head > COMPACT_AFTER_EVICTED_CHUNKS && this.#head * 2 > chunks.length) {
      this.#chunks = chunks.slice(this.#head)
      this.#head = 0
    }
  }

  /** The retained output from `fromSeq` (clamped to what is retained), at most `maxChars` of it. */
  read(fromSeq: number, maxChars: number): string {
    const chunks = this.#chunks
    let from = Math.max(fromSeq, this.retainedFrom)
    const end = Math.min(this.seq, from + maxChars)
    if (end <= from) return ''
    const parts: string[] = []
    let start = this.retainedFrom
    for (let index = this.#head; index < chunks.length && start < end; index++) {
      const chunk = chunks[index]!
      const chunkEnd = start + chunk.length
      if (chunkEnd > from) {
        parts.push(start >= from && chunkEnd <= end ? chunk : chunk.slice(from - start, end - start))
        from = Math.min(chunkEnd, end)
      }
      start = chunkEnd
    }
    return parts.length === 1 ? parts[0]! : parts.join('')
  }

  /** The output from `fromSeq` on (`null`: everything retained), and what fell out of the ring. */
  replay(fromSeq: number | null): HistoryReplay {
    const retainedFrom = this.retainedFrom
    const asked = fromSeq === null ? retainedFrom : Math.min(fromSeq, this.seq)
    const replayFrom = Math.max(asked, retainedFrom)
    return { replayFrom, lostChars: replayFrom - asked, data: this.read(replayFrom, Infinity) }
  }

  /** Follow a resize of the PTY. */
  resize(cols: number, rows: number): void {
    this.#screen.resize(cols, rows)
  }

  /** Clear the screen's scrollback (the replay ring is kept: it is the raw stream). */
  clear(): void {
    this.#screen.clear()
  }

  /**
   * The screen at the current sequence: the screen parses everything the ring holds past its
   * cursor first, and serializes after that, so the snapshot is exactly the screen at `seq`.
   */
  async snapshot(scrollbackRows: number | undefined): Promise<PtyHostBufferSnapshot> {
    const screen = await this.#screen.snapshot(scrollbackRows)
    const snapshot: PtyHostBufferSnapshot = { data: screen.data, cols: screen.cols, rows: screen.rows, seq: screen.seq, source: 'headless', skippedChars: screen.skippedChars }
    if (screen.lastTitle !== undefined) snapshot.lastTitle = screen.lastTitle
    return snapshot
  }

  /** Release the headless terminal and the ring. */
  dispose(): void {
    this.#screen.dispose()
    this.#chunks = []
    this.#head = 0
    this.#retained = 0
  }
}
