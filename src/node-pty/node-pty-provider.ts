import type { PtyCwdOptions } from '../contracts/index.js'
import { randomUUID } from 'node:crypto'
import { basename } from 'node:path'
import {
  LOCAL_EXECUTION_HOST_ID,
  createListenerSet,
  createRecentIds,
  refusedWrite,
  remainingWaitMs,
  resolveWaitDeadline,
  toPtyIncarnationId,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtyBytesEvent,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyListProcessesOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import { ChildDeathWatch } from './child-death-watch.js'
import { assertPtyDimension, createNodePtyLaunchPlan } from './launch-plan.js'
import { loadNodePtyModule, type NodePtyModule } from './node-pty-module.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import { NodePtyProviderError } from './node-pty-provider-error.js'
import { NodePtySession } from './node-pty-session.js'
import { createProcessInspector, type ProcessInspector } from './process-inspector.js'
import { hasLiveChildren, readForegroundProcess } from './process-tree.js'
import { LivenessScanner } from './liveness-scanner.js'
import { createStopLoop } from './stop-loop.js'
import { NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS } from './stop-schedule.js'
import { confirmForegroundProcess } from './foreground-evidence.js'

/** The `$TERM` of spawned PTYs unless the host names another: what xterm.js and VS Code emulate. */
export const NODE_PTY_DEFAULT_TERMINAL_NAME = 'xterm-256color'

/**
 * How many recently exited PTY ids are remembered, so that a late write to one is refused as
 * `pty_exited` rather than `pty_not_found`. Bounded so that a long-lived host does not grow.
 */
export const NODE_PTY_EXITED_ID_MEMORY = 1_024

/** Options of {@link createNodePtyProvider}. Every field is optional. */
export type NodePtyProviderOptions = {
  /** The provider's `name`. Default `'node-pty'`. */
  name?: string
  /** The host id of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId
  /**
   * `false` when the spawned program is a wrapper whose status is not the child's (macOS
   * `login(1)`, a container shim): every exit then resolves to `unknown/host_status_unavailable`.
   * Default `true`.
   */
  hostReportsChildExitStatus?: boolean
  /** `$TERM` of spawned PTYs. Default {@link NODE_PTY_DEFAULT_TERMINAL_NAME}. */
  terminalName?: string
  /** The program a spawn without `file` runs. Default: `$SHELL` when usable, else `/bin/sh`. */
  defaultShell?: string
  /** The working directory of a spawn without `cwd`. Default: `process.cwd()` at spawn time. */
  defaultCwd?: string
  /** The environment spawns inherit (before their own `env`). Default: `process.env` at spawn time. */
  inheritedEnv?: Readonly<Record<string, string | undefined>>
  /**
   * Hold each PTY's slave side and drain its output to a marker before reporting the exit, so no
   * tail is lost (see the docs). Default `true`; `false` gives node-pty's raw (lossy) behaviour.
   */
  drainOutputAtExit?: boolean
  /**
   * How output is delivered. `'string'` (default): decoded UTF-8 text on `onData`. `'bytes'`:
   * node-pty is spawned with `encoding: null` and every chunk goes out undecoded, as a `Buffer`,
   * on `onBytes` (and never on `onData`); flow control and `providerSequence` count bytes. For
   * hosts that forward output to a renderer or a socket. See the node-pty guide.
   */
  output?: NodePtyOutputMode
  /**
   * Stop the PTY's whole session on shutdown (background jobs, which an interactive shell puts in
   * process groups of their own), not only the leader's process group. Default `true`.
   */
  sweepSession?: boolean
  /** Grace after SIGHUP before SIGTERM. Default {@link NODE_PTY_HANGUP_GRACE_MS}. */
  hangupGraceMs?: number
  /** Grace after SIGTERM before SIGKILL. Default {@link NODE_PTY_TERMINATE_GRACE_MS}. */
  terminateGraceMs?: number
  /** Deadline of a shutdown that names none. Default {@link NODE_PTY_SHUTDOWN_DEADLINE_MS}. */
  shutdownDeadlineMs?: number
  /**
   * How to load node-pty. Default: `import('node-pty')` on the first spawn. Inject a module (or a
   * loader that fails) for tests, or to hand over a copy a bundler placed elsewhere.
   */
  loadNodePty?: () => Promise<unknown>
  /** The platform to behave as. Default `process.platform`. For tests of platform branches. */
  platform?: NodeJS.Platform
}

/** How the node-pty provider delivers output (its `output` option). */
export type NodePtyOutputMode = 'string' | 'bytes'

/**
 * The node-pty provider: a {@link PtyProvider} whose optional capabilities are all present, plus
 * a few node-pty specifics. (It keeps no screen, so `clearBuffer`/`getBufferSnapshot` are absent,
 * and it has no flow control of its own, so `acknowledgeData` is absent too.)
 */
export type NodePtyProvider = PtyProvider &
  Required<
    Pick<
      PtyProvider,
      | 'getSize'
      | 'pauseProducer'
      | 'resumeProducer'
      | 'hasPty'
      | 'probeLiveness'
      | 'getCwd'
      | 'getForegroundProcess'
      | 'hasChildProcesses'
      | 'confirmForeground'
      | 'supportsForegroundProcessEvidence'
      | 'dispose'
      | 'onBytes'
    >
  > & {
  /** Always true: this provider owns every process it lists, so a missing row proves absence. */
  readonly authoritativeListings: true
  /** Same as `dispose()`, for `await using provider = createNodePtyProvider()`. */
  [Symbol.asyncDispose](): Promise<void>
  /** The leader pid of a live PTY; `null` when unknown or exited. */
  getPid(id: string): number | null
}

function assertNonNegativeInteger(option: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new NodePtyOptionError(option, 'a non-negative integer (milliseconds)', value)
  }
}

function validateProviderOptions(options: NodePtyProviderOptions): void {
  if (options === null || typeof options !== 'object') throw new NodePtyOptionError('options', 'an object', options)
  for (const key of ['name', 'hostId', 'terminalName', 'defaultShell', 'defaultCwd'] as const) {
    const value = options[key]
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      throw new NodePtyOptionError(key, 'a non-empty string', value)
    }
  }
  for (const key of ['hostReportsChildExitStatus', 'drainOutputAtExit', 'sweepSession'] as const) {
    const value = options[key]
    if (value !== undefined && typeof value !== 'boolean') throw new NodePtyOptionError(key, 'a boolean', value)
  }
  for (const key of ['hangupGraceMs', 'terminateGraceMs', 'shutdownDeadlineMs'] as const) {
    if (options[key] !== undefined) assertNonNegativeInteger(key, options[key])
  }
  if (options.output !== undefined && options.output !== 'string' && options.output !== 'bytes') {
    throw new NodePtyOptionError('output', "'string' or 'bytes'", options.output)
  }
  if (options.loadNodePty !== undefined && typeof options.loadNodePty !== 'function') {
    throw new NodePtyOptionError('loadNodePty', 'a function', options.loadNodePty)
  }
}

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
 * @throws NodePtyOptionError when an option is malformed.
 */
export function createNodePtyProvider(options: NodePtyProviderOptions = {}): NodePtyProvider {
  validateProviderOptions(options)
  const platform = options.platform ?? process.platform
  const isWindows = platform === 'win32'
  const hostId = options.hostId ?? LOCAL_EXECUTION_HOST_ID
  const hostReportsChildExitStatus = options.hostReportsChildExitStatus ?? true
  const drainOutputAtExit = options.drainOutputAtExit ?? true
  const bytesOutput = options.output === 'bytes'
  const sweepSession = options.sweepSession ?? true
  const hangupGraceMs = options.hangupGraceMs ?? NODE_PTY_HANGUP_GRACE_MS
  const terminateGraceMs = options.terminateGraceMs ?? NODE_PTY_TERMINATE_GRACE_MS
  const defaultDeadlineMs = options.shutdownDeadlineMs ?? NODE_PTY_SHUTDOWN_DEADLINE_MS
  const inspector: ProcessInspector = createProcessInspector(platform)
  // One batched scan of the process table for every stop in flight (see LivenessScanner).
  const scanner = new LivenessScanner(() => inspector.list())
  const stopSession = createStopLoop({ isWindows, sweepSession, inspector, scanner, hangupGraceMs, terminateGraceMs })

  // A listener's bug must not corrupt the provider's state machine, yet must not vanish: the
  // listener sets rethrow it on its own microtask.
  const dataListeners = createListenerSet<PtyDataEvent>()
  const bytesListeners = createListenerSet<PtyBytesEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()
  /** Live sessions by PTY id (until their exit event was delivered). */
  const sessions = new Map<string, NodePtySession>()
  /** PTY ids whose exit was delivered (the most recent ones). */
  const exitedIds = createRecentIds(NODE_PTY_EXITED_ID_MEMORY)
  let modulePromise: Promise<NodePtyModule> | null = null
  let disposed = false
  let disposePromise: Promise<void> | null = null

  // Why a cheap look on SIGCHLD and a thorough one on the poll: SIGCHLD fires for every child of
  // the host, and with many PTYs a /proc read per PTY per signal made concurrent spawns quadratic.
  // node-pty's native exit proves a leader reaped on its own (see NodePtySession); the poll
  // remains the thorough safety net.
  const deathWatch = new ChildDeathWatch(
    (reason) => {
      const thorough = reason === 'poll'
      for (const session of sessions.values()) session.checkLeader(thorough)
    },
    { useSignal: !isWindows },
  )

  function loadModule(): Promise<NodePtyModule> {
    if (modulePromise === null) {
      modulePromise = loadNodePtyModule(options.loadNodePty).catch((error: unknown) => {
        // A failed load is retried on the next spawn (the host may install node-pty meanwhile).
        modulePromise = null
        throw error
      })
    }
    return modulePromise
  }

  const sessionHooks = {
    emitData: (event: PtyDataEvent) => dataListeners.fire(event),
    emitBytes: (event: PtyBytesEvent) => bytesListeners.fire(event),
    emitExit: (event: PtyExitEvent) => exitListeners.fire(event),
    onEnded: (session: NodePtySession) => {
      if (sessions.get(session.id) === session) sessions.delete(session.id)
      exitedIds.remember(session.id)
      deathWatch.setActive(sessions.size > 0)
    },
    isLeaderGone: (pid: number, startTime: string | null) => inspector.isGone(pid, startTime),
    isLeaderReaped: (pid: number) => inspector.isReaped(pid),
  }

  function liveSession(id: string): NodePtySession | undefined {
    const session = sessions.get(id)
    return session !== undefined && session.exit === null ? session : undefined
  }

  function attachReply(session: NodePtySession): PtySpawnResult {
    return {
      id: session.id,
      pid: session.pid,
      incarnationId: session.incarnationId,
      isReattach: true,
      providerSequence: { value: session.charsEmitted, generation: 'continued' },
      hostReportsChildExitStatus: session.hostReportsChildExitStatus,
      cols: session.terminal.cols,
      rows: session.terminal.rows,
    }
  }

  function assertNotDisposed(method: string): void {
    if (disposed) {
      throw new NodePtyProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed node-pty provider`)
    }
  }

  async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    assertNotDisposed('spawn')
    if (spawnOptions === null || typeof spawnOptions !== 'object') {
      throw new NodePtyOptionError('options', 'an object', spawnOptions)
    }
    const { sessionId, expectedIncarnationId } = spawnOptions
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) {
      throw new NodePtyOptionError('sessionId', 'a non-empty string', sessionId)
    }

    if (spawnOptions.attachOnly === true) {
      // node-pty cannot re-attach to a process it did not start in this host process: only a
      // live session of this provider can be attached to.
      const live = sessionId === undefined ? undefined : liveSession(sessionId)
      if (live === undefined) {
        throw new NodePtyProviderError(
          'pty_absent',
          `Cannot attach to PTY ${sessionId === undefined ? '(no session id)' : JSON.stringify(sessionId)}: no live PTY has that id here`,
          { ptyId: sessionId, expectedIncarnationId },
        )
      }
      if (expectedIncarnationId !== undefined && live.incarnationId !== expectedIncarnationId) {
        // Why not `pty_absent`: a process holds the id, so the expected one is not proven gone.
        throw new NodePtyProviderError(
          'pty_live_other_incarnation',
          `Cannot attach to PTY ${JSON.stringify(sessionId)}: the live process is incarnation ${JSON.stringify(live.incarnationId)}, not ${JSON.stringify(expectedIncarnationId)}`,
          { ptyId: sessionId, expectedIncarnationId, liveIncarnationId: live.incarnationId },
        )
      }
      return attachReply(live)
    }

    if (sessionId !== undefined) {
      const live = liveSession(sessionId)
      if (live !== undefined) {
        if (spawnOptions.isNewSession === true) {
          throw new NodePtyProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(sessionId)}: a live PTY already has that id`, {
            ptyId: sessionId,
            liveIncarnationId: live.incarnationId,
          })
        }
        return attachReply(live)
      }
    }

    // Every refusal happens here, before node-pty is even loaded.
    const plan = await createNodePtyLaunchPlan(spawnOptions, {
      env: options.inheritedEnv ?? process.env,
      defaultCwd: options.defaultCwd ?? process.cwd(),
      platform,
      defaultShell: options.defaultShell,
    })
    const nodePty = await loadModule()

    // The awaits above let other calls run: look again.
    assertNotDisposed('spawn')
    const id = sessionId ?? randomUUID()
    if (liveSession(id) !== undefined) {
      throw new NodePtyProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: a live PTY already has that id`, { ptyId: id })
    }

    let terminal
    try {
      terminal = nodePty.spawn(plan.file, plan.args, {
        name: options.terminalName ?? NODE_PTY_DEFAULT_TERMINAL_NAME,
        cols: plan.cols,
        rows: plan.rows,
        cwd: plan.cwd,
        env: plan.env,
        encoding: bytesOutput ? null : 'utf8',
      })
    } catch (error) {
      throw new NodePtyProviderError('spawn_failed', `node-pty could not start ${JSON.stringify(plan.file)}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        ptyId: id,
      })
    }
    exitedIds.forget(id)
    let session: NodePtySession
    try {
      session = new NodePtySession(
        {
          id,
          incarnationId: toPtyIncarnationId(randomUUID()),
          terminal,
          file: plan.file,
          drainOutputAtExit: drainOutputAtExit && !isWindows,
          bytes: bytesOutput,
          hostReportsChildExitStatus,
          command: plan.command,
          scopeId: spawnOptions.scopeId,
          slotKey: spawnOptions.slotKey,
          claimKey: spawnOptions.claimKey,
          leaderStartTime: null,
        },
        sessionHooks,
      )
    } catch (error) {
      // The process exists but cannot be followed: nobody would ever stop it, so kill it now.
      try {
        if (isWindows) terminal.kill()
        else terminal.kill('SIGKILL')
      } catch {
        // Already gone.
      }
      throw new NodePtyProviderError('spawn_failed', `Could not wire up the PTY of ${JSON.stringify(plan.file)}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        ptyId: id,
      })
    }
    if (!isWindows) {
      // Why right after the fork: its pid still names it (if it already died and was reaped, the
      // read fails and the identity stays merely unknown). Off the event loop: see startTimeOf.
      const leader = session
      void inspector.startTimeOf(terminal.pid).then((startTime) => {
        if (leader.leaderStartTime === null) leader.leaderStartTime = startTime
      })
    }
    // A stand-in (or a future node-pty) may report the exit while the session is being wired.
    if (session.exit === null) {
      sessions.set(id, session)
      deathWatch.setActive(true)
    }

    try {
      spawnOptions.onPtySpawnCommitted?.()
    } catch (error) {
      // The caller's hook failed: it never learns of this process, so none may be left behind.
      await stopSession(session, { immediate: true, deadlineAt: Date.now() + defaultDeadlineMs }).catch(() => undefined)
      throw error
    }

    const result: PtySpawnResult = {
      id,
      pid: session.pid,
      incarnationId: session.incarnationId,
      isReattach: false,
      providerSequence: { value: 0, generation: 'reset' },
      hostReportsChildExitStatus,
      cols: plan.cols,
      rows: plan.rows,
    }
    if (session.exit !== null) result.exitedBeforeSpawnReply = true
    return result
  }

  async function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    // Why resolved first: a malformed deadline is a programmer error even for an unknown id.
    const deadlineAt = resolveWaitDeadline(shutdownOptions, defaultDeadlineMs)
    const session = sessions.get(id)
    if (session === undefined) return
    if (shutdownOptions.expectedIncarnationId !== undefined && session.incarnationId !== shutdownOptions.expectedIncarnationId) return
    session.noteStopRequested()
    await stopSession(session, { immediate: shutdownOptions.immediate === true, deadlineAt })
  }

  async function withDeadline<T>(work: Promise<T>, ms: number | undefined, fallback: T): Promise<T> {
    if (ms === undefined) return work
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms)
    })
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
  }

  async function getCwd(id: string, options: PtyCwdOptions = {}): Promise<string | null> {
    const session = liveSession(id)
    // Why checkLeader: a leader reaped since the last look may have had its pid reused; never
    // describe the other process.
    session?.checkLeader()
    if (session === undefined || session.leaderGone) return null
    if (options.of === 'leader') return inspector.cwd(session.pid)
    const target = await readForegroundProcess(inspector, session.pid)
    const cwd = target === null ? null : await inspector.cwd(target.pid)
    return cwd ?? (target?.pid === session.pid ? null : inspector.cwd(session.pid))
  }

  async function getForegroundProcess(id: string): Promise<string | null> {
    const session = liveSession(id)
    // Why checkLeader: a leader reaped since the last look may have had its pid reused; never
    // describe the other process.
    session?.checkLeader()
    if (session === undefined || session.leaderGone) return null
    return (await readForegroundProcess(inspector, session.pid))?.name ?? null
  }

  async function listRow(session: NodePtySession): Promise<PtyProcessInfo> {
    const [cwd, title] = await Promise.all([getCwd(session.id), getForegroundProcess(session.id)])
    return baseRow(session, cwd, title)
  }

  function baseRow(session: NodePtySession, cwd: string | null, title: string | null): PtyProcessInfo {
    const row: PtyProcessInfo = {
      id: session.id,
      hostId,
      incarnationId: session.incarnationId,
      pid: session.pid,
      cwd,
      title: title ?? basename(session.file),
    }
    if (session.scopeId !== undefined) row.scopeId = session.scopeId
    if (session.slotKey !== undefined) row.slotKey = session.slotKey
    if (session.claimKey !== undefined) row.claimKey = session.claimKey
    return row
  }

  async function dispose(): Promise<void> {
    if (disposePromise !== null) return disposePromise
    disposed = true
    disposePromise = (async () => {
      await Promise.allSettled([...sessions.values()].map((session) => stopSession(session, { deadlineAt: Date.now() + defaultDeadlineMs })))
      dataListeners.clear()
      bytesListeners.clear()
      exitListeners.clear()
      deathWatch.stop()
      scanner.stop()
    })()
    return disposePromise
  }

  return {
    name: options.name ?? 'node-pty',
    authoritativeListings: true,
    spawn,
    write(id: string, data: string): WriteSettlement {
      const session = sessions.get(id)
      if (session === undefined) return refusedWrite(exitedIds.has(id) ? 'pty_exited' : 'pty_not_found')
      return session.write(data)
    },
    resize(id: string, cols: number, rows: number): boolean {
      assertPtyDimension('cols', cols)
      assertPtyDimension('rows', rows)
      const session = liveSession(id)
      if (session === undefined || session.leaderGone) return false
      try {
        session.terminal.resize(cols, rows)
        return true
      } catch {
        return false
      }
    },
    getSize(id: string) {
      const session = liveSession(id)
      if (session === undefined || session.leaderGone) return null
      return { cols: session.terminal.cols, rows: session.terminal.rows }
    },
    shutdown,
    pauseProducer(id: string): void {
      liveSession(id)?.pause()
    },
    resumeProducer(id: string): void {
      liveSession(id)?.resume()
    },
    async listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
      const live = [...sessions.values()].filter((session) => session.exit === null)
      // Membership is known at once; the deadline (absolute `deadlineMs` or relative `timeoutMs`)
      // bounds only the OS reads of cwd and title. Past it: the rows without them, no waiting.
      const bounded = listOptions.deadlineMs !== undefined || listOptions.timeoutMs !== undefined
      const waitMs = bounded ? remainingWaitMs(resolveWaitDeadline(listOptions, 0)) : undefined
      if (waitMs === 0) return live.map((session) => baseRow(session, null, null))
      return Promise.all(live.map((session) => withDeadline(listRow(session), waitMs, baseRow(session, null, null))))
    },
    hasPty(id: string): boolean {
      return liveSession(id) !== undefined
    },
    async probeLiveness(id: string): Promise<boolean | null> {
      const session = liveSession(id)
      if (session === undefined) return false
      session.checkLeader()
      return !session.leaderGone
    },
    getCwd,
    getForegroundProcess,
    async confirmForeground(id: string) {
      const session = liveSession(id)
      session?.checkLeader()
      if (session === undefined || session.leaderGone) return null
      const evidence = await confirmForegroundProcess(inspector, session.pid)
      // Why check again: the leader may have been reaped (and its pid reused) during the interval.
      session.checkLeader()
      return session.leaderGone || liveSession(id) !== session ? null : evidence
    },
    supportsForegroundProcessEvidence(): boolean {
      return inspector.kind !== 'none'
    },
    async hasChildProcesses(id: string): Promise<boolean | null> {
      const session = liveSession(id)
      session?.checkLeader()
      if (session === undefined || session.leaderGone) return null
      return hasLiveChildren(inspector, session.pid)
    },
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
      return liveSession(id)?.pid ?? null
    },
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}
