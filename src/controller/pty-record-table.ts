import type { ExecutionHostId } from '../contracts/index.js'
import { EXITED_PTY_RECORDS_KEPT, type PtyRecord } from './pty-record.js'

/**
 * A spawn (`sessionId`) or attach of an id this controller is bringing up (see
 * {@link PtyRecordTable.expectComing}).
 */
export type ComingPty = {
  readonly ptyId: string
  /** The host it is in flight to; `undefined` while it is queued (behind its slot's turn, or a stop of the id). */
  hostId: ExecutionHostId | undefined
  /** Whether a `kill` of the id asked, since it began, for the PTY it publishes under the id to be stopped when it lands. */
  stopRequested: boolean
  /**
   * An `adoptSlot` still waiting for its turn, which would attach the owner the slot store names
   * under this id ({@link PtyRecordTable.expectAdoption}): that process exists already, on its
   * host, and an adoption never starts one — so it counts for `kill` (marked, see
   * {@link PtyRecordTable.requestStopOfComing}) but neither for "absent is not proven"
   * ({@link PtyRecordTable.isComing}) nor for what `stopAndWait` waits for
   * ({@link PtyRecordTable.comingOf}): `stopAndWait` stops the process where it runs, and marks
   * the adoption. `false` once its attach goes in flight ({@link PtyRecordTable.goInFlight}).
   */
  adoptionQueued: boolean
  /**
   * Told, the moment it publishes a record under the id, before anything else runs: the
   * `stopAndWait` calls waiting for it (each stops that record at once, so a spawn queued behind
   * it finds it stopping, not live). Created on first use.
   */
  onPublished: Set<(record: PtyRecord) => void> | undefined
  /**
   * Whether a stop a `kill` marked this coming with (`stopRequested`) is taken care of, so nobody
   * dispatches it again: set when the coming published its process (which carried the stop out,
   * or had nothing to carry out), when its attach, refused publication because `dispose()`
   * overtook it, stopped what its host attached, and when an ending `adoptSlot` stopped the owner
   * where it runs (`SpawnPublication`'s `#stopMarkedOwners`).
   */
  settled: boolean
}

/**
 * The controller's records, one per PTY id (the latest incarnation), with a bounded memory of
 * exited ones: the last `EXITED_PTY_RECORDS_KEPT` exited records stay (so a write to one is
 * refused `pty_exited`, not `pty_not_found`), older ones are forgotten.
 */
export class PtyRecordTable {
  readonly #records = new Map<string, PtyRecord>()
  /** Exited records still in `#records`, oldest first; bounded by `EXITED_PTY_RECORDS_KEPT`. */
  readonly #exited = new Set<PtyRecord>()
  /** Per id, the spawns (`sessionId`) and attaches of it this controller is bringing up, queued or in flight. */
  readonly #coming = new Map<string, Set<ComingPty>>()
  /** Per id, who waits for some of its spawns and attaches to be over ({@link PtyRecordTable.whenLanded}): woken by each release of the id. */
  readonly #comingWaiters = new Map<string, Set<() => void>>()

  /**
   * A spawn (`sessionId`) or attach of `ptyId` begins: queued (behind its slot's turn, or a stop of
   * the id it waits for) until {@link PtyRecordTable.goInFlight}, or in flight at once when
   * `hostId` is given. Until {@link PtyRecordTable.release}, {@link PtyRecordTable.isComing} says
   * so — an ended record under the id may be replaced any moment, so "absent" is no longer proven
   * (`hasPty` and liveness answer `null`, not `false`; `stopAndWait` waits for it to land) — and a
   * `kill` of the id marks it ({@link PtyRecordTable.requestStopOfComing}). Once in flight,
   * {@link PtyRecordTable.comingOnOtherHost} names its host to a spawn of the id elsewhere.
   */
  expectComing(ptyId: string, hostId?: ExecutionHostId): ComingPty {
    return this.#add({ ptyId, hostId, stopRequested: false, adoptionQueued: false, onPublished: undefined, settled: false })
  }

  /**
   * An `adoptSlot` begins, waiting for its turn, whose slot store names `ptyId` as the owner it
   * would attach (see `ComingPty.adoptionQueued`). Its attach goes on as this coming
   * ({@link PtyRecordTable.goInFlight}); {@link PtyRecordTable.release} it when the adoption ends.
   */
  expectAdoption(ptyId: string): ComingPty {
    return this.#add({ ptyId, hostId: undefined, stopRequested: false, adoptionQueued: true, onPublished: undefined, settled: false })
  }

  #add(coming: ComingPty): ComingPty {
    const ptyId = coming.ptyId
    const all = this.#coming.get(ptyId)
    if (all === undefined) this.#coming.set(ptyId, new Set([coming]))
    else all.add(coming)
    return coming
  }

  /** A queued spawn of `coming.ptyId` goes to `hostId` now (see {@link PtyRecordTable.comingOnOtherHost}). */
  goInFlight(coming: ComingPty, hostId: ExecutionHostId): void {
    coming.hostId = hostId
    coming.adoptionQueued = false
  }

  /** The spawn or attach is over (published, or failed); idempotent. Wakes the id's `whenLanded` waiters. */
  release(coming: ComingPty): void {
    const all = this.#coming.get(coming.ptyId)
    if (all === undefined || !all.delete(coming)) return
    if (all.size === 0) this.#coming.delete(coming.ptyId)
    for (const wake of [...(this.#comingWaiters.get(coming.ptyId) ?? [])]) wake()
  }

  /**
   * The spawns and attaches of `ptyId` begun so far and not over yet (queued or in flight): what
   * `stopAndWait` waits for — not an adoption still waiting for its turn (see `ComingPty.adoptionQueued`).
   */
  comingOf(ptyId: string): readonly ComingPty[] {
    const all = this.#coming.get(ptyId)
    return all === undefined ? [] : [...all].filter((coming) => !coming.adoptionQueued)
  }

  /**
   * `stopAndWait(ptyId)`: each `adoptSlot` waiting for its turn that would attach `ptyId` is
   * marked, so a process it attaches anyway (one the stop could not end) is stopped as it lands.
   */
  requestStopOfQueuedAdoptions(ptyId: string): void {
    for (const coming of this.#coming.get(ptyId) ?? []) if (coming.adoptionQueued) coming.stopRequested = true
  }

  /**
   * `kill(ptyId)`: every spawn and attach of the id begun so far (queued or in flight) is to stop
   * the PTY it publishes under the id as soon as it lands; one begun later is not. Whether there was any.
   */
  requestStopOfComing(ptyId: string): boolean {
    const all = this.#coming.get(ptyId)
    if (all === undefined) return false
    for (const coming of all) coming.stopRequested = true
    return true
  }

  /**
   * Resolves once each of `comings` (spawns and attaches of `ptyId`, from
   * {@link PtyRecordTable.comingOf}) is over — published, or failed — at once when none is left;
   * later ones are not waited for. `cancel` stops waiting.
   */
  whenLanded(ptyId: string, comings: readonly ComingPty[]): { promise: Promise<void>; cancel: () => void } {
    const landed = (): boolean => {
      const all = this.#coming.get(ptyId)
      return all === undefined || comings.every((coming) => !all.has(coming))
    }
    if (landed()) return { promise: Promise.resolve(), cancel: () => {} }
    let resolve!: () => void
    const promise = new Promise<void>((done) => (resolve = done))
    const waiters = this.#comingWaiters.get(ptyId) ?? new Set<() => void>()
    this.#comingWaiters.set(ptyId, waiters)
    const cancel = (): void => {
      waiters.delete(wake)
      if (waiters.size === 0 && this.#comingWaiters.get(ptyId) === waiters) this.#comingWaiters.delete(ptyId)
    }
    const wake = (): void => {
      if (!landed()) return
      cancel()
      resolve()
    }
    waiters.add(wake)
    return { promise, cancel }
  }

  /**
   * Whether a spawn or attach of `ptyId` is queued or in flight (see {@link PtyRecordTable.expectComing}),
   * so "absent" is not proven: not an adoption still waiting for its turn, which never starts a process.
   */
  isComing(ptyId: string): boolean {
    const all = this.#coming.get(ptyId)
    if (all === undefined) return false
    for (const coming of all) if (!coming.adoptionQueued) return true
    return false
  }

  /** A host other than `hostId` a spawn or attach of `ptyId` is in flight to, if any (a queued one names none yet). */
  comingOnOtherHost(ptyId: string, hostId: ExecutionHostId): ExecutionHostId | undefined {
    for (const coming of this.#coming.get(ptyId) ?? []) if (coming.hostId !== undefined && coming.hostId !== hostId) return coming.hostId
    return undefined
  }

  /** The record tracked under `ptyId`, if any. */
  get(ptyId: string): PtyRecord | undefined {
    return this.#records.get(ptyId)
  }

  /** Track `record` under its id, replacing the id's previous record. */
  set(record: PtyRecord): void {
    this.#records.set(record.ptyId, record)
  }

  /** Every tracked record. */
  values(): IterableIterator<PtyRecord> {
    return this.#records.values()
  }

  /** Whether `record` is the one tracked under its id (not replaced by a respawn). */
  isCurrent(record: PtyRecord): boolean {
    return this.#records.get(record.ptyId) === record
  }

  /** Move a record to `state`, wake its state waiters, and remember it when it exited. */
  setState(record: PtyRecord, state: PtyRecord['state']): void {
    record.state = state
    record.stateListeners?.fire()
    // A superseded record is no longer the id's: it does not count against the exited memory.
    if (state === 'exited' && !record.superseded) this.#rememberExited(record)
  }

  /** A superseded record no longer counts against the exited memory. */
  forgetExited(record: PtyRecord): void {
    this.#exited.delete(record)
  }

  /** Keep the record of an exited PTY, forgetting the oldest past `EXITED_PTY_RECORDS_KEPT`. */
  #rememberExited(record: PtyRecord): void {
    this.#exited.add(record)
    if (this.#exited.size <= EXITED_PTY_RECORDS_KEPT) return
    const oldest = this.#exited.values().next().value
    if (oldest === undefined) return
    this.#exited.delete(oldest)
    if (this.#records.get(oldest.ptyId) === oldest && oldest.state === 'exited') this.#records.delete(oldest.ptyId)
  }
}
