import type { PtyControllerDataEvent } from './events.js'

/** Options of `PtyTerminal.output()`. */
export type PtyTerminalOutputOptions = {
  /** Ends the iteration (and releases its hold on flow control) when aborted. */
  signal?: AbortSignal
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
  readonly #acknowledge: (chars: number) => void
  readonly #cursors = new Set<OutputCursor>()
  #replay: OutputChunk[] | null = null
  #ended = false

  /** Create a feed that acknowledges through `acknowledge` (which must not throw). */
  constructor(acknowledge: (chars: number) => void) {
    this.#acknowledge = acknowledge
  }

  /** Whether the incarnation's output has ended (its exit was published). */
  get ended(): boolean {
    return this.#ended
  }

  /** The chunks kept for replay, oldest first (empty when none are kept). */
  replayedEvents(): readonly PtyControllerDataEvent[] {
    return this.#replay === null ? [] : this.#replay.map((chunk) => chunk.event)
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

  /** The output ended: every iterator finishes once it has yielded what it holds. */
  end(): void {
    this.#ended = true
    for (const cursor of this.#cursors) cursor.wake()
  }

  /** The incarnation was revived (a re-attach after an unverified stop): output may follow again. */
  reopen(): void {
    this.#ended = false
  }

  /** A new iterator: the replay first (if kept), then every later chunk until the end. */
  iterate(options: PtyTerminalOutputOptions = {}): AsyncIterableIterator<string> {
    const cursor = new OutputCursor(this, options.signal)
    if (this.#replay !== null) {
      for (const chunk of this.#replay) {
        chunk.holders += 1
        cursor.deliver(chunk)
      }
    }
    if (!cursor.finished) this.#cursors.add(cursor)
    return cursor
  }

  /** An iterator moved past `chunk` (or let go of it). */
  release(chunk: OutputChunk): void {
    chunk.holders -= 1
    if (chunk.holders > 0 || chunk.acknowledged) return
    chunk.acknowledged = true
    this.#acknowledge(chunk.event.data.length)
  }

  /** An iterator finished: it holds nothing any more. */
  detach(cursor: OutputCursor): void {
    this.#cursors.delete(cursor)
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/** One `for await` over a terminal's output. */
export class OutputCursor implements AsyncIterableIterator<string> {
  readonly #feed: TerminalOutputFeed
  readonly #signal: AbortSignal | undefined
  readonly #queue: OutputChunk[] = []
  readonly #waiters: ((result: IteratorResult<string>) => void)[] = []
  /** The chunk last yielded: held until the consumer asks for the next one. */
  #current: OutputChunk | undefined
  #finished = false
  readonly #onAbort = (): void => this.#finish()

  constructor(feed: TerminalOutputFeed, signal: AbortSignal | undefined) {
    this.#feed = feed
    this.#signal = signal
    if (signal?.aborted === true) this.#finished = true
    else signal?.addEventListener('abort', this.#onAbort, { once: true })
  }

  get finished(): boolean {
    return this.#finished
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this
  }

  next(): Promise<IteratorResult<string>> {
    // Why here: asking for the next chunk is the consumer saying it is done with the last one.
    this.#releaseCurrent()
    if (this.#finished) return Promise.resolve(DONE)
    const chunk = this.#queue.shift()
    if (chunk !== undefined) return Promise.resolve(this.#yield(chunk))
    if (this.#feed.ended) {
      this.#finish()
      return Promise.resolve(DONE)
    }
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  return(): Promise<IteratorResult<string>> {
    this.#finish()
    return Promise.resolve(DONE)
  }

  deliver(chunk: OutputChunk): void {
    if (this.#finished) {
      this.#feed.release(chunk)
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter === undefined) this.#queue.push(chunk)
    else waiter(this.#yield(chunk))
  }

  /** The feed ended: answer the waiting pulls (a cursor with queued chunks still yields them). */
  wake(): void {
    if (this.#waiters.length > 0 && this.#queue.length === 0) this.#finish()
  }

  #yield(chunk: OutputChunk): IteratorResult<string> {
    this.#current = chunk
    return { done: false, value: chunk.event.data }
  }

  #releaseCurrent(): void {
    const current = this.#current
    if (current === undefined) return
    this.#current = undefined
    this.#feed.release(current)
  }

  /** Stop: let go of every chunk held, answer every pending pull with done. */
  #finish(): void {
    if (this.#finished && this.#waiters.length === 0) return
    this.#finished = true
    this.#signal?.removeEventListener('abort', this.#onAbort)
    this.#feed.detach(this)
    this.#releaseCurrent()
    for (const chunk of this.#queue.splice(0)) this.#feed.release(chunk)
    for (const waiter of this.#waiters.splice(0)) waiter(DONE)
  }
}
