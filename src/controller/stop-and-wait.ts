import { clampTimerDelay } from '../contracts/index.js'
import { providerGoneRefusal, reportProviderGone, type ControllerCore } from './controller-core.js'
import type { ExitPublication } from './exit-publication.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import type { OutputDelivery } from './output-delivery.js'
import { stopAnsweredByDeath, waitForRecordState, type PtyRecord } from './pty-record.js'
import { holdStopReport } from './held-stop-report.js'
import { dispatchStopOf, shutdownOptionsFor } from './shutdown-dispatch.js'
import { openStopBudget, type StopBudget } from './stop-budget.js'
import type { StopAndWaitRequest } from './stop-and-wait-request.js'
import { verifyStop } from './verify-stop.js'

// `stopAndWait` of a tracked PTY as three phases — hang up, force, verify (docs/controller.md,
// "stopAndWait: escalate and verify"; rule R5) — each one function below, run in order by
// `stopAndWaitTracked`.

/** What the phases act through: the shared core, exit publication and output delivery. */
export type StopPhaseContext = {
  /** The controller's shared core. */
  readonly core: ControllerCore
  /** Publishes `stop_unverified`, liveness, and the verified stop. */
  readonly exits: ExitPublication
  /** Releases held output once the provider knows of the stop. */
  readonly output: OutputDelivery
}

/** One tracked stop in progress: the PTY, the time it may take, and whether to keep its history. */
type TrackedStop = {
  readonly record: PtyRecord
  readonly budget: StopBudget
  readonly keepHistory: boolean | undefined
  /**
   * The record was `exited` already when this stop began — an earlier stop of it not proven done
   * (see `stopAnsweredByDeath`): its exit is no evidence for this stop, only a shutdown the provider
   * completes (then verification) is.
   */
  readonly exitedBefore: boolean
}

/**
 * How a dispatched stop step ended: carried out, refused, refused `provider_disposed` — the
 * provider is disposed or being disposed, stopping its PTYs itself and reporting their exits —, or
 * refused `provider_detached` — the provider let go of its PTYs, which run on: no exit will come.
 */
type StepOutcome = 'shutdown_resolved' | 'shutdown_rejected' | 'provider_disposed' | 'provider_detached'

/**
 * When `stopAndWait` forces (`shutdown({ immediate: true })`): after `forceAfterMs`, but never
 * later than half the time left, so the forced stop always happens within the deadline with time
 * to verify it (a deadline of 5 s or less used to force only when it had already passed).
 */
export function forceDelayMs(forceAfterMs: number, remainingMs: number): number {
  return clampTimerDelay(Math.min(forceAfterMs, remainingMs / 2))
}

/**
 * The stop behind `stopAndWait` and `dispose`: mark the stop, then the three phases — hang up,
 * force within the deadline, verify — answering `true` only once a dispatched shutdown has
 * **completed** (the provider's stop covers more than the leader) and the owning host verifies the
 * incarnation gone. `false` at the deadline, on abort, and on any doubt. `true` at once only for a
 * PTY whose death is proven and whose stop is not in doubt (`stopAnsweredByDeath`): an `exited`
 * PTY whose stop is not proven done — a `kill` or a stop that answered `false`, or one still
 * escalating, while the leader died of the hang-up and a `setsid` child that ignores it lives —
 * runs the phases again, and its proven exit counts for nothing in them (`exitedBefore`).
 */
export async function stopAndWaitTracked(context: StopPhaseContext, record: PtyRecord, request: StopAndWaitRequest): Promise<boolean> {
  if (stopAnsweredByDeath(record)) return true
  const exitedBefore = record.state === 'exited'
  const core = context.core
  record.stopRequested = true
  record.stopUnproven = true
  context.exits.armUnconfirmed(record)
  const budget = openStopBudget(core, request)
  const force = core.timers.after(forceDelayMs(core.options.stop.forceAfterMs, budget.remainingMs()))
  const exited = waitForRecordState(record, 'exited')
  const stop: TrackedStop = { record, budget, keepHistory: request.keepHistory, exitedBefore }
  const { deadlinePassed } = budget
  const exitObserved = exited.promise.then(() => 'exit' as const)
  // A force timer cut short by dispose (its timers cleared) is no reason to force: with
  // `stopPtys: false` dispose promises to leave the process as it is, so this wait gives up.
  const forceDue = force.promise.then(() => (core.timers.cleared ? ('deadline' as const) : ('force' as const)))
  // Counted until it ends: a spawn or adoption of the PTY's slot waits for it (see `escalatingStops`).
  record.escalatingStops++
  // Why the waiting is here and not inside the phases: each phase is one step, and the awaits of
  // the whole stop stay in one place (callers on a manual clock count on how many turns it takes).
  try {
    // A provider being disposed refuses the stop (`provider_disposed`) while it stops its PTYs
    // itself and reports their exits: its own exit report is the evidence. Waited for within the
    // budget — answering at the refusal said `false` for a PTY closed as asked moments later.
    // An exit proven before this stop began is no such evidence: nothing more will be reported.
    const disposalExit = async (): Promise<boolean> =>
      !exitedBefore && (await Promise.race([exitObserved, deadlinePassed])) === 'exit' ? finish(context, record) : providerDisposedDoubt(context, stop)
    // A detached provider refuses the stop too, but stops nothing and reports no exit: waiting the
    // budget out for one would only hold the caller. Answered at the refusal (see providerDetachedDoubt).
    // 1. Hang up, until it completes, the force delay comes, or the deadline.
    const first = await Promise.race([hangUp(context, stop), forceDue, deadlinePassed])
    if (first === 'deadline') return false
    if (first === 'provider_disposed') return await disposalExit()
    if (first === 'provider_detached') return providerDetachedDoubt(context, stop, 'stop')
    if (first === 'shutdown_resolved') {
      const verified = await verifyGone(context, stop)
      if (verified === 'deadline') return false
      if (verified === 'provider_disposed') return await disposalExit()
      if (verified === 'provider_detached') return providerDetachedDoubt(context, stop, 'verification')
      if (verified) return finish(context, record)
      // Carried out but not proven gone yet: give it the rest of the graceful window.
      const next = await Promise.race([exitObserved, forceDue, deadlinePassed])
      if (next === 'deadline') return false
      if (next === 'exit') {
        const again = await verifyGone(context, stop)
        if (again === 'deadline') return false
        if (again === 'provider_disposed') return await disposalExit()
        if (again === 'provider_detached') return providerDetachedDoubt(context, stop, 'verification')
        if (again) return finish(context, record)
      }
    }
    // 2. Force: the hang-up failed, is still running at the force delay, or did not prove the process gone.
    if (budget.remainingMs() <= 0 || core.timers.cleared) return false
    const forced = await Promise.race([forceStop(context, stop), deadlinePassed])
    if (forced === 'deadline') return false
    if (forced === 'provider_disposed') return await disposalExit()
    if (forced === 'provider_detached') return providerDetachedDoubt(context, stop, 'stop')
    if (forced === 'shutdown_rejected') {
      // Neither stop completed: say so now rather than when the unconfirmed window ends.
      if (record.state === 'live') context.exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      return false
    }
    // 3. Verify.
    const verified = await verifyGone(context, stop)
    if (verified === 'provider_disposed') return await disposalExit()
    if (verified === 'provider_detached') return providerDetachedDoubt(context, stop, 'verification')
    return verified === true ? finish(context, record) : false
  } finally {
    budget.close()
    force.cancel()
    exited.cancel()
    // A spawn or adoption waiting for this stop (see `escalatingStops`) looks again.
    if (--record.escalatingStops === 0) record.stateListeners?.fire()
  }
}

/**
 * Phase 1, hang up: a graceful shutdown (`shutdown` without `immediate`) with the time left. The
 * answer that counts is the shutdown's own completion: an exit of the leader alone does not prove
 * the rest of what the stop covers gone (a `setsid` child ignoring HUP).
 */
function hangUp(context: StopPhaseContext, stop: TrackedStop): Promise<StepOutcome> {
  const hangingUp = dispatchStep(context, stop, false)
  // After the dispatch, as in `kill`: the provider learns of the stop before held output is released.
  context.output.releaseForStop(stop.record)
  return hangingUp
}

/** Phase 2, force: `shutdown({ immediate: true })` with the time left. */
function forceStop(context: StopPhaseContext, stop: TrackedStop): Promise<StepOutcome> {
  return dispatchStep(context, stop, true)
}

/** The stop is verified: settle it (an operator close, published by the controller if the provider never reported the exit). */
function finish(context: StopPhaseContext, record: PtyRecord): true {
  context.exits.settleVerifiedStop(record)
  return true
}

/**
 * Phase 3, verify: whether the owning host proves this incarnation gone (`verifyStop`); `'deadline'`
 * when the deadline came first. A host that still sees the PTY makes it live again; a failed listing
 * is reported and makes it `unverifiable`; when the host has no evidence either way, the provider's
 * own exit report decides (R6: an observed exit certifies the death).
 */
async function verifyGone(context: StopPhaseContext, stop: TrackedStop): Promise<boolean | 'deadline' | 'provider_disposed' | 'provider_detached'> {
  const { record } = stop
  const verification = await verifyStop(record, stop.budget, stop.keepHistory === true)
  switch (verification.kind) {
    case 'deadline':
      return 'deadline'
    case 'absent':
      return true
    case 'present':
      if (record.state === 'live') context.exits.setLiveness(record, { kind: 'live' })
      return false
    case 'failed':
      // The provider is gone (disposed, or detached): an exit it reported before still verifies.
      if (providerGoneRefusal(verification.error) !== null && exitIsEvidence(stop)) return true
      const gone = reportProviderGone(context.core, record.provider, 'listing_failed', verification.error)
      if (gone !== null) return gone
      context.core.report('listing_failed', `Provider ${record.provider.name} could not list processes to verify a stop`, verification.error, record.ptyId)
      if (record.state === 'live') {
        context.exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.verificationFailed })
      }
      return false
    case 'no_evidence':
      return record.state === 'exited'
  }
}

/**
 * The verdict of a stop whose owning provider refused it (a step or the verifying listing) as
 * `provider_disposed` and reported no exit of the PTY by the stop's deadline: the host disposed the
 * provider before (or while) the controller that uses it, and the provider can say nothing any
 * more. Its own exit report is the only evidence (a disposed provider stopped its PTYs and reported
 * their exits; the stop answers `true` once that exit arrives, without a `listing_failed` per PTY
 * and step, which was noise the host could not act on). Without it the PTY stays in doubt
 * (`false`, liveness `unverifiable`), reported once per provider ({@link reportProviderGone}).
 */
function providerDisposedDoubt(context: StopPhaseContext, stop: TrackedStop): boolean {
  const { record } = stop
  if (exitIsEvidence(stop)) return finish(context, record)
  if (record.state === 'live') context.exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.verificationFailed })
  return false
}

/**
 * The verdict of a stop whose owning provider refused a step (`'stop'`) or the verifying listing
 * (`'verification'`) as `provider_detached`: the provider let go of its PTYs (the pty host's
 * `detach()`), which run on, so no exit report will come and nothing more can be verified —
 * `false` at once, never after the whole budget, unless the provider reported the exit before.
 * A refused step stopped nothing: the PTY is published `stop_unverified` (liveness `unverifiable`,
 * `shutdown_failed`), as a stop the provider refused; a refused verification leaves the stop
 * unverified (`stop_verification_failed`). Reported once per provider ({@link reportProviderGone}).
 */
function providerDetachedDoubt(context: StopPhaseContext, stop: TrackedStop, refused: 'stop' | 'verification'): boolean {
  const { record } = stop
  if (exitIsEvidence(stop)) return finish(context, record)
  if (record.state === 'live') {
    if (refused === 'stop') context.exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
    else context.exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.verificationFailed })
  }
  return false
}

/**
 * Whether the provider's exit report proves this stop done when the provider can say nothing more
 * (disposed, detached): an exit observed — but not one proven before this stop began, whose
 * earlier stop was not proven done (`exitedBefore`): that exit says nothing of the rest of the stop.
 */
function exitIsEvidence(stop: TrackedStop): boolean {
  return stop.record.state === 'exited' && !stop.exitedBefore
}

/** Dispatch one step's shutdown of the record's incarnation, with the time left and `keepHistory`. */
function dispatchStep(context: StopPhaseContext, stop: TrackedStop, immediate: boolean): Promise<StepOutcome> {
  const options = shutdownOptionsFor(immediate, stop.record.incarnationId, stop.budget.remainingMs(), stop.keepHistory)
  return dispatchStopOf(context.core, stop.record, immediate, options, (report) => reportUnlessLanded(context, stop, report)).then((outcome) =>
    outcome === 'resolved' ? 'shutdown_resolved' : outcome === 'provider_disposed' || outcome === 'provider_detached' ? outcome : 'shutdown_rejected',
  )
}

/**
 * Report a step's rejected shutdown — unless it came once the stop's time was spent and the stop
 * landed. The step hands the provider the time the caller left (`timeoutMs`), and a provider fails a
 * stop still running when that time runs out (node-pty, SSH, the pty host: `shutdown_timeout`), also
 * one whose hang-up or kill was sent and ends the process a moment later. That is the caller's
 * deadline passing, not a provider fault: the `stopAndWait` has answered `false` already, and the
 * exit that follows is an operator close. So such a rejection is held until the PTY's exit
 * (nothing reported) or the unconfirmed-stop window's end (reported then, beside `stop_unverified`;
 * not at `dispose`, whose own stop of the PTY answers for it): see `held-stop-report.ts`, which a
 * `kill` whose provider ran out of time shares.
 * Why: 40 agents stopped with `{ timeoutMs: 1 }` or a past `deadlineMs` over node-pty reported 40
 * `shutdown_failed` "could not shut down" for processes that were shut down (the fake, whose stops
 * land at once, reported none).
 */
function reportUnlessLanded(context: StopPhaseContext, stop: TrackedStop, report: () => void): void {
  if (stop.budget.remainingMs() > 0) {
    report()
    return
  }
  holdStopReport(context.core, stop.record, report, context.core.options.stop.unconfirmedAfterMs)
}
