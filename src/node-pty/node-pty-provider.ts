import { isMainThread } from 'node:worker_threads'
import { isOptionsObject } from '../contracts/known-options.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import { DEFAULT_MAX_PENDING_INPUT_BYTES, assertWriteBytes, assertWriteData } from '../contracts/write-settlement.js'
import { assertPtyIdArgument, assertShutdownOptions } from '../contracts/provider-arguments.js'
import {
  LOCAL_EXECUTION_HOST_ID,
  createListenerSet,
  refusedWrite,
  resolveWaitDeadline,
  type PtyBytesEvent,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyProvider,
  type PtyShutdownOptions,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import { ChildDeathWatch, NODE_PTY_DEATH_POLL_BATCH } from './child-death-watch.js'
import { assertPtyDimension } from './launch-plan.js'
import { isLeaderGoneNow, reportsReaps } from './leader-identity.js'
import { refuseCallsAfterDispose } from '../contracts/disposed-provider.js'
import { settleWithin } from '../contracts/settle-within.js'
import { untilNoneLive } from '../contracts/until-none-live.js'
import { NodePtyProviderError } from './node-pty-provider-error.js'
import type { NodePtySession, NodePtySessionHooks } from './node-pty-session.js'
import { guardProcessExit } from './process-exit-guard.js'
import { createProcessInspector } from './process-inspector.js'
import { sigkillLeadersNow } from './process-tree.js'
import { LivenessScanner } from './liveness-scanner.js'
import type { NodePtyProviderContext } from './provider-context.js'
import { validateProviderOptions, type NodePtyProvider, type NodePtyProviderOptions } from './provider-options.js'
import { createNodePtyQueries } from './provider-queries.js'
import { createNodePtySpawn } from './provider-spawn.js'
import { NodePtySessionTable } from './session-table.js'
import { createStopLoop, type SessionStopRequest } from './stop-loop.js'
import { NODE_PTY_DISPOSE_KILL_REAP_MS, NODE_PTY_DISPOSE_LATE_EXIT_MS, NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS } from './stop-schedule.js'

/**
 * Refuse `killOnProcessExit` (on by default) in a worker thread, where it cannot be kept: the
 * provider cannot kill its PTYs as a worker ends (a PTY that dies while a worker is torn down makes
 * node-pty 1.1 abort the whole process, `SIGABRT`), and a worker that ends while one of its PTYs
 * runs does not end at all until that process dies — node-pty joins the thread that waits for it —
 * so `worker.terminate()` never resolves, and the process's `process.exit()` never returns, while
 * a program that ignores the hang-up runs (or a terminal that a later PTY's process holds open).
 * Before, the provider was created and the option silently did nothing. An app that runs its
 * PTYs in a worker says `killOnProcessExit: false` and disposes the provider before the worker
 * ends, or runs its PTYs in the pty host, whose provider works from a worker.
 *
 * @throws NodePtyOptionError naming `killOnProcessExit`, in a worker thread unless it is `false`.
 */
function assertKillOnProcessExitPossible(killOnProcessExit: boolean | undefined): void {
  if (isMainThread || killOnProcessExit === false) return
  throw new NodePtyOptionError(
    'killOnProcessExit',
    '`false` in a worker thread',
    killOnProcessExit,
    "a worker's provider cannot kill its PTYs as the worker ends (a PTY that dies during a worker's teardown aborts the process in node-pty 1.1), " +
      'and a worker that ends while one of its PTYs runs waits for that process: `worker.terminate()` and `process.exit()` hang while a program that ignores the hang-up runs. ' +
      "Pass `killOnProcessExit: false` and dispose the provider before the worker ends, or use ptykit/pty-host's provider, which works in a worker",
  )
}

export {
  NODE_PTY_DEFAULT_TERMINAL_NAME,
  type NodePtyProvider,
  type NodePtyOutputMode,
  type NodePtyProviderOptions,
} from './provider-options.js'

/**
 * Create a {@link PtyProvider} that runs real PTYs through node-pty (Linux and macOS; Windows
 * with reduced guarantees, see the docs).
 *
 * - node-pty is loaded on the first spawn, so importing this module never needs it;
 * - spawn options are validated before any process starts;
 * - a signalled death is reported as `signaled(N)`, never as node-pty's `exitCode: 0`;
 * - every byte a child wrote is delivered before its exit, even on Node 20's lossy libuv;
 * - `shutdown` stops the whole session (HUP → TERM → KILL) and waits until it is gone.
 *
 * @example
 * ```ts
 * const provider = createNodePtyProvider()
 * provider.onData(({ data }) => process.stdout.write(data))
 * provider.onExit(({ cause }) => console.log(cause))
 * const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'echo hi; exit 3'] })
 * ```
 *
 * @throws NodePtyOptionError when an option is malformed; and in a worker thread unless
 * `killOnProcessExit` is `false`, which a worker cannot keep (see the node-pty guide).
 */
export function createNodePtyProvider(options: NodePtyProviderOptions = {}): NodePtyProvider {
  return buildNodePtyProvider(options, true)
}

/**
 * Internal (not exported from `ptykit/node-pty`): the pty host's own provider, which answers as
 * before the rule of `PtyProvider.dispose` once disposed (`[]`, `null`, `false`, a stop that
 * resolves) — the host answers its apps from its own sessions while it closes (a stop joins the
 * close's, a listing is answered), and a refusal there would reach each app as the host's failure.
 * A spawn is refused all the same.
 */
export function createPtyHostNodePtyProvider(options: NodePtyProviderOptions = {}): NodePtyProvider {
  return buildNodePtyProvider(options, false)
}

function buildNodePtyProvider(options: NodePtyProviderOptions, refusesAfterDispose: boolean): NodePtyProvider {
  validateProviderOptions(options)
  const platform = options.platform ?? process.platform
  const isWindows = platform === 'win32'
  if (!isWindows) assertKillOnProcessExitPossible(options.killOnProcessExit)
  const sweepSession = options.sweepSession ?? true
  const inspector = createProcessInspector(platform)
  // One batched scan of the process table for every stop in flight (see LivenessScanner).
  const scanner = new LivenessScanner(() => inspector.list())
  const stopLoop = createStopLoop({
    isWindows,
    sweepSession,
    inspector,
    scanner,
    hangupGraceMs: options.hangupGraceMs ?? NODE_PTY_HANGUP_GRACE_MS,
    terminateGraceMs: options.terminateGraceMs ?? NODE_PTY_TERMINATE_GRACE_MS,
  })
  const sessions = new NodePtySessionTable()
  /**
   * Sessions whose stop has not yet proven everything it covers gone, by id: a stop in flight, or
   * one that gave up at its deadline with survivors. A session leaves the table once its exit is
   * delivered, but its stop goes on while the processes it covers live (a job that ignored the
   * hang-up): a later `shutdown` of its id (or of its incarnation) joins it, or tries again, and
   * `dispose` waits for it — never answering for a session that still runs. An id can hold several
   * (it was respawned while an earlier session's stop went on); a session leaves once a stop of
   * it completed.
   */
  const unfinishedStops = new Map<string, Set<NodePtySession>>()
  /** The stops already followed (a join hands the same one back). */
  const followedStops = new WeakSet<Promise<void>>()
  /** Every session that may still have processes: each in the table, and each whose stop has not completed. */
  const sessionsWithProcesses = (): Set<NodePtySession> => {
    const all = new Set(sessions.values())
    for (const ofId of unfinishedStops.values()) for (const session of ofId) all.add(session)
    return all
  }
  /** Run (or join) a session's stop, tracked in {@link unfinishedStops} until one completes. */
  const stopSession = (session: NodePtySession, request: SessionStopRequest): Promise<void> => {
    const stopped = stopLoop(session, request)
    const stop = session.stop
    if (stop !== null && !followedStops.has(stop.done)) {
      followedStops.add(stop.done)
      let ofId = unfinishedStops.get(session.id)
      if (ofId === undefined) unfinishedStops.set(session.id, (ofId = new Set()))
      ofId.add(session)
      stop.done.then(
        () => {
          const current = unfinishedStops.get(session.id)
          current?.delete(session)
          if (current?.size === 0) unfinishedStops.delete(session.id)
          releaseExitGuardWhenIdle()
        },
        // Kept: its survivors are still this provider's to stop (a later shutdown, or dispose).
        () => undefined,
      )
    }
    return stopped
  }
  let disposed = false
  /** Set once `dispose()` has resolved: every call but `dispose` and the subscriptions is refused from then on. */
  let disposeSettled = false
  let disposePromise: Promise<void> | null = null
  const context: NodePtyProviderContext = {
    options,
    platform,
    isWindows,
    hostId: options.hostId ?? LOCAL_EXECUTION_HOST_ID,
    hostReportsChildExitStatus: options.hostReportsChildExitStatus ?? true,
    drainOutputAtExit: options.drainOutputAtExit ?? true,
    bytesOutput: options.output === 'bytes',
    maxPendingInputBytes: options.maxPendingInputBytes ?? DEFAULT_MAX_PENDING_INPUT_BYTES,
    defaultDeadlineMs: options.shutdownDeadlineMs ?? NODE_PTY_SHUTDOWN_DEADLINE_MS,
    inspector,
    sessions,
    stopSession,
    assertNotDisposed(method) {
      if (disposed) {
        throw new NodePtyProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed node-pty provider`)
      }
    },
  }

  // A listener's bug must not corrupt the provider's state machine, yet must not vanish: the
  // listener sets rethrow it on its own microtask.
  const dataListeners = createListenerSet<PtyDataEvent>()
  const bytesListeners = createListenerSet<PtyBytesEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()

  // Why a cheap look on SIGCHLD and a thorough one on the poll: SIGCHLD fires for every child of
  // the host, and with many PTYs a /proc read per PTY per signal made concurrent spawns quadratic.
  // node-pty's native exit proves a leader reaped on its own (see NodePtySession); the poll
  // remains the thorough safety net, and looks at a bounded slice of the sessions per tick so
  // that an idle host's cost per tick does not grow with its PTYs (1 000 synchronous /proc reads
  // per second blocked the event loop for up to 300 ms).
  // Sessions whose terminal does not report its leader's reap to JavaScript (a stand-in or a
  // wrapper, not node-pty's own): only they are looked at on SIGCHLD, and only while there are any
  // is SIGCHLD heard. node-pty's own terminal reports its reap itself (its native exit, heard at
  // once through the drain's hint, `onDeathHint`), so a SIGCHLD listener would add nothing
  // but a signal per child's death (see ChildDeathWatch.setSignalWanted).
  const reapsUnreported = new Set<NodePtySession>()
  const deathWatch = new ChildDeathWatch(
    (reason) => {
      if (reason === 'poll') for (const session of sessions.nextSlice(NODE_PTY_DEATH_POLL_BATCH)) session.checkLeader(true)
      else for (const session of reapsUnreported) session.checkLeader(false)
    },
    { useSignal: !isWindows },
  )

  /** Called after each session ends: a disposal waits on them for the exits of what it killed ({@link untilNoneLive}). */
  const endedWatchers = new Set<() => void>()
  const sessionHooks: NodePtySessionHooks = {
    emitData: (event) => dataListeners.fire(event),
    emitBytes: (event) => bytesListeners.fire(event),
    emitExit: (event) => exitListeners.fire(event),
    onEnded: (session) => {
      sessions.ended(session)
      for (const watcher of [...endedWatchers]) watcher()
      if (exitsOwedAfterDispose?.delete(session) === true && exitsOwedAfterDispose.size === 0) letGoAfterDispose()
      if (reapsUnreported.delete(session)) deathWatch.setSignalWanted(reapsUnreported.size > 0)
      // Not once let go: a session that ends after the late-exit wait's bound (one of several
      // whose exit was owed) started the watch's poll again for the others — an interval reading
      // `/proc` every second until the last ended, for good if one never did.
      if (!letGo) deathWatch.setActive(sessions.size > 0)
      releaseExitGuardWhenIdle()
    },
    isLeaderGone: (session) => isLeaderGoneNow(inspector, session),
    isLeaderReaped: (pid) => inspector.isReaped(pid),
  }
  /**
   * `killOnProcessExit`'s kill: SIGKILL, synchronously, every process this provider's sessions
   * still have — each live session's and each unfinished stop's — while the host process ends
   * without having disposed the provider. A session's leader group, and, when sweeping, every
   * group of its session and its descendants, found in one synchronous `/proc` pass
   * ({@link sigkillLeadersNow}; where there is none, the group of a leader not known gone).
   */
  function killEverySessionNow(): void {
    const toKill = sessionsWithProcesses()
    if (toKill.size > 0) sigkillLeadersNow(toKill, inspector, sweepSession)
  }
  /**
   * The end of `dispose()`'s deadline: SIGKILL, synchronously, every process still left of the
   * sessions whose stop did not prove them gone — each leader's group and, when sweeping, every
   * group of its session and its descendants, found in one synchronous `/proc` pass
   * ({@link sigkillLeadersNow}, as {@link killEverySessionNow}; `sweepSession: false`: the group of
   * a leader not known gone). The disposal's own stop: each leader this kill reached alive is noted
   * as killed by the stop (`NodePtySession.noteStopKill`), so its exit is the stop's
   * (`stopRequestedBeforeDeath`), never "killed by something else" (`diedBeforeStopRequest`).
   *
   * Why at the deadline, synchronously: a stop sends its SIGKILL from its own loop, after an
   * asynchronous look at the process table, and a deadline that passed first (a short
   * `shutdownDeadlineMs`, a loaded machine) resolved `dispose()` before it went out. A process that
   * ends then — the `ptykit-pty-host` process at the end of its close, an app that disposes its
   * provider and exits (with `killOnProcessExit: false`, as in a worker) — never sent it, and a
   * program that ignores the hang-up and SIGTERM outlived it. Until 7 Dec the closing pty host
   * killed what was left itself, and the provider then read that death as another's kill. Not on
   * Windows: no signals (node-pty ends the console).
   */
  function killLeftAtDeadline(left: readonly NodePtySession[]): void {
    if (isWindows || left.length === 0) return
    // As a stop step does before it signals: a leader reaped meanwhile is known gone, so its pid
    // (which may name another process now) is not signalled, nor its death called this kill's.
    for (const session of left) session.checkLeader()
    const killedAlive = sigkillLeadersNow(left, inspector, sweepSession)
    // Noted right after the kill, before any exit can be heard (this all runs in one turn).
    left.forEach((session, index) => {
      if (killedAlive[index] === true) session.noteStopKill()
    })
  }
  /**
   * Removes {@link killEverySessionNow} from the process's exit guard; set while some session may
   * still have processes (from a spawn until every session ended and every stop completed).
   */
  let releaseExitGuard: (() => void) | null = null
  const guardsProcessExit = (options.killOnProcessExit ?? true) && !isWindows
  /**
   * Leave the process's exit guard once no session may have processes left: its kill would find
   * nothing to kill, and the guard is process-wide — registered, it kept this provider (its
   * sessions' memory, its listeners, whatever they hold) alive until `dispose`. An app that made a
   * provider per task or per test and never disposed it kept every one of them (~50 KB each).
   * The next spawn registers it again.
   */
  function releaseExitGuardWhenIdle(): void {
    if (releaseExitGuard === null || sessions.size > 0 || unfinishedStops.size > 0) return
    releaseExitGuard()
    releaseExitGuard = null
  }

  const spawn = createNodePtySpawn(context, sessionHooks, (session) => {
    if (guardsProcessExit && releaseExitGuard === null && !disposed) releaseExitGuard = guardProcessExit(killEverySessionNow)
    sessions.add(session)
    if (!reportsReaps(session)) reapsUnreported.add(session)
    deathWatch.setSignalWanted(reapsUnreported.size > 0)
    deathWatch.setActive(true)
  })
  const queries = createNodePtyQueries(context)

  /**
   * The session a `shutdown` of `id` addresses: the one under the id (a live one takes precedence),
   * else the latest whose stop has not completed; with `expectedIncarnationId`, only that one.
   */
  function sessionToStop(id: string, expectedIncarnationId: string | undefined): NodePtySession | undefined {
    const current = sessions.get(id)
    const unfinished = [...(unfinishedStops.get(id) ?? [])]
    if (expectedIncarnationId === undefined) return current ?? unfinished.at(-1)
    if (current?.incarnationId === expectedIncarnationId) return current
    return unfinished.find((session) => session.incarnationId === expectedIncarnationId)
  }

  async function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    assertPtyIdArgument(id)
    if (!isOptionsObject(shutdownOptions)) throw new NodePtyOptionError('options', 'an object', shutdownOptions, undefined, false, 'invalid_option')
    assertShutdownOptions(shutdownOptions)
    // Why resolved first: a malformed deadline is a programmer error even for an unknown id.
    const deadlineAt = resolveWaitDeadline(shutdownOptions, context.defaultDeadlineMs)
    const session = sessionToStop(id, shutdownOptions.expectedIncarnationId)
    if (session === undefined) return
    session.noteStopRequested()
    await stopSession(session, { immediate: shutdownOptions.immediate === true, deadlineAt })
  }

  /**
   * The sessions `dispose()` signalled whose exit had not been delivered when it resolved (its
   * stops' deadline passed first: a loaded host reaps and reports late), or `null`. Their exits
   * are still reported, as a shutdown's would be — the disposal killed them, and its exit is the
   * evidence a controller waits for (a `stopAndWait` it refused `provider_disposed`) — until the
   * last came or {@link NODE_PTY_DISPOSE_LATE_EXIT_MS} passed; then {@link letGoAfterDispose}.
   * Before, the listeners were cleared at the deadline and those exits were dropped.
   */
  let exitsOwedAfterDispose: Set<NodePtySession> | null = null
  let lateExitTimer: NodeJS.Timeout | null = null
  /**
   * Set by {@link letGoAfterDispose}: the provider watches nothing from then on — no timer of it
   * survives the late-exit window (a session ending later does not start the death watch again).
   */
  let letGo = false
  /** The end of a dispose: drop the listeners, stop watching, leave the exit guard (once). */
  function letGoAfterDispose(): void {
    letGo = true
    exitsOwedAfterDispose = null
    endedWatchers.clear()
    if (lateExitTimer !== null) clearTimeout(lateExitTimer)
    lateExitTimer = null
    dataListeners.clear()
    bytesListeners.clear()
    exitListeners.clear()
    deathWatch.stop()
    scanner.stop()
    releaseExitGuard?.()
    releaseExitGuard = null
  }

  async function dispose(): Promise<void> {
    if (disposePromise !== null) return disposePromise
    disposed = true
    disposePromise = (async () => {
      // One microtask first: a spawn that forked before this call wires its session one microtask
      // after its fork (provider-spawn.ts), and that wiring is queued ahead of this. Past it, every
      // process this provider started is in the table read below — none is left unfollowed.
      await undefined
      const deadlineAt = Date.now() + context.defaultDeadlineMs
      const toStop = sessionsWithProcesses()
      // A stop as a shutdown's is: each exit says whether it came before the death or after.
      for (const session of toStop) session.noteStopRequested()
      const stopped = [...toStop]
      const settled = await Promise.allSettled(stopped.map((session) => stopSession(session, { deadlineAt })))
      // What the stops could not prove gone by the deadline is killed now, as this disposal's own stop.
      const left = stopped.filter((_, index) => settled[index]!.status === 'rejected')
      killLeftAtDeadline(left)
      // ...and heard end before this resolves (bounded; not on Windows, where nothing was killed):
      // node-pty has reaped each then, and an app may end at once — a worker thread torn down
      // while one of its PTYs dies aborts the process.
      if (!isWindows && left.length > 0) await settleWithin(untilNoneLive(left, (session) => session.exit === null, endedWatchers), NODE_PTY_DISPOSE_KILL_REAP_MS, undefined)
      // Input still held for a PTY whose exit did not come: no write waits on it for good.
      for (const session of toStop) session.dropHeldInput()
      // Signalled, exit not delivered yet: keep listening for those exits only (bounded), so the
      // evidence of the stop is not thrown away. Nothing else is answered meanwhile.
      const owed = [...toStop].filter((session) => session.exit === null)
      if (owed.length === 0) letGoAfterDispose()
      else {
        exitsOwedAfterDispose = new Set(owed)
        lateExitTimer = setTimeout(letGoAfterDispose, NODE_PTY_DISPOSE_LATE_EXIT_MS)
        // Never what keeps the app running: a PTY still alive holds it anyway, through node-pty.
        lateExitTimer.unref()
      }
      disposeSettled = true
    })()
    return disposePromise
  }

  /**
   * The session of `id` unless its leader is known gone — without reading the OS, for `resize` and
   * `getSize`, which act on the terminal (it outlives the leader while its output drains). The
   * answers that say a process runs look at the leader first (`sessions.running`).
   */
  function notKnownGone(id: string) {
    const session = sessions.live(id)
    return session === undefined || session.leaderGone ? undefined : session
  }

  // The rule of `PtyProvider.dispose`: once it resolved, every call but `dispose` and the `on*`
  // subscriptions is refused `provider_disposed` (a spawn already from its start). Before, a
  // listing answered `[]` and the queries `null`/`false`, where the SSH and pty host providers reject.
  return refuseCallsAfterDispose(
    {
      name: options.name ?? 'node-pty',
      authoritativeListings: true,
      spawn,
      write(id: string, data: string): WriteSettlement | Promise<WriteSettlement> {
        assertWriteData(data)
        assertPtyIdArgument(id)
        const session = sessions.get(id)
        if (session === undefined) return refusedWrite(sessions.hasExited(id) ? 'pty_exited' : 'pty_not_found')
        return session.write(data)
      },
      writeBytes(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement> {
        assertWriteBytes(bytes)
        assertPtyIdArgument(id)
        const session = sessions.get(id)
        if (session === undefined) return refusedWrite(sessions.hasExited(id) ? 'pty_exited' : 'pty_not_found')
        return session.write(bytes)
      },
      resize(id: string, cols: number, rows: number): boolean {
        assertPtyIdArgument(id)
        assertPtyDimension('cols', cols, 'invalid_option')
        assertPtyDimension('rows', rows, 'invalid_option')
        const session = notKnownGone(id)
        if (session === undefined) return false
        try {
          session.terminal.resize(cols, rows)
          return true
        } catch {
          return false
        }
      },
      getSize(id: string) {
        assertPtyIdArgument(id)
        const session = notKnownGone(id)
        return session === undefined ? null : { cols: session.terminal.cols, rows: session.terminal.rows }
      },
      shutdown,
      pauseProducer(id: string): void {
        assertPtyIdArgument(id)
        sessions.live(id)?.pause()
      },
      resumeProducer(id: string): void {
        assertPtyIdArgument(id)
        sessions.live(id)?.resume()
      },
      listProcesses: queries.listProcesses,
      hasPty(id: string): boolean {
        assertPtyIdArgument(id)
        return sessions.running(id) !== undefined
      },
      probeLiveness: queries.probeLiveness,
      getCwd: queries.getCwd,
      getForegroundProcess: queries.getForegroundProcess,
      confirmForeground: queries.confirmForeground,
      supportsForegroundProcessEvidence(): boolean {
        return inspector.kind !== 'none'
      },
      hasChildProcesses: queries.hasChildProcesses,
      onData(listener: (event: PtyDataEvent) => void): Unsubscribe {
        return dataListeners.add(listener)
      },
      onBytes(listener: (event: PtyBytesEvent) => void): Unsubscribe {
        return bytesListeners.add(listener)
      },
      onExit(listener: (event: PtyExitEvent) => void): Unsubscribe {
        return exitListeners.add(listener)
      },
      getPid(id: string): number | null {
        assertPtyIdArgument(id)
        return sessions.live(id)?.pid ?? null
      },
      dispose,
      [Symbol.asyncDispose]: dispose,
    },
    () => refusesAfterDispose && disposeSettled,
    (method, ptyId) => new NodePtyProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed node-pty provider`, { ptyId }),
  )
}
