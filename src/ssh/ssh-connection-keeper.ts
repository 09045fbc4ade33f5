import { SshConnection, type SshConnectionSettings } from './ssh-connection.js'
import { SshProviderError } from './ssh-provider-error.js'
import { SSH_RECONNECT_INITIAL_DELAY_MS, SSH_RECONNECT_MAX_DELAY_MS } from './ssh-provider-options.js'
import { loadSsh2Module, type Ssh2Module } from './ssh2-module.js'

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
}

/**
 * The provider's one SSH connection: opened on first use (loading `ssh2` then), shared by every
 * PTY, and after a drop retried in the background with a doubling delay, capped, for a bounded
 * number of attempts. Concurrent `connect` calls share one attempt.
 */
export class SshConnectionKeeper {
  readonly #options: SshConnectionKeeperOptions
  #modulePromise: Promise<Ssh2Module> | null = null
  #connection: SshConnection | null = null
  #connecting: Promise<SshConnection> | null = null
  /** Cuts the connect in flight short (the provider is being disposed). */
  #connectAbort: AbortController | null = null
  #reconnectTimer: NodeJS.Timeout | null = null

  constructor(options: SshConnectionKeeperOptions) {
    this.#options = options
  }

  /** Whether the connection is open right now. */
  isConnected(): boolean {
    return this.#connection !== null && !this.#connection.lost
  }

  /** The open connection, opening it when there is none. Rejects with a typed {@link SshProviderError}. */
  connect(): Promise<SshConnection> {
    const current = this.#connection
    if (current !== null && !current.lost) return Promise.resolve(current)
    this.#connecting ??= (async () => {
      const abort = (this.#connectAbort = new AbortController())
      const module = await this.#loadModule()
      const opened = await SshConnection.open(module, this.#options.settings, (lost) => this.#onConnectionLost(lost), abort.signal)
      if (this.#options.isDisposed()) {
        opened.close()
        throw new SshProviderError('provider_disposed', 'The SSH provider was disposed while connecting')
      }
      this.#connection = opened
      opened.warmUpSideShell()
      return opened
    })().finally(() => {
      this.#connecting = null
      this.#connectAbort = null
    })
    return this.#connecting
  }

  /** Cancel a pending reconnect (the provider is being disposed). */
  stopReconnecting(): void {
    if (this.#reconnectTimer !== null) clearTimeout(this.#reconnectTimer)
    this.#reconnectTimer = null
  }

  /** Close the connection, cutting a connect in flight short (its channels close with it). */
  async close(): Promise<void> {
    this.#connectAbort?.abort()
    await this.#connecting?.catch(() => undefined)
    this.#connection?.close()
    this.#connection = null
  }

  #loadModule(): Promise<Ssh2Module> {
    this.#modulePromise ??= loadSsh2Module(this.#options.loadSsh2).catch((error: unknown) => {
      this.#modulePromise = null
      throw error
    })
    return this.#modulePromise
  }

  #onConnectionLost(lost: SshConnection): void {
    if (this.#connection === lost) this.#connection = null
    this.#options.onLost(lost)
    if (!this.#options.isDisposed()) this.#scheduleReconnect(0)
  }

  /** Retry a dropped connection with a doubling delay, capped, for a bounded number of attempts. */
  #scheduleReconnect(attempt: number): void {
    if (this.#options.isDisposed() || this.#reconnectTimer !== null || attempt >= this.#options.reconnectMaxAttempts) return
    const delay = Math.min(SSH_RECONNECT_INITIAL_DELAY_MS * 2 ** attempt, SSH_RECONNECT_MAX_DELAY_MS)
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null
      if (this.#options.isDisposed() || this.#connection !== null) return
      this.connect().catch(() => this.#scheduleReconnect(attempt + 1))
    }, delay)
    // A pending reconnect never keeps the host process alive on its own.
    this.#reconnectTimer.unref()
  }
}
