import { isDefunct, type ProcessInspector } from '../node-pty/process-inspector.js'
import { sigkillLeadersNow } from '../node-pty/process-tree.js'

/**
 * A session a closing host stopped, named as its leader was when it ran: the pid with its start
 * time (`/proc/<pid>/stat` field 22; `null` when it could not be learnt), and whether its exit was
 * heard (the leader reaped).
 */
export type ClosingLeader = {
  /** The leader's pid. */
  readonly pid: number
  /** The leader's start time, which with the pid names it for good; `null` when unknown. */
  readonly leaderStartTime: string | null
  /** The leader's exit was heard (it was reaped): its pid may name another process now. */
  readonly leaderGone: boolean
}

/**
 * The start time of this host's child `pid` (a PTY leader), read now; `null` when it cannot be read,
 * is a zombie, or `pid` is not this process's child (its leader already reaped, the pid given away).
 */
export function childStartTime(inspector: ProcessInspector, pid: number): string | null {
  const row = inspector.readNow(pid)
  if (row === null || row === 'absent' || isDefunct(row) || row.ppid !== process.pid) return null
  return row.startTime ?? null
}

/**
 * SIGKILL, synchronously, every process still left of the sessions a closing host stopped: each
 * leader's process group and, found in one synchronous `/proc` pass, every group of its session
 * and its descendants — `sigkillLeadersNow`, the node-pty provider's `killOnProcessExit` kill (a
 * leader whose pid now shows another start time leads to nothing; without a table, the group of a
 * leader whose exit was not heard). Returns, per leader, whether it was killed alive:
 * a signal went out while the table showed the leader running (without a table: its exit not
 * heard) — its death by SIGKILL is then this kill's, the close's stop (not another killer's).
 *
 * Why synchronously, at the close: the node-pty provider's stop sends its SIGKILL from its own
 * loop, after an asynchronous look at the process table — and a `dispose()` whose deadline passed
 * first (a short `shutdownDeadlineMs`) resolves before it went out. The `ptykit-pty-host` process
 * exits at the end of its close, and such a SIGKILL never went: a program that ignores the hang-up
 * and SIGTERM outlived its closed host, its journal line the only trace of it.
 *
 * @param options.sweepSession - the host's node-pty `sweepSession` (default `true`): when `false`
 * no table is read and only each leader's group is killed (the leader not known gone) — a stop of
 * that provider leaves the session's other groups alone, and so does its `killOnProcessExit` kill;
 * until 7 Dec this kill swept the session whatever the option said.
 * @param options.kill - the signal call (`process.kill`; a test passes a recorder)
 */
export function killLeftAtClose(
  leaders: readonly ClosingLeader[],
  inspector: ProcessInspector,
  options: { sweepSession?: boolean; kill?: (target: number, signal: NodeJS.Signals) => void } = {},
): boolean[] {
  if (leaders.length === 0) return []
  // Without a sweep no table is read: the node-pty provider's exit kill reads none either.
  return sigkillLeadersNow(leaders, inspector, options.sweepSession !== false, options.kill)
}

/**
 * Resolves once none of `sessions` is live any more (`isLive` false for each), checked now and each
 * time `watchers` are called (a closing host calls them after each exit it hears). Never rejects;
 * a caller bounds it.
 *
 * Why linear: the sessions still waited for are kept in a `Set`, in order, and each check drops
 * those at its front that ended until it finds one live — every session is looked at once more
 * than the checks that found it live at the front, so `n` sessions ending cost O(n) calls of
 * `isLive` in all. Before, each exit looked at every session still waited for (`some`): a close
 * with many late sessions did quadratic work.
 */
export function untilNoneLive<T>(sessions: Iterable<T>, isLive: (session: T) => boolean, watchers: Set<() => void>): Promise<void> {
  const waited = new Set(sessions)
  return new Promise((resolve) => {
    const check = (): void => {
      for (const session of waited) {
        if (isLive(session)) return
        waited.delete(session)
      }
      watchers.delete(check)
      resolve()
    }
    watchers.add(check)
    check()
  })
}
