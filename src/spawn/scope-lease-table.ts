import type { ScopeSpawnLeaseRelease } from './types.js'

type Waiter = { mode: 'shared' | 'exclusive'; grant: () => void }

type ScopeLock = { shared: number; exclusive: boolean; queue: Waiter[] }

/** A plain view of one scope's lock, for snapshots. */
export type ScopeLeaseView = {
  /** The scope; `null` for spawns that name none. */
  scopeId: string | null
  /** Shared (spawn) leases held. */
  shared: number
  /** Whether an exclusive (maintenance) lease is held. */
  exclusive: boolean
  /** Acquisitions waiting in line. */
  waiting: number
}

/**
 * Per-scope readers–writer locks: spawns take a shared lease (spawns in one scope run
 * concurrently), maintenance (sleep, delete) takes an exclusive one. First come, first served: a
 * spawn that arrives after a waiting exclusive request queues behind it, so maintenance is never
 * starved. Scopes never serialize each other.
 */
export class ScopeLeaseTable {
  readonly #locks = new Map<string | null, ScopeLock>()

  /** Take a shared lease; synchronous when nothing is held exclusively or waiting. */
  acquireShared(scopeId: string | undefined): ScopeSpawnLeaseRelease | Promise<ScopeSpawnLeaseRelease> {
    return this.#acquire(scopeId ?? null, 'shared')
  }

  /** Take the exclusive lease; waits for every shared holder to release. */
  async acquireExclusive(scopeId: string | undefined): Promise<ScopeSpawnLeaseRelease> {
    return await this.#acquire(scopeId ?? null, 'exclusive')
  }

  /** Every scope with a held lease or a waiter, sorted by scope. */
  view(): ScopeLeaseView[] {
    return [...this.#locks]
      .map(([scopeId, lock]) => ({ scopeId, shared: lock.shared, exclusive: lock.exclusive, waiting: lock.queue.length }))
      .sort((a, b) => String(a.scopeId).localeCompare(String(b.scopeId)))
  }

  #lock(scopeId: string | null): ScopeLock {
    let lock = this.#locks.get(scopeId)
    if (lock === undefined) {
      lock = { shared: 0, exclusive: false, queue: [] }
      this.#locks.set(scopeId, lock)
    }
    return lock
  }

  #canGrant(lock: ScopeLock, mode: 'shared' | 'exclusive'): boolean {
    return mode === 'shared' ? !lock.exclusive : !lock.exclusive && lock.shared === 0
  }

  #take(scopeId: string | null, lock: ScopeLock, mode: 'shared' | 'exclusive'): ScopeSpawnLeaseRelease {
    if (mode === 'shared') {
      lock.shared += 1
    } else {
      lock.exclusive = true
    }
    let released = false
    return () => {
      if (released) {
        return
      }
      released = true
      if (mode === 'shared') {
        lock.shared -= 1
      } else {
        lock.exclusive = false
      }
      this.#pump(scopeId, lock)
    }
  }

  #acquire(scopeId: string | null, mode: 'shared' | 'exclusive'): ScopeSpawnLeaseRelease | Promise<ScopeSpawnLeaseRelease> {
    const lock = this.#lock(scopeId)
    if (lock.queue.length === 0 && this.#canGrant(lock, mode)) {
      return this.#take(scopeId, lock, mode)
    }
    return new Promise<ScopeSpawnLeaseRelease>((resolve) => {
      lock.queue.push({ mode, grant: () => resolve(this.#take(scopeId, lock, mode)) })
    })
  }

  #pump(scopeId: string | null, lock: ScopeLock): void {
    for (let head = lock.queue[0]; head !== undefined && this.#canGrant(lock, head.mode); head = lock.queue[0]) {
      lock.queue.shift()
      head.grant()
    }
    if (lock.shared === 0 && !lock.exclusive && lock.queue.length === 0) {
      this.#locks.delete(scopeId)
    }
  }
}
