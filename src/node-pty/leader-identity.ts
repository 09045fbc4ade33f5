import type { NodePtySession } from './node-pty-session.js'
import { isGoneBy, type ProcessInspector, type ProcessStat } from './process-inspector.js'

/**
 * A PTY leader's identity: its pid, and its start time learnt on the first look at it.
 *
 * **Why the start time.** A pid names the leader only until the leader is reaped; then the kernel
 * may hand it to an unrelated process (here `pid_max` is 32 768, so a busy machine wraps within
 * minutes). Every signal to the leader's pid or group, every sweep of its session and every
 * description of it must first make sure the pid still names the leader: the pid *with its start
 * time* (`/proc/<pid>/stat` field 22) names one process for good.
 *
 * **Why learnt lazily, not read at every spawn.** Reading it at the spawn cost each spawn a `/proc`
 * read (the first look at a new pid is the dearest: ~0.1–0.2 ms of kernel time measured here,
 * plus a thread-pool round trip when asynchronous), and a short-lived PTY — most of a
 * spawn-heavy host's — never needs it: node-pty reports its exit before anything looks. So the
 * start time is taken from the first read of the leader's pid made for another reason (the death
 * watch's poll, a stop, a liveness probe, a listing), which happens anyway.
 *
 * **The window, thought through.** Only node-pty reaps the leader (its `waitpid` thread, right
 * after the death), and it hands the exit to the event loop through an async handle, so its exit
 * callback runs in the loop's next poll phase. That callback marks the terminal (`_boundClose`) or
 * emits the exit at once ({@link reapReported}). Hence: while the reap is not reported, the leader
 * was either not reaped yet — a read of its pid sees the leader, alive or a zombie — or reaped
 * since the loop's last poll phase (the one before, for a read whose result arrives in a poll
 * phase, which runs thread-pool completions before other async handles). A read then sees another
 * process only if the pid was handed out again within that loop iteration: the kernel hands pids
 * out in a cycle, so that takes `pid_max` forks (32 768 here) in one iteration. That is exactly
 * the window the read at the spawn had (it ran in the check phase of the spawn's iteration, and a
 * leader reaped before it was just as undetectable), and it is closed the same way: by trusting a
 * start time only from a read made while the reap was unreported. Once the reap *is* reported and
 * no start time was ever learnt, nothing at the pid can be trusted to be the leader — and nothing
 * needs to be: the leader is proven dead, so no signal goes to its pid, and a session sweep keeps
 * only processes whose session or group is the leader's pid (which the kernel does not hand out
 * while any process still uses it as such).
 *
 * A read that finds no process at the pid (ENOENT) proves the leader reaped: it started before the
 * read, and nothing else frees its pid.
 */

/**
 * True once node-pty has reported the leader's reap to JavaScript: its exit callback ran (it sets
 * `_boundClose` when it must wait for the master to close) or the session's exit was delivered.
 */
export function reapReported(session: NodePtySession): boolean {
  return session.exit !== null || (session.terminal as unknown as { _boundClose?: unknown })._boundClose === true
}

/**
 * Whether the session's terminal keeps node-pty's own close bookkeeping (`_boundClose`,
 * `_emittedClose`), so that {@link reapReported} turning true is the report of its `waitpid`. A
 * stand-in, or a wrapper that copies some fields, has no such report to trust.
 */
export function reportsReaps(session: NodePtySession): boolean {
  const terminal = session.terminal as unknown as { _boundClose?: unknown; _emittedClose?: unknown }
  return typeof terminal._boundClose === 'boolean' && typeof terminal._emittedClose === 'boolean'
}

/**
 * Whether a row read of the leader's pid describes the leader. The first row read while the reap
 * was unreported (`unreportedAtRead`: checked before an asynchronous read was issued, and again
 * now) teaches the session its leader's start time; later rows must match it. Without a start
 * time and with the reap reported, no row is the leader (see the module comment).
 */
export function recognizeLeader(session: NodePtySession, row: ProcessStat, unreportedAtRead: boolean): boolean {
  const known = session.leaderStartTime
  if (known !== null) return row.startTime === undefined || row.startTime === known
  if (!unreportedAtRead || reapReported(session)) return false
  // A row without a start time (a platform that does not expose it) teaches nothing.
  if (row.startTime !== undefined) session.leaderStartTime = row.startTime
  return true
}

/**
 * The thorough look at a leader: one synchronous read of its pid. `true` only when the leader is
 * proven gone — no process at the pid, a zombie, or a pid that names another process now. The
 * first read made while the reap is unreported records the leader's start time (see the module
 * comment), so every later look, signal and sweep can tell the leader from a process that reuses
 * its pid.
 */
export function isLeaderGoneNow(inspector: ProcessInspector, session: NodePtySession): boolean {
  const unreported = !reapReported(session)
  const seen = inspector.readNow(session.pid)
  if (seen !== 'absent' && seen !== null && !recognizeLeader(session, seen, unreported)) return true
  return isGoneBy(seen)
}
