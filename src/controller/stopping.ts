import type { ControllerCore } from './controller-core.js'
import type { ExitPublication } from './exit-publication.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import type { OutputDelivery } from './output-delivery.js'
import { stopAnsweredByDeath, type PtyRecord } from './pty-record.js'
import type { ComingPty } from './pty-record-table.js'
import { dispatchShutdown, dispatchStopOf, type ShutdownOutcome } from './shutdown-dispatch.js'
import { stopAndWaitTracked, type StopPhaseContext } from './stop-and-wait.js'
import { abortOf } from './abort.js'
import { deadlineOf } from './stop-budget.js'
import type { StopAndWaitRequest } from './stop-and-wait-request.js'
import { stopUntracked } from './stop-untracked.js'
import { holdStopReport, takeHeldStopReport } from './held-stop-report.js'
import { isShutdownTimeout } from '../contracts/shutdown-timeout.js'

/**
 * Stopping PTYs: `kill` (mark the stop, dispatch, arm the unconfirmed timer), retiring a rejected
 * PTY, disposal's stops, and routing `stopAndWait` to its phases (`stop-and-wait.ts`: hang up,
 * force, verify) or, for an id the controller does not track, to the hosts (`stop-untracked.ts`).
 */
export class Stopping {
  readonly #core: ControllerCore
  readonly #exits: ExitPublication
  readonly #output: OutputDelivery
  readonly #phases: StopPhaseContext
  /**
   * Each PTY disposal stops: its stop's verdict, and that verdict once it is in (`undefined`: still
   * stopping, see {@link Stopping.isStoppingForDispose}; `true`: verified; `false`: given up on,
   * see {@link Stopping.killAfterDispose}) — read by {@link Stopping.stopAndWaitAfterDispose}.
   */
  readonly #disposalStops = new Map<PtyRecord, { verdict: Promise<boolean>; verified: boolean | undefined }>()

  constructor(core: ControllerCore, exits: ExitPublication, output: OutputDelivery) {
    this.#core = core
    this.#exits = exits
    this.#output = output
    this.#phases = { core, exits, output }
  }

  /** Mark the stop for the record's incarnation, then dispatch a hang-up; see `PtyController.kill`. */
  kill(record: PtyRecord): void {
    record.stopRequested = true
    record.stopUnproven = true
    this.#exits.armUnconfirmed(record)
    let held = false
    const reportRejection = (report: () => void, error: unknown): void => {
      held = this.#holdIfOutOfTime(record, report, error)
      if (!held) report()
    }
    void dispatchStopOf(this.#core, record, false, undefined, reportRejection).then((outcome) => {
      // Refused (but for a stop that ran out of time, held above), or refused as detached: the
      // provider stopped nothing (a detached provider's PTYs run on), published at once.
      if (((outcome === 'rejected' && !held) || outcome === 'provider_detached') && record.state === 'live') {
        this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      }
    })
    // Why after the dispatch: the provider must learn of the stop before held output (and an exit
    // behind it) is released, so it can tell a death that came first (issue 13.4).
    this.#output.releaseForStop(record)
  }

  /**
   * A `kill`'s shutdown rejected as having run out of time (`isShutdownTimeout`: the provider sent
   * the stop and did not see the PTY gone by its deadline — under load, or joining a provider
   * disposal's stop with a short `shutdownDeadlineMs`) may still land a moment later: its report
   * and the `stop_unverified` exit wait for the end of the unconfirmed-stop window `kill` armed
   * (`held-stop-report.ts`). The PTY's exit within it settles the stop (an operator close, nothing
   * reported); at its end the report is made and the PTY published `stop_unverified` with
   * `shutdown_failed`, as a refused stop is at once. An exit that came before the rejection leaves
   * nothing to report, and at `dispose` (timers cleared) disposal's own stop of the PTY gives the
   * verdict. Answers whether the rejection was taken care of so — `false` for a refusal (reported
   * and published at once), and for a PTY whose window is no longer open (it ended: the PTY is
   * `stop_unverified` already, and the report is made at once).
   */
  #holdIfOutOfTime(record: PtyRecord, report: () => void, error: unknown): boolean {
    if (!isShutdownTimeout(error)) return false
    if (record.state === 'exited' || this.#core.timers.cleared) return true
    if (record.state !== 'live') return false
    const exits = this.#exits
    const windowOpen = exits.atUnconfirmedEnd(record, (ended) => {
      const held = takeHeldStopReport(record)
      if (!ended) return
      held?.()
      exits.publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
    })
    if (!windowOpen) return false
    holdStopReport(this.#core, record, report)
    return true
  }

  /** Retire a rejected spawn's record; see `PtyController.retireRejectedPty`. */
  retire(record: PtyRecord, stopConfirmed: boolean): void {
    record.stopRequested = true
    record.stopUnproven = true
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
    return dispatchShutdown(this.#core, fence.provider, ptyId, fence.incarnationId, immediate)
  }

  /**
   * Stop every PTY the controller owns (disposal): each bounded by `stop.defaultDeadlineMs`; one
   * still unconfirmed then is published as `stop_unverified`. An ended PTY whose stop is not proven
   * done (`stopAnsweredByDeath`: a `kill` whose shutdown did not complete, a `stopAndWait` that
   * answered `false`) is stopped again too: its leader's exit does not prove the rest of that stop done.
   */
  async stopAllOwned(): Promise<void> {
    const core = this.#core
    const owned = [...core.records.values()].filter((record) => !stopAnsweredByDeath(record) && !record.superseded)
    const verdicts = owned.map((record) => {
      const verdict = stopAndWaitTracked(this.#phases, record, { deadlineAt: core.clock.now() + core.options.stop.defaultDeadlineMs }).catch(() => false)
      const stop = { verdict, verified: undefined as boolean | undefined }
      this.#disposalStops.set(record, stop)
      // Given up on as soon as its own stop is over (not once every stop of the disposal is): a
      // late `kill` of it then reaches it at once, whatever another PTY's stop still waits for.
      return verdict.then((verified) => {
        stop.verified = verified
      })
    })
    await Promise.all(verdicts)
    for (const record of owned) {
      if (record.state === 'live') this.#exits.publishUnverified(record, PTY_LIVENESS_REASONS.stopUnconfirmed)
      this.#exits.clearUnconfirmed(record)
    }
  }

  /**
   * A `kill(ptyId)` after `dispose()` began (a terminal handle's too): whether a stop of the PTY
   * tracked under `ptyId` is committed. `true` while disposal is still stopping it (nothing more is
   * dispatched: disposal's stop escalates). For a PTY whose stop disposal gave up on
   * (`stop_unverified`, published once every stop of the disposal settled; the PTY counts as given
   * up from the end of its own stop: the process may still run), a forced shutdown fenced by its incarnation is
   * dispatched to its provider — which the host still owns — and the answer is `true`, as a `kill`
   * of an unverified PTY before `dispose()` still reaches it; nobody follows that stop up (the
   * controller no longer hears its provider). `false` otherwise: death proven, let go by
   * `dispose({ stopPtys: false })`, or not tracked.
   */
  killAfterDispose(ptyId: string): boolean {
    if (this.isStoppingForDispose(ptyId)) return true
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state === 'exited' || this.#disposalStops.get(record)?.verified !== false) return false
    void this.dispatch(ptyId, record, true)
    return true
  }

  /**
   * Whether disposal is stopping the PTY tracked under `ptyId` now: its stop is under way, and its
   * death not proven yet. A late `kill` of it (after `dispose()` began) answers this: a stop is
   * committed, disposal's own, which escalates within `stop.defaultDeadlineMs`.
   */
  isStoppingForDispose(ptyId: string): boolean {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state === 'exited') return false
    const stop = this.#disposalStops.get(record)
    return stop !== undefined && stop.verified === undefined
  }

  /**
   * `stopAndWait` after `dispose()` began (a host's late call from an async callback: the tab closed
   * as the app quit): the truth about the PTY tracked under `ptyId`, without dispatching anything
   * (disposal's stop is the one committed). While disposal is stopping it: that stop's verdict —
   * `true` only if it was verified — or `false` when the caller's deadline passes or its `signal`
   * aborts first. `true` for a PTY whose death is proven; `false` for one whose stop disposal gave
   * up on (`stop_unverified`), one `dispose({ stopPtys: false })` let go, and an id the controller
   * does not track (no host is asked any more). With `withComing`, a spawn or attach of the id still
   * coming is marked as `kill` marks it (stopped when it lands) and makes the answer `false`: nobody
   * can verify that stop any more.
   */
  async stopAndWaitAfterDispose(ptyId: string, request: StopAndWaitRequest, withComing: boolean): Promise<boolean> {
    const core = this.#core
    const coming = withComing && core.records.requestStopOfComing(ptyId)
    const record = core.records.get(ptyId)
    if (record === undefined) return false
    return (await this.#disposalVerdict(record, request)) && !coming
  }

  /**
   * Disposal's verdict of `record`'s stop, within the caller's deadline and `signal`: `true` for a
   * death proven, or once disposal verified its stop; `false` for a PTY disposal did not stop (let
   * go), gave up on, or whose verdict did not come in time.
   */
  async #disposalVerdict(record: PtyRecord, request: StopAndWaitRequest): Promise<boolean> {
    const core = this.#core
    // An ended PTY whose stop is in doubt (see `stopAnsweredByDeath`): disposal stopped it again, and that stop answers.
    const verdict = stopAnsweredByDeath(record) ? Promise.resolve(true) : this.#disposalStops.get(record)?.verdict
    if (verdict === undefined) return false
    // Disposal's stop settles before the controller's timers are cleared, so a deadline timer
    // here never outlives it (and a verdict already in wins the race: it comes first).
    const deadline = deadlineOf(core.timers, core.clock, request.deadlineAt, () => core.timers.cleared)
    const aborted = abortOf(request.signal)
    try {
      return (await Promise.race([verdict, deadline.promise, aborted.promise])) === true
    } finally {
      deadline.cancel()
      aborted.cancel()
    }
  }

  /**
   * `stopAndWait` (see `PtyController.stopAndWait`): a tracked PTY's phased stop, or an untracked id
   * asked of the hosts — and, when spawns (`sessionId`) or attaches of the id begun before this
   * call are still queued or in flight, waiting for those to land (within the deadline) and
   * stopping what they published under the id too — one still coming when the call gives up is
   * marked as `kill` marks it, stopped when it lands (unless `withComing` is `false`: a terminal
   * handle's stop, its incarnation's alone).
   */
  stopAndWait(ptyId: string, request: StopAndWaitRequest, withComing = true): Promise<boolean> {
    // An `adoptSlot` waiting for its turn would attach a process that runs already: it is stopped
    // where it runs (below, as for any id), not waited for — and the adoption is marked, so a
    // process it attaches anyway is stopped as it lands.
    if (withComing) this.#core.records.requestStopOfQueuedAdoptions(ptyId)
    const coming = withComing ? this.#core.records.comingOf(ptyId) : []
    if (coming.length === 0) return this.#stopNow(ptyId, request)
    return this.#stopWithComing(ptyId, coming, request)
  }

  /**
   * A spawn or attach of the id is coming: no host may know its process yet, and neither the
   * ended record's death nor the tracked PTY's stop says anything about it. Absence is not proven
   * until it lands; a spawn or attach begun after this call is not waited for (nor stopped: a
   * restart is `stopAndWait` then `spawn`).
   */
  async #stopWithComing(ptyId: string, coming: readonly ComingPty[], request: StopAndWaitRequest): Promise<boolean> {
    const records = this.#core.records
    const tracked = records.get(ptyId)
    const stops: Promise<boolean>[] = []
    const stopped = new Set<PtyRecord>()
    const stop = (record: PtyRecord): void => {
      if (stopped.has(record)) return
      stopped.add(record)
      stops.push(stopAndWaitTracked(this.#phases, record, request))
    }
    if (tracked !== undefined && !stopAnsweredByDeath(tracked)) stop(tracked)
    // What each publishes is stopped the moment it lands: a spawn queued behind it then finds it
    // stopping (and waits for the stop) rather than live (and re-attaching to a process about to end).
    for (const each of coming) (each.onPublished ??= new Set()).add(stop)
    let landed = false
    try {
      landed = await this.#landed(ptyId, coming, request)
    } finally {
      for (const each of coming) {
        each.onPublished?.delete(stop)
        // Given up on (the deadline, the signal, dispose) while still coming: the caller asked for
        // a stop, so it is marked as `kill` marks it — what it publishes under the id is stopped
        // the moment it lands — rather than left to run on after a `false` (one already over
        // reads the mark no more).
        if (!landed) each.stopRequested = true
      }
    }
    if (stops.length === 0) {
      // Nothing was tracked live or published (the spawns failed, or adopted another id's PTY): as
      // for any id — its ended record, or the hosts — unless a later spawn published the id meanwhile (not ours).
      if (!landed) return false
      const current = records.get(ptyId)
      if (current === undefined) return stopUntracked(this.#core, ptyId, request)
      return current === tracked ? stopAndWaitTracked(this.#phases, current, request) : true
    }
    const answers = await Promise.all(stops)
    return landed && answers.every(Boolean)
  }

  #stopNow(ptyId: string, request: StopAndWaitRequest): Promise<boolean> {
    const record = this.#core.records.get(ptyId)
    if (record === undefined) return stopUntracked(this.#core, ptyId, request)
    // A stop begun before `dispose()` that disposal cut short (its timers cleared): disposal's own
    // stop of the PTY decides, as for a call made after `dispose()` began (before: `false`, also
    // for a PTY disposal had just verified stopped).
    return stopAndWaitTracked(this.#phases, record, request).then((answer) =>
      answer || !this.#core.disposed() ? answer : this.#disposalVerdict(record, request),
    )
  }

  /** Whether the spawns and attaches `coming` of `ptyId` are over before the request gives up. */
  async #landed(ptyId: string, coming: readonly ComingPty[], request: StopAndWaitRequest): Promise<boolean> {
    const core = this.#core
    const landing = core.records.whenLanded(ptyId, coming)
    const deadline = deadlineOf(core.timers, core.clock, request.deadlineAt, core.disposed)
    const aborted = abortOf(request.signal)
    try {
      const outcome = await Promise.race([landing.promise.then(() => 'landed' as const), deadline.promise, aborted.promise])
      return outcome === 'landed' && !core.disposed()
    } finally {
      landing.cancel()
      deadline.cancel()
      aborted.cancel()
    }
  }
}
