import { randomUUID } from 'node:crypto'
import { chmodSync, unlinkSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import type { PtyExitEvent, PtyShutdownOptions, ProviderSpawnOptions } from '../contracts/index.js'
import { callProvider } from '../contracts/call-provider.js'
import { createNodePtyProvider, type NodePtyProvider, type NodePtyProviderOptions } from '../node-pty/index.js'
import { encodeFrame, FrameDecoder, PTY_HOST_MAX_FRAME_BYTES, PtyHostFrameError } from './frame-codec.js'
import {
  countParam,
  parseRequest,
  protocolMismatchMessage,
  PTY_HOST_PROTOCOL_VERSION,
  stringParam,
  toWireError,
  type PtyHostMessage,
  type PtyHostRequest,
} from './protocol.js'
import { invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import {
  PTY_HOST_DEFAULT_HISTORY_CHARS,
  PTY_HOST_DEFAULT_SCROLLBACK_ROWS,
  loadHeadlessXterm,
  SessionHistory,
  type HeadlessXtermModules,
} from './session-history.js'
import {
  acquireHostLock,
  defaultPtyHostSocketPath,
  ensurePrivateSocketDir,
  ptyHostPaths,
  removeStaleSocket,
  secretsMatch,
  writeHostSecret,
} from './socket-security.js'

/** How long a host with no session and no client waits before it exits, by default (30 s). */
export const PTY_HOST_DEFAULT_IDLE_EXIT_MS = 30_000

/** How many exited sessions keep their exit (and, unless dropped, their history) for late re-attaches. */
export const PTY_HOST_EXITED_SESSION_MEMORY = 256

/** How long a new connection may take to present its hello. */
export const PTY_HOST_HELLO_TIMEOUT_MS = 5_000

/** Options of {@link startPtyHost}. */
export type PtyHostServerOptions = {
  /** The socket to listen on. Default {@link defaultPtyHostSocketPath}. */
  socketPath?: string
  /** Exit after this long with no session and no client. Default {@link PTY_HOST_DEFAULT_IDLE_EXIT_MS}. */
  idleExitMs?: number
  /** Raw output chars kept per session for replay. Default {@link PTY_HOST_DEFAULT_HISTORY_CHARS}. */
  historyChars?: number
  /** Scrollback rows of each session's headless screen. Default {@link PTY_HOST_DEFAULT_SCROLLBACK_ROWS}. */
  scrollbackRows?: number
  /** The largest frame accepted from a client. Default `PTY_HOST_MAX_FRAME_BYTES`. */
  maxFrameBytes?: number
  /** Options of the node-pty provider that runs the PTYs. */
  nodePty?: NodePtyProviderOptions
  /** Called once the host has closed (idle exit or `close()`). */
  onClosed?: () => void
}

/** A running pty host. */
export type PtyHostServer = {
  /** The socket it listens on. */
  readonly socketPath: string
  /** A fresh id per host process: a client that reconnects to another instance knows its PTYs were not kept. */
  readonly hostInstanceId: string
  /** Close every client connection; sessions keep running (clients reconnect and re-attach). */
  dropConnections(): void
  /** Stop every session, close every connection, remove the socket, secret and lock. */
  close(): Promise<void>
}

type Connection = { socket: Socket; authenticated: boolean; subscriptions: Set<string> }

type HostSession = {
  id: string
  history: SessionHistory
  subscribers: Set<Connection>
  incarnationId: string | undefined
  exit: PtyExitEvent | null
  dropHistoryAtExit: boolean
  historyDropped: boolean
}

function assertCount(option: string, value: unknown, min: number): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw invalidPtyHostOption(option, `an integer ≥ ${min}`, value)
  }
}

/** The launch fields a spawn request may carry (functions never cross the wire). */
function launchOptions(params: Record<string, unknown>, id: string): ProviderSpawnOptions {
  const options: ProviderSpawnOptions = { sessionId: id, isNewSession: true }
  for (const key of ['file', 'args', 'command', 'cols', 'rows', 'cwd', 'env', 'envToDelete', 'scopeId', 'slotKey', 'claimKey', 'metadata'] as const) {
    if (params[key] !== undefined) (options as Record<string, unknown>)[key] = params[key]
  }
  return options
}

/**
 * Start a pty host: take the lock (a second host for the same path refuses with
 * `host_already_running`), write a fresh secret (0600), listen on the socket (0600, in a 0700
 * directory), and run PTYs through ptykit's node-pty provider until idle.
 */
export async function startPtyHost(options: PtyHostServerOptions = {}): Promise<PtyHostServer> {
  if (options === null || typeof options !== 'object') throw invalidPtyHostOption('options', 'an object', options)
  if (options.socketPath !== undefined && (typeof options.socketPath !== 'string' || options.socketPath.length === 0)) {
    throw invalidPtyHostOption('socketPath', 'a non-empty path', options.socketPath)
  }
  assertCount('idleExitMs', options.idleExitMs, 0)
  assertCount('historyChars', options.historyChars, 1)
  assertCount('scrollbackRows', options.scrollbackRows, 0)
  assertCount('maxFrameBytes', options.maxFrameBytes, 1)
  const idleExitMs = options.idleExitMs ?? PTY_HOST_DEFAULT_IDLE_EXIT_MS
  const historyChars = options.historyChars ?? PTY_HOST_DEFAULT_HISTORY_CHARS
  const scrollbackRows = options.scrollbackRows ?? PTY_HOST_DEFAULT_SCROLLBACK_ROWS
  const maxFrameBytes = options.maxFrameBytes ?? PTY_HOST_MAX_FRAME_BYTES
  const paths = ptyHostPaths(options.socketPath ?? defaultPtyHostSocketPath())
  const hostInstanceId = randomUUID()

  ensurePrivateSocketDir(paths.socketPath)
  const releaseLock = acquireHostLock(paths)
  let xterm: HeadlessXtermModules
  let secret: string
  let server: Server
  try {
    xterm = await loadHeadlessXterm()
    removeStaleSocket(paths)
    secret = writeHostSecret(paths)
    server = createServer()
    // Why the umask: the socket file is born 0600, never visible with wider modes.
    const previousUmask = process.umask(0o077)
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(paths.socketPath, () => {
          server.off('error', reject)
          resolve()
        })
      })
    } finally {
      process.umask(previousUmask)
    }
    chmodSync(paths.socketPath, 0o600)
  } catch (error) {
    releaseLock()
    throw error
  }

  const provider: NodePtyProvider = createNodePtyProvider(options.nodePty ?? {})
  const live = new Map<string, HostSession>()
  const exited = new Map<string, HostSession>()
  const connections = new Set<Connection>()
  let idleTimer: NodeJS.Timeout | undefined
  let closePromise: Promise<void> | null = null

  const send = (connection: Connection, message: PtyHostMessage): void => {
    if (connection.socket.destroyed) return
    connection.socket.write(encodeFrame(message))
  }

  const scheduleIdleExit = (): void => {
    clearTimeout(idleTimer)
    idleTimer = undefined
    if (closePromise !== null || live.size > 0 || connections.size > 0) return
    idleTimer = setTimeout(() => void close(), idleExitMs)
  }

  const subscribe = (connection: Connection, session: HostSession): void => {
    session.subscribers.add(connection)
    connection.subscriptions.add(session.id)
  }

  const retireExited = (session: HostSession): void => {
    exited.delete(session.id)
    exited.set(session.id, session)
    if (session.dropHistoryAtExit) dropHistory(session)
    while (exited.size > PTY_HOST_EXITED_SESSION_MEMORY) {
      const oldest = exited.values().next().value
      if (oldest === undefined) break
      dropHistory(oldest)
      exited.delete(oldest.id)
    }
  }

  const dropHistory = (session: HostSession): void => {
    if (session.historyDropped) return
    session.historyDropped = true
    session.history.dispose()
  }

  provider.onData((event) => {
    const session = live.get(event.id)
    if (session === undefined) return
    const seq = session.history.append(event.data)
    const message: PtyHostMessage = { v: PTY_HOST_PROTOCOL_VERSION, type: 'data', ptyId: event.id, data: event.data, seq }
    if (event.incarnationId !== undefined) message.incarnationId = event.incarnationId
    for (const connection of session.subscribers) send(connection, message)
  })

  provider.onExit((event) => {
    const session = live.get(event.id)
    if (session === undefined) return
    session.exit = event
    live.delete(event.id)
    const message: PtyHostMessage = { v: PTY_HOST_PROTOCOL_VERSION, type: 'exit', ptyId: event.id, code: event.code }
    if (event.cause !== undefined) message.cause = event.cause
    if (event.incarnationId !== undefined) message.incarnationId = event.incarnationId
    for (const connection of session.subscribers) send(connection, message)
    retireExited(session)
    scheduleIdleExit()
  })

  /** Attach a connection to a session: reply, then replay from `fromSeq` (and the exit, if it ended). */
  const attach = (connection: Connection, request: PtyHostRequest, session: HostSession, fromSeq: number | null | 'live'): void => {
    const current = session.history.seq
    const replay = session.historyDropped
      ? { replayFrom: current, lostChars: fromSeq === null || fromSeq === 'live' ? 0 : Math.max(0, current - fromSeq), data: '' }
      : session.history.replay(fromSeq === 'live' ? current : fromSeq)
    subscribe(connection, session)
    const size = provider.getSize(session.id)
    send(connection, {
      v: PTY_HOST_PROTOCOL_VERSION,
      type: 'reply',
      id: request.id,
      ok: true,
      result: {
        id: session.id,
        pid: provider.getPid(session.id),
        incarnationId: session.incarnationId,
        replayFrom: replay.replayFrom,
        lostChars: replay.lostChars,
        exited: session.exit !== null,
        cols: size?.cols,
        rows: size?.rows,
      },
    })
    if (replay.lostChars > 0) {
      send(connection, { v: PTY_HOST_PROTOCOL_VERSION, type: 'loss', ptyId: session.id, fromSeq: replay.replayFrom - replay.lostChars, toSeq: replay.replayFrom })
    }
    if (replay.data.length > 0) {
      const message: PtyHostMessage = { v: PTY_HOST_PROTOCOL_VERSION, type: 'data', ptyId: session.id, data: replay.data, seq: current }
      if (session.incarnationId !== undefined) message.incarnationId = session.incarnationId
      send(connection, message)
    }
    if (session.exit !== null) {
      const message: PtyHostMessage = { v: PTY_HOST_PROTOCOL_VERSION, type: 'exit', ptyId: session.id, code: session.exit.code }
      if (session.exit.cause !== undefined) message.cause = session.exit.cause
      if (session.exit.incarnationId !== undefined) message.incarnationId = session.exit.incarnationId
      send(connection, message)
    }
  }

  const absent = (ptyId: string, why: string): PtyHostError => new PtyHostError('pty_absent', `Cannot attach to PTY ${JSON.stringify(ptyId)}: ${why}`, { ptyId })

  const handlers: Record<PtyHostRequest['method'], (connection: Connection, request: PtyHostRequest) => Promise<unknown> | 'replied'> = {
    async spawn(connection, request) {
      const id = stringParam(request.params, 'sessionId')
      if (live.has(id)) throw new PtyHostError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: a live PTY already has that id`, { ptyId: id })
      const spawnOptions = launchOptions(request.params, id)
      const cols = typeof spawnOptions.cols === 'number' && spawnOptions.cols > 0 ? spawnOptions.cols : 80
      const rows = typeof spawnOptions.rows === 'number' && spawnOptions.rows > 0 ? spawnOptions.rows : 24
      const previous = exited.get(id)
      if (previous !== undefined) {
        dropHistory(previous)
        exited.delete(id)
      }
      const session: HostSession = {
        id,
        history: new SessionHistory(xterm, { cols, rows, limitChars: historyChars, scrollbackRows }),
        subscribers: new Set(),
        incarnationId: undefined,
        exit: null,
        dropHistoryAtExit: false,
        historyDropped: false,
      }
      // Registered before the spawn, so no output of a fast process is missed.
      live.set(id, session)
      subscribe(connection, session)
      clearTimeout(idleTimer)
      try {
        const result = await provider.spawn(spawnOptions)
        session.incarnationId = result.incarnationId
        return result
      } catch (error) {
        if (live.get(id) === session) live.delete(id)
        session.subscribers.clear()
        connection.subscriptions.delete(id)
        dropHistory(session)
        scheduleIdleExit()
        throw error
      }
    },
    async attach(connection, request) {
      const id = stringParam(request.params, 'ptyId')
      const rawFrom = request.params.fromSeq
      const fromSeq = rawFrom === 'live' ? 'live' : (countParam(request.params, 'fromSeq') ?? null)
      const expected = request.params.expectedIncarnationId
      const session = live.get(id) ?? (request.params.includeExited === true ? exited.get(id) : undefined)
      if (session === undefined) throw absent(id, 'the pty host holds no live PTY with that id')
      if (typeof expected === 'string' && session.incarnationId !== expected) {
        if (!live.has(id)) throw absent(id, `the PTY that exited was incarnation ${JSON.stringify(session.incarnationId)}, not ${JSON.stringify(expected)}`)
        throw new PtyHostError(
          'pty_live_other_incarnation',
          `Cannot attach to PTY ${JSON.stringify(id)}: the live process is incarnation ${JSON.stringify(session.incarnationId)}, not ${JSON.stringify(expected)}`,
          { ptyId: id },
        )
      }
      attach(connection, request, session, fromSeq)
      return 'replied'
    },
    async write(_connection, request) {
      return provider.write(stringParam(request.params, 'ptyId'), typeof request.params.data === 'string' ? request.params.data : '')
    },
    async resize(_connection, request) {
      const id = stringParam(request.params, 'ptyId')
      const cols = countParam(request.params, 'cols') ?? 0
      const rows = countParam(request.params, 'rows') ?? 0
      const resized = provider.resize(id, cols, rows)
      if (resized) live.get(id)?.history.resize(cols, rows)
      return resized
    },
    async shutdown(_connection, request) {
      const id = stringParam(request.params, 'ptyId')
      const shutdownOptions: PtyShutdownOptions = {}
      const { immediate, deadlineMs, timeoutMs, expectedIncarnationId, keepHistory } = request.params
      if (typeof immediate === 'boolean') shutdownOptions.immediate = immediate
      // The caller's deadline crosses unchanged: an absolute epoch time stays one.
      if (typeof deadlineMs === 'number') shutdownOptions.deadlineMs = deadlineMs
      if (typeof timeoutMs === 'number') shutdownOptions.timeoutMs = timeoutMs
      if (typeof expectedIncarnationId === 'string') shutdownOptions.expectedIncarnationId = expectedIncarnationId as never
      const session = live.get(id)
      if (session !== undefined && (shutdownOptions.expectedIncarnationId === undefined || session.incarnationId === shutdownOptions.expectedIncarnationId)) {
        session.dropHistoryAtExit = keepHistory !== true
      } else if (session === undefined && keepHistory !== true) {
        const ended = exited.get(id)
        if (ended !== undefined) dropHistory(ended)
      }
      await provider.shutdown(id, shutdownOptions)
      return null
    },
    async pause(_connection, request) {
      provider.pauseProducer(stringParam(request.params, 'ptyId'))
      return null
    },
    async resume(_connection, request) {
      provider.resumeProducer(stringParam(request.params, 'ptyId'))
      return null
    },
    async list(_connection, request) {
      const { deadlineMs, timeoutMs } = request.params
      const listOptions: { deadlineMs?: number; timeoutMs?: number } = {}
      if (typeof deadlineMs === 'number') listOptions.deadlineMs = deadlineMs
      if (typeof timeoutMs === 'number') listOptions.timeoutMs = timeoutMs
      const rows = await provider.listProcesses(listOptions)
      return rows.filter((row) => live.has(row.id))
    },
    async probe(_connection, request) {
      const id = stringParam(request.params, 'ptyId')
      // The host holds every session: one it does not hold is proven absent.
      if (!live.has(id)) return false
      return provider.probeLiveness(id)
    },
    async cwd(_connection, request) {
      return provider.getCwd(stringParam(request.params, 'ptyId'))
    },
    async foreground(_connection, request) {
      return provider.getForegroundProcess(stringParam(request.params, 'ptyId'))
    },
    async children(_connection, request) {
      return provider.hasChildProcesses(stringParam(request.params, 'ptyId'))
    },
    async snapshot(_connection, request) {
      const id = stringParam(request.params, 'ptyId')
      const session = live.get(id) ?? exited.get(id)
      if (session === undefined || session.historyDropped) return null
      return session.history.snapshot(countParam(request.params, 'scrollbackRows'))
    },
    async clear(_connection, request) {
      live.get(stringParam(request.params, 'ptyId'))?.history.clear()
      return null
    },
  }

  const handleRequest = (connection: Connection, request: PtyHostRequest): void => {
    void callProvider(() => handlers[request.method](connection, request)).then(
      (result) => {
        if (result !== 'replied') send(connection, { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: request.id, ok: true, result: result ?? null })
      },
      (error: unknown) => send(connection, { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: request.id, ok: false, error: toWireError(error) }),
    )
  }

  const refuse = (connection: Connection, code: string, message: string): void => {
    send(connection, { v: PTY_HOST_PROTOCOL_VERSION, type: 'refused', code, message })
    connection.socket.end()
    connection.socket.destroySoon?.()
  }

  server.on('connection', (socket) => {
    const connection: Connection = { socket, authenticated: false, subscriptions: new Set() }
    connections.add(connection)
    clearTimeout(idleTimer)
    const decoder = new FrameDecoder(maxFrameBytes)
    const helloTimer = setTimeout(() => {
      if (!connection.authenticated) socket.destroy()
    }, PTY_HOST_HELLO_TIMEOUT_MS)
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearTimeout(helloTimer)
      connections.delete(connection)
      for (const id of connection.subscriptions) {
        live.get(id)?.subscribers.delete(connection)
        exited.get(id)?.subscribers.delete(connection)
      }
      connection.subscriptions.clear()
      scheduleIdleExit()
    })
    socket.on('data', (chunk: Buffer) => {
      if (socket.destroyed) return
      let messages: Record<string, unknown>[]
      try {
        messages = decoder.push(chunk)
      } catch (error) {
        // A bad frame ends this connection, never the host.
        socket.destroy(error instanceof PtyHostFrameError ? undefined : undefined)
        return
      }
      for (const message of messages) {
        if (socket.destroyed) return
        if (!connection.authenticated) {
          if (message.type !== 'hello') return refuse(connection, 'unauthorized', 'The first frame must be a hello')
          if (message.v !== PTY_HOST_PROTOCOL_VERSION) return refuse(connection, 'protocol_mismatch', protocolMismatchMessage(message.v, PTY_HOST_PROTOCOL_VERSION))
          if (!secretsMatch(message.secret, secret)) return refuse(connection, 'unauthorized', 'The pty host refused the secret')
          connection.authenticated = true
          clearTimeout(helloTimer)
          send(connection, { v: PTY_HOST_PROTOCOL_VERSION, type: 'welcome', hostInstanceId, hostPid: process.pid })
          continue
        }
        const request = parseRequest(message)
        if (typeof request === 'string') {
          if (message.v !== PTY_HOST_PROTOCOL_VERSION) return refuse(connection, 'protocol_mismatch', request)
          socket.destroy()
          return
        }
        handleRequest(connection, request)
      }
    })
  })

  async function close(): Promise<void> {
    if (closePromise !== null) return closePromise
    closePromise = (async () => {
      clearTimeout(idleTimer)
      server.close()
      for (const connection of connections) connection.socket.destroy()
      await provider.dispose().catch(() => undefined)
      for (const session of [...live.values(), ...exited.values()]) dropHistory(session)
      for (const path of [paths.socketPath, paths.secretPath]) {
        try {
          unlinkSync(path)
        } catch {
          // Already gone.
        }
      }
      releaseLock()
      options.onClosed?.()
    })()
    return closePromise
  }

  scheduleIdleExit()
  return {
    socketPath: paths.socketPath,
    hostInstanceId,
    dropConnections: () => {
      for (const connection of connections) connection.socket.destroy()
    },
    close,
  }
}
