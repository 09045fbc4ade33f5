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
 * renderer) must not freeze a live program forever: the forced resume forgives the debt, reports
 * `consumer_not_acknowledging` once, and (in the default `'acknowledged'` mode) leaves the PTY
 * unthrottled until its consumer acknowledges again — a wedged consumer costs at most one hold.
 */
export const PRODUCER_PAUSE_MAX_HOLD_MS = 10_000

/**
 * When flow control engages for a PTY:
 *
 * - `'acknowledged'` (the default): once its consumer has called `acknowledgeData` at least once
 *   (VS Code's model: the ack is the opt-in). A consumer that never acknowledges — a log tailer, a
 *   task runner, a test — gets every byte at full speed, as with raw node-pty, and the exit right
 *   after it.
 * - `'always'`: from the first output chunk (strict): a consumer that does not acknowledge is
 *   paused at the high watermark and only let through by the max-hold forced resume.
 */
export type ProducerFlowControlMode = 'acknowledged' | 'always'

/** The resolved flow-control settings (all set, validated). */
export type ProducerFlowControlConfig = {
  /** See {@link ProducerFlowControlMode}. */
  mode: ProducerFlowControlMode
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
  /**
   * A pause was held for the maximum time without the consumer acknowledging enough: the debt was
   * forgiven. Called at most once per target (the first time), to report it.
   */
  readonly notAcknowledging?: () => void
}

/** A point-in-time view of one PTY's flow-control state. */
export type ProducerFlowState = {
  /** Output chars delivered and not yet acknowledged. */
  unacknowledgedChars: number
  /** Whether the producer is paused. */
  paused: boolean
  /**
   * Whether flow control is engaged for this PTY: from the start in `'always'` mode; in
   * `'acknowledged'` mode once its consumer acknowledged (or an `output()` iterator began to), until
   * a forced resume disengages it, or the last `output()` iterator leaves a PTY that nothing but
   * iterators acknowledged.
   */
  engaged: boolean
  /** When the current pause began (controller clock time: `performance.now()` on the default clock, not an epoch time), or `null` when not paused. */
  pausedSince: number | null
}

type FlowEntry = {
  unacknowledged: number
  engaged: boolean
  /** The consumer acknowledged through `acknowledgeData` (not only through `output()` iterators). */
  acknowledgedByConsumer: boolean
  reportedNotAcknowledging: boolean
  pausedSince: number | null
  capTimer: PtyTimerHandle | undefined
  reassertTimer: PtyTimerHandle | undefined
}

/**
 * Ack-based producer backpressure, per PTY (VS Code's scheme with Orca's re-assert and ceiling):
 * count delivered chars, pause above the high watermark (once engaged, see
 * {@link ProducerFlowControlMode}), resume below the low one, re-assert a held pause, and force a
 * resume — forgiving the debt — when one pause has been held for the maximum time.
 */
export class ProducerFlowControl {
  readonly #config: ProducerFlowControlConfig
  readonly #clock: PtyClock
  readonly #entries = new Map<ProducerFlowTarget, FlowEntry>()
  /** The PTYs whose state {@link ProducerFlowControl.release} is resuming right now. */
  readonly #releasing = new Set<ProducerFlowTarget>()

  /** Create a flow controller over validated settings and a clock. */
  constructor(config: ProducerFlowControlConfig, clock: PtyClock) {
    this.#config = config
    this.#clock = clock
  }

  /**
   * Start following a PTY before its first output: its state is made now, not on its first
   * chunk. Why: the spawn calls this right after the fork, while the child is still starting; the
   * first chunk's path is a spawn's first-byte latency, and making the state there cost that path
   * an allocation and a write to this table (each a page fault after a fork, 13–15 µs on a VM:
   * docs/performance.md). Idempotent.
   */
  track(target: ProducerFlowTarget): void {
    this.#entry(target)
  }

  /** How many PTYs it follows now (tracked, or with output counted, and not released or forgotten). */
  get followedCount(): number {
    return this.#entries.size
  }

  /** Count `chars` delivered to the consumer; pauses the producer above the high watermark. */
  noteOutput(target: ProducerFlowTarget, chars: number): void {
    if (this.countOutput(target, chars)) this.pauseIfOverHighWatermark(target)
  }

  /**
   * Count `chars` about to be delivered to the consumer, without pausing; `true` when that puts an
   * engaged, unpaused producer above the high watermark — then call
   * {@link ProducerFlowControl.pauseIfOverHighWatermark} once the chunk is delivered. Nothing while
   * the PTY's state is being released: output its provider hands over from inside that resume is
   * not owed by anyone.
   */
  countOutput(target: ProducerFlowTarget, chars: number): boolean {
    if (this.#releasing.has(target)) return false
    const entry = this.#entry(target)
    entry.unacknowledged += chars
    return entry.engaged && entry.pausedSince === null && entry.unacknowledged > this.#config.highWatermarkChars
  }

  /**
   * Pause the producer if what is unacknowledged is above the high watermark (once engaged). Why
   * apart from the count: the count comes before the chunk's delivery (a listener that acknowledges
   * it is credited), the pause after it — a provider may report from inside its `pauseProducer`
   * (an exit it saw, output it had read), and that must come after the chunk that caused the pause.
   */
  pauseIfOverHighWatermark(target: ProducerFlowTarget): void {
    const entry = this.#entries.get(target)
    if (entry !== undefined && entry.engaged && entry.pausedSince === null && entry.unacknowledged > this.#config.highWatermarkChars) {
      this.#pause(target, entry)
    }
  }

  /**
   * The consumer processed `chars` more chars. Clamped to what is in flight, so a duplicated or
   * corrupt ack cannot drive the count negative. Returns the credited amount. An ack engages flow
   * control for the PTY (the consumer takes part in it). `byIterator`: the ack of an `output()`
   * iterator, whose leaving ({@link ProducerFlowControl.iteratorsLeft}) may disengage it again.
   * `dropped`: output an overrun iterator let go of unread — credited where flow control is engaged,
   * but it never engages it (nobody took part: after a forced resume, a second forgotten iterator
   * would otherwise hold the producer once more).
   */
  acknowledge(target: ProducerFlowTarget, chars: number, byIterator = false, dropped = false): number {
    // An ack of output handed over from inside the release's resume: nothing is counted any more.
    if (this.#releasing.has(target)) return chars
    const entry = this.#entry(target)
    if (dropped && !entry.engaged) return 0
    entry.engaged = true
    if (!byIterator) entry.acknowledgedByConsumer = true
    const credited = Math.min(chars, entry.unacknowledged)
    entry.unacknowledged -= credited
    if (entry.pausedSince !== null && entry.unacknowledged < this.#config.lowWatermarkChars) {
      this.#resume(target, entry)
    }
    return credited
  }

  /**
   * A consumer that sees the output only from now on takes part (an `output()` iterator opened
   * after some output went by): engage flow control for the PTY with nothing owed. Why: that
   * consumer can acknowledge only what it is handed; output that went by before it could never be
   * repaid, and counted as debt it held the producer paused until the cap forgave it, then reported
   * the consumer as not acknowledging. `owed`: what it will be handed of that output all the same
   * (a replay of the output published with the spawn), and so acknowledge. A PTY already engaged
   * (another consumer acknowledges) keeps its count.
   */
  engageFromNow(target: ProducerFlowTarget, owed = 0): void {
    const entry = this.#entry(target)
    if (entry.engaged) return
    entry.engaged = true
    entry.unacknowledged = Math.min(owed, entry.unacknowledged)
  }

  /**
   * The last `output()` iterator of a PTY finished. In `'acknowledged'` mode, when nothing but
   * iterators ever acknowledged, flow control disengages — nothing owed, a pause lifted — so a
   * consumer that left never holds the process back (DESIGN §4: flow control only slows a
   * producer for a consumer that takes part in it). A consumer that acknowledges through
   * `acknowledgeData` keeps it engaged; `'always'` mode stays engaged.
   */
  iteratorsLeft(target: ProducerFlowTarget): void {
    const entry = this.#entries.get(target)
    if (entry === undefined || !entry.engaged || this.#config.mode !== 'acknowledged' || entry.acknowledgedByConsumer) return
    entry.engaged = false
    entry.unacknowledged = 0
    // Resumed also when not paused: the resume tells a provider that counts acknowledgements itself
    // (the pty host) to forgive and stop counting, as nobody acknowledges from here on.
    this.#resume(target, entry)
  }

  /**
   * Forget a PTY (on exit or stop): resume it if paused — a no-op for a dead process, but it leaves
   * no stale paused mark behind for a reused id — and cancel its timers.
   */
  release(target: ProducerFlowTarget, forgive = false): void {
    const entry = this.#entries.get(target)
    if (entry === undefined) return
    // Forgotten before the resume: a provider may hand over output it held from inside
    // `resumeProducer`, and counting it must neither bring this state back nor pause again (whose
    // timers would outlive the PTY, and leave its producer paused).
    this.#entries.delete(target)
    this.#clearTimers(entry)
    // `forgive` (dispose): resumed also when engaged but not paused, so that a provider that counts
    // acknowledgements itself (the pty host) forgives and stops counting — nobody acknowledges from
    // here on, and a PTY left running must not be paused by it (h136).
    if (entry.pausedSince === null && !(forgive && entry.engaged)) return
    entry.pausedSince = null
    this.#releasing.add(target)
    try {
      target.resume()
    } finally {
      this.#releasing.delete(target)
    }
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
    for (const target of [...this.#entries.keys()]) this.release(target, true)
  }

  /** The state of one PTY, for inspection and tests. */
  state(target: ProducerFlowTarget): ProducerFlowState {
    const entry = this.#entries.get(target)
    return {
      unacknowledgedChars: entry?.unacknowledged ?? 0,
      paused: entry !== undefined && entry.pausedSince !== null,
      engaged: entry?.engaged ?? this.#config.mode === 'always',
      pausedSince: entry?.pausedSince ?? null,
    }
  }

  #entry(target: ProducerFlowTarget): FlowEntry {
    let entry = this.#entries.get(target)
    if (entry === undefined) {
      entry = {
        unacknowledged: 0,
        engaged: this.#config.mode === 'always',
        acknowledgedByConsumer: false,
        reportedNotAcknowledging: false,
        pausedSince: null,
        capTimer: undefined,
        reassertTimer: undefined,
      }
      this.#entries.set(target, entry)
    }
    return entry
  }

  #pause(target: ProducerFlowTarget, entry: FlowEntry): void {
    entry.pausedSince = this.#clock.now()
    // The timers first: a provider that reports the exit from inside the pause releases this
    // state there, and the release must find (and cancel) them.
    entry.capTimer = this.#clock.setTimeout(() => {
      entry.capTimer = undefined
      if (entry.pausedSince !== null) this.#forceResume(target, entry)
    }, this.#config.pauseMaxHoldMs)
    this.#scheduleReassert(target, entry)
    target.pause()
  }

  #scheduleReassert(target: ProducerFlowTarget, entry: FlowEntry): void {
    entry.reassertTimer = this.#clock.setTimeout(() => {
      entry.reassertTimer = undefined
      if (entry.pausedSince === null) return
      // Re-asserting never extends the ceiling: the cap timer keeps its original deadline.
      if (entry.unacknowledged > this.#config.highWatermarkChars) target.pause()
      // A provider that reports the exit from inside that pause has released this state there:
      // re-arm only while it is still the PTY's and still paused.
      if (this.#entries.get(target) === entry && entry.pausedSince !== null) this.#scheduleReassert(target, entry)
    }, this.#config.pauseReassertIntervalMs)
  }

  /**
   * The ceiling: the consumer is not keeping up. Why forgive the debt: keeping it would pause again
   * on the very next chunk, so a wedged consumer would crawl (one small burst per hold) instead of
   * costing one hold. In `'acknowledged'` mode the PTY is also left unthrottled until the consumer
   * acknowledges again.
   */
  #forceResume(target: ProducerFlowTarget, entry: FlowEntry): void {
    entry.unacknowledged = 0
    if (this.#config.mode === 'acknowledged') entry.engaged = false
    this.#resume(target, entry)
    if (!entry.reportedNotAcknowledging) {
      entry.reportedNotAcknowledging = true
      target.notAcknowledging?.()
    }
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
