// One page's WebSocket, after it passed the access check. When the page asks (`attach`, sent on
// connect) it takes over every terminal — that is how a reload re-attaches; then it carries the
// page's requests to the terminals and their output back.
//
// A frame that fails validation closes THIS socket (1008) and nothing else: its terminals keep
// running and are acknowledged by the server until a page attaches again. Nothing the page sent
// after it is carried out, not even frames that came in the same packet.
//
// A page that reads its socket slowly backs it up: past SOCKET_BACKLOG_LIMIT_BYTES unsent, its
// terminals hold their output (see terminal-session.ts) until the socket has drained to
// SOCKET_DRAINED_BYTES, which the connection learns from its sends' write callbacks.
import type { WebSocket } from 'ws'
import {
  PROTOCOL_VIOLATION_CLOSE_CODE,
  parseClientMessage,
  WebTerminalProtocolError,
  type ClientMessage,
  type ServerMessage,
} from './protocol.js'
import type { TerminalRegistry } from './terminal-registry.js'
import type { TerminalViewer } from './terminal-session.js'

/**
 * Bytes a page's socket may hold unsent (`bufferedAmount`) before its terminals' output waits: 16
 * full output frames of plain text, far more than a page that keeps up (its acknowledgements let
 * about 100 000 chars be in flight) ever leaves in it.
 */
export const SOCKET_BACKLOG_LIMIT_BYTES = 4 * 1024 * 1024

/** A backed-up socket has drained once it holds no more than this unsent. */
export const SOCKET_DRAINED_BYTES = 1024 * 1024

/** WebSocket close code of a server shutdown (1001: going away). */
export const SERVER_SHUTDOWN_CLOSE_CODE = 1001

/**
 * How long a page's socket may take to close at server shutdown before it is dropped: a page that
 * stopped reading never answers the close, and must not hold the shutdown.
 */
export const SHUTDOWN_CLOSE_TIMEOUT_MS = 1_000

/** A page connected over one WebSocket. */
export class PageConnection implements TerminalViewer {
  #socket: WebSocket
  #registry: TerminalRegistry
  #log: (line: string) => void
  /** Terminals waiting for the socket to drain. */
  #drainListeners = new Set<() => void>()
  /**
   * Set once the socket is closing for a protocol violation, or closed. Why a flag: `ws` goes on
   * emitting `message` for the frames it already read (the rest of the packet, and any until the
   * close handshake ends), and none of them may be carried out.
   */
  #ignoringMessages = false
  /** Resolves once the socket closed. */
  #closed: Promise<void>

  constructor(socket: WebSocket, registry: TerminalRegistry, log: (line: string) => void) {
    this.#socket = socket
    this.#registry = registry
    this.#log = log
    socket.on('message', (frame, isBinary) => {
      if (!this.#ignoringMessages) this.#receive(frame, isBinary)
    })
    let closed!: () => void
    this.#closed = new Promise((resolve) => (closed = resolve))
    socket.on('close', () => {
      this.#ignoringMessages = true
      closed()
      registry.detachAll(this)
      this.#drainListeners.clear() // detaching unsubscribed them; a closed socket never drains
    })
    // A socket error (a frame over maxPayload, a broken connection) ends this socket only.
    socket.on('error', (error) => log(`web-terminal: socket error: ${error.message}`))
  }

  /** Send one message, if the socket is still open. */
  send(message: ServerMessage): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return
    this.#socket.send(JSON.stringify(message), () => this.#written())
  }

  /** Whether the socket holds more than {@link SOCKET_BACKLOG_LIMIT_BYTES} unsent. */
  isBackedUp(): boolean {
    return this.#socket.bufferedAmount > SOCKET_BACKLOG_LIMIT_BYTES
  }

  /** Call `listener` once the socket holds no more than {@link SOCKET_DRAINED_BYTES} unsent. */
  onDrain(listener: () => void): () => void {
    this.#drainListeners.add(listener)
    return () => {
      this.#drainListeners.delete(listener)
    }
  }

  /** Drop the connection at once. */
  terminate(): void {
    this.#ignoringMessages = true
    this.#socket.terminate()
  }

  /**
   * Server shutdown, once every terminal was stopped (and the page told so, with `closed`): close
   * the socket with {@link SERVER_SHUTDOWN_CLOSE_CODE}, so the page knows the server went away
   * rather than that the connection broke. A socket not closed within `timeoutMs` (a page that
   * stopped reading never answers the close) is dropped. Resolves once the socket is closed.
   */
  async shutDown(timeoutMs = SHUTDOWN_CLOSE_TIMEOUT_MS): Promise<void> {
    // From here nothing the page sends is carried out: the server is going away.
    this.#ignoringMessages = true
    this.#socket.close(SERVER_SHUTDOWN_CLOSE_CODE, 'server shutting down')
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))
    const outcome = await Promise.race([this.#closed, timedOut])
    clearTimeout(timer)
    if (outcome === 'timeout') {
      this.#socket.terminate()
      await this.#closed
    }
  }

  /**
   * A send was written out (or failed: the socket closed). Why here: `bufferedAmount` falls only as
   * sends are written, and a backed-up socket has sends pending, so one of these callbacks sees it
   * drained.
   */
  #written(): void {
    if (this.#drainListeners.size === 0 || this.#socket.bufferedAmount > SOCKET_DRAINED_BYTES) return
    const listeners = [...this.#drainListeners]
    this.#drainListeners.clear()
    for (const listener of listeners) listener()
  }

  #receive(frame: unknown, isBinary: boolean): void {
    let message: ClientMessage
    try {
      if (isBinary) throw new WebTerminalProtocolError('binary frame')
      message = parseClientMessage(String(frame))
    } catch (error) {
      if (!(error instanceof WebTerminalProtocolError)) throw error
      this.#log(`web-terminal: closing a socket: ${error.message}`)
      this.#ignoringMessages = true
      this.#socket.close(PROTOCOL_VIOLATION_CLOSE_CODE, 'malformed message')
      return
    }
    this.#handle(message)
  }

  #handle(message: ClientMessage): void {
    if (message.type === 'attach') {
      this.#registry.attachAll(this)
      return
    }
    if (message.type === 'open') {
      // The registry shows the terminal here, or — when this page left while the spawn was in
      // flight (a reload) — on the page that attached since.
      this.#registry.open(message, this).catch((error: unknown) => this.send({ type: 'error', message: `could not open a terminal: ${String(error)}` }))
      return
    }
    // An id that is not (or no longer) a terminal is not malformed: keys and acks race a close.
    const session = this.#registry.sessions.get(message.id)
    switch (message.type) {
      case 'input':
        session?.input(this, message.data, message.kind)
        return
      case 'binary':
        // One byte per character (the parser refused anything past U+00FF): written as bytes.
        session?.input(this, Buffer.from(message.data, 'latin1'), 'driving')
        return
      case 'resize':
        session?.resize(this, message.cols, message.rows)
        return
      case 'ack':
        session?.acknowledge(this, message.chars, message.generation)
        return
      case 'close':
        // Asked of the registry even when the id is no longer a session: a close while an earlier
        // one is stopping the terminal (a double click on ×) joins that stop and gets its verdict.
        this.#registry.close(message.id, this).then(
          (verified) => this.send({ type: 'closed', id: message.id, verified }),
          (error: unknown) => this.send({ type: 'error', message: `could not close ${message.id}: ${String(error)}` }),
        )
        return
    }
  }
}
