import { createConnection, type Socket } from 'node:net'
import { clampTimerDelay } from '../contracts/deadline.js'
import { ConnectionReader, readThrough } from './connection-reader.js'
import { encodeFrame, encodeJsonFrames, encodeJsonFramesInto, PTY_HOST_MAX_FRAME_BYTES } from './frame-codec.js'
import { protocolMismatchMessage, PTY_HOST_PROTOCOL_VERSION, stopMismatchedHostAdvice, type PtyHostMessage, type PtyHostMethod, type PtyHostWireError } from './protocol.js'
import { PtyHostError, PtyHostOptionError } from './pty-host-error.js'
import { RequestDeadlines, type DeadlineEntry } from './request-deadlines.js'
import { assertSocketSafeToConnect, readHostSecret, type PtyHostPaths } from './socket-security.js'

/**
 * The rejections of requests the host did not answer in time. They carry `transport_lost` like a
 * drop (the caller cannot tell what the host did), but a write settles differently for them
 * (`settlement_timeout`), so they are told apart by identity, never by their message.
 */
const requestTimeouts = new WeakSet<object>()

/**
 * True for the rejection of a request the host did not answer within its timeout — and for a
 * failure that carries one as its `cause` (a provider's refusal naming the call and the PTY it was
 * about, built around the connection's own: see the pty host provider's `namingPty`).
 */
export function isRequestTimeout(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  if (requestTimeouts.has(error)) return true
  const { cause } = error as { cause?: unknown }
  return typeof cause === 'object' && cause !== null && requestTimeouts.has(cause)
}

/**
 * Size of the connection's read buffer. Why a fixed buffer (`onread`): the socket hands each read to
 * the frame decoder directly, without the Readable stream's per-read allocation, push and `data`
 * emit — a large share of what a spawn reply or an exit cost the app's event loop.
 */
const READ_BUFFER_BYTES = 64 * 1024

/**
 * Size of the buffer a turn's outgoing frames are encoded into, when they fit and the socket is
 * done with its previous contents (larger or overlapping writes get a fresh buffer).
 */
const WRITE_BUFFER_BYTES = 16 * 1024

/**
 * The most UTF-16 code units of serialized messages one flush encodes and writes (at least one
 * message): the rest go on the next turn, in order, before anything queued since. Why: a 50 MB
 * paste is 50 write pieces; serialized and encoded in one task they blocked the app's event loop
 * for 216 ms (every other PTY's output, every timer waited). 2 Mi units (two pieces) are a few ms.
 */
export const PTY_HOST_FLUSH_BUDGET_CHARS = 2 * 1024 * 1024

/** A message serialized when the flush that sends it runs (a write piece: see `request`'s `serializeWhenSent`). */
type SerializeWhenSent = () => string

/** A request waiting for its reply (and, when it has a timeout, for its deadline). */
type Pending = DeadlineEntry & {
  id: number
  /** Whether the app's event loop stays open while this request waits for its answer. */
  holdsApp: boolean
  method: PtyHostMethod
  timeoutMs: number | undefined
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

/**
 * An error a host sent back, rebuilt with its code. A refused option or argument
 * (`invalid_option`) is rebuilt as the app side's own refusal is: a {@link PtyHostOptionError} (a
 * `TypeError` that is also a `PtyHostError`), with the `option` and `value` the wire carries.
 */
export function fromWireError(error: PtyHostWireError, ptyId?: string): PtyHostError {
  // Why: rebuilt as a plain PtyHostError (an `Error`), the host's refusal of a malformed request
  // was not the `TypeError` the same refusal is when the app side makes it.
  if (error.code === 'invalid_option') {
    const option = typeof error.option === 'string' ? error.option : undefined
    return option !== undefined && 'value' in error
      ? new PtyHostOptionError(error.message, option, error.value)
      : new PtyHostOptionError(error.message, option)
  }
  const known = ['pty_absent', 'pty_live_other_incarnation', 'pty_id_in_use', 'history_released', 'host_unavailable'] as const
  const option = typeof error.option === 'string' ? { option: error.option, value: error.value } : {}
  // The host's provider refused a spawn option: the refusal keeps its code, so the spawn pipeline
  // reports it as the caller's bad option (`invalid_spawn_options`), not as a failed spawn.
  if (error.code === 'invalid_spawn_option' && option.option !== undefined) {
    return new PtyHostError('invalid_spawn_option', error.message, { ptyId, hostCode: error.code, ...option })
  }
  const code = (known as readonly string[]).includes(error.code) ? (error.code as (typeof known)[number]) : 'host_error'
  return new PtyHostError(code, error.message, { ptyId, hostCode: error.code, ...option })
}

/**
 * The refusal of a request too large for one frame. It names the request's largest parameter —
 * a spawn's `env`, `args` or `command`, the one the caller would shrink — as the refused option,
 * so a spawn reports `invalid_spawn_options` with that option, as any other refused spawn option,
 * not `provider_spawn_failed`. The value itself is attached, never printed (it is that large) —
 * except an `env`, whose values may be secrets.
 */
function oversizedRequestError(method: PtyHostMethod, params: Record<string, unknown>, bytes: number, limit: number): PtyHostError {
  let option: string | undefined
  let largestBytes = -1
  for (const [name, value] of Object.entries(params)) {
    const size = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8')
    if (size > largestBytes) {
      largestBytes = size
      option = name
    }
  }
  const what = option === 'inheritedEnv' ? ", the app's environment (the provider's `spawnEnvironment: 'host'` sends none)" : ''
  const part = option === undefined ? '' : `; its largest part is \`${option}\` (${largestBytes} bytes${what})`
  const message = `The ${method} request (${bytes} bytes) is larger than the pty host accepts in a frame (${limit} bytes)${part}; nothing was sent`
  const code = method === 'spawn' && option !== undefined ? 'invalid_spawn_option' : 'invalid_option'
  // An environment is not kept (the spawn's `env`, or the app's own, `inheritedEnv`): its values
  // may be secrets, and the error may be logged whole.
  const secret = option === 'env' || option === 'inheritedEnv'
  return new PtyHostError(code, message, option === undefined ? {} : { option, value: secret ? undefined : params[option] })
}

/** The methods a host of ptykit 0.1.0 (whose welcome lists none) does not answer. */
const METHODS_ADDED_SINCE_0_1_0: ReadonlySet<PtyHostMethod> = new Set<PtyHostMethod>(['exits', 'forgetExits', 'writeBytes'])

/**
 * One authenticated connection to a pty host: requests with replies, and a stream of the host's
 * events. Events (and replies) are handed on in arrival order; after each reply the next message
 * waits one macrotask, so a caller awaiting a spawn sees its reply before the events after it.
 */
export class PtyHostConnection {
  /** The host process's instance id (fresh per host process). */
  readonly hostInstanceId: string
  /** The host's scrollback rows per screen, from its welcome (`undefined` from a host that does not say). */
  readonly hostScrollbackRows: number | undefined
  /**
   * The host took its lock over from a host that died holding it (its welcome says so): processes
   * of that host's sessions may still run, and this host's listings cannot speak for them.
   */
  readonly hostSucceedsDeadHost: boolean
  /**
   * The host answers a `probe` naming an incarnation about that incarnation (its welcome says
   * so); an older host answers by id, so its `true` may be about another process under the id.
   */
  readonly hostFencesProbe: boolean
  /**
   * The deadline the host gives a stop that names none, in ms (its welcome says so; `undefined`
   * from a host that does not: then the node-pty default). A host started with a longer one
   * (`startPtyHost({ nodePty: { shutdownDeadlineMs } })`) answers such a stop that much later.
   */
  readonly hostShutdownDeadlineMs: number | undefined
  /**
   * The host read its predecessor's session journal (its welcome says so): it answers a probe of a
   * predecessor's incarnation (`true` while its process runs, `false` once proven gone) and stops
   * such a process on `shutdown`.
   */
  readonly hostReadsPredecessorJournal: boolean
  /**
   * The host starts a spawn from the app's environment and working directory when the request
   * carries them (`inheritedEnv`, `defaultCwd`; its welcome says `appEnvironment`). A host of an
   * older ptykit ignores those fields and starts every PTY from its own.
   */
  readonly hostInheritsAppEnvironment: boolean
  /**
   * The host reads a `cwd` request's `of` (its welcome says `cwdOf`) and answers `{ of: 'leader' }`
   * with the leader's directory. A host of an older ptykit ignores the field and answers the
   * foreground process's: the app does not ask it for the leader's.
   */
  readonly hostReadsCwdOf: boolean
  /**
   * The methods the host answers, from its welcome; `undefined` from a host that does not list
   * them (one of ptykit 0.1.0, which answers the methods it had then and drops the connection of
   * a client that calls any other). Ask {@link PtyHostConnection.answers} before a newer method.
   */
  readonly hostMethods: ReadonlySet<string> | undefined
  /**
   * The largest frame the host accepts, from its welcome (its `maxFrameBytes`); the default limit
   * for a host that does not say (ptykit 0.1.0 and hosts before this field, which use it).
   */
  readonly hostMaxFrameBytes: number
  readonly #socket: Socket
  readonly #pending = new Map<number, Pending>()
  /** How many of the pending requests hold the app open. */
  #holdingRequests = 0
  readonly #deadlines = new RequestDeadlines<Pending>((pending) => this.#timedOut(pending))
  #nextId = 1
  #closed = false
  /**
   * What a request the host never answered fails with once the connection is closed: a drop is
   * `transport_lost`; a close for good by the provider (`dispose()`, `detach()`) gives its own
   * refusal (`provider_disposed`, `provider_detached`) — the requests in flight then fail as a
   * call made after it does, not as a lost link that may come back.
   */
  #closeFailure: ((method: string) => PtyHostError) | undefined = undefined
  #outbox: (string | SerializeWhenSent)[] = []
  /** Reused memory for outgoing frames (its own allocation, never a slice of Node's pool). */
  readonly #writeBuffer = Buffer.allocUnsafeSlow(WRITE_BUFFER_BYTES)
  /** False from a write of `#writeBuffer` until the socket is done with it (the write's callback). */
  #writeBufferFree = true
  readonly #writeBufferDone = (): void => {
    this.#writeBufferFree = true
  }
  #inbox: PtyHostMessage[] = []
  #inboxHead = 0
  #draining = false
  #holdOpen = false
  /** Whether the socket is ref'd (it holds the app's event loop open). */
  #refd = false
  #onEvent: (message: PtyHostMessage) => void = () => undefined
  #onClose: () => void = () => undefined

  private constructor(
    socket: Socket,
    welcome: {
      hostInstanceId: string
      hostScrollbackRows: number | undefined
      hostMethods: ReadonlySet<string> | undefined
      hostMaxFrameBytes?: number | undefined
      hostSucceedsDeadHost?: boolean
      hostFencesProbe?: boolean
      hostReadsPredecessorJournal?: boolean
      hostShutdownDeadlineMs?: number | undefined
      hostInheritsAppEnvironment?: boolean
      hostReadsCwdOf?: boolean
    },
    reader: ConnectionReader,
    leftover: PtyHostMessage[],
  ) {
    this.#socket = socket
    this.hostInstanceId = welcome.hostInstanceId
    this.hostScrollbackRows = welcome.hostScrollbackRows
    this.hostSucceedsDeadHost = welcome.hostSucceedsDeadHost === true
    this.hostFencesProbe = welcome.hostFencesProbe === true
    this.hostShutdownDeadlineMs = welcome.hostShutdownDeadlineMs
    this.hostReadsPredecessorJournal = welcome.hostReadsPredecessorJournal === true
    this.hostInheritsAppEnvironment = welcome.hostInheritsAppEnvironment === true
    this.hostReadsCwdOf = welcome.hostReadsCwdOf === true
    this.hostMethods = welcome.hostMethods
    this.hostMaxFrameBytes = welcome.hostMaxFrameBytes ?? PTY_HOST_MAX_FRAME_BYTES
    reader.onMessages = (messages) => this.#enqueue(messages as PtyHostMessage[])
    socket.on('close', () => this.#closedNow())
    socket.unref()
    this.#enqueue(leftover)
  }

  /**
   * Check the socket's ownership and modes, read the secret, connect, and say hello. Rejects with
   * `host_unavailable`, `insecure_socket`, `unauthorized` or `protocol_mismatch`.
   */
  static async open(paths: PtyHostPaths, timeoutMs: number): Promise<PtyHostConnection> {
    assertSocketSafeToConnect(paths)
    const secret = readHostSecret(paths)
    const reader = new ConnectionReader()
    const socket = createConnection({ path: paths.socketPath, ...readThrough(reader, READ_BUFFER_BYTES) })
    return new Promise<PtyHostConnection>((resolve, reject) => {
      let settled = false
      const fail = (error: PtyHostError): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        socket.destroy()
        reject(error)
      }
      const timer = setTimeout(() => fail(new PtyHostError('host_unavailable', `The pty host on ${paths.socketPath} did not answer within ${timeoutMs} ms`)), clampTimerDelay(timeoutMs))
      socket.on('error', (error: NodeJS.ErrnoException) =>
        fail(new PtyHostError('host_unavailable', `No pty host answers on ${paths.socketPath} (${error.code ?? error.message})`, { cause: error })),
      )
      socket.on('close', () => fail(new PtyHostError('host_unavailable', `The pty host on ${paths.socketPath} closed the connection during the hello`)))
      socket.once('connect', () => socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret })))
      reader.onBadFrame = (error) => fail(new PtyHostError('host_unavailable', `The pty host sent a bad frame: ${error.message}`))
      reader.onMessages = (decoded) => {
        const messages = decoded as Record<string, unknown>[]
        const first = messages[0]
        if (first === undefined) return
        if (first.type === 'refused') {
          if (first.code !== 'protocol_mismatch') return fail(new PtyHostError('unauthorized', String(first.message)))
          // The host's text names both versions; a host of an older ptykit does not say what to do.
          // Whether it did is read from the call its advice names, not from the whole advice: that
          // text changes between versions (the default socket's note came on 7 Dec), and a host of
          // another version's advice would otherwise get this app's appended to it.
          const advice = stopMismatchedHostAdvice(paths.socketPath)
          const message = String(first.message)
          if (message.includes('stopPtyHost(')) return fail(new PtyHostError('protocol_mismatch', message))
          const ours = message.includes(`version ${PTY_HOST_PROTOCOL_VERSION}`) ? '' : ` (this app speaks version ${PTY_HOST_PROTOCOL_VERSION})`
          return fail(new PtyHostError('protocol_mismatch', `${message}${ours}: ${advice}`))
        }
        if (first.v !== PTY_HOST_PROTOCOL_VERSION) {
          fail(new PtyHostError('protocol_mismatch', protocolMismatchMessage(PTY_HOST_PROTOCOL_VERSION, Number(first.v), paths.socketPath).replace('the client speaks', 'this client speaks')))
          return
        }
        if (first.type !== 'welcome' || typeof first.hostInstanceId !== 'string') {
          fail(new PtyHostError('host_unavailable', `The pty host answered the hello with ${JSON.stringify(first.type)}`))
          return
        }
        settled = true
        clearTimeout(timer)
        socket.removeAllListeners('close')
        socket.removeAllListeners('error')
        socket.on('error', () => undefined)
        reader.onBadFrame = () => socket.destroy()
        const hostScrollbackRows = Number.isSafeInteger(first.scrollbackRows) ? (first.scrollbackRows as number) : undefined
        const hostMethods = Array.isArray(first.methods) ? new Set(first.methods.filter((method): method is string => typeof method === 'string')) : undefined
        const hostMaxFrameBytes = Number.isSafeInteger(first.maxFrameBytes) && (first.maxFrameBytes as number) > 0 ? (first.maxFrameBytes as number) : undefined
        const hostSucceedsDeadHost = first.succeedsDeadHost === true
        const hostFencesProbe = first.probeFencesIncarnation === true
        const hostReadsPredecessorJournal = first.predecessorJournal === true
        const hostShutdownDeadlineMs = Number.isSafeInteger(first.shutdownDeadlineMs) && (first.shutdownDeadlineMs as number) >= 0 ? (first.shutdownDeadlineMs as number) : undefined
        const hostInheritsAppEnvironment = first.appEnvironment === true
        const hostReadsCwdOf = first.cwdOf === true
        const welcome = { hostInstanceId: first.hostInstanceId, hostScrollbackRows, hostMethods, hostMaxFrameBytes, hostSucceedsDeadHost, hostFencesProbe, hostReadsPredecessorJournal, hostShutdownDeadlineMs, hostInheritsAppEnvironment, hostReadsCwdOf }
        resolve(new PtyHostConnection(socket, welcome, reader, messages.slice(1) as PtyHostMessage[]))
      }
    })
  }

  /**
   * Whether the host answers `method`: a host that lists no methods (ptykit 0.1.0) answers only
   * those it had then, all but the ones added since (`exits`, `forgetExits`, `writeBytes`).
   */
  answers(method: PtyHostMethod): boolean {
    return this.hostMethods === undefined ? !METHODS_ADDED_SINCE_0_1_0.has(method) : this.hostMethods.has(method)
  }

  /** Whether the connection is still open. */
  get open(): boolean {
    return !this.#closed
  }

  /** Set the handlers of events (data, exit, loss) and of the connection closing. */
  listen(onEvent: (message: PtyHostMessage) => void, onClose: () => void): void {
    this.#onEvent = onEvent
    this.#onClose = onClose
  }

  /**
   * Send a request; resolves with the result, rejects with the host's error or `transport_lost`.
   * While it waits for its answer it holds the app's event loop open, unless `holdsApp` is
   * `false` (a clean-up whose answer nobody waits for: its frame is written all the same), or
   * until the host says it holds a write's bytes (a `held` message: the answer comes when their
   * fate is known, and is still handed on if it arrives while the app runs).
   * `serializeWhenSent`: `params` is serialized by the flush that sends it, not on the calling
   * turn, and its size is not checked — for a write piece, which the provider cut to fit the
   * host's frames (and whose `params` nobody changes meanwhile): a long write's pieces are then
   * serialized a few per turn (see {@link PTY_HOST_FLUSH_BUDGET_CHARS}), in order.
   */
  request(
    method: PtyHostMethod,
    params: Record<string, unknown>,
    timeoutMs?: number,
    options?: { holdsApp?: boolean; serializeWhenSent?: boolean },
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(this.#closeFailure?.(method) ?? new PtyHostError('transport_lost', `The connection to the pty host is closed (${method})`))
    const id = this.#nextId++
    let json: string | SerializeWhenSent
    if (options?.serializeWhenSent === true) {
      json = () => JSON.stringify({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id, method, params })
    } else {
      // Serialized once, here: its size is checked, and the flush only encodes it.
      json = JSON.stringify({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id, method, params })
      // A frame over the host's limit would make it drop this connection, and every PTY on it: such
      // a call fails alone, before anything is sent. (The provider cuts writes to fit.) A UTF-16 code
      // unit is at most 3 bytes of UTF-8: most requests need no measuring.
      if (3 * json.length > this.hostMaxFrameBytes) {
        const bytes = Buffer.byteLength(json, 'utf8')
        if (bytes > this.hostMaxFrameBytes) return Promise.reject(oversizedRequestError(method, params, bytes, this.hostMaxFrameBytes))
      }
    }
    return new Promise<unknown>((resolve, reject) => {
      const holdsApp = options?.holdsApp !== false
      const pending: Pending = { id, holdsApp, method, timeoutMs, resolve, reject, deadline: 0, waiting: false }
      this.#pending.set(id, pending)
      if (holdsApp) this.#holdingRequests += 1
      if (timeoutMs !== undefined) this.#deadlines.add(pending, timeoutMs)
      this.#updateRef()
      this.#send(json)
    })
  }

  /** The host did not answer `pending` within its timeout: it fails (`transport_lost`, told apart by {@link isRequestTimeout}). */
  #timedOut(pending: Pending): void {
    this.#settled(pending)
    const timedOut = new PtyHostError('transport_lost', `The pty host did not answer ${pending.method} within ${pending.timeoutMs} ms`)
    requestTimeouts.add(timedOut)
    pending.reject(timedOut)
  }

  /** `pending` is answered or timed out: no longer waiting, nor holding the app for it. */
  #settled(pending: Pending): void {
    this.#pending.delete(pending.id)
    if (pending.holdsApp) this.#holdingRequests -= 1
    this.#updateRef()
  }

  /**
   * Keep the app alive while it has live PTYs here (as a local PTY would); otherwise the
   * connection holds the event loop only while a request waits for its answer.
   */
  holdOpen(hold: boolean): void {
    this.#holdOpen = hold
    this.#updateRef()
  }

  /** Ref or unref the socket when (only when) whether it should hold the app changes. */
  #updateRef(): void {
    const hold = this.#holdOpen || this.#holdingRequests > 0
    if (hold === this.#refd) return
    this.#refd = hold
    if (hold) this.#socket.ref()
    else this.#socket.unref()
  }

  /** Send a one-way message (no reply is sent or awaited): acks, pause, resume, resize. */
  notify(method: PtyHostMethod, params: Record<string, unknown>): void {
    if (this.#closed) return
    this.#send(JSON.stringify({ v: PTY_HOST_PROTOCOL_VERSION, type: 'notify', method, params }))
  }

  /**
   * Queue a serialized message for the next flush. Why not written at once: the caller's turn (a
   * spawn runs the spawn pipeline in it) then only queues, and the encoding and the socket write
   * run as a task of their own at the end of the event-loop turn — one write for every message of
   * the turn (up to {@link PTY_HOST_FLUSH_BUDGET_CHARS}; the rest on the next turns, in order).
   */
  #send(json: string | SerializeWhenSent): void {
    this.#outbox.push(json)
    if (this.#outbox.length === 1) setImmediate(this.#flush)
  }

  readonly #flush = (): void => this.#flushUpTo(PTY_HOST_FLUSH_BUDGET_CHARS)

  /** Serialize, encode and write queued messages, in order, until `budget` code units are; the rest on a later turn. */
  #flushUpTo(budget: number): void {
    const outbox = this.#outbox
    if (this.#closed || outbox.length === 0) {
      this.#outbox = []
      return
    }
    const messages: string[] = []
    let chars = 0
    let taken = 0
    while (taken < outbox.length && (messages.length === 0 || chars < budget)) {
      const entry = outbox[taken] as string | SerializeWhenSent
      taken += 1
      const json = typeof entry === 'string' ? entry : entry()
      messages.push(json)
      chars += json.length
    }
    if (taken === outbox.length) this.#outbox = []
    else {
      this.#outbox = outbox.slice(taken)
      setImmediate(this.#flush)
    }
    const frames = this.#writeBufferFree ? encodeJsonFramesInto(messages, this.#writeBuffer) : encodeJsonFrames(messages)
    if (frames.buffer !== this.#writeBuffer.buffer) {
      this.#socket.write(frames)
      return
    }
    // The socket may hold the buffer until the write completes: not reused until then.
    this.#writeBufferFree = false
    this.#socket.write(frames, this.#writeBufferDone)
  }

  /**
   * Close the connection (the host keeps its sessions). What this turn queued is written first, as
   * it would have been without the close (a `resize` or `ack` right before `detach()` still lands).
   * `failure`: what the requests not answered (and any made after) fail with, naming the method —
   * the provider's refusal when it closes for good; `transport_lost` without it.
   */
  close(failure?: (method: string) => PtyHostError): void {
    if (!this.#closed) this.#closeFailure = failure
    this.#flushUpTo(Number.POSITIVE_INFINITY)
    this.#socket.destroy()
    this.#closedNow()
  }

  #enqueue(messages: PtyHostMessage[]): void {
    if (messages.length === 0) return
    if (this.#inboxHead === this.#inbox.length) {
      this.#inbox = messages
      this.#inboxHead = 0
    } else {
      for (const message of messages) this.#inbox.push(message)
    }
    if (this.#draining) return
    // Why a later turn: the read that decoded these messages and the work they start (a spawn's
    // reply runs the rest of the spawn pipeline, an exit its publication) are two tasks of the
    // app's event loop, not one as long as both.
    this.#draining = true
    setImmediate(this.#drainLater)
  }

  readonly #drainLater = (): void => this.#drain()

  /** Hands messages on until a reply (then again one macrotask later); `#draining` stays set until the inbox is empty. */
  #drain(): void {
    while (this.#inboxHead < this.#inbox.length) {
      const message = this.#inbox[this.#inboxHead++]!
      if (message.type === 'held') {
        // The host holds a write's bytes: its answer may be far off, and must not keep the app up.
        const pending = this.#pending.get(message.id)
        if (pending?.holdsApp === true) {
          pending.holdsApp = false
          this.#holdingRequests -= 1
          this.#updateRef()
        }
        continue
      }
      if (message.type === 'reply') {
        const pending = this.#pending.get(message.id)
        if (pending === undefined) continue
        this.#deadlines.cancel(pending)
        this.#settled(pending)
        if (message.ok) pending.resolve(message.result)
        else pending.reject(fromWireError(message.error))
        // Why a macrotask: the awaiting caller runs (and registers what it got) before later events.
        setImmediate(this.#drainLater)
        return
      }
      this.#onEvent(message)
    }
    this.#draining = false
  }

  #closedNow(): void {
    if (this.#closed) return
    this.#closed = true
    // Replies and events already received are still handed on; then what was never answered
    // fails, and the close follows.
    const finish = (): void => {
      if (this.#draining || this.#inboxHead < this.#inbox.length) {
        setImmediate(finish)
        return
      }
      this.#deadlines.clear()
      for (const pending of this.#pending.values()) {
        pending.reject(this.#closeFailure?.(pending.method) ?? new PtyHostError('transport_lost', 'The connection to the pty host dropped before it answered'))
      }
      this.#pending.clear()
      this.#holdingRequests = 0
      this.#onClose()
    }
    finish()
  }
}
