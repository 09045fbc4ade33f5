import type { PtyClock, PtyTimerHandle } from './clock.js'

/**
 * Pause a PTY's producer once this many output chars are unacknowledged. VS Code's
 * `FlowControlConstants.HighWatermarkChars`: about one screenful of a fast flood per consumer
 * turn, small enough that a wedged consumer does not buffer megabytes.
 */
export const FLOW_CONTROL_HIGH_WATERMARK_CHARS = 100_000

/**
 * Resume a paused producer once unacknowledged chars fall below this. VS Code's
 * `LowWatermarkChars`: the wide gap to the high watermark is hysteresis, so a flood does not
 * toggle pause/resume on every ack.
 */
export const FLOW_CONTROL_LOW_WATERMARK_CHARS = 5_000

/**
 * How many chars a consumer should process before it calls `acknowledgeData` (VS Code's
 * `CharCountAckSize`). It must not exceed the low watermark, or a paused producer could wait for
 * an ack that never comes.
 */
export const FLOW_CONTROL_ACK_SIZE_CHARS = 5_000

/**
 * While a pause is held and output is still above the high watermark, re-send the pause this
 * often: transports with a lost-resume failsafe (Orca's daemon auto-resumes after 5 s) would
 * otherwise quietly drop it.
 */
export const PRODUCER_PAUSE_REASSERT_INTERVAL_MS = 5_000

/**
 * The longest one pause is held before a forced resume. A consumer that stopped acking (a wedged
 * renderer) must not freeze a live program forever; if the flood is real, the next output pauses
 * again.
 */
export const PRODUCER_PAUSE_MAX_HOLD_MS = 10_000

/** The resolved flow-control settings (all set, validated). */
export type ProducerFlowControlConfig = {
  /** See {@link FLOW_CONTROL_HIGH_WATERMARK_CHARS}. */
  highWatermarkChars: number
  /** See {@link FLOW_CONTROL_LOW_WATERMARK_CHARS}. */
  lowWatermarkChars: number
  /** See {@link PRODUCER_PAUSE_REASSERT_INTERVAL_MS}. */
  pauseReassertIntervalMs: number
  /** See {@link PRODUCER_PAUSE_MAX_HOLD_MS}. */
  pauseMaxHoldMs: number
}

/** What flow control drives: one PTY's producer. The callbacks must not throw. */
export type ProducerFlowTarget = {
  /** Stop reading the PTY (called again to re-assert a held pause). */
  readonly pause: () => void
  /** Resume reading. */
  readonly resume: () => void
}

/** A point-in-time view of one PTY's flow-control state. */
export type ProducerFlowState = {
  /** Output chars delivered and not yet acknowledged. */
  unacknowledgedChars: number
  /** Whether the producer is paused. */
  paused: boolean
  /** When the current pause began (clock time), or `null` when not paused. */
  pausedSince: number | null
}

type FlowEntry = {
  unacknowledged: number
  pausedSince: number | null
  capTimer: PtyTimerHandle | undefined
  reassertTimer: PtyTimerHandle | undefined
}

/**
 * Ack-based producer backpressure, per PTY (VS Code's scheme with Orca's re-assert and ceiling):
 * count delivered chars, pause above the high watermark, resume below the low one, re-assert a
 * held pause, and force a resume when one pause has been held for the maximum time.
 */
export class ProducerFlowControl {
  readonly #config: ProducerFlowControlConfig
  readonly #clock: PtyClock
  readonly #entries = new Map<ProducerFlowTarget, FlowEntry>()

  /** Create a flow controller over validated settings and a clock. */
  constructor(config: ProducerFlowControlConfig, clock: PtyClock) {
    this.#config = config
    this.#clock = clock
  }

  /** Count `chars` delivered to the consumer; pauses the producer above the high watermark. */
  noteOutput(target: ProducerFlowTarget, chars: number): void {
    const entry = this.#entry(target)
    entry.unacknowledged += chars
    if (entry.pausedSince === null && entry.unacknowledged > this.#config.highWatermarkChars) {
      this.#pause(target, entry)
    }
  }

  /**
   * The consumer processed `chars` more chars. Clamped to what is in flight, so a duplicated or
   * corrupt ack cannot drive the count negative. Returns the credited amount.
   */
  acknowledge(target: ProducerFlowTarget, chars: number): number {
    const entry = this.#entries.get(target)
    if (entry === undefined) return 0
    const credited = Math.min(chars, entry.unacknowledged)
    entry.unacknowledged -= credited
    if (entry.pausedSince !== null && entry.unacknowledged < this.#config.lowWatermarkChars) {
      this.#resume(target, entry)
    }
    return credited
  }

  /**
   * Forget a PTY (on exit or stop): resume it if paused — a no-op for a dead process, but it leaves
   * no stale paused mark behind for a reused id — and cancel its timers.
   */
  release(target: ProducerFlowTarget): void {
    const entry = this.#entries.get(target)
    if (entry === undefined) return
    if (entry.pausedSince !== null) this.#resume(target, entry)
    this.#entries.delete(target)
  }

  /**
   * Drop a PTY's state without resuming it: for an incarnation that was replaced under a reused
   * id, where a resume would be routed to the replacement instead.
   */
  forget(target: ProducerFlowTarget): void {
    const entry = this.#entries.get(target)
    if (entry === undefined) return
    this.#clearTimers(entry)
    this.#entries.delete(target)
  }

  /** Release every PTY (on dispose). */
  releaseAll(): void {
    for (const target of [...this.#entries.keys()]) this.release(target)
  }

  /** The state of one PTY, for inspection and tests. */
  state(target: ProducerFlowTarget): ProducerFlowState {
    const entry = this.#entries.get(target)
    return {
      unacknowledgedChars: entry?.unacknowledged ?? 0,
      paused: entry !== undefined && entry.pausedSince !== null,
      pausedSince: entry?.pausedSince ?? null,
    }
  }

  #entry(target: ProducerFlowTarget): FlowEntry {
    let entry = this.#entries.get(target)
    if (entry === undefined) {
      entry = { unacknowledged: 0, pausedSince: null, capTimer: undefined, reassertTimer: undefined }
      this.#entries.set(target, entry)
    }
    return entry
  }

  #pause(target: ProducerFlowTarget, entry: FlowEntry): void {
    entry.pausedSince = this.#clock.now()
    target.pause()
    entry.capTimer = this.#clock.setTimeout(() => {
      entry.capTimer = undefined
      // Why: the ceiling. Resume and drop the pause bookkeeping; the debt stays, so the next
      // output pauses again if the flood is real.
      if (entry.pausedSince !== null) this.#resume(target, entry)
    }, this.#config.pauseMaxHoldMs)
    this.#scheduleReassert(target, entry)
  }

  #scheduleReassert(target: ProducerFlowTarget, entry: FlowEntry): void {
    entry.reassertTimer = this.#clock.setTimeout(() => {
      entry.reassertTimer = undefined
      if (entry.pausedSince === null) return
      // Re-asserting never extends the ceiling: the cap timer keeps its original deadline.
      if (entry.unacknowledged > this.#config.highWatermarkChars) target.pause()
      this.#scheduleReassert(target, entry)
    }, this.#config.pauseReassertIntervalMs)
  }

  #resume(target: ProducerFlowTarget, entry: FlowEntry): void {
    this.#clearTimers(entry)
    entry.pausedSince = null
    target.resume()
  }

  #clearTimers(entry: FlowEntry): void {
    if (entry.capTimer !== undefined) this.#clock.clearTimeout(entry.capTimer)
    if (entry.reassertTimer !== undefined) this.#clock.clearTimeout(entry.reassertTimer)
    entry.capTimer = undefined
    entry.reassertTimer = undefined
  }
}
