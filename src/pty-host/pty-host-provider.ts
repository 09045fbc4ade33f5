import { randomUUID } from 'node:crypto'
import {
  createListenerSet,
  createRecentIds,
  isPtyIncarnationId,
  LOCAL_EXECUTION_HOST_ID,
  refusedWrite,
  unverifiableWrite,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyListProcessesOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyProviderBufferSnapshot,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import { isTerminalExitCause } from '../exit-cause/index.js'
import { defaultPtyHostCommand, launchPtyHost, type PtyHostCommand } from './launch-pty-host.js'
import type { PtyHostMessage } from './protocol.js'
import { PtyHostConnection } from './pty-host-connection.js'
import { invalidPtyHostOption, isPtyHostError, PtyHostError } from './pty-host-error.js'
import { defaultPtyHostSocketPath, ensurePrivateSocketDir, ptyHostPaths } from './socket-security.js'

/** How long the provider waits for a host to answer a connection (and for a started host to listen). */
export const PTY_HOST_CONNECT_TIMEOUT_MS = 10_000
/** How long a request (other than a stop) may wait for the host's answer. */
export const PTY_HOST_REQUEST_TIMEOUT_MS = 30_000
/** The first reconnect delay after a drop; it doubles up to {@link PTY_HOST_RECONNECT_MAX_DELAY_MS}. */
export const PTY_HOST_RECONNECT_INITIAL_DELAY_MS = 50
/** The longest delay between reconnect attempts. */
export const PTY_HOST_RECONNECT_MAX_DELAY_MS = 2_000
/** Reconnect attempts after a drop before the provider gives up (PTYs then stay unverifiable). */
export const PTY_HOST_RECONNECT_MAX_ATTEMPTS = 20
/** How many exited PTY ids the provider remembers, to refuse late writes as `pty_exited`. */
export const PTY_HOST_EXITED_ID_MEMORY = 1_024

/** Options of {@link createPtyHostProvider}. Every field is optional. */
export type PtyHostProviderOptions = {
  /** The provider's `name`. Default `'pty-host'`. */
  name?: string
  /** The host id of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId
  /** The host's socket. Default `defaultPtyHostSocketPath()`. */
  socketPath?: string
  /** Start a host (detached) when none answers on a spawn or attach. Default `true`. */
  autoStart?: boolean
  /** How to start the host. Default `defaultPtyHostCommand()`. */
  hostCommand?: PtyHostCommand
  /** `idleExitMs` of a host this provider starts. */
  idleExitMs?: number
  /** Raw output chars a host this provider starts keeps per session. */
  historyChars?: number
  /** Scrollback rows of a started host's headless screens. */
  scrollbackRows?: number
  /** Connect timeout. Default {@link PTY_HOST_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number
  /** Request timeout. Default {@link PTY_HOST_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number
  /** Reconnect attempts after a drop. Default {@link PTY_HOST_RECONNECT_MAX_ATTEMPTS}. */
  reconnectAttempts?: number
}

/** Output the host no longer had when a consumer re-attached: `[fromSeq, toSeq)` was never delivered. */
export type PtyHostOutputLossEvent = {
  /** The PTY id. */
  id: string
  /** The first lost sequence. */
  fromSeq: number
  /** The sequence delivery resumed at. */
  toSeq: number
}

/** Where an attach starts the replay: an absolute sequence, everything retained, or only live output. */
export type PtyHostReplayFrom = number | 'retained' | 'live'

/** A pty host provider: the whole `PtyProvider` plus attach, detach and loss reports. */
export type PtyHostProvider = PtyProvider &
  Required<
    Pick<
      PtyProvider,
      | 'pauseProducer'
      | 'resumeProducer'
      | 'hasPty'
      | 'probeLiveness'
      | 'getCwd'
      | 'getForegroundProcess'
      | 'hasChildProcesses'
      | 'clearBuffer'
      | 'getBufferSnapshot'
      | 'dispose'
    >
  > & {
    /** Always true: the host holds every session, so a missing row proves absence. */
    readonly authoritativeListings: true
    /**
     * Attach to a live session of the host; its output is replayed from `replayFrom` (default:
     * where this provider last was, else everything retained). Rejects `pty_absent` when the host
     * holds no such live PTY (or another incarnation).
     */
    attach(id: string, options?: { replayFrom?: PtyHostReplayFrom; expectedIncarnationId?: PtyIncarnationId }): Promise<PtySpawnResult>
    /** Close this app's connection and leave every session running. The provider is unusable afterwards. */
    detach(): Promise<void>
    /** Hear about output that fell out of the host's ring before a re-attach could replay it. */
    onOutputLoss(listener: (event: PtyHostOutputLossEvent) => void): Unsubscribe
    /** Whether a connection to the host is open now. */
    readonly connected: boolean
  }

type PtyState = 'spawning' | 'live' | 'unknown' | 'exited'
type PtyRecord = { id: string; state: PtyState; incarnationId: PtyIncarnationId | undefined; lastSeq: number; hostInstanceId: string | undefined }

function validateOptions(options: PtyHostProviderOptions): void {
  if (options === null || typeof options !== 'object') throw invalidPtyHostOption('options', 'an object', options)
  for (const key of ['name', 'hostId', 'socketPath'] as const) {
    const value = options[key]
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) throw invalidPtyHostOption(key, 'a non-empty string', value)
  }
  if (options.autoStart !== undefined && typeof options.autoStart !== 'boolean') throw invalidPtyHostOption('autoStart', 'a boolean', options.autoStart)
  for (const key of ['idleExitMs', 'historyChars', 'scrollbackRows', 'connectTimeoutMs', 'requestTimeoutMs', 'reconnectAttempts'] as const) {
    const value = options[key]
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)) {
      throw invalidPtyHostOption(key, 'a non-negative integer', value)
    }
  }
  const command = options.hostCommand
  if (command !== undefined && (command === null || typeof command.file !== 'string' || !Array.isArray(command.args))) {
    throw invalidPtyHostOption('hostCommand', 'an object { file: string, args: string[] }', command)
  }
}

/** Wait; `unref` for background retries that must not keep the app alive on their own. */
function delay(ms: number, unref = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    if (unref) timer.unref()
  })
}

/**
 * Create a {@link PtyProvider} whose PTYs live in a pty host process (`ptykit-pty-host`), reached
 * over a private Unix domain socket. Sessions outlive the app; a new app lists them, attaches,
 * replays what it missed, and paints a snapshot of the screen.
 *
 * @example
 * ```ts
 * const provider = createPtyHostProvider()
 * provider.onData(({ data }) => process.stdout.write(data))
 * const { id } = await provider.spawn({ file: '/bin/sh' })
 * await provider.detach() // the shell keeps running in the host
 * ```
 *
 * @throws PtyHostError (`invalid_option`) when an option is malformed.
 */
export function createPtyHostProvider(options: PtyHostProviderOptions = {}): PtyHostProvider {
  validateOptions(options)
  const hostId = options.hostId ?? LOCAL_EXECUTION_HOST_ID
  const paths = ptyHostPaths(options.socketPath ?? defaultPtyHostSocketPath())
  const autoStart = options.autoStart ?? true
  const connectTimeoutMs = options.connectTimeoutMs ?? PTY_HOST_CONNECT_TIMEOUT_MS
  const requestTimeoutMs = options.requestTimeoutMs ?? PTY_HOST_REQUEST_TIMEOUT_MS
  const reconnectAttempts = options.reconnectAttempts ?? PTY_HOST_RECONNECT_MAX_ATTEMPTS

  // A throwing listener surfaces uncaught (on its own microtask) without stopping the others.
  const dataListeners = createListenerSet<PtyDataEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()
  const lossListeners = createListenerSet<PtyHostOutputLossEvent>()
  const ptys = new Map<string, PtyRecord>()
  /** Ids of the most recently exited records: older exited records are dropped from `ptys`. */
  const exitedIds = createRecentIds(PTY_HOST_EXITED_ID_MEMORY)
  let connection: PtyHostConnection | null = null
  let connecting: Promise<PtyHostConnection> | null = null
  let reconnecting = false
  let state: 'open' | 'detached' | 'disposed' = 'open'
  let disposePromise: Promise<void> | null = null

  function forgetOldExits(exitedId: string): void {
    for (const forgotten of exitedIds.remember(exitedId)) {
      if (ptys.get(forgotten)?.state === 'exited') ptys.delete(forgotten)
    }
  }

  function onEvent(message: PtyHostMessage): void {
    switch (message.type) {
      case 'data': {
        const record = ptys.get(message.ptyId)
        if (record === undefined || record.state === 'exited' || typeof message.data !== 'string' || typeof message.seq !== 'number') return
        // Drop what was already delivered (a replay that overlaps), never deliver twice.
        const start = message.seq - message.data.length
        const fresh = start >= record.lastSeq ? message.data : message.data.slice(record.lastSeq - start)
        record.lastSeq = Math.max(record.lastSeq, message.seq)
        if (fresh.length === 0) return
        const event: PtyDataEvent = { id: message.ptyId, data: fresh }
        if (record.incarnationId !== undefined) event.incarnationId = record.incarnationId
        else if (isPtyIncarnationId(message.incarnationId)) event.incarnationId = message.incarnationId
        dataListeners.fire(event)
        return
      }
      case 'exit': {
        const record = ptys.get(message.ptyId)
        if (record === undefined || record.state === 'exited') return
        record.state = 'exited'
        const event: PtyExitEvent = { id: message.ptyId, code: typeof message.code === 'number' ? message.code : Number.NaN }
        const incarnationId = isPtyIncarnationId(message.incarnationId) ? message.incarnationId : record.incarnationId
        if (incarnationId !== undefined) event.incarnationId = incarnationId
        // The host's node-pty provider built the cause from the real status: carried unchanged.
        if (isTerminalExitCause(message.cause)) event.cause = message.cause
        forgetOldExits(message.ptyId)
        updateHold()
        exitListeners.fire(event)
        return
      }
      case 'loss': {
        if (!ptys.has(message.ptyId)) return
        lossListeners.fire({ id: message.ptyId, fromSeq: message.fromSeq, toSeq: message.toSeq })
        return
      }
      default:
        return
    }
  }

  /** Hold the app alive while it has live PTYs in the host, as local PTYs would. */
  function updateHold(): void {
    if (connection === null) return
    let live = false
    for (const record of ptys.values()) {
      if (record.state === 'live' || record.state === 'spawning') {
        live = true
        break
      }
    }
    connection.holdOpen(live)
  }

  function onConnectionClosed(closed: PtyHostConnection): void {
    if (connection !== closed) return
    connection = null
    // No exit was observed, only the loss of the host: unknown, never dead.
    for (const record of ptys.values()) if (record.state === 'live' || record.state === 'spawning') record.state = 'unknown'
    if (state === 'open') void reconnect()
  }

  async function openConnection(): Promise<PtyHostConnection> {
    const opened = await PtyHostConnection.open(paths, connectTimeoutMs)
    if (state !== 'open') {
      opened.close()
      throw new PtyHostError(state === 'detached' ? 'provider_detached' : 'provider_disposed', `The pty host provider was ${state} while connecting`)
    }
    opened.listen(onEvent, () => onConnectionClosed(opened))
    connection = opened
    await reattachUnknown(opened)
    updateHold()
    return opened
  }

  async function connectOrStart(start: boolean): Promise<PtyHostConnection> {
    try {
      return await openConnection()
    } catch (error) {
      if (!start || !isPtyHostError(error) || error.code !== 'host_unavailable') throw error
    }
    ensurePrivateSocketDir(paths.socketPath)
    const flags: Parameters<typeof launchPtyHost>[1] = { socketPath: paths.socketPath }
    if (options.idleExitMs !== undefined) flags.idleExitMs = options.idleExitMs
    if (options.historyChars !== undefined) flags.historyChars = options.historyChars
    if (options.scrollbackRows !== undefined) flags.scrollbackRows = options.scrollbackRows
    launchPtyHost(options.hostCommand ?? defaultPtyHostCommand(), flags)
    const deadline = Date.now() + connectTimeoutMs
    for (;;) {
      try {
        return await openConnection()
      } catch (error) {
        if (!isPtyHostError(error) || error.code !== 'host_unavailable' || Date.now() > deadline) throw error
      }
      await delay(20)
    }
  }

  function ensureConnected(start: boolean): Promise<PtyHostConnection> {
    if (state !== 'open') {
      return Promise.reject(new PtyHostError(state === 'detached' ? 'provider_detached' : 'provider_disposed', `The pty host provider was ${state}`))
    }
    if (connection !== null && connection.open) return Promise.resolve(connection)
    if (connecting === null) {
      connecting = connectOrStart(start && autoStart).finally(() => {
        connecting = null
      })
    }
    return connecting
  }

  /** After a drop: retry with a doubling, bounded delay; a reconnect never starts a new host. */
  async function reconnect(): Promise<void> {
    if (reconnecting) return
    reconnecting = true
    try {
      for (let attempt = 0; attempt < reconnectAttempts && state === 'open'; attempt++) {
        await delay(Math.min(PTY_HOST_RECONNECT_INITIAL_DELAY_MS * 2 ** attempt, PTY_HOST_RECONNECT_MAX_DELAY_MS), true)
        if (state !== 'open' || connection !== null) return
        try {
          await ensureConnected(false)
          return
        } catch {
          // Try again after a longer pause.
        }
      }
    } finally {
      reconnecting = false
    }
  }

  /** Re-attach every PTY this provider lost contact with, if this is the same host process. */
  async function reattachUnknown(opened: PtyHostConnection): Promise<void> {
    const lost = [...ptys.values()].filter((record) => record.state === 'unknown' && record.hostInstanceId === opened.hostInstanceId)
    await Promise.all(
      lost.map(async (record) => {
        try {
          const params: Record<string, unknown> = { ptyId: record.id, fromSeq: record.lastSeq, includeExited: true }
          if (record.incarnationId !== undefined) params.expectedIncarnationId = record.incarnationId
          await opened.request('attach', params, requestTimeoutMs)
          if (record.state === 'unknown') record.state = 'live'
        } catch {
          // Still unknown: the host no longer remembers it, and no exit was observed.
        }
      }),
    )
  }

  function record(id: string, hostInstanceId: string, incarnationId: PtyIncarnationId | undefined): PtyRecord {
    const existing = ptys.get(id)
    if (existing !== undefined && existing.state !== 'exited') {
      existing.hostInstanceId = hostInstanceId
      if (incarnationId !== undefined) existing.incarnationId = incarnationId
      return existing
    }
    const fresh: PtyRecord = { id, state: 'spawning', incarnationId, lastSeq: 0, hostInstanceId }
    ptys.delete(id)
    exitedIds.forget(id)
    ptys.set(id, fresh)
    return fresh
  }

  async function attach(id: string, attachOptions: { replayFrom?: PtyHostReplayFrom; expectedIncarnationId?: PtyIncarnationId } = {}): Promise<PtySpawnResult> {
    if (typeof id !== 'string' || id.length === 0) throw invalidPtyHostOption('sessionId', 'a non-empty string', id)
    const opened = await ensureConnected(true)
    const known = ptys.get(id)
    const replayFrom = attachOptions.replayFrom ?? (known !== undefined && known.state !== 'exited' ? known.lastSeq : 'retained')
    const params: Record<string, unknown> = { ptyId: id, fromSeq: replayFrom === 'retained' ? null : replayFrom }
    if (attachOptions.expectedIncarnationId !== undefined) params.expectedIncarnationId = attachOptions.expectedIncarnationId
    // Registered first: the replay follows the reply at once.
    const pty = record(id, opened.hostInstanceId, attachOptions.expectedIncarnationId)
    let reply: Record<string, unknown>
    try {
      reply = (await opened.request('attach', params, requestTimeoutMs)) as Record<string, unknown>
    } catch (error) {
      if (pty.state === 'spawning') ptys.delete(id)
      throw error
    }
    const incarnationId = isPtyIncarnationId(reply.incarnationId) ? reply.incarnationId : undefined
    pty.incarnationId = incarnationId
    const replayStart = typeof reply.replayFrom === 'number' ? reply.replayFrom : 0
    pty.lastSeq = replayStart
    if (pty.state !== 'exited') pty.state = 'live'
    updateHold()
    const result: PtySpawnResult = {
      id,
      pid: typeof reply.pid === 'number' ? reply.pid : null,
      isReattach: true,
      providerSequence: { value: replayStart, generation: 'continued' },
    }
    if (incarnationId !== undefined) result.incarnationId = incarnationId
    if (typeof reply.cols === 'number') result.cols = reply.cols
    if (typeof reply.rows === 'number') result.rows = reply.rows
    return result
  }

  async function spawnFresh(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    const opened = await ensureConnected(true)
    // Why the client mints the id: after a drop mid-spawn it still knows which session to stop.
    const id = spawnOptions.sessionId ?? randomUUID()
    const params: Record<string, unknown> = { sessionId: id }
    for (const key of ['file', 'args', 'command', 'cols', 'rows', 'cwd', 'env', 'envToDelete', 'scopeId', 'slotKey', 'claimKey', 'metadata'] as const) {
      if (spawnOptions[key] !== undefined) params[key] = spawnOptions[key]
    }
    const pty = record(id, opened.hostInstanceId, undefined)
    pty.state = 'spawning'
    pty.lastSeq = 0
    let reply: Record<string, unknown>
    try {
      reply = (await opened.request('spawn', params, requestTimeoutMs)) as Record<string, unknown>
    } catch (error) {
      if (!(isPtyHostError(error) && error.code === 'transport_lost')) ptys.delete(id)
      throw error
    }
    const incarnationId = isPtyIncarnationId(reply.incarnationId) ? reply.incarnationId : undefined
    pty.incarnationId = incarnationId
    // The exit of a fast process may have arrived before the reply (state is mutated by events).
    const exitedEarly = (pty.state as PtyState) === 'exited'
    if (!exitedEarly) pty.state = 'live'
    updateHold()
    const result: PtySpawnResult = {
      id,
      pid: typeof reply.pid === 'number' ? reply.pid : null,
      isReattach: false,
      providerSequence: { value: 0, generation: 'reset' },
    }
    if (incarnationId !== undefined) result.incarnationId = incarnationId
    if (typeof reply.hostReportsChildExitStatus === 'boolean') result.hostReportsChildExitStatus = reply.hostReportsChildExitStatus
    if (typeof reply.cols === 'number') result.cols = reply.cols
    if (typeof reply.rows === 'number') result.rows = reply.rows
    if (reply.exitedBeforeSpawnReply === true || exitedEarly) result.exitedBeforeSpawnReply = true
    try {
      spawnOptions.onPtySpawnCommitted?.()
    } catch (error) {
      // The caller never learns of this process: none may be left behind.
      await shutdown(id, { immediate: true }).catch(() => undefined)
      throw error
    }
    return result
  }

  async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    if (spawnOptions === null || typeof spawnOptions !== 'object') throw invalidPtyHostOption('options', 'an object', spawnOptions)
    const { sessionId } = spawnOptions
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) throw invalidPtyHostOption('sessionId', 'a non-empty string', sessionId)
    if (spawnOptions.attachOnly === true) {
      if (sessionId === undefined) throw new PtyHostError('pty_absent', 'Cannot attach: no session id given')
      const attachOptions: { expectedIncarnationId?: PtyIncarnationId } = {}
      if (spawnOptions.expectedIncarnationId !== undefined) attachOptions.expectedIncarnationId = spawnOptions.expectedIncarnationId
      return attach(sessionId, attachOptions)
    }
    if (sessionId !== undefined && spawnOptions.isNewSession !== true) {
      // A known session id: attach to it when the host holds it live, else create it.
      try {
        return await attach(sessionId)
      } catch (error) {
        if (!(isPtyHostError(error) && error.code === 'pty_absent')) throw error
      }
    }
    return spawnFresh(spawnOptions)
  }

  async function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    const pty = ptys.get(id)
    if (pty?.state === 'exited') return
    const opened = await ensureConnected(false)
    const params: Record<string, unknown> = { ptyId: id }
    for (const key of ['immediate', 'deadlineMs', 'timeoutMs', 'expectedIncarnationId', 'keepHistory'] as const) {
      // Passed through unchanged: `deadlineMs` is an absolute epoch time on both sides.
      if (shutdownOptions[key] !== undefined) params[key] = shutdownOptions[key]
    }
    await opened.request('shutdown', params)
  }

  async function write(id: string, data: string): Promise<WriteSettlement> {
    const pty = ptys.get(id)
    if (pty?.state === 'exited') return refusedWrite('pty_exited')
    if (state !== 'open' || connection === null || !connection.open) return refusedWrite('provider_refused_write')
    try {
      const settlement = (await connection.request('write', { ptyId: id, data }, requestTimeoutMs)) as WriteSettlement
      if (settlement?.kind === 'accepted' || settlement?.kind === 'refused' || settlement?.kind === 'unverifiable') return settlement
      return unverifiableWrite('provider_threw_after_handoff', true)
    } catch (error) {
      if (isPtyHostError(error) && error.message.includes('did not answer')) return unverifiableWrite('settlement_timeout', true)
      return unverifiableWrite('transport_lost', true)
    }
  }

  /** Ask the host; `null` when it cannot be asked or does not answer. */
  async function ask<T>(method: 'probe' | 'cwd' | 'foreground' | 'children' | 'snapshot', params: Record<string, unknown>): Promise<T | null> {
    if (state !== 'open' || connection === null || !connection.open) return null
    try {
      return (await connection.request(method, params, requestTimeoutMs)) as T | null
    } catch {
      return null
    }
  }

  function liveAndConnected(id: string): boolean {
    return state === 'open' && connection !== null && connection.open && ptys.get(id)?.state === 'live'
  }

  function close(to: 'detached' | 'disposed'): void {
    state = to
    const open = connection
    connection = null
    open?.close()
    for (const record of ptys.values()) if (record.state !== 'exited') record.state = 'unknown'
  }

  return {
    name: options.name ?? 'pty-host',
    authoritativeListings: true,
    spawn,
    attach,
    write,
    resize(id: string, cols: number, rows: number): boolean {
      for (const [option, value] of [['cols', cols], ['rows', rows]] as const) {
        if (!Number.isInteger(value) || value < 1) throw invalidPtyHostOption(option, 'a positive integer', value)
      }
      if (!liveAndConnected(id)) return false
      connection!.notify('resize', { ptyId: id, cols, rows })
      return true
    },
    shutdown,
    pauseProducer(id: string): void {
      if (liveAndConnected(id)) connection!.notify('pause', { ptyId: id })
    },
    resumeProducer(id: string): void {
      if (liveAndConnected(id)) connection!.notify('resume', { ptyId: id })
    },
    async listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
      // A host that cannot be reached rejects: never an empty (and falsely authoritative) list.
      const opened = await ensureConnected(false)
      const params: Record<string, unknown> = {}
      if (listOptions.deadlineMs !== undefined) params.deadlineMs = listOptions.deadlineMs
      if (listOptions.timeoutMs !== undefined) params.timeoutMs = listOptions.timeoutMs
      const rows = (await opened.request('list', params, requestTimeoutMs)) as PtyProcessInfo[]
      return (Array.isArray(rows) ? rows : []).map((row) => ({ ...row, hostId }))
    },
    hasPty(id: string): boolean | null {
      const pty = ptys.get(id)
      if (pty?.state === 'exited') return false
      return liveAndConnected(id) ? true : null
    },
    async probeLiveness(id: string): Promise<boolean | null> {
      if (ptys.get(id)?.state === 'exited') return false
      const answer = await ask<boolean>('probe', { ptyId: id })
      return typeof answer === 'boolean' ? answer : null
    },
    getCwd: (id) => ask<string>('cwd', { ptyId: id }),
    getForegroundProcess: (id) => ask<string>('foreground', { ptyId: id }),
    hasChildProcesses: (id) => ask<boolean>('children', { ptyId: id }),
    async clearBuffer(id: string): Promise<void> {
      if (liveAndConnected(id)) await connection!.request('clear', { ptyId: id }, requestTimeoutMs).catch(() => undefined)
    },
    async getBufferSnapshot(id: string, snapshotOptions: { scrollbackRows?: number } = {}): Promise<PtyProviderBufferSnapshot | null> {
      const params: Record<string, unknown> = { ptyId: id }
      if (snapshotOptions.scrollbackRows !== undefined) params.scrollbackRows = snapshotOptions.scrollbackRows
      const snapshot = await ask<PtyProviderBufferSnapshot>('snapshot', params)
      if (snapshot === null || typeof snapshot.data !== 'string' || typeof snapshot.seq !== 'number') return null
      return snapshot
    },
    onData: (listener) => dataListeners.add(listener),
    onExit: (listener) => exitListeners.add(listener),
    onOutputLoss: (listener) => lossListeners.add(listener),
    get connected() {
      return connection !== null && connection.open
    },
    async detach(): Promise<void> {
      if (state !== 'open') return
      close('detached')
    },
    dispose(): Promise<void> {
      if (disposePromise !== null) return disposePromise
      disposePromise = (async () => {
        if (state === 'open' && connection !== null && connection.open) {
          const owned = [...ptys.values()].filter((record) => record.state === 'live' || record.state === 'spawning')
          // Stop the sessions this app owns; their exits cross the wire before each reply.
          await Promise.allSettled(owned.map((record) => shutdown(record.id, { immediate: true })))
        }
        close('disposed')
        dataListeners.clear()
        exitListeners.clear()
        lossListeners.clear()
      })()
      return disposePromise
    },
  }
}
