/**
 * Keeps one PTY's events in order when a listener re-enters the controller. While the controller
 * delivers events of a PTY — a provider event, a spawn's `spawn` event and the output held for it,
 * a coalesced output window — a provider event of the same PTY that arrives meanwhile waits until
 * that delivery ends, and is then handled as if it arrived then. Such an event comes from a
 * listener: the exit a provider reports from inside `shutdown` when a `data` listener calls `kill`
 * (or `dispose`), output it hands over from inside `resumeProducer` when a listener acknowledges.
 *
 * Why: handled at once, it reached every listener after the one that re-entered before the event
 * that listener was handed — its `exit` before the `data` that caused it, that `data` after the
 * exit (a terminal handle's `output()` had ended, and lost it), held output after the exit
 * (dropped). Events of other PTYs are not held back: there is no order between PTYs to keep.
 */
export class DeliveryGate<T> {
  // Why a stack, not a map: deliveries nest (a listener's call delivers another PTY's event), and
  // each ends before the one around it; almost always there is one, so every output chunk pays
  // a push and a pop, not a map insertion and deletion.
  /** The ids being delivered, outermost first. */
  readonly #ids: string[] = []
  /** What arrived for each of them meanwhile (created on the first one). */
  readonly #queues: (T[] | undefined)[] = []
  /** Ids let through during a delivery (see {@link DeliveryGate.letThrough}). */
  readonly #open = new Set<string>()
  #handle: (item: T) => void = () => undefined

  /** Set how a deferred event is handled once its PTY's delivery ends (the provider intake's). */
  setHandler(handle: (item: T) => void): void {
    this.#handle = handle
  }

  /** Whether `ptyId`'s events are being delivered now: a provider event of it must be deferred. */
  busy(ptyId: string): boolean {
    return this.#ids.length > 0 && this.#ids.includes(ptyId) && !this.#open.has(ptyId)
  }

  /** Hold `item` until the delivery of `ptyId` under way ends (see {@link DeliveryGate.busy}). */
  defer(ptyId: string, item: T): void {
    const index = this.#ids.indexOf(ptyId)
    ;(this.#queues[index] ??= []).push(item)
  }

  /**
   * Run `call` with `ptyId`'s events let through at once, although its delivery is under way. For
   * a call into the provider that the controller makes before it publishes the event under way:
   * what the provider hands over from inside it precedes that event (output it held behind a pause,
   * handed over from inside the resume at the exit, comes before the exit).
   */
  letThrough(ptyId: string, call: () => void): void {
    if (this.#open.has(ptyId)) return call()
    this.#open.add(ptyId)
    try {
      call()
    } finally {
      this.#open.delete(ptyId)
    }
  }

  /**
   * Begin delivering `ptyId`'s events. `false` when a delivery of it is already under way (this one
   * is part of it): then do not {@link DeliveryGate.leave}, the outer delivery does.
   */
  enter(ptyId: string): boolean {
    if (this.#ids.length > 0 && this.#ids.includes(ptyId)) return false
    this.#ids.push(ptyId)
    this.#queues.push(undefined)
    return true
  }

  /**
   * Run `deliver` as one delivery of `ptyId`'s events: {@link DeliveryGate.enter} before it,
   * {@link DeliveryGate.leave} after it (also when it throws). A closure per call: the per-chunk
   * paths (`data`, `bytes`) enter and leave inline instead.
   */
  within(ptyId: string, deliver: () => void): void {
    const entered = this.enter(ptyId)
    try {
      deliver()
    } finally {
      if (entered) this.leave(ptyId)
    }
  }

  /**
   * End the delivery of `ptyId` (the innermost one: deliveries end in the reverse order they
   * began): handle what was deferred meanwhile, in arrival order (what those make arrive queues
   * behind them), then let its events through again.
   */
  leave(ptyId: string): void {
    const top = this.#ids.length - 1
    if (this.#ids[top] !== ptyId) throw new Error(`Delivery of ${JSON.stringify(ptyId)} left out of order`)
    try {
      // By index: the queue grows while it is walked.
      for (let index = 0; ; index += 1) {
        const queue = this.#queues[top]
        if (queue === undefined || index >= queue.length) break
        this.#handle(queue[index]!)
      }
    } finally {
      this.#ids.pop()
      this.#queues.pop()
    }
  }
}
