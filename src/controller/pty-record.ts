import {
  createListenerSet,
  type ExecutionHostId,
  type ListenerSet,
  type PtyIncarnationId,
  type PtyLivenessVerdict,
  type PtyProvider,
  type PtySlot,
} from '../contracts/index.js'
import type { PtyTimerHandle } from './clock.js'
import type { PtyControllerExitEvent } from './events.js'
import type { ProducerFlowTarget } from './flow-control.js'


/** The verdict of a running incarnation (shared: records only point to it). */
const LIVE: PtyLivenessVerdict = Object.freeze({ kind: 'live' })
/**
 * Where one incarnation of a PTY stands, as the controller knows it:
 *
 * - `live`: spawned, no exit observed;
 * - `unverified`: an exit was published but the death is not proven (a stop nobody confirmed, or
 *   a provider exit it could not vouch for); the process may still be alive;
 * - `exited`: the owning host proved the process gone.
 */
export type PtyRecordState = 'live' | 'unverified' | 'exited'

/**
 * The controller's record of one incarnation behind a PTY id. A respawn of the same id gets a
 * new record, so per-incarnation facts (the stop intent, timers, flow-control debt) can never
 * leak to the replacement.
 */
export type PtyRecord = {
  /** The PTY id. */
  readonly ptyId: string
  /** The host it runs on. */
  readonly hostId: ExecutionHostId
  /** The provider that owns it (events are matched by provider identity). */
  readonly provider: PtyProvider
  /** The incarnation, when attested. */
  readonly incarnationId: PtyIncarnationId | undefined
  /**
   * The proven root pid, if published. Learned late once: a record a joined claim published first
   * takes it from its creator's reply.
   */
  pid: number | undefined
  /** `false` when the spawn said a wrapper owns the exit status. */
  readonly hostReportsChildExitStatus: boolean
  /** The spawn's scope, slot and claim, for inventory and releasing ownership. */
  readonly scopeId: string | undefined
  /** The slot the PTY owns, if any (set later when `adoptSlot` adopts it). */
  slot: PtySlot | undefined
  /** The claim key the PTY holds, if any. */
  readonly claimKey: string | undefined
  /**
   * The claim owner's `generation` when a claimed spawn published this record: the start it came
   * from. Of a claim's creator and a joiner, both publish the one start; for a provider without
   * incarnation ids this is how the second to come back knows the first announced that very process.
   */
  readonly claimGeneration: string | undefined
  /** The pre-allocated handle, if any. */
  readonly handle: string | undefined
  /** Flow-control identity of this incarnation. */
  readonly flowTarget: ProducerFlowTarget
  /** The size last applied. */
  size: { cols: number; rows: number }
  /** See {@link PtyRecordState}. */
  state: PtyRecordState
  /**
   * The last `exit` event published for this incarnation (`undefined` before any): a terminal
   * handle made after it resolves `exited` with it.
   */
  publishedExit: PtyControllerExitEvent | undefined
  /** A stop was requested for this incarnation (the operator-close rule). */
  stopRequested: boolean
  /**
   * A stop of this incarnation was requested (`kill`, `stopAndWait`, disposal's) and is not proven
   * done yet: no shutdown of the incarnation dispatched since has completed, and no stop of it was
   * verified. The leader's proven exit does not settle it: the provider's stop covers more than the
   * leader (a `setsid` child that ignores the hang-up, which its shutdown is still killing, or
   * failed to), so a later `stopAndWait` must not answer `true` from that exit alone (see
   * {@link stopAnsweredByDeath}).
   */
  stopUnproven: boolean
  /** Replaced by a newer incarnation before its own exit was seen. */
  superseded: boolean
  /** The timer that publishes `stop_unverified` when no exit follows a stop. */
  unconfirmedTimer: PtyTimerHandle | undefined
  /**
   * How many escalating stops (`stopAndWait`, disposal's) of this incarnation are running. Such a
   * stop outlives the unconfirmed window when its deadline is later: a PTY revived meanwhile (an
   * attach found it still held) has no window armed, yet is still being stopped — a spawn or
   * adoption of its slot waits for that stop rather than re-attach the PTY about to be forced down.
   * So does one whose stop went unverified before the `stopAndWait` began (no window is armed for
   * it at all). The record's state listeners are told when the last one ends.
   */
  escalatingStops: number
  /**
   * The last liveness verdict known of this incarnation (`live` at spawn, when none is published):
   * a `liveness` event is published only when a verdict differs from it.
   */
  liveness: PtyLivenessVerdict
  /** The controller's own output count, used when the runtime has no `notePtyOutput`. */
  outputSequence: number
  /**
   * Characters (bytes, for a PTY whose provider delivers bytes) of this incarnation's output dropped
   * or reported lost by its provider while it was `unverified`: its exit was published, so they
   * reached nobody. A revival reports them as one
   * `outputLoss`, so the output sequence keeps matching the provider's own.
   */
  charsDroppedWhileUnverified: number
  /**
   * Fired whenever `state` changes (stop waiters); the waiters never throw. Created by the first
   * waiter ({@link waitForRecordState}): most PTYs never have one, and an idle PTY should not carry
   * a listener set (four closures and a Set, ~0.4 KiB of heap per PTY).
   */
  stateListeners: ListenerSet<void> | undefined
}

/**
 * How many exited PTYs the controller remembers (so that a write is refused as `pty_exited`,
 * `hasPty` answers `false` and `stopAndWait` `true` for them). Older ones are forgotten and answer
 * as unknown ids. Why a bound: a long-lived host spawns without end, and a record per exited PTY
 * kept forever is a leak; 1024 covers every PTY a host could still be asking about.
 */
export const EXITED_PTY_RECORDS_KEPT = 1024

/**
 * Whether a provider **event** (data or exit) may belong to the record — the seed origin's gate
 * `!current || payload.incarnationId === current`: once the record's incarnation is known, only
 * an event naming that very incarnation counts. An event that names none is dropped, because a
 * late exit of an older process without an incarnation would otherwise end the new process's
 * record while it still runs. (Listing rows keep the looser `incarnationsAgree`.)
 */
export function eventBelongsTo(record: PtyRecord, eventIncarnationId: PtyIncarnationId | undefined): boolean {
  return record.incarnationId === undefined || eventIncarnationId === record.incarnationId
}

/** The facts a new record starts from; everything else starts live, with no stop and no timers. */
export type PtyRecordInit = Pick<
  PtyRecord,
  | 'ptyId'
  | 'hostId'
  | 'provider'
  | 'incarnationId'
  | 'pid'
  | 'hostReportsChildExitStatus'
  | 'scopeId'
  | 'slot'
  | 'claimKey'
  | 'claimGeneration'
  | 'handle'
  | 'flowTarget'
  | 'size'
  | 'outputSequence'
>

/** A fresh record for a newly published incarnation. */
export function createPtyRecord(init: PtyRecordInit): PtyRecord {
  // Why field by field rather than a spread: one fixed shape for every record (a spread of a
  // 13-field object measured ~3.7 µs per spawn, and records are read on every output chunk).
  return {
    ptyId: init.ptyId,
    hostId: init.hostId,
    provider: init.provider,
    incarnationId: init.incarnationId,
    pid: init.pid,
    hostReportsChildExitStatus: init.hostReportsChildExitStatus,
    scopeId: init.scopeId,
    slot: init.slot,
    claimKey: init.claimKey,
    claimGeneration: init.claimGeneration,
    handle: init.handle,
    flowTarget: init.flowTarget,
    size: init.size,
    outputSequence: init.outputSequence,
    charsDroppedWhileUnverified: 0,
    state: 'live',
    publishedExit: undefined,
    stopRequested: false,
    stopUnproven: false,
    superseded: false,
    unconfirmedTimer: undefined,
    escalatingStops: 0,
    liveness: LIVE,
    stateListeners: undefined,
  }
}

/**
 * Whether a `stopAndWait` of the record answers `true` at once, from its proven death alone: the
 * record is `exited` and no stop of it is unproven ({@link PtyRecord.stopUnproven}) — none was
 * requested (it died on its own: the seed origin's stop of an ended PTY), or a shutdown of it
 * completed, or one was verified. A stop still running or given up on (a `kill` whose shutdown
 * has not completed, a `stopAndWait` that answered `false`, one still escalating) is not: the
 * leader's exit does not prove the rest of what the provider's stop covers gone, so the stop runs
 * its phases again — a shutdown of the incarnation the provider must complete, then verification.
 */
export function stopAnsweredByDeath(record: Pick<PtyRecord, 'state' | 'stopUnproven'>): boolean {
  return record.state === 'exited' && !record.stopUnproven
}

/** Resolves once the record reaches `state` (at once if it is there); `cancel` stops listening. */
export function waitForRecordState(record: PtyRecord, state: PtyRecordState): { promise: Promise<void>; cancel: () => void } {
  return waitForRecord(record, () => record.state === state)
}

/**
 * Resolves once `reached()` holds of the record (at once if it does), checked again at each change
 * of its state and at the end of each of its escalating stops (`escalatingStops`); `cancel` stops
 * listening.
 */
export function waitForRecord(record: PtyRecord, reached: () => boolean): { promise: Promise<void>; cancel: () => void } {
  let unsubscribe: (() => void) | undefined
  const promise = new Promise<void>((resolve) => {
    if (reached()) {
      resolve()
      return
    }
    record.stateListeners ??= createListenerSet<void>()
    unsubscribe = record.stateListeners.add(() => {
      if (reached()) resolve()
    })
  })
  return {
    promise,
    cancel: () => unsubscribe?.(),
  }
}
