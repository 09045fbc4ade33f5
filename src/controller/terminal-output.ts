import type { PtyControllerDataEvent } from './events.js'
import { describeValue } from './argument-validation.js'
import { PtyControllerError } from './pty-controller-error.js'
import { onAbortShared } from './abort.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/**
 * The most output chars one `output()` iterator keeps queued for its consumer (yielded chunks not
 * counted) before it is ended as overrun, by default: 8 Mi chars, 80 times flow control's default
 * high watermark (with a higher `flowControl.highWatermarkChars`, 80 times that), so an iterator
 * that flow control paces never comes near it. What it bounds is an iterator that is not paced:
 * opened and never pulled (or dropped without `return()`), or whose consumer stalled, once flow
 * control forgave it (`flowControl.pauseMaxHoldMs`); or one read more slowly than the program
 * writes with flow control off, or beside a faster consumer that acknowledges for itself — each of
 * which would otherwise queue a flooding program's output without bound.
 */
export const OUTPUT_ITERATOR_MAX_QUEUED_CHARS = 8 * 1024 * 1024

/**
 * How many high watermarks an iterator's default bound holds: far above what a paced iterator
 * queues (one watermark, plus what was in flight when the producer paused).
 */
const QUEUE_BOUND_HIGH_WATERMARKS = 80

/** The default `maxQueuedChars` of a controller's iterators, given its flow-control settings. */
export function defaultOutputQueueBound(flowControl: { highWatermarkChars: number } | null): number {
  if (flowControl === null) return OUTPUT_ITERATOR_MAX_QUEUED_CHARS
  return Math.max(OUTPUT_ITERATOR_MAX_QUEUED_CHARS, QUEUE_BOUND_HIGH_WATERMARKS * flowControl.highWatermarkChars)
}

/** Options of `PtyTerminal.output()`. */
export type PtyTerminalOutputOptions = {
  /** Ends the iteration (and releases its hold on flow control) when aborted. */
  signal?: AbortSignal | undefined
  /**
   * The most chars this iterator keeps queued for its consumer: once the output it has not pulled
   * yet passes this, it drops that output (acknowledging it), leaves the terminal, and its next
   * pull rejects with a `PtyControllerError` of code `output_overrun` (reported on the
   * controller's `error` event too) — never a silent gap in what it yields. A positive integer, or
   * `Infinity` for no bound. Default {@link OUTPUT_ITERATOR_MAX_QUEUED_CHARS} (8 Mi chars), or 80
   * times `flowControl.highWatermarkChars` when that is more.
   */
  maxQueuedChars?: number | undefined
}

/** Throw a `TypeError` naming the option unless it is absent, a positive integer or `Infinity`. */
export function assertMaxQueuedChars(value: unknown): void {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw argumentRefusal(`Expected the \`maxQueuedChars\` option to be a positive integer or Infinity, got ${describeValue(value)}`, 'maxQueuedChars', value)
  }
}

/**
 * One output chunk of a terminal, shared by every iterator that received it. `holders` counts the
 * iterators that have not moved past it yet; the chunk is acknowledged once, when that reaches 0.
 */
export type OutputChunk = {
  readonly event: PtyControllerDataEvent
  holders: number
  acknowledged: boolean
}

/**
 * The output of one terminal incarnation, fanned out to any number of async iterators whose pulls
 * drive flow control: an iterator holds each chunk it received until its consumer asks for the
 * next one (or stops iterating), and a chunk is acknowledged when the last iterator holding it lets
 * go. So the slowest active iterator sets the pace, and a consumer that never iterates never
 * acknowledges anything on anyone's behalf.
 *
 * Chunks delivered before anyone could subscribe (in the turn that published the spawn) can be
 * kept as a replay, given to each iterator created before the replay is dropped.
 */
export class TerminalOutputFeed {
  readonly #acknowledge: (chars: number, dropped: boolean) => void
  readonly #onLastLeft: () => void
  readonly #onOverrun: (error: PtyControllerError) => void
  readonly #cursors = new Set<OutputCursor>()
  #replay: OutputChunk[] | null = null
  #ended = false

  /**
   * Create a feed that acknowledges through `acknowledge` (`dropped`: output an overrun iterator
   * let go of unread, see `ProducerFlowControl.acknowledge`), tells `onLastLeft` when its last
   * active iterator finished, and `onOverrun` when an iterator was ended for queuing more than its
   * `maxQueuedChars` (none may throw).
   */
  constructor(
    acknowledge: (chars: number, dropped: boolean) => void,
    onLastLeft: () => void = () => undefined,
    onOverrun: (error: PtyControllerError) => void = () => undefined,
  ) {
    this.#acknowledge = acknowledge
    this.#onLastLeft = onLastLeft
    this.#onOverrun = onOverrun
  }

  /** The chunks kept for replay, oldest first (empty when none are kept). */
  replayedEvents(): readonly PtyControllerDataEvent[] {
    return this.#replay === null ? [] : this.#replay.map((chunk) => chunk.event)
  }

  /** Whether chunks are kept for replay now (a replay is kept and holds at least one). */
  holdsReplay(): boolean {
    return this.#replay !== null && this.#replay.length > 0
  }

  /** The chars a new iterator would be handed by the replay and acknowledge: those not acknowledged yet. */
  replayOwed(): number {
    let owed = 0
    if (this.#replay !== null) for (const chunk of this.#replay) if (!chunk.acknowledged) owed += chunk.event.data.length
    return owed
  }

  /** Keep the chunks pushed from now on for replay, until `dropReplay`. */
  startReplay(): void {
    this.#replay = []
  }

  /** Stop keeping a replay and forget the chunks kept so far. */
  dropReplay(): void {
    this.#replay = null
  }

  /** A chunk of output: given to every active iterator, and kept for replay if one is kept. */
  push(event: PtyControllerDataEvent): void {
    if (this.#cursors.size === 0 && this.#replay === null) return
    const chunk: OutputChunk = { event, holders: this.#cursors.size, acknowledged: false }
    this.#replay?.push(chunk)
    for (const cursor of this.#cursors) cursor.deliver(chunk)
  }

  /**
   * The output ended: every iterator finishes once it has yielded what it holds, and leaves the
   * feed now. Why now: an iterator its consumer stopped pulling (without `return()`) would
   * otherwise stay reachable from the feed, and from its `signal` (an abort listener per ended
   * terminal on a long-lived signal), for as long as the handle lives. Output after a revival
   * (`reopen`) goes to the iterators opened from then on.
   */
  end(): void {
    this.#ended = true
    const cursors = [...this.#cursors]
    this.#cursors.clear()
    for (const cursor of cursors) cursor.end()
  }

  /** The incarnation was revived (a re-attach after an unverified stop): output may follow again. */
  reopen(): void {
    this.#ended = false
  }

  /** A new iterator: the replay first (if kept), then every later chunk until the end. */
  iterate(options: PtyTerminalOutputOptions = {}): AsyncIterableIterator<string> & AsyncDisposable {
    const cursor = new OutputCursor(this, options.signal, options.maxQueuedChars ?? OUTPUT_ITERATOR_MAX_QUEUED_CHARS)
    // Opened with an aborted signal: it yields nothing, so it takes (and acknowledges) nothing.
    if (cursor.finished) return cursor
    if (this.#replay !== null) {
      for (const chunk of this.#replay) {
        chunk.holders += 1
        cursor.deliver(chunk)
      }
    }
    if (this.#ended) cursor.end()
    else this.#cursors.add(cursor)
    return cursor
  }

  /** An iterator moved past `chunk` (or let go of it; `dropped`: unread, as it overran). */
  release(chunk: OutputChunk, dropped = false): void {
    chunk.holders -= 1
    if (chunk.holders > 0 || chunk.acknowledged) return
    chunk.acknowledged = true
    this.#acknowledge(chunk.event.data.length, dropped)
  }

  /** An iterator finished: it holds nothing any more. */
  detach(cursor: OutputCursor): void {
    if (this.#cursors.delete(cursor) && this.#cursors.size === 0) this.#onLastLeft()
  }

  /** An iterator was ended for queuing more than its `maxQueuedChars` (it already let go and left). */
  overran(error: PtyControllerError): void {
    this.#onOverrun(error)
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/** One `for await` over a terminal's output. */
export class OutputCursor implements AsyncIterableIterator<string>, AsyncDisposable {
  readonly #feed: TerminalOutputFeed
  readonly #signal: AbortSignal | undefined
  readonly #queue: OutputChunk[] = []
  /** The chars in `#queue`. */
  #queuedChars = 0
  readonly #maxQueuedChars: number
  /** Why it was ended for falling behind: the next pull rejects with it (once). */
  #overrun: PtyControllerError | undefined
  /** Its queue passed the bound: the overrun is decided in a microtask (see `deliver`). */
  #overrunCheckQueued = false
  readonly #waiters: ((result: IteratorResult<string>) => void)[] = []
  /**
   * The chunks yielded and not let go of: held until the consumer asks for the next one. Usually
   * one; more when it asked for several at once (`next()` calls that overlap).
   */
  readonly #yielded: OutputChunk[] = []
  #finished = false
  /** The feed ended for this iterator: it yields what it holds, then is done. */
  #ended = false
  /** Removes this iterator's wait on its signal's abort (shared with the signal's other iterators). */
  #stopWaitingForAbort: () => void = () => undefined

  constructor(feed: TerminalOutputFeed, signal: AbortSignal | undefined, maxQueuedChars: number) {
    this.#feed = feed
    this.#signal = signal
    this.#maxQueuedChars = maxQueuedChars
    if (signal?.aborted === true) this.#finished = true
    else if (signal !== undefined) this.#stopWaitingForAbort = onAbortShared(signal, () => this.#finish())
  }

  get finished(): boolean {
    return this.#finished
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this
  }

  next(): Promise<IteratorResult<string>> {
    // Why here: asking for the next chunk is the consumer saying it is done with the last one.
    this.#releaseYielded()
    // After the end the abort listener is gone: an abort since then is seen here. An abort is a
    // consumer that left, as `return()` is: it is not told why the iterator had ended.
    if (this.#signal?.aborted === true) {
      this.#overrun = undefined
      this.#finish()
    }
    const overrun = this.#overrun
    if (overrun !== undefined) {
      this.#overrun = undefined
      return Promise.reject(overrun)
    }
    if (this.#finished) return Promise.resolve(DONE)
    const chunk = this.#queue.shift()
    if (chunk !== undefined) {
      this.#queuedChars -= chunk.event.data.length
      return Promise.resolve(this.#yield(chunk))
    }
    if (this.#ended) {
      this.#finish()
      return Promise.resolve(DONE)
    }
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  return(): Promise<IteratorResult<string>> {
    // The consumer left: it will not ask why the iterator ended (the `error` event told the host).
    this.#overrun = undefined
    this.#finish()
    return Promise.resolve(DONE)
  }

  /** `return()`, for `await using output = terminal.output()`: an iterator pulled by hand lets go at the end of its scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return()
  }

  deliver(chunk: OutputChunk): void {
    if (this.#finished) {
      this.#feed.release(chunk)
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      waiter(this.#yield(chunk))
      return
    }
    this.#queue.push(chunk)
    this.#queuedChars += chunk.event.data.length
    // Why not at once: this runs inside the delivery of a `data` event (or the replay of
    // `iterate()`). Leaving may resume the provider, which can hand over held output from inside
    // `resumeProducer`, and the report runs `error` listeners, which may open iterators: neither
    // may cut into the chunk being delivered. A microtask runs once that delivery is over.
    if (this.#queuedChars > this.#maxQueuedChars && !this.#overrunCheckQueued) {
      this.#overrunCheckQueued = true
      queueMicrotask(() => {
        this.#overrunCheckQueued = false
        if (!this.#finished && this.#queuedChars > this.#maxQueuedChars) this.#fallBehind()
      })
    }
  }

  /**
   * More output is queued than the consumer allowed: drop it (acknowledged, as a `return()` would,
   * without engaging flow control on its own) and leave, so an iterator nobody pulls — dropped
   * without `return()`, or held and forgotten — costs at most its bound. Why an error and not a
   * silent skip: what it would yield next would not follow what it yielded last.
   */
  #fallBehind(): void {
    const last = this.#queue[this.#queue.length - 1]!.event
    const error = new PtyControllerError(
      'output_overrun',
      `An \`output()\` iterator of PTY ${last.ptyId} queued more than ${this.#maxQueuedChars} chars its consumer had not pulled ` +
        `(\`maxQueuedChars\`) and was ended: it dropped ${this.#queuedChars} chars of output up to seq ${last.seq}. ` +
        'Open a new iterator (and repaint from a snapshot) to follow the output again.',
      { ptyId: last.ptyId },
    )
    this.#finish(true)
    this.#overrun = error
    this.#feed.overran(error)
  }

  /**
   * The feed ended (and let go of this iterator): answer the waiting pulls, and drop the abort
   * listener — nothing can wait any more. A cursor with queued chunks still yields them.
   */
  end(): void {
    this.#ended = true
    this.#stopWaitingForAbort()
    if (this.#waiters.length > 0 && this.#queue.length === 0) this.#finish()
  }

  #yield(chunk: OutputChunk): IteratorResult<string> {
    this.#yielded.push(chunk)
    return { done: false, value: chunk.event.data }
  }

  #releaseYielded(dropped = false): void {
    if (this.#yielded.length === 0) return
    for (const chunk of this.#yielded.splice(0)) this.#feed.release(chunk, dropped)
  }

  /** Stop: let go of every chunk held (`dropped`: unread, as it overran), answer every pending pull with done. */
  #finish(dropped = false): void {
    if (this.#finished && this.#waiters.length === 0) return
    this.#finished = true
    this.#stopWaitingForAbort()
    // Let go first, then leave: the acknowledgements reach the PTY before the feed hears it is left.
    this.#releaseYielded(dropped)
    this.#queuedChars = 0
    for (const chunk of this.#queue.splice(0)) this.#feed.release(chunk, dropped)
    this.#feed.detach(this)
    for (const waiter of this.#waiters.splice(0)) waiter(DONE)
  }
}
