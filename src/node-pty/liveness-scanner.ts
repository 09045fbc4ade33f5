import type { ProcessStat } from './process-inspector.js'
import { indexProcessTable, type ProcessTableIndex } from './process-tree.js'

/**
 * The shortest gap between two looks of the shared scan. One stop in flight is looked at every
 * 10 ms: a hung-up shell dies in ~1.3 ms (measured), so a stop stays prompt.
 */
export const NODE_PTY_SCAN_MIN_INTERVAL_MS = 10

/**
 * How much the gap grows per stop in flight. Each look runs every stop's cheap check (one
 * `/proc/<pid>/stat` read each) and, when some stop needs it, one pass over `/proc`; 0.2 ms per
 * stop keeps 1 000 concurrent stops at one look per ~200 ms, well inside the event loop's means.
 */
export const NODE_PTY_SCAN_INTERVAL_PER_STOP_MS = 0.2

/**
 * The longest gap between two looks, however many stops are in flight: a stop's grace periods
 * (500 ms) must still be observed to end on time.
 */
export const NODE_PTY_SCAN_MAX_INTERVAL_MS = 250

/** One stop's view of its session, as the scanner asks it at each look. */
export type SessionLivenessWatch = {
  /**
   * Cheap and synchronous: `false` while the session is certainly still there (the leader's exit
   * not delivered, a remembered process still alive); `true` when only a fresh table can tell.
   */
  mayBeGone(): boolean
  /** Given a fresh table (`null`: the platform cannot list), whether the session is gone. */
  isGoneIn(table: ProcessTableIndex | null): boolean
  /** Whether {@link SessionLivenessWatch.isGoneIn} needs a table at all (`false`: it decides alone). */
  readonly needsTable: boolean
}

type Registration = {
  watch: SessionLivenessWatch
  resolve: () => void
}

type TableWaiter = (table: ProcessTableIndex | null) => void

/**
 * One shared, batched liveness scan for every stop in flight of a provider.
 *
 * Each look runs the cheap check of every registered stop and then, if any stop (or any caller of
 * {@link LivenessScanner.freshTable}) needs one, reads the process table **once** and hands the
 * same indexed table to all of them. The gap between looks grows with the number of stops in
 * flight (see the constants) and is never shorter than the last pass took, so the scan cannot
 * saturate the thread pool however many PTYs stop at once. Before this, every stop read the whole
 * of `/proc` every 10 ms on its own: 200 concurrent stops took seconds and ran out of budget.
 */
export class LivenessScanner {
  readonly #list: () => Promise<ProcessStat[] | null>
  readonly #registrations = new Set<Registration>()
  #tableWaiters: TableWaiter[] = []
  #timer: NodeJS.Timeout | null = null
  #due = 0
  #looking = false
  #lastPassMs = 0
  #passes = 0

  /** @param list - reads the whole process table (`null` when the platform cannot). */
  constructor(list: () => Promise<ProcessStat[] | null>) {
    this.#list = list
  }

  /** How many passes over the process table were made (for tests and the benchmark). */
  get passes(): number {
    return this.#passes
  }

  /** How many stops are waiting for their session to be gone. */
  get watching(): number {
    return this.#registrations.size
  }

  /** The gap before the next look: adapts to the stops in flight and to what the last pass cost. */
  intervalMs(): number {
    const byLoad = NODE_PTY_SCAN_MIN_INTERVAL_MS + NODE_PTY_SCAN_INTERVAL_PER_STOP_MS * this.#registrations.size
    return Math.min(NODE_PTY_SCAN_MAX_INTERVAL_MS, Math.max(byLoad, this.#lastPassMs))
  }

  /**
   * Resolve once `watch` says its session is gone. `cancel` drops the registration (the stop ended
   * otherwise); the returned promise then never resolves.
   */
  untilGone(watch: SessionLivenessWatch): { gone: Promise<void>; cancel: () => void } {
    let registration: Registration | undefined
    const gone = new Promise<void>((resolve) => {
      registration = { watch, resolve }
    })
    this.#registrations.add(registration as Registration)
    this.#schedule(this.#registrations.size === 1 ? 0 : NODE_PTY_SCAN_MIN_INTERVAL_MS)
    return {
      gone,
      cancel: () => {
        this.#registrations.delete(registration as Registration)
      },
    }
  }

  /** A table read by a pass that starts after this call (shared with every other caller). */
  freshTable(): Promise<ProcessTableIndex | null> {
    return new Promise((resolve) => {
      this.#tableWaiters.push(resolve)
      this.#schedule(0)
    })
  }

  /** Stop looking; pending registrations stay unresolved, table waiters get `null`. */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
    this.#registrations.clear()
    for (const waiter of this.#tableWaiters.splice(0)) waiter(null)
  }

  #schedule(delayMs: number): void {
    if (this.#looking) return // the look in progress schedules the next one
    const due = performance.now() + delayMs // monotonic: a stepped-back wall clock must not postpone the armed look on every call
    if (this.#timer !== null) {
      if (this.#due <= due) return
      clearTimeout(this.#timer)
    }
    this.#due = due
    this.#timer = setTimeout(() => {
      this.#timer = null
      void this.#look()
    }, delayMs)
  }

  async #look(): Promise<void> {
    this.#looking = true
    try {
      const candidates: Registration[] = []
      for (const registration of this.#registrations) {
        let maybe = false
        try {
          maybe = registration.watch.mayBeGone()
        } catch {
          maybe = false
        }
        if (maybe) candidates.push(registration)
      }
      const waiters = this.#tableWaiters.splice(0)
      const needsTable = waiters.length > 0 || candidates.some((registration) => registration.watch.needsTable)
      let table: ProcessTableIndex | null = null
      if (needsTable) {
        const started = performance.now()
        const rows = await this.#list().catch(() => null)
        this.#passes += 1
        table = rows === null ? null : indexProcessTable(rows)
        this.#lastPassMs = performance.now() - started
      }
      for (const waiter of waiters) waiter(table)
      for (const registration of candidates) {
        if (!this.#registrations.has(registration)) continue
        let gone = false
        try {
          gone = registration.watch.isGoneIn(table)
        } catch {
          gone = false
        }
        if (gone) {
          this.#registrations.delete(registration)
          registration.resolve()
        }
      }
    } finally {
      this.#looking = false
      if (this.#tableWaiters.length > 0) this.#schedule(0)
      else if (this.#registrations.size > 0) this.#schedule(this.intervalMs())
    }
  }
}
