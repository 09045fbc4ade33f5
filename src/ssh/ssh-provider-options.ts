import type { ExecutionHostId } from '../contracts/index.js'
import { isMaxPendingInputBytes, MAX_PENDING_INPUT_BYTES_EXPECTED } from '../contracts/write-settlement.js'
import type { SshHostKeyPolicy, SshHostVerifier } from './host-key-verification.js'
import { SshOptionError } from './ssh-option-error.js'
import { findUnknownOption, optionNamesOf, unknownOptionExpectation, isOptionsObject } from '../contracts/known-options.js'

/** Default TCP connect timeout: a reachable host answers a SYN in well under a second; 10 s covers slow VPNs. */
export const SSH_DEFAULT_CONNECT_TIMEOUT_MS = 10_000
/** Default handshake + authentication timeout (ssh2's `readyTimeout`): key exchange and an agent signature. */
export const SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000
/** Default keepalive interval: a dead link is noticed within interval × (countMax + 1), ~1 minute. */
export const SSH_DEFAULT_KEEPALIVE_INTERVAL_MS = 15_000
/** Default unanswered keepalives before the connection counts as dropped. */
export const SSH_DEFAULT_KEEPALIVE_COUNT_MAX = 3
/** How long a spawn may take from its call to its launch marker: a login shell's profile can be slow on a busy box. */
export const SSH_DEFAULT_LAUNCH_TIMEOUT_MS = 15_000
/** First reconnect delay after a dropped connection. */
export const SSH_RECONNECT_INITIAL_DELAY_MS = 250
/** The backoff's cap: it doubles from the initial delay up to this. */
export const SSH_RECONNECT_MAX_DELAY_MS = 10_000
/**
 * Reconnect attempts after a drop, before waiting for the next spawn (or a stop or liveness probe
 * of a lost PTY, or `dispose()` with lost PTYs to stop) to try again.
 */
export const SSH_RECONNECT_MAX_ATTEMPTS = 8
/** `$TERM` of remote PTYs unless the host names another. */
export const SSH_DEFAULT_TERMINAL_NAME = 'xterm-256color'

/** Options of `createSshProvider`. */
export type SshProviderOptions = {
  /** The server's host name or address. */
  host: string
  /** The server's port. Default 22. */
  port?: number | undefined
  /** The login user. */
  username: string
  /** A private key (OpenSSH or PEM text, or its bytes). Give this or `agent`. Never shown in errors. */
  privateKey?: string | Buffer | undefined
  /** The private key's passphrase. Never shown in errors. */
  passphrase?: string | undefined
  /** An SSH agent socket path (usually `process.env.SSH_AUTH_SOCK`). Give this or `privateKey`. */
  agent?: string | undefined
  /** A known_hosts file that vouches for the server's host key. Give this or `hostVerifier`. */
  knownHostsPath?: string | undefined
  /** Decides on a host key known_hosts does not list. Give this or `knownHostsPath`. */
  hostVerifier?: SshHostVerifier | undefined
  /** What to do with a host key nobody vouches for. Default `'strict'` (refuse). */
  hostKeyPolicy?: SshHostKeyPolicy | undefined
  /** The provider's `name`. Default `'ssh'`. */
  name?: string | undefined
  /** The host id of listing rows. Default `ssh:<host>`. */
  hostId?: ExecutionHostId | undefined
  /**
   * `$TERM` of the pty request: a terminfo name (a letter or digit, then letters, digits, `.`, `_`,
   * `+` or `-`; at most 128 characters). Default {@link SSH_DEFAULT_TERMINAL_NAME}.
   */
  terminalName?: string | undefined
  /** TCP connect timeout. Default {@link SSH_DEFAULT_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number | undefined
  /** Handshake and authentication timeout. Default {@link SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS}. */
  handshakeTimeoutMs?: number | undefined
  /** Keepalive interval; 0 disables keepalives. Default {@link SSH_DEFAULT_KEEPALIVE_INTERVAL_MS}. */
  keepaliveIntervalMs?: number | undefined
  /** Unanswered keepalives before the link counts as dropped (at least 1). Default {@link SSH_DEFAULT_KEEPALIVE_COUNT_MAX}. */
  keepaliveCountMax?: number | undefined
  /**
   * How long a spawn may take, from the call — the connect when no connection is open, the
   * channel's open, the program's start, and the `KILL` of a launch given up. Default
   * {@link SSH_DEFAULT_LAUNCH_TIMEOUT_MS}.
   */
  launchTimeoutMs?: number | undefined
  /**
   * Reconnect attempts after a drop; 0 disables background reconnects (a spawn, and a stop or
   * liveness probe of a lost PTY, still connect on demand). Default {@link SSH_RECONNECT_MAX_ATTEMPTS}.
   */
  reconnectMaxAttempts?: number | undefined
  /**
   * The most bytes of input held for one PTY that the remote program does not read yet (they wait
   * in the channel for the server's window to open: the program is busy, stopped, or slower than
   * the writer). A write that would take the held input past it — or that is larger than it — is
   * refused `input_backlog_full`, nothing of it sent; the same write goes through once the program
   * has read enough. A positive integer, or `Number.POSITIVE_INFINITY` for no bound. Default
   * `DEFAULT_MAX_PENDING_INPUT_BYTES` (64 MiB), as the node-pty provider's.
   */
  maxPendingInputBytes?: number | undefined
  /** Grace after HUP before TERM. Default `SSH_HANGUP_GRACE_MS`. */
  hangupGraceMs?: number | undefined
  /** Grace after TERM before KILL. Default `SSH_TERMINATE_GRACE_MS`. */
  terminateGraceMs?: number | undefined
  /** Deadline of a shutdown that names none (a duration). Default `SSH_SHUTDOWN_DEADLINE_MS`. */
  shutdownDeadlineMs?: number | undefined
  /** How to load ssh2. Default: `import('ssh2')` on first use. */
  loadSsh2?: (() => Promise<unknown>) | undefined
}

function nonEmptyString(options: Record<string, unknown>, key: string, required: boolean): void {
  const value = options[key]
  if (value === undefined && !required) return
  if (typeof value !== 'string' || value.length === 0) throw new SshOptionError(key, 'a non-empty string', value)
}

function integerOption(options: Record<string, unknown>, key: string, min: 0 | 1): void {
  const value = options[key]
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new SshOptionError(key, min === 0 ? 'a non-negative integer' : 'a positive integer', value)
  }
}

/** Every option `createSshProvider` reads (complete: checked at compile time). */
const SSH_PROVIDER_OPTION_NAMES = optionNamesOf<SshProviderOptions>()(
  'host', 'port', 'username', 'privateKey', 'passphrase', 'agent', 'knownHostsPath', 'hostVerifier', 'hostKeyPolicy', 'name', 'hostId',
  'terminalName', 'connectTimeoutMs', 'handshakeTimeoutMs', 'keepaliveIntervalMs', 'keepaliveCountMax', 'launchTimeoutMs',
  'reconnectMaxAttempts', 'maxPendingInputBytes', 'hangupGraceMs', 'terminateGraceMs', 'shutdownDeadlineMs', 'loadSsh2',
)

/** What a `terminalName` may be: a name a terminfo entry can have (no space, control character or path). */
const SSH_TERMINAL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/

/**
 * Refuse malformed options before anything connects.
 *
 * @throws SshOptionError naming the option (and never showing a secret's value).
 */
export function validateSshProviderOptions(options: SshProviderOptions): void {
  if (!isOptionsObject(options)) throw new SshOptionError('options', 'an object', options)
  // A misspelt option would be ignored, its default used (`knownHostPath`: no host key check as
  // asked): refused, naming the one meant. Its value is not shown (a misspelt `passphrase`).
  const unknown = findUnknownOption(options, SSH_PROVIDER_OPTION_NAMES)
  if (unknown !== undefined) {
    throw new SshOptionError(unknown.name, unknownOptionExpectation(unknown), (options as Record<string, unknown>)[unknown.name], true)
  }
  const record = options as unknown as Record<string, unknown>
  nonEmptyString(record, 'host', true)
  nonEmptyString(record, 'username', true)
  for (const key of ['agent', 'knownHostsPath', 'name', 'hostId', 'terminalName']) nonEmptyString(record, key, false)
  // Why: the name goes to the remote as `$TERM` and is looked up in its terminfo database; one that
  // no terminfo entry can be named (`'a b'`, a newline, a path) left every program there without its
  // terminal's capabilities (`tput` and curses programs fail: unknown terminal) — found only remotely.
  if (options.terminalName !== undefined && !SSH_TERMINAL_NAME_PATTERN.test(options.terminalName)) {
    throw new SshOptionError('terminalName', 'a terminfo name: a letter or digit, then letters, digits, `.`, `_`, `+` or `-` (like xterm-256color)', options.terminalName)
  }
  if (options.port !== undefined && (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535)) {
    throw new SshOptionError('port', 'an integer from 1 to 65535', options.port)
  }
  for (const key of ['keepaliveIntervalMs', 'reconnectMaxAttempts', 'hangupGraceMs', 'terminateGraceMs']) integerOption(record, key, 0)
  // At least 1: a 0 would fail every connect, handshake, spawn or default shutdown before it could
  // succeed, and a `keepaliveCountMax` of 0 drops an idle link at its first keepalive (ssh2).
  for (const key of ['connectTimeoutMs', 'handshakeTimeoutMs', 'keepaliveCountMax', 'launchTimeoutMs', 'shutdownDeadlineMs']) integerOption(record, key, 1)
  if (options.maxPendingInputBytes !== undefined && !isMaxPendingInputBytes(options.maxPendingInputBytes)) {
    throw new SshOptionError('maxPendingInputBytes', MAX_PENDING_INPUT_BYTES_EXPECTED, options.maxPendingInputBytes)
  }
  if (options.privateKey !== undefined && !(typeof options.privateKey === 'string' || Buffer.isBuffer(options.privateKey)) ) {
    throw new SshOptionError('privateKey', 'a string or a Buffer', options.privateKey, true)
  }
  if (options.passphrase !== undefined && typeof options.passphrase !== 'string') {
    throw new SshOptionError('passphrase', 'a string', options.passphrase, true)
  }
  if (options.privateKey === undefined && options.agent === undefined) {
    throw new SshOptionError('privateKey', 'given (or `agent`): the provider needs a credential', undefined)
  }
  if (options.hostVerifier !== undefined && typeof options.hostVerifier !== 'function') {
    throw new SshOptionError('hostVerifier', 'a function', options.hostVerifier)
  }
  if (options.knownHostsPath === undefined && options.hostVerifier === undefined) {
    throw new SshOptionError('knownHostsPath', 'given (or `hostVerifier`): host key verification is required', undefined)
  }
  if (options.hostKeyPolicy !== undefined && options.hostKeyPolicy !== 'strict' && options.hostKeyPolicy !== 'trust-on-first-use') {
    throw new SshOptionError('hostKeyPolicy', "`'strict'` or `'trust-on-first-use'`", options.hostKeyPolicy)
  }
  if (options.hostKeyPolicy === 'trust-on-first-use' && options.knownHostsPath === undefined) {
    throw new SshOptionError('knownHostsPath', "given with `hostKeyPolicy: 'trust-on-first-use'` (the trusted key is recorded there)", undefined)
  }
  if (options.loadSsh2 !== undefined && typeof options.loadSsh2 !== 'function') throw new SshOptionError('loadSsh2', 'a function', options.loadSsh2)
}
