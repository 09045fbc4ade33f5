/**
 * Flow control of one session in the host, from two kinds of request by its subscribed clients:
 *
 * - **pause / resume** (the app's controller paused its producer);
 * - **acknowledged chars** (VS Code's model): once a client acknowledges, the host counts the
 *   output it sent that client and not yet acknowledged; above the high watermark it pauses the
 *   PTY itself (no round trip per pause), below the low watermark it resumes. A resume from the
 *   client forgives the debt and stops the count until its next ack.
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

type SubscriberFlow = {
  /** The client asked for a pause (and no resume since). */
  appPaused: boolean
  /** The client has acknowledged at least once: its output is counted. */
  acking: boolean
  /** Chars sent and not yet acknowledged (counted once `acking`). */
  unacked: number
  /** Paused by this client's acknowledgement debt (hysteresis between the watermarks). */
  ackPaused: boolean
}

/** One session's pause state; `pause` / `resume` drive its PTY and are called only on a change. */
export class SessionFlow {
  readonly #subscribers = new Map<object, SubscriberFlow>()
  readonly #pause: () => void
  readonly #resume: () => void
  #paused = false

  /** @param pause - stop reading the PTY; @param resume - read it again. */
  constructor(pause: () => void, resume: () => void) {
    this.#pause = pause
    this.#resume = resume
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
      this.#update()
    }
  }

  /** `subscriber` processed `chars` more chars (its first ack turns counting on). */
  acknowledge(subscriber: object, chars: number): void {
    const flow = this.#entry(subscriber)
    flow.acking = true
    flow.unacked = Math.max(0, flow.unacked - chars)
    if (flow.ackPaused && flow.unacked < PTY_HOST_ACK_LOW_WATERMARK_CHARS) {
      flow.ackPaused = false
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
    if (!paused) {
      flow.acking = false
      flow.unacked = 0
      flow.ackPaused = false
    }
    this.#update()
  }

  /** `subscriber` left: its requests no longer hold the PTY. */
  remove(subscriber: object): void {
    if (this.#subscribers.delete(subscriber)) this.#update()
  }

  #entry(subscriber: object): SubscriberFlow {
    let flow = this.#subscribers.get(subscriber)
    if (flow === undefined) {
      flow = { appPaused: false, acking: false, unacked: 0, ackPaused: false }
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
