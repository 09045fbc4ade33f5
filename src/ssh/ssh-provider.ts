import { randomUUID } from 'node:crypto'
import { basename } from 'node:path'
import {
  createListenerSet,
  createRecentIds,
  refusedWrite,
  resolveWaitDeadline,
  toPtyIncarnationId,
  unverifiableWrite,
  PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
  WRITE_ACCEPTED,
  type ProviderSpawnOptions,
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
import { assertSshDimension, createRemoteLaunch } from './remote-launch.js'
import { inspectRemoteProcess, probeRemotePid, type RemoteInspection } from './remote-process.js'
import { SshConnection, type SshConnectionSettings } from './ssh-connection.js'
import { SshOptionError } from './ssh-option-error.js'
import { SshProviderError } from './ssh-provider-error.js'
import {
  SSH_DEFAULT_CONNECT_TIMEOUT_MS,
  SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS,
  SSH_DEFAULT_KEEPALIVE_COUNT_MAX,
  SSH_DEFAULT_KEEPALIVE_INTERVAL_MS,
  SSH_DEFAULT_LAUNCH_TIMEOUT_MS,
  SSH_DEFAULT_TERMINAL_NAME,
  SSH_RECONNECT_INITIAL_DELAY_MS,
  SSH_RECONNECT_MAX_ATTEMPTS,
  SSH_RECONNECT_MAX_DELAY_MS,
  validateSshProviderOptions,
  type SshProviderOptions,
} from './ssh-provider-options.js'
import { SshPtySession, type SshPtyState } from './ssh-pty-session.js'
import {
  SSH_HANGUP_GRACE_MS,
  SSH_SHUTDOWN_DEADLINE_MS,
  SSH_SIDE_COMMAND_TIMEOUT_MS,
  SSH_TERMINATE_GRACE_MS,
  stopSshSession,
} from './ssh-stop.js'
import { loadSsh2Module, type Ssh2Module } from './ssh2-module.js'

/** The absolute deadline of a wait budget: `deadlineMs` is an epoch time, `timeoutMs` a duration. */
function deadlineOf(budget: { deadlineMs?: number; timeoutMs?: number }, defaultTimeoutMs: number): number {
  return resolveWaitDeadline(budget, defaultTimeoutMs)
}

/** How many exited PTY ids are remembered, so a late write is refused as `pty_exited`. */
export const SSH_EXITED_ID_MEMORY = 1_024

/**
 * The SSH provider: a {@link PtyProvider} over one SSH connection, plus its connection state.
 * Listings are not authoritative: PTYs of a dropped connection may still run on the remote.
 */
export type SshProvider = PtyProvider &
  Required<
    Pick<
      PtyProvider,
      'pauseProducer' | 'resumeProducer' | 'hasPty' | 'probeLiveness' | 'getCwd' | 'getForegroundProcess' | 'hasChildProcesses' | 'dispose'
    >
  > & {
    /** The remote pid of a live PTY; `null` when unknown. */
    getPid(id: string): number | null
    /** Whether the provider holds an open connection right now. */
    isConnected(): boolean
  }

/**
 * Create a {@link PtyProvider} that runs PTYs on another machine over SSH, through the pure-JS
 * client `ssh2` (an optional peer, loaded on first use).
 *
 * - host key verification is required (`knownHostsPath` or `hostVerifier`); an unknown or changed
 *   key refuses to connect with a typed error naming its fingerprint;
 * - each PTY is a session channel with a pty request; exits keep their cause across the wire
 *   (`exit-status n` → `exited(n)`, `exit-signal NAME` → `signaled(N)`);
 * - a channel closed with neither, or a dropped connection, is not an exit: the PTY's liveness
 *   becomes unknown (`null`), its writes settle `unverifiable/transport_lost`, and listings reject;
 * - stops escalate HUP → TERM → KILL through `signal` requests, verified, with a side-channel
 *   fallback for servers that ignore them (OpenSSH for root logins).
 *
 * @throws SshOptionError when an option is malformed.
 */
export function createSshProvider(options: SshProviderOptions): SshProvider {
  validateSshProviderOptions(options)
  const port = options.port ?? 22
  const hostId = options.hostId ?? `ssh:${options.host}`
  const hangupGraceMs = options.hangupGraceMs ?? SSH_HANGUP_GRACE_MS
  const terminateGraceMs = options.terminateGraceMs ?? SSH_TERMINATE_GRACE_MS
  const shutdownDeadlineMs = options.shutdownDeadlineMs ?? SSH_SHUTDOWN_DEADLINE_MS
  const launchTimeoutMs = options.launchTimeoutMs ?? SSH_DEFAULT_LAUNCH_TIMEOUT_MS
  const reconnectMaxAttempts = options.reconnectMaxAttempts ?? SSH_RECONNECT_MAX_ATTEMPTS
  const settings: SshConnectionSettings = {
    host: options.host,
    port,
    username: options.username,
    privateKey: options.privateKey,
    passphrase: options.passphrase,
    agent: options.agent,
    hostKey: {
      host: options.host,
      port,
      knownHostsPath: options.knownHostsPath,
      hostVerifier: options.hostVerifier,
      policy: options.hostKeyPolicy ?? 'strict',
    },
    connectTimeoutMs: options.connectTimeoutMs ?? SSH_DEFAULT_CONNECT_TIMEOUT_MS,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS,
    keepaliveIntervalMs: options.keepaliveIntervalMs ?? SSH_DEFAULT_KEEPALIVE_INTERVAL_MS,
    keepaliveCountMax: options.keepaliveCountMax ?? SSH_DEFAULT_KEEPALIVE_COUNT_MAX,
  }

  // A throwing listener surfaces uncaught (on its own microtask) without stopping the others.
  const dataListeners = createListenerSet<PtyDataEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()
  /** Sessions by PTY id: starting, live, or lost (kept: their fate is unknown). */
  const sessions = new Map<string, SshPtySession>()
  /** PTY ids whose exit was delivered (the most recent ones). */
  const exitedIds = createRecentIds(SSH_EXITED_ID_MEMORY)
  let modulePromise: Promise<Ssh2Module> | null = null
  let connection: SshConnection | null = null
  let connecting: Promise<SshConnection> | null = null
  let reconnectTimer: NodeJS.Timeout | null = null
  let disposed = false
  let disposePromise: Promise<void> | null = null

  function loadModule(): Promise<Ssh2Module> {
    modulePromise ??= loadSsh2Module(options.loadSsh2).catch((error: unknown) => {
      modulePromise = null
      throw error
    })
    return modulePromise
  }

  function assertNotDisposed(method: string): void {
    if (disposed) throw new SshProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed SSH provider`)
  }

  function onConnectionLost(lost: SshConnection): void {
    if (connection === lost) connection = null
    for (const session of sessions.values()) if (session.connection === lost) session.markLost()
    if (!disposed) scheduleReconnect(0)
  }

  /** Retry a dropped connection with a doubling delay, capped, for a bounded number of attempts. */
  function scheduleReconnect(attempt: number): void {
    if (disposed || reconnectTimer !== null || attempt >= reconnectMaxAttempts) return
    const delay = Math.min(SSH_RECONNECT_INITIAL_DELAY_MS * 2 ** attempt, SSH_RECONNECT_MAX_DELAY_MS)
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null
      if (disposed || connection !== null) return
      connect().catch(() => scheduleReconnect(attempt + 1))
    }, delay)
    // A pending reconnect never keeps the host process alive on its own.
    reconnectTimer.unref()
  }

  function connect(): Promise<SshConnection> {
    if (connection !== null && !connection.lost) return Promise.resolve(connection)
    connecting ??= (async () => {
      const module = await loadModule()
      const opened = await SshConnection.open(module, settings, onConnectionLost)
      if (disposed) {
        opened.close()
        throw new SshProviderError('provider_disposed', 'The SSH provider was disposed while connecting')
      }
      connection = opened
      opened.warmUpSideShell()
      return opened
    })().finally(() => {
      connecting = null
    })
    return connecting
  }

  const sessionHooks = {
    emitData: (event: PtyDataEvent) => dataListeners.fire(event),
    emitExit: (event: PtyExitEvent) => exitListeners.fire(event),
    onSettled: (session: SshPtySession) => {
      if (session.state !== 'exited') return
      if (sessions.get(session.id) === session) sessions.delete(session.id)
      exitedIds.remember(session.id)
    },
  }

  function liveSession(id: string): SshPtySession | undefined {
    const session = sessions.get(id)
    return session !== undefined && session.state === 'live' ? session : undefined
  }

  function attachReply(session: SshPtySession): PtySpawnResult {
    return {
      id: session.id,
      pid: session.marker?.pid ?? null,
      incarnationId: session.incarnationId,
      isReattach: true,
      providerSequence: { value: session.charsEmitted, generation: 'continued' },
      cols: session.cols,
      rows: session.rows,
    }
  }

  async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    assertNotDisposed('spawn')
    if (spawnOptions === null || typeof spawnOptions !== 'object') throw new SshOptionError('options', 'an object', spawnOptions)
    const { sessionId, expectedIncarnationId } = spawnOptions
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) {
      throw new SshOptionError('sessionId', 'a non-empty string', sessionId)
    }
    if (spawnOptions.attachOnly === true) {
      const live = sessionId === undefined ? undefined : liveSession(sessionId)
      if (live !== undefined && expectedIncarnationId !== undefined && live.incarnationId !== expectedIncarnationId) {
        // Live under another incarnation is not an absence: the caller must not start a second process.
        throw new SshProviderError(
          PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
          `Cannot attach to PTY ${JSON.stringify(sessionId)}: it is live on ${hostId} under another incarnation than ${JSON.stringify(expectedIncarnationId)}`,
          { ptyId: sessionId },
        )
      }
      if (live === undefined) {
        // A lost session is not proven absent: it may still run, so that is no typed absence.
        const lost = sessionId !== undefined && sessions.get(sessionId)?.state === 'lost'
        throw new SshProviderError(
          lost ? 'transport_lost' : 'pty_absent',
          lost
            ? `Cannot attach to PTY ${JSON.stringify(sessionId)}: its SSH connection dropped and its fate is unknown`
            : `Cannot attach to PTY ${JSON.stringify(sessionId ?? null)}: no live PTY has that id (or incarnation) on ${hostId}`,
          { ptyId: sessionId },
        )
      }
      return attachReply(live)
    }
    if (sessionId !== undefined && sessions.has(sessionId)) {
      const existing = sessions.get(sessionId)
      if (existing?.state === 'live' && spawnOptions.isNewSession !== true) return attachReply(existing)
      throw new SshProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(sessionId)}: a PTY with that id is still held`, { ptyId: sessionId })
    }
    // Every refusal of a bad option happens here, before anything connects.
    const launch = createRemoteLaunch(spawnOptions)
    const conn = await connect()
    assertNotDisposed('spawn')
    const id = sessionId ?? randomUUID()
    if (sessions.has(id)) throw new SshProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: a PTY with that id is still held`, { ptyId: id })
    let channel
    try {
      channel = await conn.exec(launch.command, {
        term: options.terminalName ?? SSH_DEFAULT_TERMINAL_NAME,
        cols: launch.cols,
        rows: launch.rows,
        width: 0,
        height: 0,
      })
    } catch (error) {
      throw error instanceof SshProviderError
        ? error
        : new SshProviderError('spawn_failed', `The server ${hostId} refused the session channel: ${error instanceof Error ? error.message : String(error)}`, { cause: error, ptyId: id })
    }
    exitedIds.forget(id)
    const session = new SshPtySession(
      {
        id,
        incarnationId: toPtyIncarnationId(randomUUID()),
        channel,
        connection: conn,
        launch,
        scopeId: spawnOptions.scopeId,
        slotKey: spawnOptions.slotKey,
        claimKey: spawnOptions.claimKey,
      },
      sessionHooks,
    )
    sessions.set(id, session)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([session.started, new Promise<void>((resolve) => (timer = setTimeout(resolve, launchTimeoutMs)))])
    clearTimeout(timer)
    if (session.marker === null) {
      // The program never started: nothing to commit, nothing left behind.
      sessions.delete(id)
      const lost = session.state === 'lost' && conn.lost
      try {
        channel.close()
      } catch {
        // Already closed.
      }
      session.release()
      const output = session.takeLaunchOutput().trim()
      throw new SshProviderError(
        lost ? 'transport_lost' : 'spawn_failed',
        `Could not start ${JSON.stringify(launch.file ?? 'the login shell')} on ${hostId}${session.state === 'starting' ? ` within ${launchTimeoutMs} ms` : ''}${output === '' ? '' : `: ${output.slice(0, 500)}`}`,
        { ptyId: id },
      )
    }
    try {
      spawnOptions.onPtySpawnCommitted?.()
    } catch (error) {
      session.release()
      await stopSshSession(session, { immediate: true, deadlineEpochMs: Date.now() + shutdownDeadlineMs, hangupGraceMs, terminateGraceMs }).catch(() => undefined)
      throw error
    }
    if (launch.startupCommand !== undefined && launch.startupCommand.length > 0) channel.write(`${launch.startupCommand}\r`)
    // Why a macrotask: the caller awaiting this reply must see it before the PTY's first events
    // (an `exit 3` can arrive in the same packet as the marker).
    setImmediate(() => session.release())
    return {
      id,
      pid: session.marker.pid,
      incarnationId: session.incarnationId,
      isReattach: false,
      providerSequence: { value: 0, generation: 'reset' },
      cols: launch.cols,
      rows: launch.rows,
    }
  }

  async function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    const session = sessions.get(id)
    if (session === undefined || session.state === 'exited') return
    if (shutdownOptions.expectedIncarnationId !== undefined && session.incarnationId !== shutdownOptions.expectedIncarnationId) return
    if (session.state === 'lost') {
      throw new SshProviderError('transport_lost', `Cannot stop PTY ${JSON.stringify(id)}: its SSH connection dropped, so it cannot be reached`, { ptyId: id })
    }
    const deadlineEpochMs = deadlineOf(shutdownOptions, shutdownDeadlineMs)
    if (session.stop === null || shutdownOptions.immediate === true) {
      const stop = stopSshSession(session, { immediate: shutdownOptions.immediate === true, deadlineEpochMs, hangupGraceMs, terminateGraceMs })
      session.stop ??= stop
      stop.catch(() => undefined)
      await stop
      return
    }
    await session.stop
  }

  async function inspect(id: string): Promise<RemoteInspection | null> {
    const session = liveSession(id)
    if (session === undefined || session.marker === null || session.connection.lost) return null
    return inspectRemoteProcess(session.connection, session.marker, SSH_SIDE_COMMAND_TIMEOUT_MS)
  }

  function baseRow(session: SshPtySession, inspection: RemoteInspection | null): PtyProcessInfo {
    const row: PtyProcessInfo = {
      id: session.id,
      hostId,
      incarnationId: session.incarnationId,
      pid: session.marker?.pid ?? 0,
      cwd: inspection?.cwd ?? null,
      title: inspection?.foreground ?? (session.launch.file === null ? 'shell' : basename(session.launch.file)),
    }
    if (session.scopeId !== undefined) row.scopeId = session.scopeId
    if (session.slotKey !== undefined) row.slotKey = session.slotKey
    if (session.claimKey !== undefined) row.claimKey = session.claimKey
    return row
  }

  async function listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
    assertNotDisposed('listProcesses')
    // An unreachable host must never answer with a list: its PTYs are unknown, not absent.
    if (connection === null || connection.lost) {
      throw new SshProviderError('transport_lost', `The SSH connection to ${hostId} is down: its PTYs cannot be listed`)
    }
    const deadline = deadlineOf(listOptions, SSH_SIDE_COMMAND_TIMEOUT_MS)
    const live = [...sessions.values()].filter((session) => session.state === 'live')
    return Promise.all(
      live.map(async (session) => {
        let timer: NodeJS.Timeout | undefined
        const inspection = await Promise.race([
          inspect(session.id),
          new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), Math.max(0, deadline - Date.now())))),
        ])
        clearTimeout(timer)
        return baseRow(session, inspection)
      }),
    )
  }

  async function dispose(): Promise<void> {
    if (disposePromise !== null) return disposePromise
    disposed = true
    disposePromise = (async () => {
      if (reconnectTimer !== null) clearTimeout(reconnectTimer)
      reconnectTimer = null
      await Promise.allSettled(
        [...sessions.values()]
          .filter((session) => session.state === 'live' || session.state === 'starting')
          .map((session) => stopSshSession(session, { immediate: false, deadlineEpochMs: Date.now() + shutdownDeadlineMs, hangupGraceMs, terminateGraceMs })),
      )
      await connecting?.catch(() => undefined)
      connection?.close()
      connection = null
      dataListeners.clear()
      exitListeners.clear()
    })()
    return disposePromise
  }

  return {
    name: options.name ?? 'ssh',
    authoritativeListings: false,
    spawn,
    write(id: string, data: string): WriteSettlement {
      const session = sessions.get(id)
      if (session === undefined) return refusedWrite(exitedIds.has(id) ? 'pty_exited' : 'pty_not_found')
      if (session.state === 'exited') return refusedWrite('pty_exited')
      if (session.state === 'lost' || session.connection.lost) return unverifiableWrite('transport_lost', false)
      try {
        session.channel.write(data)
        return WRITE_ACCEPTED
      } catch {
        return unverifiableWrite('transport_lost', true)
      }
    },
    resize(id: string, cols: number, rows: number): boolean {
      assertSshDimension('cols', cols)
      assertSshDimension('rows', rows)
      const session = liveSession(id)
      if (session === undefined || session.connection.lost) return false
      try {
        session.channel.setWindow(rows, cols, 0, 0)
      } catch {
        return false
      }
      session.cols = cols
      session.rows = rows
      return true
    },
    shutdown,
    pauseProducer(id: string): void {
      liveSession(id)?.pause()
    },
    resumeProducer(id: string): void {
      sessions.get(id)?.resume()
    },
    listProcesses,
    hasPty(id: string): boolean | null {
      const session = sessions.get(id)
      if (session === undefined) return false
      if (session.state === 'lost') return null
      return session.state !== 'exited'
    },
    async probeLiveness(id: string): Promise<boolean | null> {
      const session = sessions.get(id)
      if (session === undefined || session.state === 'exited') return false
      if (session.state === 'lost' || session.connection.lost) return null
      if (session.marker === null) return true
      // The channel is open; the remote /proc confirms (or cannot tell: then the open channel is the evidence).
      const answer = await probeRemotePid(session.connection, session.marker, SSH_SIDE_COMMAND_TIMEOUT_MS)
      // Re-read: the exit may have crossed the wire while the side channel ran.
      const state = session.state as SshPtyState
      if (state === 'exited') return false
      if (state === 'lost') return null
      // Proven gone remotely, but its exit is still on the way: not proven here yet, so unknown.
      return answer === false ? null : true
    },
    async getCwd(id: string): Promise<string | null> {
      return (await inspect(id))?.cwd ?? null
    },
    async getForegroundProcess(id: string): Promise<string | null> {
      return (await inspect(id))?.foreground ?? null
    },
    async hasChildProcesses(id: string): Promise<boolean | null> {
      return (await inspect(id))?.hasChildren ?? null
    },
    onData(listener: (event: PtyDataEvent) => void): Unsubscribe {
      return dataListeners.add(listener)
    },
    onExit(listener: (event: PtyExitEvent) => void): Unsubscribe {
      return exitListeners.add(listener)
    },
    getPid(id: string): number | null {
      return liveSession(id)?.marker?.pid ?? null
    },
    isConnected(): boolean {
      return connection !== null && !connection.lost
    },
    dispose,
  }
}
