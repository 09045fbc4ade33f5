import { clampTimerDelay } from '../contracts/index.js'
import { onWaitClock, waitClockNow } from '../contracts/deadline.js'
import { NODE_PTY_SCAN_MIN_INTERVAL_MS, type LivenessScanner, type SessionLivenessWatch } from './liveness-scanner.js'
import { NodePtyProviderError } from './node-pty-provider-error.js'
import type { NodePtySession } from './node-pty-session.js'
import { isDefunct, type ProcessInspector } from './process-inspector.js'
import { groupsOf, selectSessionProcesses, type ProcessTableIndex } from './process-tree.js'
import { NODE_PTY_KILL_RESERVE_MS, planStopSchedule, type StopSignal } from './stop-schedule.js'

/** What the stop loop needs from its provider. */
export type StopLoopOptions = {
  /** Windows: no signals, node-pty ends the console. */
  isWindows: boolean
  /** Stop the leader's whole session, not only its process group. */
  sweepSession: boolean
  /** Reads single processes (the cheap per-process checks). */
  inspector: ProcessInspector
  /** The shared, batched scan of the process table. */
  scanner: LivenessScanner
  /** Grace after SIGHUP. */
  hangupGraceMs: number
  /** Grace after SIGTERM. */
  terminateGraceMs: number
}

/** One stop request: kill at once or escalate, and the absolute time (epoch ms) it gives up. */
export type SessionStopRequest = {
  /** Go straight to SIGKILL. */
  immediate?: boolean
  /** Absolute epoch milliseconds; a time already past means "signal and check once". */
  deadlineAt: number
}

/**
 * How long a signalling step waits for a process table it could not read (the host is out of
 * descriptors) before it signals a live leader anyway. Why wait: the table is where the leader's
 * descendants in sessions or groups of their own (`setsid` children) are found, and once the leader
 * dies they are reparented and out of reach. Half a second is one grace period: descriptors freed
 * by PTYs ending meanwhile are usually back by then. Never past the deadline's KILL reserve.
 */
const NODE_PTY_UNREADABLE_TABLE_WAIT_MS = 500

/** Resolve at `at` (on the wait clock (`waitClockNow`)), however far away: the timer is re-armed in clamped steps. */
function sleepUntil(at: number): { done: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined
  let cancelled = false
  const done = new Promise<void>((resolve) => {
    const arm = (): void => {
      if (cancelled) return
      const left = at - waitClockNow()
      if (left <= 0) resolve()
      else timer = setTimeout(arm, clampTimerDelay(left))
    }
    arm()
  })
  return {
    done,
    cancel: () => {
      cancelled = true
      if (timer !== undefined) clearTimeout(timer)
    },
  }
}

/**
 * The stop of node-pty sessions: signal the session (HUP → TERM → KILL, see `planStopSchedule`),
 * look whether everything it covers is gone, escalate. The looks of all stops in flight share one
 * {@link LivenessScanner}; between looks, each stop only checks the processes it already knows.
 *
 * A stop covers the leader's process group, its session (background jobs in groups of their own)
 * and its descendants by parentage — including one that called `setsid`, found while its parent
 * lived and remembered (pid with start time) from then on. It cannot cover a double-forked daemon
 * whose parent had already died before any look saw it: nothing links that process to the PTY.
 */
export function createStopLoop(options: StopLoopOptions): (session: NodePtySession, request: SessionStopRequest) => Promise<void> {
  const { isWindows, sweepSession, inspector, scanner } = options

  /**
   * Signal the leader's group and, when sweeping, every process group of its session.
   * `remembered` maps each process found in the session so far to its start time, so a process
   * that left the session's reach (reparented to init after a `setsid`) is still stopped, and a
   * pid that meanwhile names another process is never signalled.
   */
  async function signalSession(session: NodePtySession, signal: StopSignal, remembered: Map<number, string | null>, deadlineAt: number): Promise<void> {
    if (isWindows) {
      session.terminal.kill()
      return
    }
    let table = sweepSession ? await scanner.freshTable() : null
    if (sweepSession && table === null && !session.leaderGone && inspector.kind !== 'none') {
      // Unreadable (out of descriptors): look again for a while before signalling the leader blind.
      const giveUpAt = Math.min(waitClockNow() + NODE_PTY_UNREADABLE_TABLE_WAIT_MS, deadlineAt - NODE_PTY_KILL_RESERVE_MS)
      while (table === null && waitClockNow() < giveUpAt) {
        const pause = sleepUntil(Math.min(giveUpAt, waitClockNow() + NODE_PTY_SCAN_MIN_INTERVAL_MS))
        await pause.done
        table = await scanner.freshTable()
      }
    }
    // Why here, after the await and right before the kills: a leader reaped meanwhile may have
    // had its pid reused; its pid (and group id) must then never be signalled. When the table
    // just read shows the leader alive as the process learnt, node-pty's reap report settles it
    // without a /proc read (checkLeaderByReap); otherwise (no table, no row, a zombie, another
    // start time, none learnt) the thorough look.
    const leaderRow = table?.byPid.get(session.pid)
    const known = session.leaderStartTime
    if (leaderRow !== undefined && !isDefunct(leaderRow) && known !== null && leaderRow.startTime === known) session.checkLeaderByReap()
    else session.checkLeader()
    const groups = new Set<number>()
    if (!session.leaderGone) groups.add(session.pid)
    // Signalling a live leader without having seen its session: a descendant in a session or group
    // of its own (a `setsid` child) is unknown, and once the leader dies it is reparented and out
    // of reach. No later table can prove it absent, so this stop can never be verified.
    if (sweepSession && table === null && !session.leaderGone && inspector.kind !== 'none') sweptUnseen.add(session)
    if (table !== null) {
      rememberSession(session, table, remembered)
      const self = table.byPid.get(process.pid)
      for (const [pid, startTime] of [...remembered]) {
        const row = table.byPid.get(pid)
        const sameProcess = row !== undefined && (startTime === null || row.startTime === undefined || row.startTime === startTime)
        if (!sameProcess || isDefunct(row)) remembered.delete(pid)
      }
      for (const group of groupsOf(table, [...remembered.keys()])) if (group !== self?.pgid) groups.add(group)
    }
    // Why the pid as well as its group: a leader that left its group must still get the signal.
    // Not when the fresh table shows the leader (the same process) in a group just signalled: a
    // second kill(2) per PTY was a third of a 400-PTY stopAndWait's CPU, for nothing.
    const leaderCovered =
      leaderRow !== undefined &&
      groups.has(leaderRow.pgid) &&
      (session.leaderStartTime === null || leaderRow.startTime === undefined || leaderRow.startTime === session.leaderStartTime)
    const targets = [...[...groups].map((group) => -group), ...(session.leaderGone || leaderCovered ? [] : [session.pid])]
    // Noted before it is sent: a leader found dead of SIGKILL while none had gone out was killed
    // by something else, and its exit keeps that cause (NodePtySession.noteStopKill).
    if (signal === 'SIGKILL') session.noteStopKill()
    let delivered = 0
    let denied: unknown = null
    for (const target of targets) {
      try {
        process.kill(target, signal)
        delivered += 1
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ESRCH') denied ??= error
      }
    }
    if (delivered === 0 && denied !== null) {
      throw new NodePtyProviderError('shutdown_failed', `Could not signal PTY ${JSON.stringify(session.id)}: ${String(denied)}`, {
        cause: denied,
        ptyId: session.id,
      })
    }
  }

  /** Add every process of the session the table shows to `remembered` (with its start time). */
  function rememberSession(session: NodePtySession, table: ProcessTableIndex, remembered: Map<number, string | null>): number[] {
    // A leader already reaped at the stop's first look (see startOrJoin): every table read since
    // is later than its reap, so a live process at its pid is someone else.
    const reapedUnknown = reapedBeforeFirstLook.has(session)
    const found = selectSessionProcesses(table, session.pid, process.pid, session.leaderStartTime, reapedUnknown)
    for (const pid of found) if (!remembered.has(pid)) remembered.set(pid, table.byPid.get(pid)?.startTime ?? null)
    return found
  }

  /** The stop's view of its session for the shared scan. */
  function watchOf(session: NodePtySession, remembered: Map<number, string | null>): SessionLivenessWatch {
    // Why the inspector's kind: one that can never list (an unknown platform) cannot prove a
    // sweep complete, nor ever will; the leader's delivered exit is all there is to wait for.
    const needsTable = !isWindows && sweepSession && inspector.kind !== 'none'
    return {
      needsTable,
      mayBeGone() {
        session.checkLeader()
        if (session.exit === null) {
          // A stop was asked for and the leader is dead: the tail still owed is bounded, so a
          // pause must not hold the exit back now.
          if (session.leaderGone && session.paused) session.resume()
          return false
        }
        if (!needsTable) return true
        // The cheap check: one stat read per process already known to belong to the session.
        for (const [pid, startTime] of [...remembered]) if (inspector.isGone(pid, startTime)) remembered.delete(pid)
        return remembered.size === 0
      },
      isGoneIn(table) {
        if (!needsTable) return true
        if (sweptUnseen.has(session)) return false
        // No table (unreadable now: out of descriptors) proves nothing gone; the next look retries.
        if (table === null) {
          tableUnreadable.add(session)
          return false
        }
        tableUnreadable.delete(session)
        // Found ones are remembered, so the next looks check them one by one.
        return rememberSession(session, table, remembered).length === 0
      },
    }
  }

  /** Sessions whose leader was already reaped, its start time never learnt, when their stop began. */
  const reapedBeforeFirstLook = new WeakSet<NodePtySession>()

  /** What each session's stop has found of its session so far (shared by the stop's callers). */
  const rememberedBySession = new WeakMap<NodePtySession, Map<number, string | null>>()

  /** Sessions whose stop's last look found the process table unreadable (see `isGoneIn`). */
  const tableUnreadable = new WeakSet<NodePtySession>()

  /** Sessions whose live leader was signalled while the process table could not be read (see `signalSession`). */
  const sweptUnseen = new WeakSet<NodePtySession>()

  /** The processes of the session still alive, for an error message: `; still alive: pids 12, 34`. */
  function survivorsOf(session: NodePtySession): string {
    const pids = [...(rememberedBySession.get(session)?.keys() ?? [])]
    if (!session.leaderGone && !pids.includes(session.pid)) pids.unshift(session.pid)
    const alive = pids.length === 0 ? '' : `; still alive: pids ${pids.join(', ')}`
    if (sweptUnseen.has(session)) return `${alive}; its leader was signalled while the process table could not be read (out of file descriptors?): processes of its session that left its group may live on, unseen`
    return tableUnreadable.has(session) ? `${alive}; the process table could not be read (out of file descriptors?), so the rest of its session could not be looked for` : alive
  }

  /** One look of a caller's own, at its deadline: gone now, or not. */
  async function lastLook(session: NodePtySession): Promise<boolean> {
    const watch = watchOf(session, rememberedBySession.get(session) ?? new Map())
    if (!watch.mayBeGone()) return false
    return watch.isGoneIn(watch.needsTable ? await scanner.freshTable() : null)
  }

  /**
   * Run (or join) the stop of a session; resolves when it is gone, rejects at this caller's
   * deadline (after one last look: a deadline already past means "signal and check once").
   */
  return function stopSession(session: NodePtySession, epochRequest: SessionStopRequest): Promise<void> {
    // From here on, the deadline is on the monotonic clock (see `waitClockNow`).
    const request: SessionStopRequest = { ...epochRequest, deadlineAt: onWaitClock(epochRequest.deadlineAt) }
    const running = startOrJoin(session, request)
    const pause = sleepUntil(request.deadlineAt)
    const atDeadline = pause.done.then(async () => {
      if (await lastLook(session)) return
      throw new NodePtyProviderError('shutdown_timeout', `PTY ${JSON.stringify(session.id)} could not be stopped by its deadline${survivorsOf(session)}`, {
        ptyId: session.id,
      })
    })
    return Promise.race([running, atDeadline]).finally(() => pause.cancel())
  }

  function startOrJoin(session: NodePtySession, request: SessionStopRequest): Promise<void> {
    if (session.stop === null) {
      // The first look, before any signal and before any table is read: it learns the leader's
      // start time while the pid still names the leader, or proves the leader already reaped
      // (leader-identity.ts). A `shutdown` has usually looked already (noteStopRequested).
      if (session.leaderStartTime === null) session.checkLeader()
      if (session.leaderGone && session.leaderStartTime === null) reapedBeforeFirstLook.add(session)
      let killNow: () => void = () => {}
      const killRequested = new Promise<'kill'>((resolve) => {
        killNow = () => resolve('kill')
      })
      let kill = false
      const remembered = new Map<number, string | null>()
      rememberedBySession.set(session, remembered)
      const started = waitClockNow()
      // Why mutable: a caller that joins with a later deadline keeps the stop waiting for it,
      // rather than failing at the first caller's earlier one.
      let waitUntil = request.deadlineAt
      const run = async (): Promise<void> => {
        // An earlier stop signalled the leader unseen (see signalSession) and the leader is dead:
        // nothing is left to signal, and what may live on can never be found. Say so at once
        // rather than wait for a deadline (every later shutdown and `dispose` tries again).
        if (sweptUnseen.has(session) && session.exit !== null) {
          throw new NodePtyProviderError('shutdown_timeout', `PTY ${JSON.stringify(session.id)} cannot be proven stopped${survivorsOf(session)}`, { ptyId: session.id })
        }
        const watching = scanner.untilGone(watchOf(session, remembered))
        const gone = watching.gone.then(() => 'gone' as const)
        try {
          const steps = planStopSchedule({
            immediate: request.immediate === true,
            deadlineAfterMs: Math.max(0, request.deadlineAt - started),
            hangupGraceMs: options.hangupGraceMs,
            terminateGraceMs: options.terminateGraceMs,
            killReserveMs: NODE_PTY_KILL_RESERVE_MS,
          })
          // Each grace counts from when the previous signal actually went out, not from the plan:
          // a step's signal awaits a fresh table read, which a loaded machine delivers late (the
          // hang-up 10–224 ms after the stop began at load ~6), and a program saving state on the
          // hang-up must still get its full grace before SIGTERM. A late signal shifts the steps
          // after it, but never the KILL past the latest time the deadline allows (its reserve
          // kept, as in the plan); a graceful step shifted onto that time is dropped, as the plan
          // drops one that would coincide with the KILL.
          const killStep = steps[steps.length - 1]!
          const latestKillAt = Math.max(started + killStep.atMs, request.deadlineAt - NODE_PTY_KILL_RESERVE_MS)
          let previous: { atMs: number; sentAt: number } | null = null
          for (const step of steps) {
            if (!kill) {
              const graceFromSent = previous === null ? -Infinity : previous.sentAt + (step.atMs - previous.atMs)
              const dueAt = Math.max(started + step.atMs, graceFromSent)
              if (step !== killStep && dueAt >= latestKillAt) continue
              const pause = sleepUntil(Math.min(dueAt, latestKillAt))
              const woke = await Promise.race([gone, pause.done.then(() => 'step' as const), killRequested])
              pause.cancel()
              if (woke === 'gone') return
            }
            const signal = kill ? 'SIGKILL' : step.signal
            await signalSession(session, signal, remembered, waitUntil)
            previous = { atMs: step.atMs, sentAt: waitClockNow() }
            // A kill asked for while this step's signal was on its way (its table read is awaited)
            // is owed at once, and the loop ends here: the plan's own SIGKILL step would be skipped.
            if (kill && signal !== 'SIGKILL') await signalSession(session, 'SIGKILL', remembered, waitUntil)
            if (kill) break
          }
          // Everything was sent; wait for the deaths, up to the latest deadline (a later stop may retry).
          for (;;) {
            // A stop that signalled its leader unseen is not proven by waiting longer once the
            // leader is dead (a joiner's later deadline included): see `run`'s first check.
            if (sweptUnseen.has(session) && session.exit !== null && remembered.size === 0) break
            const until = waitUntil
            const pause = sleepUntil(until)
            const woke = await Promise.race([gone, pause.done.then(() => 'deadline' as const)])
            pause.cancel()
            if (woke === 'gone') return
            if (waitUntil > until) continue
            break
          }
          if (await lastLook(session)) return
          throw new NodePtyProviderError('shutdown_timeout', `PTY ${JSON.stringify(session.id)} was still alive ${Math.round(waitClockNow() - started)} ms after its stop began${survivorsOf(session)}`, {
            ptyId: session.id,
          })
        } finally {
          watching.cancel()
        }
      }
      const done = run().finally(() => {
        if (session.stop === stop) session.stop = null
      })
      const stop = {
        done,
        escalateToKill: () => {
          kill = true
          killNow()
        },
        waitUntil: (at: number) => {
          waitUntil = Math.max(waitUntil, at)
        },
      }
      session.stop = stop
      // The stop's own failure is reported to each caller; never as an unhandled rejection.
      done.catch(() => undefined)
      return done
    }
    session.stop.waitUntil(request.deadlineAt)
    if (request.immediate === true) session.stop.escalateToKill()
    return session.stop.done
  }
}
