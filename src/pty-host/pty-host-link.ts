import { PTY_HOST_ALREADY_RUNNING_EXIT_CODE, PTY_HOST_PEER_MISSING_EXIT_CODE, defaultPtyHostCommand, missingDefaultHostProgram, startPtyHostProcess, type LaunchedPtyHost, type PtyHostLaunchFlags } from './launch-pty-host.js'
import { isPtyIncarnationId } from '../contracts/index.js'
import { isExitMessage, type ClientPtyRecord, type ClientPtyRecords } from './client-pty-records.js'
import { PtyHostConnection } from './pty-host-connection.js'
import { isPtyHostError, PtyHostError } from './pty-host-error.js'
import {
  PTY_HOST_RECONNECT_INITIAL_DELAY_MS,
  PTY_HOST_RECONNECT_MAX_DELAY_MS,
  type PtyHostProviderOptions,
} from './pty-host-provider-options.js'
import { ensurePrivateSocketDir, type PtyHostPaths } from './socket-security.js'
import type { PtyHostMessage } from './protocol.js'
import { delay } from '../contracts/delay.js'

/**
 * Whether a host this app started has exited without failing: idle or closed (exit code 0), or
 * because another host held the lock ({@link PTY_HOST_ALREADY_RUNNING_EXIT_CODE}).
 */
function wentAway(launched: LaunchedPtyHost): boolean {
  const code = launched.exitCode()
  return code === 0 || code === PTY_HOST_ALREADY_RUNNING_EXIT_CODE
}

/**
 * Whether a host this app started has exited and failed (any other end than {@link wentAway}: an
 * exit code other than 0 and {@link PTY_HOST_ALREADY_RUNNING_EXIT_CODE}, a signal, a start error):
 * a host that never listened, and none will while nothing starts another.
 */
function failedToStart(launched: LaunchedPtyHost): boolean {
  return launched.exitCode() !== undefined && !wentAway(launched)
}

/**
 * The refusal of a connect whose host failed to start: `host_unavailable`, naming the command (to
 * run it by hand), how it ended and what it wrote to its log (`<socket>.log`: its stderr — Node's
 * own error when the command names no script, the host's when it refused to start). The host
 * exits 2 on a command line it refuses, {@link PTY_HOST_PEER_MISSING_EXIT_CODE} when its `@xterm`
 * peers cannot be loaded (the message says what to install) and 1 on any other start failure (an
 * insecure socket directory, a bad option, a script that does not exist…).
 */
function startFailure(launched: LaunchedPtyHost, socketPath: string, refusal: PtyHostError): PtyHostError {
  if (launched.exitCode() === PTY_HOST_PEER_MISSING_EXIT_CODE) {
    return new PtyHostError(
      'host_unavailable',
      `No pty host listens on ${socketPath}: the host this app started could not load @xterm/headless or @xterm/addon-serialize, optional peers of ptykit it needs — npm install @xterm/headless @xterm/addon-serialize where ptykit is installed (its command: ${launched.commandLine})`,
      { cause: refusal },
    )
  }
  const said = launched.logSinceStart()
  const why =
    said !== ''
      ? `It said (${launched.logPath}): ${said}. Its command: ${launched.commandLine}`
      : `It wrote nothing${launched.logPath === null ? ' (its stderr could not be logged)' : ` to its log ${launched.logPath}`}; run its command to see why: ${launched.commandLine}`
  return new PtyHostError('host_unavailable', `No pty host listens on ${socketPath}: the host this app started ended (${launched.exitDescription() ?? 'unknown'}) before it listened. ${why}`, {
    cause: refusal,
  })
}

/**
 * A refusal the connect poll waits out. `unauthorized` always: the host listening refused a secret
 * read before it wrote its own — a host that started between the app's read of the secret file and
 * its connect (replacing the file of one that died without removing it) — and the next try reads
 * the file again. `host_unavailable` only while the app starts a host (`start`): it is not
 * listening yet; without `start` nobody listens and nothing will start one, so it fails at once.
 */
function isRetried(error: unknown, start: boolean): error is PtyHostError {
  return isPtyHostError(error) && (error.code === 'unauthorized' || (start && error.code === 'host_unavailable'))
}

/** What the link needs to know of the provider around it. */
export type PtyHostLinkSettings = {
  paths: PtyHostPaths
  options: PtyHostProviderOptions
  autoStart: boolean
  connectTimeoutMs: number
  requestTimeoutMs: number
  reconnectAttempts: number
}

/**
 * The app's link to its pty host: connects (starting a host on demand), reconnects after a drop
 * with a doubling, bounded delay, and on every new connection to the same host process re-attaches
 * the PTYs it lost contact with, and stops the ones whose spawn reply was lost (orphans).
 */
export class PtyHostLink {
  /** `open` until `detach()` or `dispose()`. */
  state: 'open' | 'detached' | 'disposed' = 'open'
  #connection: PtyHostConnection | null = null
  #connecting: Promise<PtyHostConnection> | null = null
  /** Whether a caller other than a background reconnect waits for `#connecting`: its poll then holds the app open. */
  #connectingHoldsApp = false
  /** The connect poll's pause under way, if any (ref'd when a caller that holds the app joins it). */
  #pollPause: NodeJS.Timeout | null = null
  #reconnecting = false
  readonly #settings: PtyHostLinkSettings
  readonly #records: ClientPtyRecords

  /** A link for the provider's records. */
  constructor(settings: PtyHostLinkSettings, records: ClientPtyRecords) {
    this.#settings = settings
    this.#records = records
  }

  /** The open connection, or `null`. */
  get connection(): PtyHostConnection | null {
    return this.#connection !== null && this.#connection.open ? this.#connection : null
  }

  /** Hold the app alive while it has live PTYs in the host, as local PTYs would. */
  updateHold(): void {
    this.#connection?.holdOpen(this.#records.anyLive())
  }

  /**
   * The open connection, connecting first (and starting a host when `start` and `autoStart`).
   * `holdsApp: false` for a background connect nobody awaits (a reconnect): the pauses of its poll
   * do not keep the app alive on their own, unless another caller waits for the same connect.
   */
  ensureConnected(start: boolean, options: { holdsApp?: boolean } = {}): Promise<PtyHostConnection> {
    if (this.state !== 'open') return Promise.reject(this.#closedError())
    const open = this.connection
    if (open !== null) return Promise.resolve(open)
    if (this.#connecting === null) {
      this.#connectingHoldsApp = false
      this.#connecting = this.#connectOrStart(start && this.#settings.autoStart).finally(() => {
        this.#connecting = null
      })
    }
    if (options.holdsApp !== false) {
      this.#connectingHoldsApp = true
      // Joining inside an unref'd pause: from now on the poll holds the app.
      this.#pollPause?.ref()
    }
    return this.#connecting
  }

  /**
   * Throws what a request refuses once the link is closed (`provider_detached` /
   * `provider_disposed`), as `ensureConnected` rejects then; nothing while it is open. For a call
   * that answers without asking the host (a `forgetExits` of no exit), so that it is refused after
   * `detach()` as a listing is.
   */
  assertOpen(): void {
    if (this.state !== 'open') throw this.#closedError()
  }

  /**
   * Close the link for good; every PTY not known to have exited becomes unknown. A request the
   * host has not answered yet fails as a call made after it does (`provider_detached` /
   * `provider_disposed`), not `transport_lost`: the link will not come back, and a controller reads
   * a disposed provider's refusal as the end of its evidence, not as a failed listing. (A spawn in
   * flight still says its process may exist: see the provider's spawn.)
   */
  close(to: 'detached' | 'disposed'): void {
    this.state = to
    const open = this.#connection
    this.#connection = null
    open?.close((method) => this.#closedError(`before the host answered \`${method}\``))
    this.#records.markUnknown()
  }

  #closedError(when?: string): PtyHostError {
    const error = new PtyHostError(this.state === 'detached' ? 'provider_detached' : 'provider_disposed', `The pty host provider was ${this.state}${when === undefined ? '' : ` ${when}`}`)
    this.#closedErrors.add(error)
    return error
  }

  /** The refusals this link made once closed (see {@link isClosedRefusal}). */
  readonly #closedErrors = new WeakSet<PtyHostError>()

  /**
   * Whether `error` is this link's own refusal of a connect or a request once closed
   * (`provider_detached` / `provider_disposed`): it names the wire method (`list`), or none —
   * the provider turns it into its caller's refusal, naming the public method and the PTY.
   */
  isClosedRefusal(error: unknown): error is PtyHostError & { code: 'provider_detached' | 'provider_disposed' } {
    return error instanceof PtyHostError && this.#closedErrors.has(error)
  }

  async #open(): Promise<PtyHostConnection> {
    const opened = await PtyHostConnection.open(this.#settings.paths, this.#settings.connectTimeoutMs)
    if (this.state !== 'open') {
      opened.close()
      throw this.#closedError()
    }
    opened.listen(
      (message) => this.#records.onEvent(message),
      () => this.#onClosed(opened),
    )
    // A previous connection may be closed with its close callback still pending (it drains its inbox
    // first, then finds itself replaced and does nothing): its PTYs are unknown now, so the recovery
    // below re-attaches them on this connection.
    if (this.#connection !== null && this.#connection !== opened) this.#records.markUnknown()
    this.#connection = opened
    await this.#recover(opened)
    this.updateHold()
    return opened
  }

  /**
   * Connect, polling until `connectTimeoutMs` after the first failed try. Each try reads the secret
   * again, and a refused secret (`unauthorized`) is retried, with or without `start`: a host that
   * started between the app's read of the secret file and its connect (replacing the file of one
   * that died without removing it) refuses the secret the app read before. With `start`, the poll
   * also starts a host when none answers and retries `host_unavailable` while it comes up; without
   * it, `host_unavailable` fails at once and no host is ever started. A secret refused until the
   * deadline is genuinely not the listening host's: that fails `unauthorized`, naming the secret
   * file. A host this app started that exits before anyone listens, other than idle (code 0) or
   * beaten to the lock ({@link PTY_HOST_ALREADY_RUNNING_EXIT_CODE}) — both start another — fails
   * the connect at once, `host_unavailable` naming its command and how it ended.
   */
  async #connectOrStart(start: boolean): Promise<PtyHostConnection> {
    let refusal: PtyHostError
    try {
      return await this.#open()
    } catch (error) {
      if (!isRetried(error, start)) throw error
      refusal = error
    }
    const { paths, connectTimeoutMs } = this.#settings
    // On the timers' monotonic clock: a frozen or stepped-back `Date` (a test mocking Date, NTP)
    // kept this poll going for ever (or for the time stepped back).
    const deadline = performance.now() + connectTimeoutMs
    let launched: LaunchedPtyHost | null = null
    for (;;) {
      // Closed by `detach()` or `dispose()` meanwhile: the poll ends, refused as a call after the
      // close is. Before, it went on until connectTimeoutMs (its pauses holding the app open), its
      // caller then told `host_unavailable`, and it started a host again when one it started
      // exited — for a provider nobody would connect again.
      if (this.state !== 'open') throw this.#closedError()
      // None listens: start a host — or another, when the one this app started is gone: it exited
      // idle (its idle time ran out before this app's hello reached it: the app was busy for longer
      // than the host's first-client grace, or the hello lost the race to the idle timer), or it
      // refused because another held the lock — that one is closing (it stops listening first, and
      // lets go of the lock once its sessions are stopped), and the next takes the lock once it is
      // free. (One that failed to start is not started again: the connect fails at once, below;
      // nor is a host started beside one that refused the secret: it listens.)
      if (start && refusal.code === 'host_unavailable' && (launched === null || wentAway(launched))) {
        if (launched === null) ensurePrivateSocketDir(paths.socketPath)
        launched = this.#startHost()
      }
      try {
        return await this.#open()
      } catch (error) {
        if (!isRetried(error, start)) throw error
        refusal = error
      }
      // None listens and the host this app started failed (exited, not idle nor beaten to the
      // lock): none will listen, as it is not started again. Before, the poll went on until
      // connectTimeoutMs and failed naming neither the command nor how it ended.
      if (refusal.code === 'host_unavailable' && launched !== null && failedToStart(launched)) throw startFailure(launched, paths.socketPath, refusal)
      if (performance.now() > deadline) {
        if (refusal.code !== 'unauthorized') throw refusal
        throw new PtyHostError(
          'unauthorized',
          `The pty host on ${paths.socketPath} refused the secret in ${paths.secretPath} (read again at each try for ${connectTimeoutMs} ms): the file is not the listening host's secret`,
          { cause: refusal },
        )
      }
      await new Promise<void>((resolve) => {
        this.#pollPause = setTimeout(resolve, 20)
        if (!this.#connectingHoldsApp) this.#pollPause.unref()
      })
      this.#pollPause = null
    }
  }

  /** Start a host process with the provider's flags (only a connect that may start one gets here). */
  #startHost(): LaunchedPtyHost {
    const { paths, options } = this.#settings
    const flags: PtyHostLaunchFlags = { socketPath: paths.socketPath }
    if (options.idleExitMs !== undefined) flags.idleExitMs = options.idleExitMs
    if (options.historyChars !== undefined) flags.historyChars = options.historyChars
    if (options.scrollbackRows !== undefined) flags.scrollbackRows = options.scrollbackRows
    if (options.exitedHistoryBytes !== undefined) flags.exitedHistoryBytes = options.exitedHistoryBytes
    if (options.exitedSessionMemory !== undefined) flags.exitedSessionMemory = options.exitedSessionMemory
    if (options.hostCommand !== undefined) return startPtyHostProcess(options.hostCommand, flags, 'hostCommand')
    // The default names a script beside a bundle when ptykit was bundled into an app: one that was
    // not shipped fails here, saying what to ship or pass, not as a host that "ended (exit code 1)".
    const command = defaultPtyHostCommand()
    const missing = missingDefaultHostProgram(command)
    if (missing !== null) throw missing
    return startPtyHostProcess(command, flags, 'hostCommand')
  }

  #onClosed(closed: PtyHostConnection): void {
    if (this.#connection !== closed) return
    this.#connection = null
    // No exit was observed, only the loss of the host: unknown, never dead.
    this.#records.markUnknown()
    if (this.state === 'open') void this.#reconnect()
  }

  /** After a drop: retry with a doubling, bounded delay; a reconnect never starts a new host. */
  async #reconnect(): Promise<void> {
    if (this.#reconnecting) return
    this.#reconnecting = true
    try {
      for (let attempt = 0; attempt < this.#settings.reconnectAttempts && this.state === 'open'; attempt++) {
        await delay(Math.min(PTY_HOST_RECONNECT_INITIAL_DELAY_MS * 2 ** attempt, PTY_HOST_RECONNECT_MAX_DELAY_MS), { unref: true })
        if (this.state !== 'open' || this.#connection !== null) return
        try {
          await this.ensureConnected(false, { holdsApp: false })
          return
        } catch {
          // Try again after a longer pause.
        }
      }
    } finally {
      this.#reconnecting = false
    }
  }

  /**
   * Stop an orphan (a spawn whose reply was lost: its caller was told it failed) on the host, at
   * once (`immediate`), and forget it once the host answered. Should the shutdown fail, the orphan
   * stays for the next reconnect. `holdsApp: false` for a clean-up nobody awaits.
   */
  stopOrphan(connection: PtyHostConnection, record: ClientPtyRecord, options?: { holdsApp?: boolean }): Promise<void> {
    return connection.request('shutdown', { ptyId: record.id, immediate: true }, this.#settings.requestTimeoutMs, options).then(
      () => {
        if (record.orphaned) this.#records.forget(record)
      },
      () => undefined,
    )
  }

  /**
   * The probe of a PTY of a host that died, asked of the host that took its place: only one that
   * read its predecessor's session journal answers for that host's processes (`true` while it runs,
   * `false` once proven gone — then the PTY's end is reported, see `settlePredecessorEnd`), and
   * only about the incarnation this app holds; anything else is `null` (the connected host never
   * held it, so its "no such session" proves nothing) — except a failure of the probe `passOn`
   * says is no answer (a probe `dispose()` cut off, for a caller's `probeLiveness`): it rejects.
   */
  async probePredecessorPty(connection: PtyHostConnection, record: ClientPtyRecord, passOn?: (error: unknown) => boolean): Promise<boolean | null> {
    const incarnationId = record.incarnationId
    if (!connection.hostReadsPredecessorJournal || incarnationId === undefined) return null
    try {
      const answer: unknown = await connection.request('probe', { ptyId: record.id, expectedIncarnationId: incarnationId }, this.#settings.requestTimeoutMs)
      if (answer === false && record.incarnationId === incarnationId) {
        // Its exit, when the dead host observed it and journalled it before it died: the real cause.
        const remembered = (await this.#predecessorExits(connection)).find((message) => message.ptyId === record.id && message.incarnationId === incarnationId)
        if (record.incarnationId === incarnationId) this.#records.settlePredecessorEnd(record, remembered)
      }
      return typeof answer === 'boolean' ? answer : null
    } catch (error) {
      if (passOn?.(error) === true) throw error
      return null
    }
  }

  /**
   * The exits the host on `connection` remembers (`exits`), asked once per connection: the exits a
   * dead predecessor journalled are read at the host's start and never change after it, so one
   * answer serves every PTY of that host. Empty when the host does not list exits or the answer is
   * not a list of exit messages (each PTY's end is then reported unknown, as before).
   */
  #predecessorExits(connection: PtyHostConnection): Promise<Extract<PtyHostMessage, { type: 'exit' }>[]> {
    let asked = this.#exitsAsked.get(connection)
    if (asked === undefined) {
      asked = connection.answers('exits')
        ? connection.request('exits', {}, this.#settings.requestTimeoutMs).then(
            (messages: unknown) => (Array.isArray(messages) && messages.every(isExitMessage) ? messages : []),
            () => {
              // Not kept: a later probe asks again (a timeout, say, is not the host's answer).
              this.#exitsAsked.delete(connection)
              return []
            },
          )
        : Promise.resolve([])
      this.#exitsAsked.set(connection, asked)
    }
    return asked
  }

  /** What each connection answered to `exits` (see `#predecessorExits`). */
  readonly #exitsAsked = new WeakMap<PtyHostConnection, Promise<Extract<PtyHostMessage, { type: 'exit' }>[]>>()

  /**
   * On a connection to the same host process: re-attach every PTY this provider lost contact
   * with, and stop every orphan (a spawn whose reply was lost: its caller was told it failed). On
   * a connection to a host that took a dead host's place and read its journal: ask it about every
   * PTY of the dead host, so those that ended since are reported ended now, not at the first probe.
   */
  async #recover(opened: PtyHostConnection): Promise<void> {
    const lost = [...this.#records.ptys.values()].filter((record) => record.state === 'unknown' && record.hostInstanceId === opened.hostInstanceId)
    await Promise.all(
      lost.map(async (record) => {
        if (record.orphaned) {
          await this.stopOrphan(opened, record)
          return
        }
        try {
          const params: Record<string, unknown> = { ptyId: record.id, fromSeq: record.lastSeq, includeExited: true }
          if (record.incarnationId !== undefined) params.expectedIncarnationId = record.incarnationId
          const reply = (await opened.request('attach', params, this.#settings.requestTimeoutMs)) as { incarnationId?: unknown } | null
          // A record that never learned its incarnation (its first attach was cut off by the drop)
          // follows the one re-attached now: a caller's attach overlapping this one then continues
          // the stream this replay delivered (the provider's `followsNow`), never replays it again.
          if (record.incarnationId === undefined && isPtyIncarnationId(reply?.incarnationId)) record.incarnationId = reply.incarnationId
          if (record.state === 'unknown') this.#records.setState(record, 'live')
          // The pause this app still holds, which the host dropped with the old connection.
          if (record.appPaused && record.state === 'live') opened.notify('pause', { ptyId: record.id })
        } catch (error) {
          // The same host process answered that it holds neither this PTY's session nor its
          // exit (or that the id now runs a later incarnation): it ended, how is forgotten. Any
          // other failure (a timeout, another drop) leaves it unknown.
          if (isPtyHostError(error) && (error.code === 'pty_absent' || error.code === 'pty_live_other_incarnation') && record.state === 'unknown') {
            this.#records.settleForgotten(record)
          }
        }
      }),
    )
    // Orphans of another host instance died with it.
    for (const record of [...this.#records.ptys.values()]) if (record.orphaned) this.#records.forget(record)
    if (opened.hostReadsPredecessorJournal) {
      const ofDeadHost = [...this.#records.ptys.values()].filter(
        (record) => record.state === 'unknown' && record.hostInstanceId !== undefined && record.hostInstanceId !== opened.hostInstanceId,
      )
      await Promise.all(ofDeadHost.map((record) => this.probePredecessorPty(opened, record)))
    }
  }
}
