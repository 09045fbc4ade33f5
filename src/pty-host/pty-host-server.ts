import { isOptionsObject, optionNamesOf } from '../contracts/known-options.js'
import { randomUUID } from 'node:crypto'
import { chmodSync, rmSync, unlinkSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { isMainThread } from 'node:worker_threads'
import { callProvider } from '../contracts/call-provider.js'
import { clampTimerDelay } from '../contracts/deadline.js'
import { settleWithin } from '../contracts/settle-within.js'
import { createPtyHostNodePtyProvider } from '../node-pty/node-pty-provider.js'
import { isNodePtyOptionError, isNodePtyProviderError, NODE_PTY_SHUTDOWN_DEADLINE_MS, type NodePtyProvider, type NodePtyProviderOptions } from '../node-pty/index.js'
import { FrameDecoder, PTY_HOST_MAX_FRAME_BYTES, PTY_HOST_MIN_FRAME_BYTES } from './frame-codec.js'
import { HostClient } from './host-client.js'
import { createHostRequestHandlers, REPLIED } from './host-request-handlers.js'
import { HostSessionStore, journalExitOf, PTY_HOST_EXITED_SESSION_MEMORY, type HostSession } from './host-sessions.js'
import { untilNoneLive } from '../contracts/until-none-live.js'
import { parseRequest, protocolMismatchMessage, PTY_HOST_METHODS, PTY_HOST_PROTOCOL_VERSION, toWireError, type PtyHostRequest, type PtyHostWireError } from './protocol.js'
import { assertIntegerOption, assertKnownPtyHostOptions, invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { loadHeadlessScreens, type HeadlessScreenFactory } from './headless-screen.js'
import { PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND, ScreenFeeder } from './screen-feeder.js'
import { PTY_HOST_DEFAULT_HISTORY_CHARS, PTY_HOST_DEFAULT_SCROLLBACK_ROWS } from './session-history.js'
import { assertScrollbackRowsFit } from './screen-limit.js'
import { PredecessorOrphans } from './predecessor-orphans.js'
import { readPredecessorJournal, SessionJournal } from './session-journal.js'
import { createProcessInspector } from '../node-pty/process-inspector.js'
import { validateProviderOptions } from '../node-pty/provider-options.js'
import {
  takeHostLock,
  assertSocketPathFits,
  assertSocketPathOption,
  defaultPtyHostSocketPath,
  ensurePrivateSocketDir,
  ptyHostPaths,
  removeStaleSocket,
  secretsMatch,
  writeHostSecret,
} from './socket-security.js'

export { PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR, PTY_HOST_EXITED_SESSION_MEMORY } from './host-sessions.js'

/** How long a host with no session and no client waits before it exits, by default (30 s). */
export const PTY_HOST_DEFAULT_IDLE_EXIT_MS = 30_000

/**
 * How long the `ptykit-pty-host` process waits, from the moment it listens, before it may exit idle
 * while no client has yet been welcomed (3 s). Why: the app that started the host connects only
 * once it listens, and a host with a small `idleExitMs` could exit before that app's hello reached
 * it (a busy app, or a hello that lost the race to the idle timer); the app then started another,
 * which could exit the same way. Once a client has been welcomed (and left), `idleExitMs` alone
 * counts, as before. A few seconds: far beyond an app's usual hello (it polls the socket every
 * 20 ms), and short enough that a host whose starter died before connecting does not linger.
 */
export const PTY_HOST_FIRST_CLIENT_GRACE_MS = 3_000

/** How long a new connection may take to present its hello. */
export const PTY_HOST_HELLO_TIMEOUT_MS = 5_000

/** Options of {@link startPtyHost}. */
export type PtyHostServerOptions = {
  /** The socket to listen on, an absolute path. Default {@link defaultPtyHostSocketPath}. */
  socketPath?: string | undefined
  /** Exit after this long with no session and no client. Default {@link PTY_HOST_DEFAULT_IDLE_EXIT_MS}. */
  idleExitMs?: number | undefined
  /**
   * Until a first client has been welcomed, the host exits idle no earlier than this long after it
   * started listening (even when `idleExitMs` is shorter); a client refused at its hello does not
   * count. Default 0 (no grace) for a host started in-process; the `ptykit-pty-host` process uses
   * {@link PTY_HOST_FIRST_CLIENT_GRACE_MS}, so the app that started it is not raced by its idle exit.
   */
  firstClientGraceMs?: number | undefined
  /** Raw output chars kept per session for replay. Default {@link PTY_HOST_DEFAULT_HISTORY_CHARS}. */
  historyChars?: number | undefined
  /**
   * Scrollback rows of each session's headless screen. Default {@link PTY_HOST_DEFAULT_SCROLLBACK_ROWS}.
   * They count towards the screen's cell limit (`cols × (rows + scrollbackRows)` ≤
   * `PTY_HOST_MAX_SCREEN_CELLS`), so at most as many as leave room for an 80 × 24 screen.
   */
  scrollbackRows?: number | undefined
  /**
   * The most bytes the histories (replay rings and headless screens) of ended sessions hold
   * together, as the host estimates them; past it the oldest ended sessions' histories are
   * released — their exits stay (`listExits`, re-attaches, probes), and a snapshot of one is
   * refused `history_released` — all but the latest ended one's, kept even alone over the budget.
   * 0: an ended session keeps no history. Default
   * `PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR` × `historyChars` (16 MiB at the default history).
   */
  exitedHistoryBytes?: number | undefined
  /**
   * How many ended sessions keep their exit (how each ended: for `listExits`, a reconnecting app's
   * re-attaches and probes), the oldest forgotten first; a session ended and forgotten reads as
   * ended with its cause unknown. At least 1. Default `PTY_HOST_EXITED_SESSION_MEMORY` (1 024).
   * The host's session journal keeps as many, so they survive the host (its idle exit, a close,
   * its death): the next host reads them back, the latest of its own `exitedSessionMemory`.
   */
  exitedSessionMemory?: number | undefined
  /**
   * Output chars per second the headless screens parse in the background, all sessions together
   * (they also parse everything pending when a session goes idle and before a snapshot). Default
   * {@link PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND}.
   */
  screenCharsPerSecond?: number | undefined
  /** The largest frame accepted from a client: at least 4096 (4 KiB: no request fits a smaller frame). Default `PTY_HOST_MAX_FRAME_BYTES`. */
  maxFrameBytes?: number | undefined
  /**
   * The longest one client's acknowledgement pause of a session is held before the host forgives
   * its debt. Default {@link PTY_HOST_ACK_MAX_HOLD_MS}.
   */
  ackMaxHoldMs?: number | undefined
  /**
   * Options of the node-pty provider that runs the PTYs (its `output` is always `'bytes'`: the host
   * forwards bytes). Its `killOnProcessExit` defaults to `false` here: a host that dies leaves its
   * sessions to its successor, which stops them as orphans. Its `inheritedEnv` and `defaultCwd`,
   * when set, are what every spawn inherits, whichever app asks; unset, a spawn inherits the
   * environment and working directory of the app that asks (its provider's `spawnEnvironment:
   * 'app'`, the default), else this process's.
   */
  nodePty?: NodePtyProviderOptions | undefined
  /** Called once the host has closed (idle exit or `close()`). */
  onClosed?: (() => void) | undefined
  /**
   * Where the host tells what goes wrong that no caller hears of: its session journal's failed
   * `fsync` (of a rewrite's new file, or of the journal's directory), with the path and the error,
   * once per kind of failure. A line of text, without a time or a newline. Default: told nowhere.
   * The `ptykit-pty-host` process passes its log (`<socket>.log` when an app started it).
   */
  log?: ((message: string) => void) | undefined
}

/** A running pty host. */
export type PtyHostServer = {
  /** The socket it listens on. */
  readonly socketPath: string
  /** A fresh id per host process: a client that reconnects to another instance knows its PTYs were not kept. */
  readonly hostInstanceId: string
  /** Close every client connection; sessions keep running (clients reconnect and re-attach). */
  dropConnections(): void
  /**
   * Stop listening, stop every session (each connected client receives its sessions' exits, after
   * their last output), close every connection, remove the socket, secret and lock. A close
   * asked for (this, `SIGTERM`, `SIGINT`, `stopPtyHost`) stops a dead predecessor's orphans too;
   * the idle exit does not (they stay in the journal for the next host).
   */
  close(): Promise<void>
  /** Same as `close()`, for `await using host = await startPtyHost(…)`. */
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * How long a closing host waits for its clients' connections to take what was written to them
 * (the sessions' last output and exits) before it drops them: a client that stopped reading must
 * not hold the host open.
 */
export const PTY_HOST_CLOSE_FLUSH_MS = 1_000

/** End every connection once its written frames are out, and destroy those still open after `flushMs`. */
async function endConnections(clients: readonly HostClient[], flushMs: number): Promise<void> {
  const closed = clients.map(
    (client) =>
      new Promise<void>((resolve) => {
        if (client.socket.destroyed) return resolve()
        client.socket.once('close', () => resolve())
        client.flushOutput()
        client.socket.end()
      }),
  )
  let timer: NodeJS.Timeout | undefined
  await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, flushMs)))])
  clearTimeout(timer)
  for (const client of clients) client.socket.destroy()
}

/**
 * Listen on the socket, born 0600 (under umask 077) and chmod'ed to be sure. The umask is the whole
 * process's — every file any code of the app (another copy of ptykit, another extension) creates
 * meanwhile is born under it — so it is changed only around `listen()` itself, which binds a path
 * synchronously (its success and its error are reported later), not until the host listens. (A
 * cluster worker's listen is bound by the primary: its socket relies on the chmod.)
 */
async function listenPrivately(server: Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    const previousUmask = process.umask(0o077)
    try {
      server.listen(socketPath, () => {
        server.off('error', reject)
        resolve()
      })
    } finally {
      process.umask(previousUmask)
    }
  })
  chmodSync(socketPath, 0o600)
}

/** The `nodePty` option, checked as the node-pty provider checks it; refused as `invalid_option` naming `nodePty.<option>`. */
function assertNodePtyOptions(nodePty: NodePtyProviderOptions): void {
  try {
    validateProviderOptions(nodePty)
  } catch (error) {
    if (!isNodePtyOptionError(error)) throw error
    const option = error.option === 'options' ? 'nodePty' : `nodePty.${error.option}`
    throw new PtyHostError('invalid_option', error.message.replace(`\`${error.option}\` option`, () => `\`${option}\` option`), { option, value: error.value, cause: error })
  }
}

/** Every option `startPtyHost` reads (complete: checked at compile time). */
const PTY_HOST_SERVER_OPTION_NAMES = optionNamesOf<PtyHostServerOptions>()(
  'socketPath', 'idleExitMs', 'firstClientGraceMs', 'historyChars', 'scrollbackRows', 'exitedHistoryBytes', 'exitedSessionMemory',
  'screenCharsPerSecond', 'maxFrameBytes', 'ackMaxHoldMs', 'nodePty', 'onClosed', 'log',
)

/**
 * Start a pty host: take the lock (a second host for the same path refuses with
 * `host_already_running`), write a fresh secret (0600), listen on the socket (0600, in a 0700
 * directory), and run PTYs through ptykit's node-pty provider until idle. Main thread only: in a
 * worker thread it rejects `unsupported_in_worker` (the provider, which runs a host process, works there).
 */
export async function startPtyHost(options: PtyHostServerOptions = {}): Promise<PtyHostServer> {
  if (!isOptionsObject(options)) throw invalidPtyHostOption('options', 'an object', options)
  assertKnownPtyHostOptions(options, PTY_HOST_SERVER_OPTION_NAMES)
  if (options.socketPath !== undefined) assertSocketPathOption(options.socketPath)
  assertIntegerOption('idleExitMs', options.idleExitMs, 0)
  assertIntegerOption('firstClientGraceMs', options.firstClientGraceMs, 0)
  assertIntegerOption('historyChars', options.historyChars, 1)
  assertIntegerOption('scrollbackRows', options.scrollbackRows, 0)
  assertIntegerOption('exitedHistoryBytes', options.exitedHistoryBytes, 0)
  assertIntegerOption('exitedSessionMemory', options.exitedSessionMemory, 1)
  const scrollbackRows = options.scrollbackRows ?? PTY_HOST_DEFAULT_SCROLLBACK_ROWS
  assertScrollbackRowsFit(scrollbackRows)
  assertIntegerOption('screenCharsPerSecond', options.screenCharsPerSecond, 1)
  assertIntegerOption('maxFrameBytes', options.maxFrameBytes, 1)
  if (options.maxFrameBytes !== undefined && options.maxFrameBytes < PTY_HOST_MIN_FRAME_BYTES) {
    throw invalidPtyHostOption('maxFrameBytes', `an integer of at least ${PTY_HOST_MIN_FRAME_BYTES} (no request fits a smaller frame)`, options.maxFrameBytes)
  }
  assertIntegerOption('ackMaxHoldMs', options.ackMaxHoldMs, 1)
  // The node-pty provider's options, checked here with the rest: refused once the lock is taken and
  // the socket listens, they would leave both held by a host that never started.
  if (options.nodePty !== undefined) assertNodePtyOptions(options.nodePty)
  // Called last in close(): a value that is no function would throw there, in a close that
  // callers do not expect to reject (the idle exit's, say).
  if (options.onClosed !== undefined && typeof options.onClosed !== 'function') throw invalidPtyHostOption('onClosed', 'a function', options.onClosed)
  if (options.log !== undefined && typeof options.log !== 'function') throw invalidPtyHostOption('log', 'a function', options.log)
  // Why not in a worker: a worker that ends while a PTY it spawned runs waits for that process for
  // as long as it lives (node-pty joins the thread that waits for it), and a host's sessions are
  // meant to outlive their apps; nor can a worker set the umask the socket is born under.
  if (!isMainThread) {
    throw new PtyHostError(
      'unsupported_in_worker',
      'Cannot start a pty host in a worker thread: a worker that ends while one of its PTYs runs waits for that process (node-pty), and a host keeps its sessions running. ' +
        'Run the host as a process of its own (createPtyHostProvider starts one on demand, or launchPtyHost), from the worker if need be',
    )
  }
  const idleExitMs = options.idleExitMs ?? PTY_HOST_DEFAULT_IDLE_EXIT_MS
  // The deadline of a stop that names none (its sessions' and a predecessor's orphans'); the
  // welcome names it, and an app waits for a stop's answer that long (plus its request timeout).
  const shutdownDeadlineMs = options.nodePty?.shutdownDeadlineMs ?? NODE_PTY_SHUTDOWN_DEADLINE_MS
  const maxFrameBytes = options.maxFrameBytes ?? PTY_HOST_MAX_FRAME_BYTES
  const paths = ptyHostPaths(options.socketPath ?? defaultPtyHostSocketPath())
  // Before the lock, the secret or the directory: a refused path leaves nothing behind.
  assertSocketPathFits(paths.socketPath)
  const hostInstanceId = randomUUID()

  ensurePrivateSocketDir(paths.socketPath)
  const { release: releaseLock, succeedsDeadHost } = takeHostLock(paths)
  let screens: HeadlessScreenFactory
  let secret: string
  let server: Server | undefined
  let orphans: PredecessorOrphans
  let journal: SessionJournal | undefined
  let secretWritten = false
  const inspector = createProcessInspector(process.platform)
  try {
    // With the lock held: the journal found is a predecessor's (one that died, or closed leaving
    // processes it could not account for as ended). Judged before this host starts anything.
    // Its orphans are stopped as its own sessions are: the same graces, the same default deadline.
    const { hangupGraceMs, terminateGraceMs } = options.nodePty ?? {}
    const exitedSessionMemory = options.exitedSessionMemory ?? PTY_HOST_EXITED_SESSION_MEMORY
    const predecessor = readPredecessorJournal(paths.journalPath, undefined, exitedSessionMemory)
    orphans = new PredecessorOrphans(predecessor, succeedsDeadHost, inspector, {}, { hangupGraceMs, terminateGraceMs, shutdownDeadlineMs })
    // The exits it remembers too (the host's before, however it ended: idle, closed or dead), so
    // this host answers `listExits`, re-attaches and probes with their causes.
    const carriedExits = typeof predecessor === 'object' ? predecessor.exits : undefined
    journal = new SessionJournal(paths.journalPath, inspector, { ...orphans.carried(), exits: carriedExits }, undefined, { exitMemory: exitedSessionMemory, ...(options.log === undefined ? {} : { log: options.log }) })
    orphans.useJournal(journal)
    screens = await loadHeadlessScreens()
    removeStaleSocket(paths)
    secret = writeHostSecret(paths)
    secretWritten = true
    server = createServer()
    await listenPrivately(server, paths.socketPath)
  } catch (error) {
    // Nothing of this host is left: no listening server (its socket is removed with it), no secret
    // a client would read for a host that never served, no lock. The journal (if created) still
    // holds what the predecessor left: kept for the next host.
    server?.close()
    if (secretWritten) rmSync(paths.secretPath, { force: true })
    journal?.close()
    releaseLock()
    throw error
  }
  const listening: Server = server

  const ownJournal: SessionJournal = journal
  // Why bytes: the host forwards and keeps the output as the PTY produced it, never as strings
  // (see session-history.ts); the app decodes it once. Why no kill at the host's exit by default:
  // a host that dies leaves its sessions to its successor, which finds them in the journal and
  // stops them as a host stops its own (predecessor-orphans.ts); a host closed on request stops
  // them itself.
  const provider: NodePtyProvider = createPtyHostNodePtyProvider({ ...options.nodePty, killOnProcessExit: options.nodePty?.killOnProcessExit ?? false, output: 'bytes' })
  const screenFeeder = new ScreenFeeder({ charsPerSecond: options.screenCharsPerSecond ?? PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND })
  const sessions = new HostSessionStore(provider, screens, screenFeeder, {
    limitChars: options.historyChars ?? PTY_HOST_DEFAULT_HISTORY_CHARS,
    scrollbackRows,
    ...(options.exitedHistoryBytes === undefined ? {} : { exitedHistoryBytes: options.exitedHistoryBytes }),
    ...(options.exitedSessionMemory === undefined ? {} : { exitedSessionMemory: options.exitedSessionMemory }),
  }, options.ackMaxHoldMs)
  // The exits an earlier host journalled, oldest first: remembered as if they had ended here.
  for (const exit of ownJournal.exits) sessions.remember(exit)
  const clients = new Set<HostClient>()
  // Until a client is welcomed, the idle exit comes no earlier than this (monotonic ms).
  let graceEndsAt: number | null = performance.now() + (options.firstClientGraceMs ?? 0)
  let idleTimer: NodeJS.Timeout | undefined
  let closePromise: Promise<void> | null = null

  const scheduleIdleExit = (): void => {
    clearTimeout(idleTimer)
    idleTimer = undefined
    if (closePromise !== null || sessions.live.size > 0 || clients.size > 0) return
    const delay = graceEndsAt === null ? idleExitMs : Math.max(idleExitMs, graceEndsAt - performance.now())
    // Clamped: a longer wait (`Number.MAX_SAFE_INTEGER` for "never") would overflow Node's timer and fire at once.
    idleTimer = setTimeout(() => void close('idle'), clampTimerDelay(delay))
  }

  /** Called after each exit the host hears (a closing host waits for its sessions' exits). */
  const exitWatchers = new Set<() => void>()
  /**
   * Resolves once none of `stopped` is live any more (its exit heard, or its spawn discarded).
   * Never rejects; a caller bounds it.
   */
  const untilEnded = (stopped: readonly HostSession[]): Promise<void> => untilNoneLive(stopped, (session) => sessions.live.get(session.id) === session, exitWatchers)

  provider.onBytes((event) => sessions.onBytes(event))
  provider.onExit((event) => {
    // Journalled with the exit as the host remembers it, so it survives the host (its idle exit, a
    // close, its death) — and before any app is sent it: an app that heard of the exit (and, say,
    // killed the host then) finds it again from the next host. Before 7 Dec the exit went out
    // first, and a host that died between the two left its successor without it.
    sessions.onExit(event, (ended) => ownJournal.ended(ended.journalKey, journalExitOf(ended)))
    for (const watcher of [...exitWatchers]) watcher()
    scheduleIdleExit()
  })

  const handlers = createHostRequestHandlers({ provider, sessions, activityChanged: scheduleIdleExit, scrollbackRows, succeedsDeadHost, journal: ownJournal, orphans })

  /**
   * The answer to a spawn that reaches a closing host: its provider is being disposed (and would
   * refuse as `provider_disposed`, which the app would read as its own provider's state). Other
   * calls go on: a question is answered; a stop goes to the provider's stop of its session, which
   * the close is stopping too — its answer may come after the close ended the connection (the
   * app then reads `transport_lost`; it has the session's exit if it came before).
   */
  const CLOSING: PtyHostWireError = { code: 'host_unavailable', message: 'The pty host is closing: it is stopping every session and starts none' }

  /** The requests being handled, until each has replied: a closing host answers them before it drops its clients. */
  const pendingRequests = new Set<Promise<void>>()

  /** Run `request`'s handler (a function apart: no closure of {@link handleRequest} keeps `request`). */
  const callHandler = (client: HostClient, request: PtyHostRequest): Promise<unknown> => callProvider(() => handlers[request.method](client, request))

  const handleRequest = (client: HostClient, request: PtyHostRequest): void => {
    // The id alone, not the request, in the closures that wait for the answer: a write's answer
    // waits until its bytes' fate is known (a program that does not read), and a closure that kept
    // the request kept its data too — a second copy of the input held for the PTY, beside the held
    // bytes themselves.
    const requestId = request.id
    const reply = (message: { ok: true; result: unknown } | { ok: false; error: PtyHostWireError }): void => {
      if (requestId !== null) client.send({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: requestId, ...message })
    }
    // A closing host starts no session.
    if (closePromise !== null && request.method === 'spawn') return reply({ ok: false, error: CLOSING })
    const handled = callHandler(client, request).then(
      (result) => {
        if (result !== REPLIED) reply({ ok: true, result: result ?? null })
      },
      // A spawn the close overtook, refused by the provider being disposed: the host's state, not
      // the app's. Any other refusal (a bad cwd, an option) is the spawn's own, and says so.
      (error: unknown) => reply({ ok: false, error: isNodePtyProviderError(error) && error.code === 'provider_disposed' ? CLOSING : toWireError(error) }),
    )
    const settled = (): void => void pendingRequests.delete(handled)
    pendingRequests.add(handled)
    handled.then(settled, settled)
  }

  const refuse = (client: HostClient, code: string, message: string): void => {
    client.send({ v: PTY_HOST_PROTOCOL_VERSION, type: 'refused', code, message })
    client.socket.end()
    client.socket.destroySoon?.()
  }

  /** The hello: version, then secret. Returns false when the connection was refused. */
  const greet = (client: HostClient, message: Record<string, unknown>): boolean => {
    if (message.type !== 'hello') return (refuse(client, 'unauthorized', 'The first frame must be a hello'), false)
    if (message.v !== PTY_HOST_PROTOCOL_VERSION) return (refuse(client, 'protocol_mismatch', protocolMismatchMessage(message.v, PTY_HOST_PROTOCOL_VERSION, paths.socketPath)), false)
    if (!secretsMatch(message.secret, secret)) return (refuse(client, 'unauthorized', 'The pty host refused the secret'), false)
    client.authenticated = true
    graceEndsAt = null
    client.send({
      v: PTY_HOST_PROTOCOL_VERSION,
      type: 'welcome',
      hostInstanceId,
      hostPid: process.pid,
      scrollbackRows,
      methods: PTY_HOST_METHODS,
      maxFrameBytes,
      // Whether something a predecessor left may still run unaccounted for (no listing of this
      // host speaks for it): judged at each welcome, as orphans end.
      ...(orphans.unsettled ? { succeedsDeadHost: true } : {}),
      // This host read its predecessor's journal: it answers probes and stops of that host's PTYs.
      ...(orphans.journalRead ? { predecessorJournal: true } : {}),
      probeFencesIncarnation: true,
      shutdownDeadlineMs,
      // A spawn that carries the app's environment and directory starts from them, not from this
      // process's (an older host ignores them: the app then sends them as the spawn's own).
      appEnvironment: true,
      // A `cwd` request's `of` is read (an older host ignores it: the app then does not ask it for the leader's).
      cwdOf: true,
    })
    return true
  }

  listening.on('connection', (socket) => {
    const client = new HostClient(socket)
    clients.add(client)
    clearTimeout(idleTimer)
    const decoder = new FrameDecoder(maxFrameBytes)
    const helloTimer = setTimeout(() => {
      if (!client.authenticated) socket.destroy()
    }, PTY_HOST_HELLO_TIMEOUT_MS)
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearTimeout(helloTimer)
      clients.delete(client)
      sessions.removeClient(client)
      scheduleIdleExit()
    })
    socket.on('data', (chunk: Buffer) => {
      if (socket.destroyed) return
      let messages: Record<string, unknown>[]
      try {
        messages = decoder.push(chunk) as Record<string, unknown>[]
      } catch {
        // A bad frame ends this connection, never the host.
        socket.destroy()
        return
      }
      for (const message of messages) {
        if (socket.destroyed) return
        if (!client.authenticated) {
          if (!greet(client, message)) return
          clearTimeout(helloTimer)
          continue
        }
        const request = parseRequest(message)
        if (typeof request === 'string') {
          if (message.v !== PTY_HOST_PROTOCOL_VERSION) return refuse(client, 'protocol_mismatch', request)
          socket.destroy()
          return
        }
        handleRequest(client, request)
      }
    })
  })

  /**
   * Close the host. `requested` (`SIGTERM`, `SIGINT`, `stopPtyHost`, the API's `close()`): a stop
   * asked of the host, which stops its predecessor's orphans too. `idle` (no session, no client):
   * stops nothing of a predecessor — its orphans stay in the journal for the next host.
   */
  async function close(reason: 'requested' | 'idle'): Promise<void> {
    if (closePromise !== null) return closePromise
    closePromise = (async () => {
      clearTimeout(idleTimer)
      listening.close()
      // Why stop the sessions before dropping the clients: each connected app then receives how
      // each of its sessions ended (after its last output), where a drop first left them all
      // unverifiable to it for good. Marked as stopped first: a close is asked for (`SIGTERM`,
      // `stopPtyHost`), so each exit says a stop reached the host while the process lived, and
      // apps publish the operator close it was — never "died before any stop request".
      for (const session of sessions.live.values()) session.stopRequested = true
      const stopped = new Set(sessions.live.values())
      // A predecessor's processes this host answers for are stopped too when the close was asked
      // for: such a host leaves nothing running that it knows of. An idle exit leaves them (in the
      // journal) for the next host: nobody asked to stop them. Why nothing is killed here after the
      // disposal: the provider's `dispose()` SIGKILLs, synchronously and as its own stop, what its
      // stops left at their deadline (its SIGKILL may not have gone out yet, and a host process
      // exits at the end of this close), so each such exit is the stop's. Until 7 Dec the close
      // killed them itself, the provider then read the death as another's kill
      // (`diedBeforeStopRequest`), and the close stripped that flag from the exit again.
      await Promise.all([provider.dispose().catch(() => undefined), reason === 'requested' ? orphans.stopAll() : undefined])
      // A request already in its handler (a spawn the close overtook) gets its reply, bounded: it
      // was lost with the connection, which the app reads as `transport_lost`. Meanwhile, the
      // exits the stops' deadline did not wait for: each is journalled (the journal is open until
      // the end of the close, the lock held) and sent to the connections still open — before, one
      // heard after the journal closed was not recorded, and the next host answered "ended, cause
      // unknown" for it. Bounded as the replies are: a process the kernel cannot kill at once (in
      // an uninterruptible sleep) must not hold the close.
      const late = [...sessions.live.values()].filter((session) => stopped.has(session))
      await Promise.all([
        settleWithin(Promise.allSettled(pendingRequests), PTY_HOST_CLOSE_FLUSH_MS, undefined),
        settleWithin(untilEnded(late), PTY_HOST_CLOSE_FLUSH_MS, undefined),
      ])
      exitWatchers.clear()
      await endConnections([...clients], PTY_HOST_CLOSE_FLUSH_MS)
      for (const session of [...sessions.live.values(), ...sessions.exited.values()]) sessions.dropHistory(session)
      screenFeeder.dispose()
      for (const path of [paths.socketPath, paths.secretPath]) {
        try {
          unlinkSync(path)
        } catch {
          // Already gone.
        }
      }
      // Removed when nothing is left to account for; else kept (cut down) for the next host.
      ownJournal.close()
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
      for (const client of clients) client.socket.destroy()
    },
    close: () => close('requested'),
    [Symbol.asyncDispose]: () => close('requested'),
  }
}
