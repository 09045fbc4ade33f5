import type { ControllerCore } from './controller-core.js'
import type { ExitPublication } from './exit-publication.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import type { OutputDelivery } from './output-delivery.js'
import { waitForRecordState, type PtyRecord } from './pty-record.js'
import { dispatchShutdown, type ShutdownOutcome } from './shutdown-dispatch.js'
import { abortOf, deadlineOf, forceDelayMs, shutdownOptionsFor, type StopAndWaitRequest } from './stop-and-wait.js'
import { stopUntracked } from './stop-untracked.js'
import { verifyStop } from './verify-stop.js'

/**
 * Stopping tracked PTYs: `kill` (mark the stop, dispatch, arm the unconfirmed timer), retiring a
 * rejected PTY, and the escalating stop behind `stopAndWait` and `dispose` — hang up, force,
 * verify against a fresh listing of the owning host.
 */
export class Stopping {
  readonly #core: ControllerCore
  readonly #exits: ExitPublication
  readonly #output: OutputDelivery

  constructor(core: ControllerCore, exits: ExitPublication, output: OutputDelivery) {
    this.#core = core
    this.#exits = exits
    this.#output = output
  }

  /** Mark the stop for the record's incarnation, then dispatch a hang-up; see `PtyController.kill`. */
  kill(record: PtyRecord): void {
    record.stopRequested = true
    this.#exits.armUnconfirmed(record)
    void this.dispatch(record.ptyId, record, false).then((outcome) => {
      if (outcome === 'rejected' && record.state === 'live') {
        this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      }
    })
    // Why after the dispatch: the provider must learn of the stop before held output (and an exit
    // behind it) is released, so it can tell a death that came first (issue 13.4).
    this.#output.releaseForStop(record)
  }

  /** Retire a rejected spawn's record; see `PtyController.retireRejectedPty`. */
  retire(record: PtyRecord, stopConfirmed: boolean): void {
    record.stopRequested = true
    if (stopConfirmed) {
      this.#exits.settleVerifiedStop(record)
    } else if (record.state === 'live') {
      this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.retireUnconfirmed)
    } else {
      this.#exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.retireUnconfirmed })
    }
  }

  /** Dispatch a shutdown of `ptyId` on the record's provider, fenced by `fence.incarnationId`. */
  dispatch(ptyId: string, fence: Pick<PtyRecord, 'provider' | 'incarnationId'>, immediate: boolean): Promise<ShutdownOutcome> {
    return dispatchShutdown(this.#core.report, fence.provider, ptyId, fence.incarnationId, immediate)
  }

  /**
   * Stop every PTY the controller owns (disposal): each bounded by `stop.defaultDeadlineMs`; one
   * still unconfirmed then is published as `stop_unverified`.
   */
  async stopAllOwned(): Promise<void> {
    const core = this.#core
    const owned = [...core.records.values()].filter((record) => record.state !== 'exited' && !record.superseded)
    await Promise.all(
      owned.map((record) =>
        this.stopAndVerify(record, { deadlineAt: core.clock.now() + core.options.stop.defaultDeadlineMs }).catch(() => false),
      ),
    )
    for (const record of owned) {
      if (record.state === 'live') this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.stopUnconfirmed)
      this.#exits.clearUnconfirmed(record)
    }
  }

  /** `stopAndWait` (see `PtyController.stopAndWait`): a tracked PTY's stop, or an untracked id asked of the hosts. */
  stopAndWait(ptyId: string, request: StopAndWaitRequest): Promise<boolean> {
    const record = this.#core.records.get(ptyId)
    return record === undefined ? stopUntracked(this.#core, ptyId, request) : this.stopAndVerify(record, request)
  }

  /**
   * The stop behind `stopAndWait` and `dispose`: hang up, force within the deadline, and answer
   * `true` only once a dispatched shutdown has **completed** (the provider's stop covers more than
   * the leader) and a fresh listing of the owning host verifies the incarnation gone.
   */
  async stopAndVerify(record: PtyRecord, request: StopAndWaitRequest): Promise<boolean> {
    if (record.state === 'exited') return true
    const core = this.#core
    record.stopRequested = true
    this.#exits.armUnconfirmed(record)
    const remaining = (): number => Math.max(0, request.deadlineAt - core.clock.now())
    const deadline = deadlineOf(core.timers, core.clock, request.deadlineAt, core.disposed)
    const aborted = abortOf(request.signal)
    const force = core.timers.after(forceDelayMs(core.options.stop.forceAfterMs, remaining()))
    const exited = waitForRecordState(record, 'exited')
    // Why one promise for both: an aborted wait gives up exactly like a passed deadline.
    const deadlinePassed = Promise.race([deadline.promise, aborted.promise.then(() => 'deadline' as const)])
    const exitObserved = exited.promise.then(() => 'exit' as const)
    const forceDue = force.promise.then(() => 'force' as const)
    const { provider, ptyId, incarnationId } = record
    const dispatch = (immediate: boolean): Promise<'shutdown_resolved' | 'shutdown_rejected'> =>
      dispatchShutdown(core.report, provider, ptyId, incarnationId, immediate, shutdownOptionsFor(immediate, incarnationId, remaining(), request.keepHistory)).then(
        (outcome) => (outcome === 'resolved' ? ('shutdown_resolved' as const) : ('shutdown_rejected' as const)),
      )
    const verify = (): Promise<boolean | 'deadline'> => this.#verifyAbsent(record, deadlinePassed, remaining, request.keepHistory === true)
    try {
      // 1. Hang up. The answer that counts is the shutdown's own: an exit of the leader alone does
      //    not prove the rest of what the stop covers gone (a setsid child ignoring HUP).
      const hangUp = dispatch(false)
      // After the dispatch, as in `kill`: the provider learns of the stop before held output is released.
      this.#output.releaseForStop(record)
      const first = await Promise.race([hangUp, forceDue, deadlinePassed])
      if (first === 'deadline') return false
      if (first === 'shutdown_resolved') {
        const verified = await verify()
        if (verified === 'deadline') return false
        if (verified) return this.#finishVerifiedStop(record)
        // Carried out but not proven gone yet: give it the rest of the graceful window.
        const next = await Promise.race([exitObserved, forceDue, deadlinePassed])
        if (next === 'deadline') return false
        if (next === 'exit') {
          const again = await verify()
          if (again === 'deadline') return false
          if (again) return this.#finishVerifiedStop(record)
        }
      }
      if (remaining() <= 0) return false
      // 2. Force (immediate): the hang-up failed, is still running at the force delay, or did not prove the process gone.
      const forced = await Promise.race([dispatch(true), deadlinePassed])
      if (forced === 'deadline') return false
      if (forced === 'shutdown_rejected') {
        // Neither stop completed: say so now rather than when the unconfirmed window ends.
        if (record.state === 'live') this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
        return false
      }
      // 3. Verify absence.
      const verified = await verify()
      return verified === true ? this.#finishVerifiedStop(record) : false
    } finally {
      deadline.cancel()
      aborted.cancel()
      force.cancel()
      exited.cancel()
    }
  }

  #finishVerifiedStop(record: PtyRecord): boolean {
    this.#exits.settleVerifiedStop(record)
    return true
  }

  /**
   * Whether the owning host proves this incarnation gone; `'deadline'` when the deadline came
   * first. When the host has no evidence either way, the provider's own exit report (R6: an
   * observed exit certifies the death) decides; a host that still sees the PTY always wins over it.
   */
  async #verifyAbsent(
    record: PtyRecord,
    deadlinePassed: Promise<'deadline'>,
    remaining: () => number,
    keepHistory: boolean,
  ): Promise<boolean | 'deadline'> {
    const timing = { deadlinePassed, remainingMs: remaining, sleep: (ms: number) => this.#core.timers.after(ms).promise }
    const verification = await verifyStop(record, timing, keepHistory)
    switch (verification.kind) {
      case 'deadline':
        return 'deadline'
      case 'absent':
        return true
      case 'present':
        if (record.state === 'live') this.#exits.setLiveness(record, { kind: 'live' })
        return false
      case 'failed':
        this.#core.report(
          'listing_failed',
          `Provider ${record.provider.name} could not list processes to verify a stop`,
          verification.error,
          record.ptyId,
        )
        if (record.state === 'live') {
          this.#exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.verificationFailed })
        }
        return false
      case 'no_evidence':
        return record.state === 'exited'
    }
  }
}
