import { clampTimerDelay } from '../contracts/deadline.js'
/**
 * The request timeouts of one connection, with one timer for all of them.
 *
 * Why not a timer per request: arming and clearing a Node timer (a `Timeout` object, its insertion
 * into the timer lists, a ref count update) was a fifth of the CPU of the app's `spawn()` call
 * through the pty host. The requests of one provider share one timeout, so their deadlines arrive
 * in order: each is appended to a queue ordered by deadline, and the one timer is armed only when a
 * request's deadline is earlier than the one it waits for — in steady traffic about once per
 * timeout period, not once per request. A reply cancels its entry in O(1) (it is skipped, and
 * dropped when it reaches the head or when cancelled entries are the majority).
 */

/** What the queue keeps of one request; the caller's own object, so queueing allocates nothing. */
export type DeadlineEntry = {
  /** When the request times out, on the queue's clock (set by {@link RequestDeadlines.add}). */
  deadline: number
  /** Whether the entry still waits for its deadline: false once expired or cancelled. */
  waiting: boolean
}

/** The clock and timer the queue runs on (the real ones by default; a test passes a simulated one). */
export type DeadlineClock = {
  /** Monotonic milliseconds. */
  now(): number
  /** Call `callback` once, `ms` from now; must not hold the process open on its own. */
  setTimer(callback: () => void, ms: number): unknown
  /** Cancel a timer `setTimer` returned. */
  clearTimer(timer: unknown): void
}

/**
 * The real clock: `performance.now()`, and an unref'd `setTimeout` (a pending request holds the
 * app open through its connection's socket, not through its timeout).
 */
export const SYSTEM_DEADLINE_CLOCK: DeadlineClock = {
  now: () => performance.now(),
  setTimer(callback, ms) {
    const timer = setTimeout(callback, clampTimerDelay(Math.ceil(ms)))
    timer.unref()
    return timer
  },
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
}

/** Cancelled entries are swept out of the queue once there are more than this and more than waiting ones. */
const SWEEP_AT_CANCELLED = 32

/**
 * Deadlines of requests, in order, behind one timer. `onExpired` is called once for each entry
 * whose deadline passed while it was still waiting (never before its deadline, on the clock), in
 * deadline order; an entry cancelled first is never expired.
 */
export class RequestDeadlines<T extends DeadlineEntry> {
  readonly #onExpired: (entry: T) => void
  readonly #clock: DeadlineClock
  /** Entries from `#head` on, ordered by deadline (ties in insertion order); some may be cancelled. */
  #queue: T[] = []
  #head = 0
  /** Cancelled entries still in the queue. */
  #cancelled = 0
  #timer: unknown = undefined
  /** The deadline the timer is armed for (`Infinity`: no timer). */
  #armedFor = Number.POSITIVE_INFINITY

  /** @param onExpired - called for each entry whose deadline passed (it is already out of the queue). */
  constructor(onExpired: (entry: T) => void, clock: DeadlineClock = SYSTEM_DEADLINE_CLOCK) {
    this.#onExpired = onExpired
    this.#clock = clock
  }

  /** Entries still waiting for their deadline. */
  get size(): number {
    return this.#queue.length - this.#head - this.#cancelled
  }

  /** Queue `entry` to expire `timeoutMs` from now (sets its `deadline` and `waiting`). */
  add(entry: T, timeoutMs: number): void {
    entry.deadline = this.#clock.now() + timeoutMs
    entry.waiting = true
    const queue = this.#queue
    const last = queue.length > this.#head ? queue[queue.length - 1]! : undefined
    if (last === undefined || last.deadline <= entry.deadline) queue.push(entry)
    else queue.splice(this.#insertionIndex(entry.deadline), 0, entry)
    if (entry.deadline < this.#armedFor) this.#arm(entry.deadline)
  }

  /** The entry no longer waits (its reply arrived, or it failed otherwise); a no-op when it does not wait. */
  cancel(entry: T): void {
    if (!entry.waiting) return
    entry.waiting = false
    this.#cancelled++
    this.#dropCancelledHead()
    if (this.#cancelled > SWEEP_AT_CANCELLED && this.#cancelled > this.size) this.#sweep()
  }

  /** Cancel every entry and the timer (the connection closed: its requests fail another way). */
  clear(): void {
    for (let i = this.#head; i < this.#queue.length; i++) this.#queue[i]!.waiting = false
    this.#queue = []
    this.#head = 0
    this.#cancelled = 0
    this.#disarm()
  }

  /** First index from the head whose deadline is later than `deadline` (so ties keep insertion order). */
  #insertionIndex(deadline: number): number {
    let low = this.#head
    let high = this.#queue.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.#queue[middle]!.deadline <= deadline) low = middle + 1
      else high = middle
    }
    return low
  }

  /** Step the head past entries that no longer wait; a long consumed head is swept out. */
  #dropCancelledHead(): void {
    const queue = this.#queue
    while (this.#head < queue.length && !queue[this.#head]!.waiting) {
      this.#head++
      this.#cancelled--
    }
    if (this.#head === queue.length) {
      queue.length = 0
      this.#head = 0
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#sweep()
    }
  }

  /** Rebuild the queue from its waiting entries: the one compaction (consumed head and cancelled entries). */
  #sweep(): void {
    const waiting: T[] = []
    for (let i = this.#head; i < this.#queue.length; i++) if (this.#queue[i]!.waiting) waiting.push(this.#queue[i]!)
    this.#queue = waiting
    this.#head = 0
    this.#cancelled = 0
  }

  #arm(deadline: number): void {
    this.#disarm()
    this.#armedFor = deadline
    this.#timer = this.#clock.setTimer(this.#fire, Math.max(0, deadline - this.#clock.now()))
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer)
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
  }

  readonly #fire = (): void => {
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
    const now = this.#clock.now()
    for (;;) {
      this.#dropCancelledHead()
      const head = this.#queue[this.#head]
      if (head === undefined) return
      // A timer may fire a little before the deadline on this clock (Node's timers count from the
      // loop's cached time): never expire early, wait the rest.
      if (head.deadline > now) {
        if (head.deadline < this.#armedFor) this.#arm(head.deadline)
        return
      }
      this.#head++
      head.waiting = false
      // May add or cancel entries (and arm the timer): the queue is consistent at this point.
      this.#onExpired(head)
    }
  }
}
