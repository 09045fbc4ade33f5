import { createListenerSet, createRecentIds, type PtyDataEvent, type PtyExitEvent } from '../contracts/index.js'
import type { SshConnection } from './ssh-connection.js'
import type { SshPtySession, SshPtySessionHooks, SshPtyState } from './ssh-pty-session.js'

/** How many exited PTY ids are remembered, so a late write is refused as `pty_exited`. */
export const SSH_EXITED_ID_MEMORY = 1_024

/**
 * The SSH provider's PTYs: the sessions by id, the ids that exited lately, and the listener sets
 * their events go to. Every provider method works over one table.
 */
export class SshSessionTable {
  /** Sessions by PTY id: starting, live, or lost (kept: their fate is unknown). */
  readonly sessions = new Map<string, SshPtySession>()
  /** PTY ids whose spawn is opening its channel (its session not in `sessions` yet). */
  readonly openingIds = new Set<string>()
  /** PTY ids whose exit was delivered (the most recent ones). */
  readonly exitedIds = createRecentIds(SSH_EXITED_ID_MEMORY)
  /** Each session's stop while it runs (`shutdown`'s, or an owed one's), until it settles. */
  readonly runningStops = new Map<SshPtySession, Promise<void>>()
  /**
   * Sessions that exited while their stop still ran — the leader died of the hang-up, a member of
   * its group or session that ignores it is still being stopped —, by id, until that stop settles:
   * a later `shutdown` of the id joins it (they left `sessions` at their exit).
   */
  readonly stoppingAfterExit = new Map<string, SshPtySession>()
  // A throwing listener surfaces uncaught (on its own microtask) without stopping the others.
  /** The provider's `onData` listeners. */
  readonly dataListeners = createListenerSet<PtyDataEvent>()
  /** The provider's `onExit` listeners. */
  readonly exitListeners = createListenerSet<PtyExitEvent>()
  readonly #onLost: () => void

  /**
   * `onLost` runs when a PTY is lost (its connection dropped, or its channel closed without an
   * exit status): the provider schedules a look at its lost PTYs — whose programs proven gone are
   * reported ended, and after which the stops owed to them are carried out. Why every lost PTY, not
   * only one whose stop is owed: with its connection open (sshd's `ChannelTimeout` closed the
   * channel), nothing else schedules that look — a connection that drops or opens does — so a
   * program that died of the hang-up was never reported ended, and a controller listed it running.
   */
  constructor(onLost: () => void = () => undefined) {
    this.#onLost = onLost
  }

  /** What every session reports to: its events go to the listeners, its exit moves it to `exitedIds`. */
  readonly sessionHooks: SshPtySessionHooks = {
    emitData: (event) => this.dataListeners.fire(event),
    emitExit: (event) => this.exitListeners.fire(event),
    onSettled: (session) => {
      if (session.state === 'lost') this.#onLost()
      if (session.state !== 'exited') return
      if (this.sessions.get(session.id) === session) this.sessions.delete(session.id)
      if (this.runningStops.has(session)) this.stoppingAfterExit.set(session.id, session)
      this.exitedIds.remember(session.id)
    },
  }

  /** The session of `id`, whatever its state. */
  get(id: string): SshPtySession | undefined {
    return this.sessions.get(id)
  }

  /** The session of `id` when its program runs (marker seen, no exit, not lost). */
  live(id: string): SshPtySession | undefined {
    const session = this.sessions.get(id)
    return session !== undefined && session.state === 'live' ? session : undefined
  }

  /** Every session in one of `states`, in creation order. */
  inState(...states: SshPtyState[]): SshPtySession[] {
    return [...this.sessions.values()].filter((session) => states.includes(session.state))
  }

  /** The connection dropped: each of its sessions' fate is unknown from now on. */
  markLost(connection: SshConnection): void {
    for (const session of this.sessions.values()) if (session.connection === connection) session.markLost()
  }
}
