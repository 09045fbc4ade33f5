import type { ExecutionHostId } from '../contracts/index.js'
import { EXITED_PTY_RECORDS_KEPT, type PtyRecord } from './pty-record.js'

/**
 * The controller's records, one per PTY id (the latest incarnation), with a bounded memory of
 * exited ones: the last `EXITED_PTY_RECORDS_KEPT` exited records stay (so a write to one is
 * refused `pty_exited`, not `pty_not_found`), older ones are forgotten.
 */
export class PtyRecordTable {
  readonly #records = new Map<string, PtyRecord>()
  /** Exited records still in `#records`, oldest first; bounded by `EXITED_PTY_RECORDS_KEPT`. */
  readonly #exited = new Set<PtyRecord>()
  /** Per id a spawn (`sessionId`) or an attach of this controller is bringing up: the hosts it goes to, and how many to each. */
  readonly #coming = new Map<string, Map<ExecutionHostId, number>>()
  /** Per id, who waits for its spawns and attaches in flight to be over ({@link PtyRecordTable.whenNotComing}). */
  readonly #comingWaiters = new Map<string, Set<() => void>>()

  /**
   * A spawn or attach of `ptyId` on `hostId` is in flight: until the returned release is called,
   * {@link PtyRecordTable.isComing} says so — an ended record under the id may be replaced any
   * moment, so "absent" is no longer proven (`hasPty` and liveness answer `null`, not `false`) —
   * and {@link PtyRecordTable.comingOnOtherHost} names the host to a spawn of the id elsewhere.
   */
  expectComing(ptyId: string, hostId: ExecutionHostId): () => void {
    const hosts = this.#coming.get(ptyId) ?? new Map<ExecutionHostId, number>()
    this.#coming.set(ptyId, hosts)
    hosts.set(hostId, (hosts.get(hostId) ?? 0) + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (hosts.get(hostId) ?? 1) - 1
      if (left > 0) hosts.set(hostId, left)
      else hosts.delete(hostId)
      if (hosts.size === 0 && this.#coming.get(ptyId) === hosts) {
        this.#coming.delete(ptyId)
        const waiters = this.#comingWaiters.get(ptyId)
        this.#comingWaiters.delete(ptyId)
        for (const wake of waiters ?? []) wake()
      }
    }
  }

  /**
   * Resolves once no spawn or attach of `ptyId` is in flight (at once when none is): by then the
   * one that was has published its record, or failed. `cancel` stops waiting.
   */
  whenNotComing(ptyId: string): { promise: Promise<void>; cancel: () => void } {
    if (!this.#coming.has(ptyId)) return { promise: Promise.resolve(), cancel: () => {} }
    let wake!: () => void
    const promise = new Promise<void>((resolve) => (wake = resolve))
    const waiters = this.#comingWaiters.get(ptyId) ?? new Set<() => void>()
    this.#comingWaiters.set(ptyId, waiters)
    waiters.add(wake)
    return {
      promise,
      cancel: () => {
        waiters.delete(wake)
        if (waiters.size === 0 && this.#comingWaiters.get(ptyId) === waiters) this.#comingWaiters.delete(ptyId)
      },
    }
  }

  /** Whether a spawn or attach of `ptyId` is in flight (see {@link PtyRecordTable.expectComing}). */
  isComing(ptyId: string): boolean {
    return this.#coming.has(ptyId)
  }

  /** A host other than `hostId` a spawn or attach of `ptyId` is in flight to, if any. */
  comingOnOtherHost(ptyId: string, hostId: ExecutionHostId): ExecutionHostId | undefined {
    for (const host of this.#coming.get(ptyId)?.keys() ?? []) if (host !== hostId) return host
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
