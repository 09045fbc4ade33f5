import type { PtyExitEvent, PtyLivenessVerdict } from '../contracts/index.js'
import { UNVERIFIED_PROCESS_EXIT_CODE, exitCauseFromWire, settleExitCause, type TerminalExitCause } from '../exit-cause/index.js'
import type { Bookkeeping } from './bookkeeping.js'
import type { ControllerCore } from './controller-core.js'
import { certifiesDeath, observedExitCause, stopRequestedBeforeExit } from './exit-evidence.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import type { OutputDelivery } from './output-delivery.js'
import { incarnationOf } from '../contracts/incarnation.js'
import type { PtyControllerExitEvent } from './events.js'
import type { PtyRecord } from './pty-record.js'

/**
 * How an incarnation ends, and what is published when: the `exit` event (its cause settled by the
 * operator-close rule), the `liveness` verdict, the record's state, and — once the death is
 * proven — the release of its runtime registration, claim and slot. Also the unconfirmed-stop
 * timer, which publishes `stop_unverified` when no exit follows a stop.
 */
export class ExitPublication {
  readonly #core: ControllerCore
  readonly #bookkeeping: Bookkeeping
  readonly #output: OutputDelivery
  /** What each open unconfirmed-stop window does at its end, when not the default (see {@link ExitPublication.atUnconfirmedEnd}). */
  readonly #atUnconfirmedEnd = new WeakMap<PtyRecord, (ended: boolean) => void>()

  /** `output`: whose coalesced output (`dataBatchMs`) is flushed before an incarnation's exit. */
  constructor(core: ControllerCore, bookkeeping: Bookkeeping, output: OutputDelivery) {
    this.#core = core
    this.#bookkeeping = bookkeeping
    this.#output = output
  }

  /** A provider reported the exit of a live record. */
  settleProviderExit(record: PtyRecord, event: PtyExitEvent): void {
    const observed = observedExitCause(event, record.hostReportsChildExitStatus)
    const verdict: PtyLivenessVerdict = certifiesDeath(event, record.hostReportsChildExitStatus)
      ? { kind: 'exited' }
      : { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed }
    this.publishExit(record, event.code, observed, verdict, event)
  }

  /**
   * A provider reported the exit of a record whose stop went unverified: its real cause is
   * published (a second `exit`, after the synthetic `stop_unverified`), and the death confirmed.
   */
  settleLateExit(record: PtyRecord, event: PtyExitEvent): void {
    if (!certifiesDeath(event, record.hostReportsChildExitStatus)) return
    // Dead before the event goes out, as `publishExit` orders it: a listener of this exit that asks
    // `hasPty` is told `false`, and its `kill` (before: `true`, and a stop sent) finds nothing to stop.
    const proves = record.state === 'unverified'
    if (proves) {
      this.clearUnconfirmed(record)
      this.#core.records.setState(record, 'exited')
    }
    this.#emitExit(record, event.code, observedExitCause(event, record.hostReportsChildExitStatus), event)
    if (proves) {
      this.setLiveness(record, { kind: 'exited' })
      this.#releaseOwnership(record)
    }
  }

  /** Publish the exit of a live record (nothing when the provider's own exit came first). */
  publishExit(record: PtyRecord, code: number, observed: TerminalExitCause, verdict: PtyLivenessVerdict, event?: PtyExitEvent): void {
    this.clearUnconfirmed(record)
    // The release resumes a paused provider, which may hand over the output it held and the exit
    // behind it from inside: that exit is published there, and it is the incarnation's one. If it
    // left the death unproven (a provider's synthetic exit) and this one proves it, confirm it.
    // Let through at once, also while this exit is being delivered: what it hands over precedes it.
    const flow = this.#core.flow
    if (flow !== null) this.#core.delivery.letThrough(record.ptyId, () => flow.release(record.flowTarget))
    if (record.state !== 'live') {
      if (verdict.kind === 'exited') this.confirmDeath(record)
      return
    }
    this.#core.records.setState(record, verdict.kind === 'exited' ? 'exited' : 'unverified')
    this.#emitExit(record, code, observed, event)
    this.setLiveness(record, verdict)
    if (verdict.kind === 'exited') this.#releaseOwnership(record)
  }

  /** Publish a live record's exit as `stop_unverified` (code −1), liveness `unverifiable`. */
  publishUnverified(record: PtyRecord, reason: string): void {
    if (record.state !== 'live') return
    this.publishExit(
      record,
      UNVERIFIED_PROCESS_EXIT_CODE,
      { kind: 'unknown', reason: 'stop_unverified' },
      { kind: 'unverifiable', reason },
    )
  }

  /** Proven death of a PTY whose exit was already published as unverified. */
  confirmDeath(record: PtyRecord): void {
    if (record.state !== 'unverified') return
    this.clearUnconfirmed(record)
    this.#core.records.setState(record, 'exited')
    this.setLiveness(record, { kind: 'exited' })
    this.#releaseOwnership(record)
  }

  /** A stop verified by the host: publish the exit ourselves if the provider never did. */
  settleVerifiedStop(record: PtyRecord): void {
    record.stopUnproven = false
    if (record.state === 'live') {
      // Why code 0 through the wire resolver: the listing proves absence, not why; with the stop
      // mark the operator-close rule turns the resulting `cause_unreported` into `operator_close`.
      this.publishExit(record, 0, exitCauseFromWire({ code: 0 }), { kind: 'exited' })
    } else {
      this.confirmDeath(record)
    }
  }

  /** Publish `verdict` as `record`'s liveness, when it differs from the last one known. */
  setLiveness(record: PtyRecord, verdict: PtyLivenessVerdict): void {
    // Only a change is news ("what is known changed"): a probe or a listing that finds again what
    // was known (a live PTY probed every second, a host failing listing after listing) is not.
    if (sameVerdict(record.liveness, verdict)) return
    record.liveness = verdict
    // A replaced incarnation publishes nothing (see #emitExit). Built only for a listener: most
    // hosts follow exits, and every exit would otherwise build two objects nobody reads.
    if (record.superseded || !this.#core.listens('liveness')) return
    this.#core.emit('liveness', { ptyId: record.ptyId, ...incarnationOf(record.incarnationId), hostId: record.hostId, verdict })
  }

  /**
   * A re-attach to an incarnation whose stop went unverified proves its host still holds it: the
   * record is live again (writes are accepted, liveness `live`) and keeps its stop intent, so its
   * eventual exit is settled as an operator close and published — the one case where an
   * incarnation gets a second `exit` event, after the first one said "unverified".
   *
   * Returns whether it revived the record.
   */
  reviveIfUnverified(record: PtyRecord): boolean {
    if (record.state !== 'unverified') return false
    this.#core.records.setState(record, 'live')
    this.setLiveness(record, { kind: 'live' })
    return true
  }

  /** A newer incarnation replaces `record` under its id. */
  supersede(record: PtyRecord): void {
    this.#output.flush(record)
    record.superseded = true
    this.#core.records.forgetExited(record)
    this.clearUnconfirmed(record)
    // Not released: a resume is addressed by id and would reach the replacement.
    this.#core.flow?.forget(record.flowTarget)
  }

  /** Start the window after which a stop with no exit is published as `stop_unverified`. */
  armUnconfirmed(record: PtyRecord): void {
    if (record.unconfirmedTimer !== undefined || record.state !== 'live') return
    record.unconfirmedTimer = this.#core.timers.set(() => {
      record.unconfirmedTimer = undefined
      const atEnd = this.#atUnconfirmedEnd.get(record)
      this.#atUnconfirmedEnd.delete(record)
      if (atEnd !== undefined) atEnd(true)
      else this.publishUnverified(record, PTY_LIVENESS_REASONS.stopUnconfirmed)
    }, this.#core.options.stop.unconfirmedAfterMs)
  }

  clearUnconfirmed(record: PtyRecord): void {
    if (record.unconfirmedTimer === undefined) return
    this.#core.timers.clear(record.unconfirmedTimer)
    record.unconfirmedTimer = undefined
    const atEnd = this.#atUnconfirmedEnd.get(record)
    this.#atUnconfirmedEnd.delete(record)
    atEnd?.(false)
  }

  /**
   * What the record's open unconfirmed-stop window does when it ends, instead of publishing
   * `stop_unverified` (`stop_unconfirmed`): `atEnd(true)` then — it publishes what it knows (a `kill`
   * whose provider ran out of time: `shutdown_failed`, see `Stopping.kill`) —, or `atEnd(false)` when
   * the window is cleared first: the exit came, `dispose`, a replacement, or another stop published
   * the PTY (`stop_unverified` with its own reason, its own failures reported as they came). The
   * window stays open meanwhile (the stop is under way). `false`, and nothing set, when no window is open.
   */
  atUnconfirmedEnd(record: PtyRecord, atEnd: (ended: boolean) => void): boolean {
    if (record.unconfirmedTimer === undefined) return false
    this.#atUnconfirmedEnd.set(record, atEnd)
    return true
  }

  /**
   * Emit `exit` with the cause settled by the operator-close rule. The rule applies to a stop
   * requested while the process lived — this controller's, or one the provider attests
   * (`stopRequestedBeforeDeath`: an earlier run's or another app's) — and a provider that knew it
   * dead before the stop request (`diedBeforeStopRequest`) keeps its own cause (issue 13.4).
   */
  #emitExit(record: PtyRecord, code: number, observed: TerminalExitCause, event?: PtyExitEvent): void {
    // An incarnation replaced under its id publishes no exit (docs/controller.md: its handle never
    // resolves `exited`): hosts follow events by id, and the id now names the replacement. A stop
    // still settles on its record (a stop in flight across the respawn gets its answer).
    if (record.superseded) return
    const stopRequested = stopRequestedBeforeExit(record.stopRequested, event)
    const cause = settleExitCause(observed, { stopRequested })
    // Data before exit (R3): output held for coalescing goes out first.
    this.#output.flush(record)
    // A provider's malformed code (a string, NaN, 1.5) never reaches hosts that read `code` as a
    // number: its cause is already `cause_unreported` (or the provider's own), and the code is the
    // seed's "no status" (−1), never `0` — `0` reads as a clean finish to `isProvenProcessExit`.
    const publishedCode = Number.isSafeInteger(code) ? code : UNVERIFIED_PROCESS_EXIT_CODE
    // The record's own host: the incarnation that ended, never a replacement on another host.
    const exit: PtyControllerExitEvent = {
      ptyId: record.ptyId,
      ...incarnationOf(record.incarnationId),
      hostId: record.hostId,
      code: publishedCode,
      cause,
    }
    record.publishedExit = exit
    this.#core.emit('exit', exit)
  }

  #releaseOwnership(record: PtyRecord): void {
    // Only the current incarnation may release the id's claim and slot; a replacement owns them now.
    if (!this.#core.records.isCurrent(record) || record.superseded) return
    this.#bookkeeping.forgetRuntimePty(record.ptyId)
    if (record.claimKey !== undefined) this.#bookkeeping.releaseClaim(record.ptyId, undefined)
    if (record.slot !== undefined) {
      this.#bookkeeping.retireSlot(record.slot, { ptyId: record.ptyId, hostId: record.hostId, ...incarnationOf(record.incarnationId) })
    }
  }
}

function sameVerdict(a: PtyLivenessVerdict, b: PtyLivenessVerdict): boolean {
  return a.kind === b.kind && (a.kind !== 'unverifiable' || a.reason === (b as typeof a).reason)
}
