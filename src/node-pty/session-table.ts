import { createRecentIds, type RecentIds } from '../contracts/index.js'
import type { NodePtySession } from './node-pty-session.js'

/**
 * How many recently exited PTY ids are remembered, so that a late write to one is refused as
 * `pty_exited` rather than `pty_not_found`. Bounded so that a long-lived host does not grow.
 */
export const NODE_PTY_EXITED_ID_MEMORY = 1_024

/**
 * The node-pty provider's sessions: the live ones by PTY id (until their exit event was delivered),
 * the ids that exited recently, and a round-robin cursor for the death watch's safety-net poll.
 */
export class NodePtySessionTable {
  readonly #sessions = new Map<string, NodePtySession>()
  readonly #exitedIds: RecentIds = createRecentIds(NODE_PTY_EXITED_ID_MEMORY)
  /** Where the next {@link NodePtySessionTable.nextSlice} resumes (a live iterator of the map). */
  #cursor: Iterator<NodePtySession> | null = null

  /** Sessions whose exit was not yet delivered. */
  get size(): number {
    return this.#sessions.size
  }

  /** The session under `id` (also one whose exit is being delivered right now). */
  get(id: string): NodePtySession | undefined {
    return this.#sessions.get(id)
  }

  /** The session under `id` while its exit is not delivered. */
  live(id: string): NodePtySession | undefined {
    const session = this.#sessions.get(id)
    return session !== undefined && session.exit === null ? session : undefined
  }

  /**
   * The session under `id` whose leader runs, as the OS shows it now (one read of its pid): not one
   * whose leader died while its exit is still on its way to JavaScript (node-pty's `waitpid` has
   * not handed it over, or its output is draining). For the answers that claim a process runs — an
   * attach, `hasPty`, a liveness probe — where {@link NodePtySessionTable.live} would vouch for a
   * dead one.
   */
  running(id: string): NodePtySession | undefined {
    const session = this.live(id)
    session?.checkLeader()
    return session === undefined || session.leaderGone ? undefined : session
  }

  /** Every session whose exit is not delivered, in spawn order. */
  liveSessions(): NodePtySession[] {
    const live: NodePtySession[] = []
    for (const session of this.#sessions.values()) if (session.exit === null) live.push(session)
    return live
  }

  /** Every session in the table. */
  values(): IterableIterator<NodePtySession> {
    return this.#sessions.values()
  }

  /**
   * Track a freshly spawned session. Its id must no longer count as exited: the spawn calls
   * {@link NodePtySessionTable.forgetExited} for a caller's id before it wires the session (a
   * minted id never exited), so this does not look the id up again — each look touches the
   * exited-id table's memory, which every fork makes the host fault on again (docs/performance.md).
   */
  add(session: NodePtySession): void {
    this.#sessions.set(session.id, session)
  }

  /** An id is about to be reused by a new spawn: it no longer counts as exited. */
  forgetExited(id: string): void {
    this.#exitedIds.forget(id)
  }

  /** The session's exit was delivered: forget it, remember its id as exited. */
  ended(session: NodePtySession): void {
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id)
    // Why drop the cursor when the last session leaves: the poll stops with it, so the cursor would
    // not move again until the next spawn, and a Map iterator holds the table it was made on —
    // after the map shrank, with every ended session in it (their terminals, streams and drains).
    if (this.#sessions.size === 0) this.#cursor = null
    this.#exitedIds.remember(session.id)
  }

  /** Whether `id` exited recently. */
  hasExited(id: string): boolean {
    return this.#exitedIds.has(id)
  }

  /**
   * The next at most `limit` sessions, continuing where the previous slice stopped and wrapping
   * around once: successive slices visit every session within `ceil(size / limit)` calls, so a
   * periodic check over them costs O(limit) per tick however many PTYs are open. (A Map iterator
   * is live: sessions added later are visited, deleted ones skipped.)
   */
  nextSlice(limit: number): NodePtySession[] {
    const slice: NodePtySession[] = []
    const wanted = Math.min(limit, this.#sessions.size)
    let wrapped = false
    while (slice.length < wanted) {
      this.#cursor ??= this.#sessions.values()
      const next = this.#cursor.next()
      if (next.done === true) {
        this.#cursor = null
        if (wrapped) break
        wrapped = true
        continue
      }
      slice.push(next.value)
    }
    return slice
  }
}
