import { descriptorShortage, SSH2_LOAD_DESCRIPTOR_HEADROOM } from './descriptor-headroom.js'
import { SshConnection, type OpenedChannel, type SshConnectionSettings } from './ssh-connection.js'
import { SshProviderError } from './ssh-provider-error.js'
import { SSH_RECONNECT_INITIAL_DELAY_MS, SSH_RECONNECT_MAX_DELAY_MS } from './ssh-provider-options.js'
import { loadSsh2Module, type Ssh2Module, type Ssh2PtyRequest } from './ssh2-module.js'

/** What a {@link SshConnectionKeeper} needs from its provider. */
export type SshConnectionKeeperOptions = {
  /** Where and how to connect. */
  settings: SshConnectionSettings
  /** The `loadSsh2` option: how to load `ssh2` (default: import it). */
  loadSsh2: (() => Promise<unknown>) | undefined
  /** Background reconnect attempts after a drop. */
  reconnectMaxAttempts: number
  /** Whether the provider was disposed: then nothing connects or reconnects any more. */
  isDisposed: () => boolean
  /** The connection dropped (called before a reconnect is scheduled). */
  onLost: (lost: SshConnection) => void
  /** A connection opened (the first, a reconnect, or an extra one). */
  onOpened?: (opened: SshConnection) => void
}

/**
 * Why a server refused a session channel when it has no room for another on that connection:
 * OpenSSH answers `open failed` with `connect failed` (2) or `administratively prohibited` (1) once
 * a connection holds `MaxSessions` (10 by default) sessions; others say `resource shortage` (4).
 */
const NO_ROOM_FOR_A_SESSION: ReadonlySet<unknown> = new Set([1, 2, 4])

/**
 * The rejection of {@link SshConnectionKeeper.openPtyChannel} once its spawn gave up (`giveUp`)
 * before the channel's open request went out: nothing was sent for that attempt, and nothing will be.
 */
export class SshChannelOpenAbandoned extends Error {
  /** Create the error. */
  constructor() {
    super('The spawn gave up before its session channel was asked for')
    this.name = 'SshChannelOpenAbandoned'
  }
}

function isSessionRefusal(error: unknown): boolean {
  return error instanceof Error && !(error instanceof SshProviderError) && NO_ROOM_FOR_A_SESSION.has((error as { reason?: unknown }).reason)
}

/** What the keeper knows of one connection's PTY channels. */
type ConnectionUse = {
  /** PTY channels open on it now. */
  open: number
  /** PTY channel opens still waiting for the server's answer. */
  opening: number
  /** The server refused a session here while `open` channels ran: no room until one closes. */
  full: boolean
  /** Refused opens waiting for the others in flight to answer. */
  whenSettled: Array<() => void>
  /**
   * Stops of its PTYs still running ({@link SshConnectionKeeper.holdForStop}): a stop goes on after
   * its PTY's channel closed (it looks at what is left of the session through the side shell), so
   * the connection is kept until they settle.
   */
  stopping: number
}

/**
 * The provider's SSH connections: the first opened on first use (loading `ssh2` then), shared by
 * every PTY. A server allows a number of sessions per connection (OpenSSH's `MaxSessions`, 10 by
 * default, the side shell being one of them); when it refuses a PTY's session on every open
 * connection, another connection is opened for it (one at a time), and an extra connection is
 * closed once its last PTY has ended and no stop of one runs on it any more. After the last
 * connection drops, it is retried in the background with a doubling delay, capped, for a bounded
 * number of attempts. Concurrent `connect` calls share one attempt.
 */
export class SshConnectionKeeper {
  readonly #options: SshConnectionKeeperOptions
  #modulePromise: Promise<Ssh2Module> | null = null
  /** The open connections, oldest first. */
  #connections: SshConnection[] = []
  readonly #uses = new Map<SshConnection, ConnectionUse>()
  #connecting: Promise<SshConnection> | null = null
  #openingExtra: Promise<SshConnection> | null = null
  #connectingForDisposal: Promise<void> | null = null
  /** Cuts connects in flight short (the provider is being disposed). */
  readonly #closing = new AbortController()
  /** Closes of connections let go before `close()` (an idle extra one, one opened too late): it waits for them too. */
  readonly #closesInFlight = new Set<Promise<void>>()
  #reconnectTimer: NodeJS.Timeout | null = null
  /** Waiting for {@link SshConnectionKeeper.stopsSettled}. */
  #whenStopsSettled: Array<() => void> = []

  constructor(options: SshConnectionKeeperOptions) {
    this.#options = options
  }

  /** Whether a connection is open right now. */
  isConnected(): boolean {
    return this.#connections.some((connection) => !connection.lost)
  }

  /** An open connection (the oldest), or `null` when none is open; never opens one. */
  openConnection(): SshConnection | null {
    return this.#connections.find((connection) => !connection.lost) ?? null
  }

  /** An open connection (the oldest), opening one when there is none. Rejects with a typed {@link SshProviderError}. */
  connect(): Promise<SshConnection> {
    const current = this.openConnection()
    if (current !== null) return Promise.resolve(current)
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = null
    })
    return this.#connecting
  }

  /**
   * Open a PTY's session channel on a connection with room for it, opening another connection when
   * the server refuses the session on every open one. Rejects with the channel's error, or with
   * `spawn_failed` when the server refuses a session on a connection that runs no PTY (it allows
   * none to this login: another connection would be refused the same).
   *
   * `giveUp` (the spawn's launch timeout): once it aborts, no request goes out any more — a wait
   * for a connection with room, or for the other opens in flight, rejects with
   * {@link SshChannelOpenAbandoned} (nothing was sent for this attempt); an open already sent
   * cannot be recalled and goes on. `onRequest('sent')` is called right before each open goes out
   * (`ssh2` sends the open, then, once it is confirmed, the pty and `exec` requests on its own), and
   * `onRequest('refused')` when the server refused it for want of room (nothing ran; another
   * attempt may follow).
   */
  async openPtyChannel(
    command: string,
    pty: Ssh2PtyRequest,
    { giveUp, onRequest }: { giveUp?: AbortSignal; onRequest?: (state: 'sent' | 'refused') => void } = {},
  ): Promise<{ connection: SshConnection; opened: OpenedChannel }> {
    for (;;) {
      const withRoom = this.#connections.find((candidate) => !candidate.lost && this.#use(candidate).full === false)
      const connection = withRoom ?? (await this.#unlessGivenUp(this.#connectionWithRoom(), giveUp, (late) => this.#closeIfUnused(late)))
      if (giveUp?.aborted === true) throw new SshChannelOpenAbandoned()
      const use = this.#use(connection)
      use.opening++
      let opened: OpenedChannel
      try {
        onRequest?.('sent')
        opened = await connection.openChannel(command, pty)
      } catch (error) {
        this.#openSettled(use)
        if (!isSessionRefusal(error) || connection.lost) throw error
        onRequest?.('refused')
        // Why wait: ssh2 answers a PTY channel only after its pty and exec requests, so the opens
        // the server accepted before this refusal may not have answered yet.
        if (use.opening > 0) await this.#unlessGivenUp(new Promise<void>((resolve) => use.whenSettled.push(resolve)), giveUp)
        if (connection.lost) throw new SshProviderError('transport_lost', 'The SSH connection dropped', { cause: error })
        if (use.open === 0) {
          const { host, port } = this.#options.settings
          throw new SshProviderError(
            'spawn_failed',
            `The server ${host}:${port} refused a session on a connection that runs no PTY (${(error as Error).message}): it allows this login no more sessions than the provider's side shell — see sshd's MaxSessions`,
            { cause: error },
          )
        }
        use.full = true
        continue
      }
      use.open++
      this.#openSettled(use)
      opened.channel.on('close', () => this.#channelClosed(connection))
      return { connection, opened }
    }
  }

  /**
   * `waiting`, or — once `giveUp` aborts first — a rejection with {@link SshChannelOpenAbandoned};
   * what `waiting` resolves with later goes to `late` (a connection opened for a spawn that gave up).
   */
  #unlessGivenUp<T>(waiting: Promise<T>, giveUp: AbortSignal | undefined, late?: (value: T) => void): Promise<T> {
    if (giveUp === undefined) return waiting
    if (giveUp.aborted) {
      void waiting.then(late, () => undefined)
      return Promise.reject(new SshChannelOpenAbandoned())
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        void waiting.then(late, () => undefined)
        reject(new SshChannelOpenAbandoned())
      }
      giveUp.addEventListener('abort', onAbort, { once: true })
      waiting.then(
        (value) => {
          giveUp.removeEventListener('abort', onAbort)
          if (giveUp.aborted) return
          resolve(value)
        },
        (error: unknown) => {
          giveUp.removeEventListener('abort', onAbort)
          reject(error)
        },
      )
    })
  }

  /** An extra connection opened for a spawn that gave up before using it: closed unless something else uses it. */
  #closeIfUnused(connection: SshConnection): void {
    // Why a macrotask: another spawn waiting for the same connection may be about to open a
    // channel on it; the counts are read again then.
    setImmediate(() => {
      if (this.#connections.includes(connection)) this.#closeIfIdle(connection, this.#use(connection))
    })
  }

  /**
   * Keep `connection` open while a stop of one of its PTYs runs: an extra connection is closed
   * once it has no PTY channel left, and a PTY's channel closes at its leader's exit — before the
   * stop has looked at what is left of its session (its background jobs) through the side shell.
   * Returns the release (idempotent); the connection is closed then if it is an extra one with
   * nothing left on it. Nothing to hold on a connection that is gone.
   */
  holdForStop(connection: SshConnection): () => void {
    const use = this.#uses.get(connection)
    if (use === undefined || connection.lost) return () => undefined
    use.stopping++
    let released = false
    return () => {
      if (released) return
      released = true
      use.stopping--
      this.#closeIfIdle(connection, use)
    }
  }

  /** Resolves once no stop holds a connection open ({@link SshConnectionKeeper.holdForStop}). */
  async stopsSettled(): Promise<void> {
    while ([...this.#uses.values()].some((use) => use.stopping > 0)) {
      await new Promise<void>((resolve) => this.#whenStopsSettled.push(resolve))
    }
  }

  /**
   * Open a connection for the disposal's stops when none is open (the background reconnects gave
   * up, or none was due yet): PTYs lost with the last connection may run on a server that is back,
   * and only a connection reaches them. Never rejects; {@link SshConnectionKeeper.close} cuts it
   * short and waits for it.
   */
  connectForDisposal(): Promise<void> {
    this.#connectingForDisposal ??= (async () => {
      // An attempt in flight lets its connection go (the provider is disposed): let it end first.
      await this.#connecting?.catch(() => undefined)
      if (this.isConnected() || this.#closing.signal.aborted) return
      await this.#open(true)
    })().catch(() => undefined)
    return this.#connectingForDisposal
  }

  /** Cancel a pending reconnect (the provider is being disposed). */
  stopReconnecting(): void {
    if (this.#reconnectTimer !== null) clearTimeout(this.#reconnectTimer)
    this.#reconnectTimer = null
  }

  /** Close every connection, cutting a connect in flight short (their channels close with them). */
  async close(): Promise<void> {
    this.#closing.abort()
    await Promise.all([this.#connecting?.catch(() => undefined), this.#openingExtra?.catch(() => undefined), this.#connectingForDisposal])
    const closing = [...this.#closesInFlight, ...this.#connections.splice(0).map((connection) => connection.close())]
    this.#uses.clear()
    for (const resolve of this.#whenStopsSettled.splice(0)) resolve()
    // Why waited: once `dispose()` resolves, the server has seen every session end (a test that
    // looks at the remote, or a host that exits, right after).
    await Promise.all(closing)
  }

  /** Close a connection no longer used, followed in {@link SshConnectionKeeper.close}'s wait. */
  #letGo(connection: SshConnection): void {
    const closed = connection.close()
    this.#closesInFlight.add(closed)
    void closed.finally(() => this.#closesInFlight.delete(closed))
  }

  #use(connection: SshConnection): ConnectionUse {
    let use = this.#uses.get(connection)
    if (use === undefined) {
      use = { open: 0, opening: 0, full: false, whenSettled: [], stopping: 0 }
      this.#uses.set(connection, use)
    }
    return use
  }

  /** One PTY channel open got its answer; when none is left in flight, the refused ones decide. */
  #openSettled(use: ConnectionUse): void {
    use.opening--
    if (use.opening === 0) for (const resolve of use.whenSettled.splice(0)) resolve()
  }

  /** A connection that may have room: the first one, or — when every open one is full — another. */
  #connectionWithRoom(): Promise<SshConnection> {
    if (!this.isConnected()) return this.connect()
    this.#openingExtra ??= this.#open().finally(() => {
      this.#openingExtra = null
    })
    return this.#openingExtra
  }

  /** Open a connection; `forDisposal`: for the disposal's stops, kept unless `close()` began meanwhile. */
  async #open(forDisposal = false): Promise<SshConnection> {
    const module = await this.#loadModule()
    const opened = await SshConnection.open(module, this.#options.settings, (lost) => this.#onConnectionLost(lost), this.#closing.signal)
    if (forDisposal ? this.#closing.signal.aborted : this.#options.isDisposed()) {
      this.#letGo(opened)
      throw new SshProviderError('provider_disposed', 'The SSH provider was disposed while connecting')
    }
    this.#connections.push(opened)
    // Why now: its channel is asked for before any PTY's, so the side shell has its session.
    opened.warmUpSideShell()
    this.#options.onOpened?.(opened)
    return opened
  }

  /** A PTY channel closed: its connection has room again, and an extra one with no PTY left is closed. */
  #channelClosed(connection: SshConnection): void {
    const use = this.#uses.get(connection)
    if (use === undefined) return
    use.open--
    use.full = false
    // Why a macrotask: the session's own close handler runs after this one, and a spawn may be
    // about to open a channel on this connection; the counts are read again then.
    setImmediate(() => this.#closeIfIdle(connection, use))
  }

  /**
   * Close an extra connection with nothing left on it: no PTY channel open or opening, and no stop
   * of its PTYs still running (one still looks at what is left of its session through this
   * connection's side shell). The first connection stays.
   */
  #closeIfIdle(connection: SshConnection, use: ConnectionUse): void {
    if (use.stopping === 0) for (const resolve of this.#whenStopsSettled.splice(0)) resolve()
    if (use.open > 0 || use.opening > 0 || use.stopping > 0 || connection.lost || this.#connections[0] === connection) return
    if (!this.#connections.includes(connection)) return
    this.#connections = this.#connections.filter((open) => open !== connection)
    this.#uses.delete(connection)
    this.#letGo(connection)
  }

  #loadModule(): Promise<Ssh2Module> {
    if (this.#modulePromise === null) {
      // Not loaded out of descriptors: Node would remember ssh2 as absent for good (see descriptorShortage).
      const shortage = descriptorShortage(SSH2_LOAD_DESCRIPTOR_HEADROOM)
      if (shortage !== null) {
        const what = shortage === 'EMFILE' ? 'this process has no file descriptor free (EMFILE: its open-file limit, `ulimit -n`, is reached)' : "the system's open-file table is full (ENFILE)"
        return Promise.reject(new SshProviderError('connection_failed', `Could not load ssh2 to connect: ${what}; nothing was loaded, and the next use tries again`))
      }
    }
    this.#modulePromise ??= loadSsh2Module(this.#options.loadSsh2).catch((error: unknown) => {
      this.#modulePromise = null
      throw error
    })
    return this.#modulePromise
  }

  #onConnectionLost(lost: SshConnection): void {
    this.#connections = this.#connections.filter((connection) => connection !== lost)
    this.#uses.delete(lost)
    // Its stops no longer hold anything open.
    for (const resolve of this.#whenStopsSettled.splice(0)) resolve()
    this.#options.onLost(lost)
    if (!this.#options.isDisposed() && this.#connections.length === 0) this.#scheduleReconnect(0)
  }

  /** Retry a dropped connection with a doubling delay, capped, for a bounded number of attempts. */
  #scheduleReconnect(attempt: number): void {
    if (this.#options.isDisposed() || this.#reconnectTimer !== null || attempt >= this.#options.reconnectMaxAttempts) return
    const delay = Math.min(SSH_RECONNECT_INITIAL_DELAY_MS * 2 ** attempt, SSH_RECONNECT_MAX_DELAY_MS)
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null
      if (this.#options.isDisposed() || this.#connections.length > 0) return
      this.connect().catch(() => this.#scheduleReconnect(attempt + 1))
    }, delay)
    // A pending reconnect never keeps the host process alive on its own.
    this.#reconnectTimer.unref()
  }
}
