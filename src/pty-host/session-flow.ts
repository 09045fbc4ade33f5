import { clampTimerDelay } from '../contracts/deadline.js'
/**
 * Flow control of one session in the host, from two kinds of request by its subscribed clients:
 *
 * - **pause / resume** (the app's controller paused its producer);
 * - **acknowledged chars** (VS Code's model): once a client acknowledges, the host counts the
 *   output it sent that client and not yet acknowledged; above the high watermark it pauses the
 *   PTY itself (no round trip per pause), below the low watermark it resumes. A resume from the
 *   client forgives the debt and stops the count until its next ack; so does a pause held for
 *   {@link PTY_HOST_ACK_MAX_HOLD_MS}.
 *
 * The PTY is paused while any subscriber wants it paused; nothing else pauses it (the session's
 * headless screen parses the replay ring behind the stream and never holds the producer). A
 * subscriber that leaves (its connection dropped) takes its requests with it, so a crashed app
 * never leaves a session frozen.
 */

/**
 * Pause a session's PTY once a client has this many sent chars unacknowledged (1 Mi chars). VS
 * Code's 100 000 is smaller than one output frame of a flood (up to
 * `PTY_HOST_OUTPUT_FLUSH_CHARS`, 256 Ki chars), so it stopped the PTY for a round trip after nearly
 * every frame (measured: paused 11–17 % of a flood's time); this window holds four frames.
 */
export const PTY_HOST_ACK_HIGH_WATERMARK_CHARS = 1024 * 1024

/** Resume it once that client's unacknowledged chars fall below this (256 Ki chars: a frame still in flight keeps the pipe full). */
export const PTY_HOST_ACK_LOW_WATERMARK_CHARS = 256 * 1024

/**
 * The longest the host holds one client's acknowledgement pause (10 s, as the controller's
 * `PRODUCER_PAUSE_MAX_HOLD_MS`): then it forgives that client's debt and stops counting until its
 * next ack. Why: a pause is never held forever (DESIGN §4). The controller's own cap resumes a
 * wedged consumer's PTY through a `resume`, but a client that acknowledges without it — the
 * controller with flow control turned off (acks forwarded as given), or an app using the provider
 * directly — would otherwise leave the program frozen once its consumer stopped acknowledging.
 */
export const PTY_HOST_ACK_MAX_HOLD_MS = 10_000

/** How a {@link SessionFlow} waits (the host's timers; a test's manual ones). */
export type SessionFlowTimers = {
  /** Call `run` once after `ms`; returns a handle for `cancel`. */
  schedule(run: () => void, ms: number): unknown
  /** Cancel a scheduled call. */
  cancel(handle: unknown): void
}

const HOST_TIMERS: SessionFlowTimers = {
  schedule(run, ms) {
    // Why unref: a held pause alone must not keep a host alive that is otherwise done.
    return setTimeout(run, clampTimerDelay(ms)).unref()
  },
  cancel(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>)
  },
}

type SubscriberFlow = {
  /** The client asked for a pause (and no resume since). */
  appPaused: boolean
  /** The client has acknowledged at least once: its output is counted. */
  acking: boolean
  /** Chars sent and not yet acknowledged (counted once `acking`). */
  unacked: number
  /** Paused by this client's acknowledgement debt (hysteresis between the watermarks). */
  ackPaused: boolean
  /** The forced end of this client's acknowledgement pause, while one is held. */
  holdTimer: unknown
}

/** One session's pause state; `pause` / `resume` drive its PTY and are called only on a change. */
export class SessionFlow {
  readonly #subscribers = new Map<object, SubscriberFlow>()
  readonly #pause: () => void
  readonly #resume: () => void
  readonly #maxHoldMs: number
  readonly #timers: SessionFlowTimers
  #paused = false

  /**
   * @param pause - stop reading the PTY
   * @param resume - read it again
   * @param maxHoldMs - the longest one acknowledgement pause is held ({@link PTY_HOST_ACK_MAX_HOLD_MS})
   * @param timers - how to wait (the host's timers by default)
   */
  constructor(pause: () => void, resume: () => void, maxHoldMs = PTY_HOST_ACK_MAX_HOLD_MS, timers: SessionFlowTimers = HOST_TIMERS) {
    this.#pause = pause
    this.#resume = resume
    this.#maxHoldMs = maxHoldMs
    this.#timers = timers
  }

  /** Whether the PTY is paused now. */
  get paused(): boolean {
    return this.#paused
  }

  /** The unacknowledged chars of `subscriber` (0 when it never acknowledged). */
  unacknowledged(subscriber: object): number {
    return this.#subscribers.get(subscriber)?.unacked ?? 0
  }

  /** Count output sent to `subscriber`. Runs per output chunk. */
  noteSent(subscriber: object, chars: number): void {
    const flow = this.#subscribers.get(subscriber)
    if (flow === undefined || !flow.acking) return
    flow.unacked += chars
    if (!flow.ackPaused && flow.unacked > PTY_HOST_ACK_HIGH_WATERMARK_CHARS) {
      flow.ackPaused = true
      flow.holdTimer = this.#timers.schedule(() => {
        flow.holdTimer = undefined
        // The longest hold is over: forgive, and count again only from the client's next ack.
        if (this.#subscribers.get(subscriber) === flow) this.#forgive(flow)
      }, this.#maxHoldMs)
      this.#update()
    }
  }

  /**
   * A new subscriber was sent `chars` of replay. Owed from now on, even before its first ack: its
   * app delivers the replay and acknowledges it like any output, often after it began to
   * acknowledge (and the host to count) the live output behind it; uncounted, those acks would
   * forgive as much of the live output it still owes.
   */
  noteReplay(subscriber: object, chars: number): void {
    const flow = this.#entry(subscriber)
    if (flow.acking) this.noteSent(subscriber, chars)
    else flow.unacked += chars
  }

  /** `subscriber` processed `chars` more chars (its first ack turns counting on). */
  acknowledge(subscriber: object, chars: number): void {
    const flow = this.#entry(subscriber)
    flow.acking = true
    flow.unacked = Math.max(0, flow.unacked - chars)
    if (flow.ackPaused && flow.unacked < PTY_HOST_ACK_LOW_WATERMARK_CHARS) {
      flow.ackPaused = false
      this.#cancelHold(flow)
      this.#update()
    }
  }

  /**
   * `subscriber` paused or resumed the producer. A resume also forgives its debt and stops counting
   * until its next ack: the app's controller resumes when its consumer no longer takes part (a
   * wedged consumer after the longest hold, an `output()` iterator that left), and from then on
   * nobody acknowledges — a host still counting would pause the PTY one window later, for good.
   */
  setAppPaused(subscriber: object, paused: boolean): void {
    const flow = this.#entry(subscriber)
    flow.appPaused = paused
    if (paused) this.#update()
    else this.#forgive(flow)
  }

  /** `subscriber` left: its requests no longer hold the PTY. */
  remove(subscriber: object): void {
    const flow = this.#subscribers.get(subscriber)
    if (flow === undefined) return
    this.#cancelHold(flow)
    this.#subscribers.delete(subscriber)
    this.#update()
  }

  /** Forgive a client's debt and stop counting until its next ack. */
  #forgive(flow: SubscriberFlow): void {
    flow.acking = false
    flow.unacked = 0
    flow.ackPaused = false
    this.#cancelHold(flow)
    this.#update()
  }

  #cancelHold(flow: SubscriberFlow): void {
    if (flow.holdTimer === undefined) return
    this.#timers.cancel(flow.holdTimer)
    flow.holdTimer = undefined
  }

  #entry(subscriber: object): SubscriberFlow {
    let flow = this.#subscribers.get(subscriber)
    if (flow === undefined) {
      flow = { appPaused: false, acking: false, unacked: 0, ackPaused: false, holdTimer: undefined }
      this.#subscribers.set(subscriber, flow)
    }
    return flow
  }

  #update(): void {
    let wanted = false
    for (const flow of this.#subscribers.values()) {
      if (flow.appPaused || flow.ackPaused) {
        wanted = true
        break
      }
    }
    if (wanted === this.#paused) return
    this.#paused = wanted
    if (wanted) this.#pause()
    else this.#resume()
  }
}
