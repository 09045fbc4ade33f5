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
  /** Ids a spawn (`sessionId`) or an attach of this controller is bringing up, with how many are. */
  readonly #coming = new Map<string, number>()

  /**
   * A spawn or attach of `ptyId` is in flight: until the returned release is called, {@link
   * PtyRecordTable.isComing} says so — an ended record under the id may be replaced any moment, so
   * "absent" is no longer proven (`hasPty` and liveness answer `null`, not `false`).
   */
  expectComing(ptyId: string): () => void {
    this.#coming.set(ptyId, (this.#coming.get(ptyId) ?? 0) + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.#coming.get(ptyId) ?? 1) - 1
      if (left === 0) this.#coming.delete(ptyId)
      else this.#coming.set(ptyId, left)
    }
  }

  /** Whether a spawn or attach of `ptyId` is in flight (see {@link PtyRecordTable.expectComing}). */
  isComing(ptyId: string): boolean {
    return this.#coming.has(ptyId)
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
