import { describeValue } from '../contracts/describe-value.js'
import { defineErrorBrand } from '../contracts/error-brand.js'
import { findUnknownOption, unknownOptionMessage } from '../contracts/known-options.js'
/**
 * Stable codes of {@link PtyHostError}. Match on the code, never on the message.
 *
 * - `host_unavailable`: no pty host answers on the socket (not running, or it died) — spawns fail
 *   with this until a host is back —, or the default `hostCommand`'s program does not exist (an
 *   app that bundled ptykit without shipping its host; the message says what to ship);
 * - `transport_lost`: the connection dropped before the host answered a request (not when the
 *   provider's own `detach()` or `dispose()` closed it: `provider_detached` / `provider_disposed`);
 * - `insecure_socket`: the socket, its directory or the secret file is not owned by this user
 *   or is open to others; the provider refuses to connect (and the host to start);
 * - `unauthorized`: the host refused the client's secret (a spawn or attach that may start a host
 *   reads the secret again and retries until `connectTimeoutMs` first);
 * - `protocol_mismatch`: client and host speak different protocol versions (both are named), or
 *   the host, of an older ptykit, lacks the method asked for (`listExits`, `forgetExits`); the message says what
 *   to do (`stopPtyHost({ socketPath })`, whose sessions end with it);
 * - `host_already_running`: a second host was started for a socket path a live host holds;
 * - `pty_absent`: an attach named a PTY the host does not hold (a proven, host-reported absence);
 * - `pty_live_other_incarnation`: an attach named a PTY that is live on the host under another
 *   incarnation than the caller expected (not an absence: the caller must not start a second one);
 * - `pty_id_in_use`: a create named an id that is live on the host;
 * - `history_released`: a snapshot named a PTY that ended and whose screen the host no longer
 *   keeps — it was stopped without `keepHistory`, or its history was released to keep the ended
 *   sessions' histories within the host's `exitedHistoryBytes` (the oldest go first), or it ended
 *   under an earlier host, whose session journal kept its exit but no screen. The host still keeps
 *   how it ended (`listExits`); its final screen is gone, and no screen stands in for it;
 * - `host_error`: the host's node-pty provider refused or failed the call (its code is kept in
 *   `hostCode`), or the host could not rewrite its journal for a `forgetExits` (nothing forgotten);
 * - `provider_detached` / `provider_disposed`: the provider was used after `detach()` / `dispose()`
 *   (every call but `dispose`, `detach` and the subscriptions once the dispose resolved; a spawn or
 *   attach from its call on), or a request was still unanswered when either closed the connection
 *   (a spawn then says `processMayExist`);
 * - `invalid_option`: a malformed option or argument, naming it and the value; thrown by the app
 *   side as a `TypeError` that is also this error (`isPtyHostError` and `instanceof` hold), the
 *   class every provider's refusal has — and rebuilt so from a refusal the host sent back, with
 *   the `option` and `value` the wire carries;
 * - `invalid_spawn_option`: the host's node-pty provider refused a spawn option before starting
 *   anything (`option` names it, `value` is the refused value when it is a JSON scalar), or the
 *   spawn request was too large for one frame (`option` names its largest part, `value` is it —
 *   except an `env`, whose values may be secrets) and was never sent, or the app refused a spawn
 *   option that would not reach the host as given (a `metadata` JSON cannot serialize, an `env`
 *   that is no record of string values: a `Map`, an array) before connecting; the spawn pipeline reports it
 *   as `invalid_spawn_options`;
 * - `stop_timeout`: `stopPtyHost` signalled the host, and it had not exited by `timeoutMs` (its
 *   sessions may still be stopping);
 * - `unsupported_in_worker`: `startPtyHost` was called in a worker thread, where a host cannot run
 *   (its sessions would keep the worker from ever ending; see the pty host guide). The provider,
 *   which runs the host as a process of its own, works in a worker.
 */
export type PtyHostErrorCode =
  | 'host_unavailable'
  | 'transport_lost'
  | 'insecure_socket'
  | 'unauthorized'
  | 'protocol_mismatch'
  | 'host_already_running'
  | 'pty_absent'
  | 'pty_live_other_incarnation'
  | 'pty_id_in_use'
  | 'history_released'
  | 'host_error'
  | 'provider_detached'
  | 'provider_disposed'
  | 'invalid_option'
  | 'invalid_spawn_option'
  | 'stop_timeout'
  | 'unsupported_in_worker'

/** The typed error of `ptykit/pty-host`, on the client and in the host. */
export class PtyHostError extends Error {
  /** The stable code. */
  readonly code: PtyHostErrorCode
  /** The PTY id involved, when there is one. */
  readonly ptyId: string | undefined
  /** For `host_error`: the code of the error the host's provider raised, when it had one. */
  readonly hostCode: string | undefined
  /** For an option refusal: the refused option's name, when known. */
  readonly option: string | undefined
  /** For an option refusal: the refused value, when known. */
  readonly value: unknown
  /**
   * For a spawn: `true` when the host may have started the process though the app got no answer
   * (the request timed out, or the connection dropped with it in flight). The provider stops such
   * a process once it can (an orphan); a controller's spawn fails with outcome `unknown`.
   */
  readonly processMayExist: boolean

  /** Create the error. */
  constructor(
    code: PtyHostErrorCode,
    message: string,
    options: { cause?: unknown; ptyId?: string | undefined; hostCode?: string | undefined; option?: string; value?: unknown; processMayExist?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.ptyId = options.ptyId
    this.hostCode = options.hostCode
    this.option = options.option
    this.value = options.value
    this.processMayExist = options.processMayExist === true
    PTY_HOST_ERROR_BRAND.mark(this)
  }

  /**
   * `instanceof PtyHostError` holds for every error {@link isPtyHostError} recognizes: a refused
   * option or argument is a `TypeError` (as every provider's refusal is) carrying this class's fields, and
   * one of another copy of the package is branded as this class's.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return this === PtyHostError ? isPtyHostError(value) : Function.prototype[Symbol.hasInstance].call(this, value)
  }
}
const PTY_HOST_ERROR_BRAND = defineErrorBrand(PtyHostError, 'PtyHostError')

/**
 * The pty host's refusal of a malformed option or argument (`code: 'invalid_option'`): a
 * `TypeError` — a programmer error, the class every other provider's refusal has (the node-pty
 * provider's `NodePtyOptionError`, SSH's `SshOptionError`, the fake's and the controller's
 * `TypeError`) — that is also a {@link PtyHostError}: {@link isPtyHostError} and
 * `instanceof PtyHostError` hold, with the same fields. Why: a bad `resize` size, PTY id or
 * option bag was a `PtyHostError` (an `Error`, not a `TypeError`) from the pty host alone, so a
 * host that told a programmer error by its class missed it there.
 */
export class PtyHostOptionError extends TypeError {
  /** Always `invalid_option`. */
  readonly code: 'invalid_option' = 'invalid_option'
  /** Never set for a refused option. */
  readonly ptyId: string | undefined = undefined
  /** Never set for a refused option. */
  readonly hostCode: string | undefined = undefined
  /** The refused option's or argument's name. */
  readonly option: string | undefined
  /** The refused value, when known. */
  readonly value: unknown
  /** Always `false`: nothing was started. */
  readonly processMayExist = false

  /**
   * Create the error.
   *
   * @param message - the whole message, naming the option and showing the value
   * @param option - the refused option or argument
   * @param value - the refused value (left out when not known, or a secret)
   */
  constructor(message: string, option: string | undefined, value?: unknown) {
    super(message)
    this.option = option
    this.value = value
    PTY_HOST_ERROR_BRAND.mark(this as unknown as PtyHostError)
  }
}

/** True for a {@link PtyHostError}, also across duplicate copies of the package. */
export function isPtyHostError(value: unknown): value is PtyHostError {
  return PTY_HOST_ERROR_BRAND.is(value)
}

/**
 * A malformed option (or, with `kind` `'argument'`, a method's argument: a PTY id, a `resize`
 * size): a {@link PtyHostOptionError} naming the option and the value it got.
 */
export function invalidPtyHostOption(option: string, expected: string, value: unknown, kind: 'option' | 'argument' = 'option'): PtyHostError {
  return new PtyHostOptionError(`Expected the \`${option}\` ${kind} to be ${expected}, got ${describeValue(value)}`, option, value)
}

/**
 * Refuse an option that is given but not an integer of at least `min` (a safe integer: `NaN`,
 * `Infinity` and fractions are refused too).
 *
 * @throws PtyHostError `invalid_option` naming the option, what it expects and the value.
 */
export function assertIntegerOption(option: string, value: unknown, min: 0 | 1): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw invalidPtyHostOption(option, min === 0 ? 'a non-negative integer' : 'a positive integer', value)
  }
}

/**
 * Throw `invalid_option` naming the first option of `options` that is not one of `known` (with the
 * one it likely misspells). Why: an unknown option is ignored and its default used —
 * `stopPtyHost({ sockPath })` stopped the default socket's host, every app's sessions with it.
 */
export function assertKnownPtyHostOptions(options: object, known: readonly string[]): void {
  const unknown = findUnknownOption(options, known)
  if (unknown !== undefined) throw new PtyHostOptionError(unknownOptionMessage('', unknown), unknown.name)
}
