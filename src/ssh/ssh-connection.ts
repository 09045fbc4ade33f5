import { connect as connectTcp, type Socket } from 'node:net'
import { verifyHostKey, type HostKeyCheck } from './host-key-verification.js'
import { RemoteShell } from './remote-shell.js'
import { settleWithin } from '../contracts/settle-within.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { Ssh2Channel, Ssh2Client, Ssh2Module, Ssh2PtyRequest } from './ssh2-module.js'

/** What one connection needs. Secrets live here and nowhere else; no message ever shows them. */
export type SshConnectionSettings = {
  host: string
  port: number
  username: string
  privateKey: string | Buffer | undefined
  passphrase: string | undefined
  agent: string | undefined
  hostKey: HostKeyCheck
  connectTimeoutMs: number
  handshakeTimeoutMs: number
  keepaliveIntervalMs: number
  keepaliveCountMax: number
}

/** How the server reported a command's end: `exit-status` (a code) or `exit-signal` (a signal name). */
export type ChannelExitStatus = { code: number | null; signal: string | undefined }

/**
 * A session channel the server opened, with the command's end as the server reported it.
 *
 * Why the report is recorded here: `ssh2` emits a channel's `exit` while it parses the packet, and
 * a short command's `exit-status` can arrive in the same socket read as the channel's opening —
 * before a caller awaiting the channel runs again and subscribes. Missed, the channel then closed
 * with no exit on record and the PTY counted as lost (seen under load with `kill -9 $$`). So the
 * listener is attached in `ssh2`'s own callback, synchronously, before any later packet is parsed.
 * (Output is not at risk: the channel is a stream that buffers until it is read.)
 */
export type OpenedChannel = {
  /** The channel. */
  channel: Ssh2Channel
  /** The end the server reported so far (the first report counts); `null` while none. */
  exitStatus(): ChannelExitStatus | null
}

/** A side command's result. */
export type SideCommandResult = { stdout: string; code: number | null }

/** Classify an `ssh2` connection error, without any secret in the message. */
function connectionError(settings: SshConnectionSettings, error: Error & { level?: string }): SshProviderError {
  const where = `${settings.username}@${settings.host}:${settings.port}`
  if (error.level === 'client-authentication') {
    return new SshProviderError('auth_failed', `The server ${where} refused every offered credential (${error.message})`, { cause: error })
  }
  if (error.level === 'client-timeout') {
    return new SshProviderError('handshake_timeout', `The SSH handshake with ${where} did not finish within ${settings.handshakeTimeoutMs} ms`, { cause: error })
  }
  if (error.message === SSH2_LOST_BEFORE_BANNER) {
    return new SshProviderError(
      'connection_failed',
      `Cannot connect to ${where}: the server closed the connection before its SSH banner (${error.message}) — as OpenSSH's sshd does past its MaxStartups limit of connections not yet authenticated (other clients connecting at once: a later attempt may succeed), or when it refuses this address (PerSourcePenalties, a TCP wrapper)`,
      { cause: error },
    )
  }
  return new SshProviderError('connection_failed', `Cannot connect to ${where}: ${error.message}`, { cause: error })
}

/**
 * `ssh2`'s error when the TCP connection closed before the server's SSH banner: what a client sees
 * of sshd's `MaxStartups` refusal (sshd logs "drop connection … past MaxStartups" and closes).
 */
const SSH2_LOST_BEFORE_BANNER = 'Connection lost before handshake'

/** The error of a connect that the provider's disposal cut short. */
function disposedWhileConnecting(): SshProviderError {
  return new SshProviderError('provider_disposed', 'The SSH provider was disposed while connecting')
}

function openSocket(settings: SshConnectionSettings, signal: AbortSignal | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: settings.host, port: settings.port })
    const onAbort = (): void => {
      clearTimeout(timer)
      socket.destroy()
      reject(disposedWhileConnecting())
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      socket.destroy()
      reject(new SshProviderError('connect_timeout', `No TCP connection to ${settings.host}:${settings.port} within ${settings.connectTimeoutMs} ms`))
    }, settings.connectTimeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })
    socket.once('connect', () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      // Interactive traffic: without this, Nagle's algorithm and delayed ACKs hold each keystroke's
      // echo ~40-50 ms (measured: write → echo 50 ms, against 0.3 ms for OpenSSH, which sets it too).
      socket.setNoDelay(true)
      socket.removeAllListeners('error')
      resolve(socket)
    })
    socket.once('error', (error) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      reject(new SshProviderError('connection_failed', `Cannot connect to ${settings.host}:${settings.port}: ${error.message}`, { cause: error }))
    })
  })
}

/**
 * The messages of `ssh2`'s `exec` failures that come before its `exec` request is sent (it sends
 * the open, then the pty request once the open is confirmed, then `exec` once the pty request is
 * answered): the pty request refused or its channel closed (`Unable to request a pseudo-terminal`),
 * a request on a channel no longer open (`Channel is not open`), and an open the connection's end
 * left unanswered (`No response from server`: only the open's callback gets that error).
 */
const BEFORE_EXEC_REQUEST_MESSAGES: ReadonlySet<string> = new Set(['Unable to request a pseudo-terminal', 'Channel is not open', 'No response from server'])

/**
 * Whether an `ssh2` `exec` failure came before the `exec` request was sent: a channel open the
 * server refused (its error carries the server's `reason`) or one of
 * {@link BEFORE_EXEC_REQUEST_MESSAGES}. Anything else may have come after it — never assumed not to.
 */
function failedBeforeExecRequest(error: Error): boolean {
  return (error as { reason?: unknown }).reason !== undefined || BEFORE_EXEC_REQUEST_MESSAGES.has(error.message)
}

/**
 * How long closing a connection waits for the server to close its end before the socket is
 * destroyed: the server sees every session end once the connection is closed, so a disposal waits
 * for that, but not on a server (or a network) that stopped answering.
 */
export const SSH_CLOSE_WAIT_MS = 2_000

/**
 * One authenticated SSH connection. `onLost` fires once when it drops (never after
 * {@link SshConnection.close}).
 */
export class SshConnection {
  #client: Ssh2Client
  readonly #socket: Socket
  #lost = false
  #closedOnPurpose = false
  readonly #sideShell = new RemoteShell((command) => this.exec(command, undefined))
  /** Settles once the TCP connection is closed (the client's `'close'`). */
  readonly #socketClosed: Promise<void>

  private constructor(client: Ssh2Client, socket: Socket) {
    this.#client = client
    this.#socket = socket
    this.#socketClosed = new Promise((resolve) => socket.once('close', () => resolve()))
  }

  /** True once the connection dropped or was closed. */
  get lost(): boolean {
    return this.#lost
  }

  /**
   * True once the provider closed the connection itself ({@link SshConnection.close}) rather than
   * losing it. Its sessions' programs were not hung up by a drop; what a closed side shell no
   * longer answers is unknown, never "nothing left".
   */
  get closedOnPurpose(): boolean {
    return this.#closedOnPurpose
  }

  /**
   * Connect, verify the host key, authenticate. Rejects with a typed {@link SshProviderError};
   * with `provider_disposed`, the socket closed at once, when `signal` aborts before the
   * connection is ready (a handshake the server never answers does not hold a disposal up).
   */
  static async open(
    module: Ssh2Module,
    settings: SshConnectionSettings,
    onLost: (connection: SshConnection) => void,
    signal?: AbortSignal,
  ): Promise<SshConnection> {
    if (signal?.aborted === true) throw disposedWhileConnecting()
    const socket = await openSocket(settings, signal)
    const client = new module.Client()
    const connection = new SshConnection(client, socket)
    return new Promise<SshConnection>((resolve, reject) => {
      let ready = false
      let hostKeyError: SshProviderError | null = null
      const onAbort = (): void => {
        reject(disposedWhileConnecting())
        try {
          client.end()
        } finally {
          socket.destroy()
        }
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      client.on('ready', () => {
        ready = true
        signal?.removeEventListener('abort', onAbort)
        resolve(connection)
      })
      client.on('error', (error) => {
        if (ready) return // 'close' follows and reports the loss.
        reject(hostKeyError ?? connectionError(settings, error))
      })
      client.on('close', () => {
        signal?.removeEventListener('abort', onAbort)
        if (!ready) {
          reject(hostKeyError ?? new SshProviderError('connection_failed', `The server ${settings.host}:${settings.port} closed the connection during the handshake`))
          return
        }
        void connection.#sideShell.close()
        if (connection.#lost) return
        connection.#lost = true
        onLost(connection)
      })
      const config: Record<string, unknown> = {
        sock: socket,
        username: settings.username,
        readyTimeout: settings.handshakeTimeoutMs,
        keepaliveInterval: settings.keepaliveIntervalMs,
        keepaliveCountMax: settings.keepaliveCountMax,
        hostVerifier: (key: Buffer, verify: (accepted: boolean) => void) => {
          verifyHostKey(settings.hostKey, key).then(
            () => verify(true),
            (error: unknown) => {
              hostKeyError = error instanceof SshProviderError ? error : new SshProviderError('host_key_rejected', String(error), { cause: error })
              verify(false)
            },
          )
          return undefined
        },
      }
      if (settings.privateKey !== undefined) config['privateKey'] = settings.privateKey
      if (settings.passphrase !== undefined) config['passphrase'] = settings.passphrase
      if (settings.agent !== undefined) config['agent'] = settings.agent
      try {
        client.connect(config)
      } catch (error) {
        socket.destroy()
        // ssh2 throws synchronously on an unparsable key: its message names the problem, never the key.
        reject(new SshProviderError('auth_failed', `Cannot use the private key for ${settings.username}@${settings.host}: ${error instanceof Error ? error.message : String(error)}`))
      }
    })
  }

  /** Open a session channel running `command`, with a pty when `pty` is given. */
  exec(command: string, pty: Ssh2PtyRequest | undefined): Promise<Ssh2Channel> {
    return this.#open(command, pty, (channel) => channel)
  }

  /** Like {@link SshConnection.exec}, with the command's end recorded from the channel's first moment (see {@link OpenedChannel}). */
  openChannel(command: string, pty: Ssh2PtyRequest | undefined): Promise<OpenedChannel> {
    return this.#open(command, pty, (channel) => {
      let reported: ChannelExitStatus | null = null
      channel.on('exit', (code, signal) => {
        reported ??= { code, signal }
      })
      return { channel, exitStatus: () => reported }
    })
  }

  /** Open a session channel and hand it to `opened` in the callback that delivers it (before any of its events). */
  #open<T>(command: string, pty: Ssh2PtyRequest | undefined, opened: (channel: Ssh2Channel) => T): Promise<T> {
    if (this.#lost) return Promise.reject(new SshProviderError('transport_lost', 'The SSH connection is gone'))
    return new Promise((resolve, reject) => {
      try {
        this.#client.exec(command, pty === undefined ? {} : { pty }, (error, channel) => {
          if (error !== undefined && error !== null) {
            reject(this.#openFailure(error))
            return
          }
          resolve(opened(channel))
        })
      } catch (error) {
        reject(new SshProviderError('transport_lost', 'The SSH connection is gone', { cause: error }))
      }
    })
  }

  /**
   * The error of a session channel whose `exec` callback failed. A failure before the `exec`
   * request went out (the open refused with the server's `reason`, or never answered; the pty
   * request refused; the channel gone before the request) proves the command never ran: the
   * error as `ssh2` gave it (a refusal keeps its `reason`), `transport_lost` when the connection
   * dropped. Any other failure came after the request may have reached the server — a drop while
   * its reply was on its way (the command ran, its reply went down with the link), or a channel
   * closed before the reply (`ssh2` reports both as `Unable to exec`): `transport_lost` or
   * `spawn_failed`, with `processMayExist`.
   */
  #openFailure(error: Error): Error {
    if (failedBeforeExecRequest(error)) return this.#lost ? new SshProviderError('transport_lost', 'The SSH connection dropped', { cause: error }) : error
    return this.#lost
      ? new SshProviderError('transport_lost', 'The SSH connection dropped after the command was sent; it may run on the server all the same', { cause: error, processMayExist: true })
      : new SshProviderError('spawn_failed', `The server did not confirm the command (${error.message}); it may run on the server all the same`, { cause: error, processMayExist: true })
  }

  /**
   * Run a short script on the connection's side shell (no pty) and collect its output; `null`
   * when it could not run or did not finish within `timeoutMs`.
   */
  run(script: string, timeoutMs: number): Promise<SideCommandResult | null> {
    return this.#sideShell.run(script, timeoutMs)
  }

  /** Start the side shell ahead of its first use. */
  warmUpSideShell(): void {
    this.#sideShell.warmUp()
  }

  /**
   * Close the connection (its channels close with it). Its side shell is ended first: one still
   * starting (its login shell in the rc files, which the connection's end does not stop: its
   * channel has no pty to hang up) is sent `KILL` — after its open, if one is in flight, was
   * answered, up to {@link SSH_CLOSE_WAIT_MS} (the server runs an `exec` it has received whatever
   * becomes of the connection). Resolves once its TCP connection is closed — the server has then
   * seen the end of every session on it — or, when the server does not answer the end within
   * {@link SSH_CLOSE_WAIT_MS}, once the socket was destroyed.
   */
  async close(): Promise<void> {
    if (!this.#lost) this.#closedOnPurpose = true
    this.#lost = true
    await settleWithin(this.#sideShell.close(), SSH_CLOSE_WAIT_MS, undefined)
    try {
      this.#client.end()
    } catch {
      // Already closed.
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const cutShort = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.#socket.destroy()
        resolve()
      }, SSH_CLOSE_WAIT_MS)
    })
    return Promise.race([this.#socketClosed, cutShort]).finally(() => clearTimeout(timer))
  }
}
