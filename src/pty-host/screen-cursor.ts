import type { HeadlessScreen, ScreenSnapshot } from './headless-screen.js'

/**
 * The cancel control (CAN, `\x18`): in every parser state xterm's VT500 parser executes it and
 * returns to the ground state, so an escape sequence (CSI, OSC, DCS…) cut by a skip is dropped
 * instead of swallowing the output after it. It changes no mode, no attribute and no cell.
 */
export const SCREEN_SKIP_CANCEL = '\x18'

/** What a screen cursor reads: the session's replay ring. */
export type ScreenRing = {
  /** The sequence at the end of the output so far. */
  readonly seq: number
  /** The oldest sequence the ring still holds. */
  readonly retainedFrom: number
  /** The most output chars the ring holds. */
  readonly limitChars: number
  /** The retained output from `fromSeq` (≥ `retainedFrom`), at most `maxChars` of it. */
  read(fromSeq: number, maxChars: number): string
  /** How many line feeds (LF, VT, FF) the retained output from `fromSeq` on holds, counting no further than `most`. */
  lineFeedsFrom(fromSeq: number, most: number): number
}

/** Who hands a cursor its background work (the host's {@link ScreenFeeder}). */
export type ScreenScheduler = {
  /** `cursor` has output to parse: feed it on the scheduler's next turn. */
  schedule(cursor: ScreenCursor): void
  /** `cursor` is gone: never feed it again. */
  forget(cursor: ScreenCursor): void
}

/**
 * A session's headless screen as a cursor over its replay ring. The ring holds the output; the
 * screen parses it *behind* the stream, only when told to ({@link feed} by the host's budget,
 * {@link catchUp} when the session is idle and before a snapshot, resize or clear), so parsing never
 * runs on the output's hot path and never holds the producer.
 *
 * `seq` is the ring sequence handed to the screen so far: never ahead of the ring's end, never behind
 * its oldest retained output. When the ring evicts output the screen has not reached (a flood faster
 * than the budget and longer than the ring), the cursor skips to the oldest retained output, counts
 * the skipped chars in `skippedChars`, and cancels any escape sequence the skip cut (CAN) before
 * its next write; the terminal keeps its modes. The screen then shows the last retained output
 * applied on the state before the skip.
 */
export class ScreenCursor {
  readonly #ring: ScreenRing
  readonly #screen: HeadlessScreen
  readonly #scheduler: ScreenScheduler
  #seq: number
  #skippedChars = 0
  /** A skip happened since the last write: cancel what it cut before the next one. */
  #cancelBeforeNextWrite = false
  /** The scheduler holds this cursor (set by the scheduler through {@link markScheduled}). */
  #scheduled = false
  /** The ring's end when the scheduler last looked (`-1`: never). */
  #ringSeqAtLastLook = -1
  /** Consecutive looks that saw no new output. */
  #quietLooks = 0
  #disposed = false
  readonly #isProducerHeld: () => boolean

  /**
   * A cursor at the ring's current end over `screen` (a screen that has seen everything before it).
   * `isProducerHeld` says whether the session's PTY is paused by flow control now (default: never):
   * its quiet is then the consumer's backpressure, not the program going idle (see {@link quietLooks}).
   */
  constructor(ring: ScreenRing, screen: HeadlessScreen, scheduler: ScreenScheduler, isProducerHeld: () => boolean = () => false) {
    this.#ring = ring
    this.#screen = screen
    this.#scheduler = scheduler
    this.#seq = ring.seq
    this.#isProducerHeld = isProducerHeld
  }

  /** The ring sequence handed to the screen so far (a snapshot's `seq`). */
  get seq(): number {
    return this.#seq
  }

  /** Output chars the screen never parsed because the ring dropped them first, since the cursor began. */
  get skippedChars(): number {
    return this.#skippedChars
  }

  /** Output in the ring the screen has not been handed yet. */
  get pendingChars(): number {
    return this.#ring.seq - this.#seq
  }

  /**
   * The output outruns the screen: more than half the ring is pending. Parsing from the budget
   * then is wasted: the output keeps coming faster than the budget, the ring evicts what the screen
   * has not reached, and the screen skips it anyway — what it parsed just before a skip is as good
   * as lost. So the scheduler leaves an outpaced screen alone until the session is idle (or a
   * snapshot, resize or clear needs it), when it parses the ring whole.
   */
  get outpaced(): boolean {
    return this.pendingChars > this.#ring.limitChars / 2
  }

  /**
   * The ring took output (and may have evicted some). Runs per output chunk: one comparison, and
   * a scheduling call only when the cursor is not yet scheduled.
   */
  noteOutput(): void {
    if (this.#disposed) return
    const retainedFrom = this.#ring.retainedFrom
    if (this.#seq < retainedFrom) {
      this.#skippedChars += retainedFrom - this.#seq
      this.#seq = retainedFrom
      this.#cancelBeforeNextWrite = true
    }
    if (!this.#scheduled) this.#scheduler.schedule(this)
  }

  /** Scheduler bookkeeping: whether the scheduler holds this cursor. */
  markScheduled(scheduled: boolean): void {
    this.#scheduled = scheduled
  }

  /**
   * Whether flow control holds the session's PTY now (an app that does not keep up): its output
   * has stopped until the app acknowledges, so the scheduler uses the pause to parse (in slices).
   */
  get producerHeld(): boolean {
    return this.#isProducerHeld()
  }

  /**
   * Scheduler bookkeeping, once per look: how many looks in a row (this one included) saw no new
   * output since the previous one. The scheduler calls the session idle past a few.
   *
   * A look while the producer is held never counts as quiet, and the count starts again after the
   * hold. Why: a flood held for the app's acknowledgements is not idle — it goes on the moment the
   * app catches up — so the hold must not end in a whole-ring parse (~40 ms of the host's event
   * loop, measured) just as the next burst arrives; the scheduler parses a held screen in slices
   * instead (the host's screen feeder).
   */
  quietLooks(): number {
    const seq = this.#ring.seq
    this.#quietLooks = this.#ringSeqAtLastLook === seq && !this.#isProducerHeld() ? this.#quietLooks + 1 : 0
    this.#ringSeqAtLastLook = seq
    return this.#quietLooks
  }

  /** Hand the screen up to `maxChars` of the pending output; returns how many chars were handed. */
  feed(maxChars: number): number {
    if (this.#disposed) return 0
    const chars = Math.min(maxChars, this.pendingChars)
    if (chars <= 0) return 0
    const data = this.#ring.read(this.#seq, chars)
    this.#seq += data.length
    if (this.#cancelBeforeNextWrite) {
      this.#cancelBeforeNextWrite = false
      this.#screen.write(SCREEN_SKIP_CANCEL + data)
    } else this.#screen.write(data)
    return data.length
  }

  /** Hand the screen everything pending. */
  catchUp(): void {
    this.feed(Infinity)
  }

  /**
   * The screen at the ring's current end: everything pending is handed first, and the screen
   * serializes once it parsed all it was handed, so `data` is exactly the screen after `seq`.
   */
  async snapshot(scrollbackRows: number | undefined): Promise<ScreenSnapshot & { seq: number; skippedChars: number }> {
    this.catchUp()
    const seq = this.#seq
    const skippedChars = this.#skippedChars
    const screen = await this.#screen.snapshot(scrollbackRows)
    return { ...screen, seq, skippedChars }
  }

  /** Follow a resize of the PTY, after the output that came before it. */
  resize(cols: number, rows: number): void {
    this.catchUp()
    this.#screen.resize(cols, rows)
  }

  /** Clear the screen's scrollback, after the output that came before it. */
  clear(): void {
    this.catchUp()
    this.#screen.clear()
  }

  /**
   * An estimate of the memory the screen holds, counting the lines the output not parsed yet may
   * still add: its line feeds, and a wrap every `cols` chars. 0 once disposed.
   */
  heldBytes(): number {
    if (this.#disposed) return 0
    const pending = this.pendingChars
    return this.#screen.heldBytes({ lineFeeds: pending === 0 ? 0 : this.#ring.lineFeedsFrom(this.#seq, pending), chars: pending })
  }

  /** Release the screen and leave the scheduler. */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    this.#scheduler.forget(this)
    this.#screen.dispose()
  }
}
