import type { ExecutionHostId, PtyExitEvent, PtyIncarnationId, PtyListProcessesOptions, PtyProcessInfo, PtyProvider, PtySpawnResult } from '../contracts/index.js'
import { assertPtyHostCommand, type PtyHostCommand } from './launch-pty-host.js'
import type { PtyHostBufferSnapshot } from './session-history.js'
import { assertIntegerOption, invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { assertScrollbackRowsFit } from './screen-limit.js'
import { assertSocketPathOption } from './socket-security.js'
import { findUnknownOption, optionNamesOf, unknownOptionMessage, isOptionsObject } from '../contracts/known-options.js'

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
  name?: string | undefined
  /** The host id of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId | undefined
  /**
   * The host's socket, an absolute path. Default `defaultPtyHostSocketPath()`, which every app of
   * the user that names none shares (each sees and can stop the others' sessions); an app that
   * wants a host of its own passes `defaultPtyHostSocketPath('<app name>')`.
   */
  socketPath?: string | undefined
  /** Start a host (detached) when none answers on a spawn or attach. Default `true`. */
  autoStart?: boolean | undefined
  /**
   * How to start the host. Default `defaultPtyHostCommand()`. `file` a non-empty string, `args`
   * strings (refused at creation otherwise, naming `hostCommand.file` or `hostCommand.args[i]`);
   * a `file` that names no executable file fails the spawn that would start the host, at once.
   */
  hostCommand?: PtyHostCommand | undefined
  /** `idleExitMs` of a host this provider starts. */
  idleExitMs?: number | undefined
  /** Raw output chars a host this provider starts keeps per session. */
  historyChars?: number | undefined
  /** Scrollback rows of a started host's headless screens. */
  scrollbackRows?: number | undefined
  /**
   * The budget, in bytes, of the histories (replay rings and screens) of ended sessions in a host
   * this provider starts: past it the oldest ended sessions' are released (not the latest ended
   * one's), their exits kept (a snapshot of one is refused `history_released`). A non-negative integer; 0 keeps none. Default
   * (the host's): `PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR` × `historyChars`, 16 MiB at the
   * default history.
   */
  exitedHistoryBytes?: number | undefined
  /**
   * How many ended sessions keep their exit in a host this provider starts (how an app that was
   * away learns why each ended), the oldest forgotten first — in its memory and in its session
   * journal, so they survive the host (the next host reads them back). At least 1. Default (the
   * host's): `PTY_HOST_EXITED_SESSION_MEMORY` (1 024).
   */
  exitedSessionMemory?: number | undefined
  /**
   * Connect timeout, at least 1 ms. Default {@link PTY_HOST_CONNECT_TIMEOUT_MS}. A host this
   * provider started that fails before it listens (exits non-zero, other than when another host
   * holds the lock) fails the connect at once, `host_unavailable` naming its command and exit.
   */
  connectTimeoutMs?: number | undefined
  /** Request timeout, at least 1 ms. Default {@link PTY_HOST_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number | undefined
  /** Reconnect attempts after a drop. Default {@link PTY_HOST_RECONNECT_MAX_ATTEMPTS}. */
  reconnectAttempts?: number | undefined
  /**
   * Whose environment and working directory a spawn starts from. Default `'app'`.
   *
   * - `'app'`: this app's, read at each spawn — `process.env` (less the host-terminal variables,
   *   `NODE_PTY_INHERITED_ENV_EXCLUDED`: `TMUX`, `COLUMNS`…), with the spawn's `env` set on top and
   *   its `envToDelete` removed; `process.cwd()` for a spawn without `cwd` (and the base of a
   *   relative one); the default shell is this environment's `$SHELL` — as the node-pty provider
   *   does in the app. The environment travels with each spawn request over the host's private
   *   socket; no refusal, log or journal line shows a value of it. (A host of an older ptykit
   *   ignores it: the app then sends it as the spawn's `env`, see the pty host guide, "Upgrading
   *   the app while a host runs".)
   * - `'host'`: the host process's own, as before this option: the environment and directory of
   *   whichever app started the host (maybe another application, days ago), the spawn's `env` set
   *   on top of it. For an app that wants one fixed environment for every PTY of its host.
   *
   * Anything else is refused `invalid_option` naming `spawnEnvironment`.
   */
  spawnEnvironment?: PtyHostSpawnEnvironment | undefined
}

/** Whose environment and working directory a pty host spawn starts from: see {@link PtyHostProviderOptions.spawnEnvironment}. */
export type PtyHostSpawnEnvironment = 'app' | 'host'

/** Where an attach starts the replay: an absolute sequence, everything retained, or only live output. */
export type PtyHostReplayFrom = number | 'retained' | 'live'

/** A pty host provider: the whole `PtyProvider` plus attach, detach and loss reports. */
export type PtyHostProvider = Omit<PtyProvider, 'getBufferSnapshot' | 'listProcesses'> &
  Required<
    Pick<
      PtyProvider,
      | 'writeBytes'
      | 'pauseProducer'
      | 'resumeProducer'
      | 'acknowledgeData'
      | 'hasPty'
      | 'probeLiveness'
      | 'getCwd'
      | 'getForegroundProcess'
      | 'hasChildProcesses'
      | 'clearBuffer'
      | 'onOutputLoss'
      | 'dispose'
    >
  > & {
    /**
     * The host's headless screen at a sequence boundary, and how much output it skipped
     * (`skippedChars`) — of a live session, or of an ended one whose history the host still keeps
     * (`incarnationId` says whose screen it is). `null` when the host holds no session under the id
     * (or cannot be asked). Rejects `history_released` (a {@link PtyHostError}, `ptyId` set) for an
     * ended session whose screen the host no longer keeps: stopped without `keepHistory`, or
     * released to keep ended sessions' histories within the host's `exitedHistoryBytes` (the
     * oldest ended go first) — never an empty screen in its place. Its exit is still in
     * `listExits()`. (A controller's `serializeBuffer` of such a PTY answers `null`.) Rejects
     * `invalid_option` naming `scrollbackRows` and the value when that is no non-negative integer.
     */
    getBufferSnapshot(id: string, options?: { scrollbackRows?: number | undefined }): Promise<PtyHostBufferSnapshot | null>
    /** The PTYs this provider holds, each row exact: an optional field is absent, never `undefined` (see {@link PtyProvider.listProcesses}). */
    listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
    /**
     * True while every PTY this app holds belongs to the connected host instance, which holds every
     * session it runs (a missing row then proves absence); false while the app holds PTYs a dead
     * predecessor ran (the app reconnected to a successor host), whose absence no listing proves.
     */
    readonly authoritativeListings: boolean
    /** Same as `dispose()`, for `await using provider = createPtyHostProvider(…)`. */
    [Symbol.asyncDispose](): Promise<void>
    /**
     * Attach to a live session of the host; its output is replayed from `replayFrom` (default:
     * where this provider last was, else everything retained). Rejects `pty_absent` when the host
     * holds no such live PTY (or another incarnation).
     */
    attach(id: string, options?: { replayFrom?: PtyHostReplayFrom | undefined; expectedIncarnationId?: PtyIncarnationId | undefined }): Promise<PtySpawnResult>
    /**
     * Close this app's connection and leave every session running. The provider is unusable
     * afterwards: spawns and attaches not sent to the host when it began are refused
     * `provider_detached` — also an `attach` or a spawn with a `sessionId` (attach or spawn) asked
     * for in the same turn just before it (they are sent a turn later, unlike a fresh spawn on an
     * open connection), and the spawn of an attach-or-spawn whose attach found no session. Those
     * already sent finish first, as they would have without the detach, so a spawn in flight
     * resolves and its session stays running like the others; a stop asked for meanwhile (a
     * rollback of such a spawn) is waited for too. The wait is bounded by `requestTimeoutMs` (and a
     * quarter second, so the requests' own timeouts come first); the
     * call resolves once the connection is closed. A `dispose()` called meanwhile waits for it and
     * stops nothing; once a `dispose()` began, `detach()` returns its promise.
     *
     * Afterwards, each call answers what is still true, and refuses what it could only guess:
     * a call that would act on the host or answer for all of it — `spawn`, `attach`, `shutdown`
     * (of a PTY whose exit this app has not seen), `clearBuffer` (from the moment the detach
     * began), `listProcesses`, `listExits`, `forgetExits` — rejects `provider_detached`, its
     * message naming the method and `ptyId` the PTY the call named (as after `dispose()`), also
     * when the detach cut the call off while it waited for the connection or the host's answer:
     * an empty listing would prove every session gone, a resolved stop would say one was
     * stopped, a resolved clear that the screen the host keeps was cleared. A probe or a query about one PTY answers as it does while
     * the host cannot be reached: `null`, "unknown" (`hasPty`, `probeLiveness`, `getCwd`,
     * `getForegroundProcess`, `hasChildProcesses`, `getBufferSnapshot`) — true of a session that runs
     * on where this provider no longer sees it (`false` for one whose exit it saw) —; a write is
     * refused `provider_refused_write` (nothing handed to the host), a resize answers `false`, and
     * pauses and acknowledgements do nothing. A controller over the provider reports the detach
     * once (a `shutdown_failed` or `listing_failed` whose cause is the refusal), not per call.
     */
    detach(): Promise<void>
    /**
     * The exits of the sessions that ended in the host, as the host remembers them (the latest
     * `PTY_HOST_EXITED_SESSION_MEMORY`, oldest first), whoever spawned them: how an app that was
     * away (restarted, or crashed) learns why each of its sessions ended — an attach answers
     * `pty_absent` for an ended one. Each carries the cause the host's node-pty provider built from
     * the real status, and `diedBeforeStopRequest` when no stop reached the host before the end,
     * else `stopRequestedBeforeDeath` (a stop of it reached the host, from any app, while it lived).
     * Starts no host; rejects `host_unavailable` when none answers (never an empty list), and
     * `protocol_mismatch` when the running host is of an older ptykit that does not list exits (or
     * speaks another protocol version); the message says what to do. Rejects `provider_detached`
     * after `detach()`, and `provider_disposed` after `dispose()` (also when the dispose cut off
     * the request on its way).
     */
    listExits(): Promise<PtyExitEvent[]>
    /**
     * Forget exits this app has dealt with, so that `listExits()` — of this host, and of every host
     * after it, which read them from its journal — no longer lists them: pass the exits as
     * `listExits()` gave them (their `id` and `incarnationId`). Each is forgotten only when the
     * exit the host remembers under its id is of that incarnation (an exit without one: one that
     * attests none), never a later one's, nor a live session. The host rewrites its journal
     * without them before it answers; a journal left with no exit and nothing open is removed when
     * the host closes. Resolves with how many were forgotten (0 at once, nothing asked, for an
     * empty list). Starts no host; rejects `invalid_option` naming the malformed part
     * (`exits[2].id`…), `host_unavailable` when no host answers, `protocol_mismatch` when the
     * running host is of an older ptykit that does not forget exits, `host_error` when the host
     * could not rewrite its journal (nothing is then forgotten), `provider_detached` after
     * `detach()` (of any list, as `listExits`), and `provider_disposed` after `dispose()` (of any list; also
     * when the dispose cut off the request on its way).
     */
    forgetExits(exits: readonly PtyHostExitToForget[]): Promise<number>
    /** Whether a connection to the host is open now. */
    readonly connected: boolean
  }

/** An exit to forget (see `PtyHostProvider.forgetExits`): a `PtyExitEvent` of `listExits()` is one. */
export type PtyHostExitToForget = {
  /** The PTY id. */
  readonly id: string
  /** The incarnation that exited, as `listExits()` gave it (absent when it attested none). */
  readonly incarnationId?: string | undefined
}

/** Every option `createPtyHostProvider` reads (complete: checked at compile time). */
const PTY_HOST_PROVIDER_OPTION_NAMES = optionNamesOf<PtyHostProviderOptions>()(
  'name', 'hostId', 'socketPath', 'autoStart', 'hostCommand', 'idleExitMs',
  'historyChars', 'scrollbackRows', 'exitedHistoryBytes', 'exitedSessionMemory', 'connectTimeoutMs', 'requestTimeoutMs', 'reconnectAttempts', 'spawnEnvironment',
)

/** Check the options of `createPtyHostProvider`; throws `invalid_option` naming the first bad one (or one it does not know). */
export function validatePtyHostProviderOptions(options: PtyHostProviderOptions): void {
  if (!isOptionsObject(options)) throw invalidPtyHostOption('options', 'an object', options)
  // A misspelt option would be ignored, its default used (`sockPath`: the default socket, another
  // host): refused, naming the one meant. Its value is not shown: nobody knows what it holds.
  const unknown = findUnknownOption(options, PTY_HOST_PROVIDER_OPTION_NAMES)
  if (unknown !== undefined) {
    throw new PtyHostError('invalid_option', unknownOptionMessage('', unknown), { option: unknown.name })
  }
  for (const key of ['name', 'hostId'] as const) {
    const value = options[key]
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) throw invalidPtyHostOption(key, 'a non-empty string', value)
  }
  if (options.socketPath !== undefined) assertSocketPathOption(options.socketPath)
  if (options.autoStart !== undefined && typeof options.autoStart !== 'boolean') throw invalidPtyHostOption('autoStart', 'a boolean', options.autoStart)
  for (const key of ['idleExitMs', 'scrollbackRows', 'exitedHistoryBytes', 'reconnectAttempts'] as const) assertIntegerOption(key, options[key], 0)
  // At least 1: the host keeps at least one char of history (as `startPtyHost` requires), and a
  // connect or request timeout of 0 would fail every connect or request before the host could answer.
  for (const key of ['historyChars', 'exitedSessionMemory', 'connectTimeoutMs', 'requestTimeoutMs'] as const) assertIntegerOption(key, options[key], 1)
  if (options.scrollbackRows !== undefined) assertScrollbackRowsFit(options.scrollbackRows)
  // Each part: an empty `file` or an argument that is no string failed only at the first spawn
  // (or was passed on as "1"). Whether `file` names a program is asked when a host is started.
  if (options.hostCommand !== undefined) assertPtyHostCommand('hostCommand', options.hostCommand)
  const { spawnEnvironment } = options
  if (spawnEnvironment !== undefined && spawnEnvironment !== 'app' && spawnEnvironment !== 'host') {
    throw invalidPtyHostOption('spawnEnvironment', "'app' or 'host'", spawnEnvironment)
  }
}

