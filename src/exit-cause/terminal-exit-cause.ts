/**
 * The exit-cause algebra: why a terminal's process is gone, built only from evidence.
 *
 * A single exit number is not evidence. Stop paths invent one, node-pty reports `0` next to a
 * signal for every signalled death, and a wrapper process (macOS's `login(1)`, a container shim)
 * reports its own status rather than the child's. A clean finish, an out-of-memory kill and a
 * deliberate close can therefore all arrive as "code 0". This module never guesses: a cause is
 * derived from what some party actually observed, and missing evidence is spelled `unknown`.
 *
 * @packageDocumentation
 */

/**
 * Why a terminal's process is gone.
 *
 * A tagged union on `kind`. Each arm records only what someone could vouch for:
 *
 * - `operator_close`: teardown was requested through the controller (a close, a stop, a scope
 *   removal). Not a failure.
 * - `signaled`: the host reported a signal; the process did not choose to stop.
 * - `exited`: the process ended on its own and the host vouched for the status.
 * - `unknown`: nothing here is provable, for the {@link TerminalExitUnknownReason | reason} given.
 *   Never narrow it by guessing.
 *
 * Values are plain JSON data, so a cause can cross a process or network boundary unchanged.
 */
export type TerminalExitCause =
  /** Teardown was requested through the controller — a close, a stop, a scope removal. Not a failure. */
  | {
      /** The discriminant. */
      kind: 'operator_close'
    }
  /** The host reported a signal. The process did not choose to stop. */
  | {
      /** The discriminant. */
      kind: 'signaled'
      /** The terminating signal's number (a positive integer), e.g. 9 for SIGKILL. */
      signal: number
    }
  /** The process ended on its own and the host vouched for the status. */
  | {
      /** The discriminant. */
      kind: 'exited'
      /** The exit status (a non-negative integer); `0` only when the host vouched for it. */
      exitCode: number
    }
  /** Nothing here is provable. Never narrow this by guessing. */
  | {
      /** The discriminant. */
      kind: 'unknown'
      /** Why nothing is provable. */
      reason: TerminalExitUnknownReason
    }

/**
 * Why an exit cause is `unknown`.
 *
 * - `stop_unverified`: a stop was issued and no exit was ever observed, so the process may still
 *   be alive.
 * - `host_status_unavailable`: the host cannot report its child's status at all (a wrapper owns
 *   the reported status; see `hostReportsChildExitStatus` on {@link resolveProcessExitCause}).
 * - `cause_unreported`: the exit came from a source that forwards a code but no cause — a relay,
 *   or a sender older than causes. Its `0` may be a clean finish or a signal; nothing can tell,
 *   so nothing claims to. Malformed evidence (a non-integer code) lands here too.
 */
export type TerminalExitUnknownReason =
  /** A stop was issued and no exit was ever observed, so the process may still be alive. */
  | 'stop_unverified'
  /** The host cannot report its child's status at all (a wrapper owns the reported status). */
  | 'host_status_unavailable'
  /**
   * The exit arrived from a source that reports a code but no cause — a relay, or a sender older
   * than causes. Its `0` may be a clean finish or a signal; nothing here can tell, so nothing here
   * claims to.
   */
  | 'cause_unreported'

/** The one `operator_close` value, frozen so that no reader can mutate the shared instance. */
export const OPERATOR_CLOSE_EXIT_CAUSE: TerminalExitCause = Object.freeze({ kind: 'operator_close' })

/**
 * The exit code every surface uses for "contact was lost before the host could vouch for this
 * process". {@link resolveProcessExitCause} reads it as `unknown/stop_unverified` and
 * {@link isProvenProcessExit} rejects it.
 *
 * A reader that is handed an *optional* status must default to this value, never to `0`:
 * `exitCode ?? 0` mints a clean finish out of an absence of evidence.
 */
export const UNVERIFIED_PROCESS_EXIT_CODE = -1

/**
 * What a host observed when a process ended: the input of {@link resolveProcessExitCause}.
 */
export type ProcessExitObservation = {
  /** The status the host reported; negative values are stop sentinels, not statuses. */
  exitCode: number
  /** The terminating signal, if any. Only a positive integer counts as a signal. */
  signal?: number | null | undefined
  /**
   * `false` when the code and signal describe a wrapper process rather than the child (for
   * example macOS `login(1)`); they are then dropped. Only an exact `false` means "does not
   * report" — `undefined` and `true` behave the same.
   */
  hostReportsChildExitStatus?: boolean | undefined
}

/**
 * True for a number that can be an exit status or sentinel: a safe integer — never NaN, ±Infinity,
 * a fraction, or an integer too large to survive a round trip through JSON and back unchanged.
 */
function isWellFormedExitCode(exitCode: unknown): exitCode is number {
  return typeof exitCode === 'number' && Number.isSafeInteger(exitCode)
}

/** True for evidence of a signal: a positive safe integer. `null`, `0`, negatives and fractions are not. */
function isSignalEvidence(signal: unknown): signal is number {
  return typeof signal === 'number' && Number.isSafeInteger(signal) && signal > 0
}

/**
 * Build a cause from what the host itself observed. Use it at the source — the provider that saw
 * the process end — where the signal and the host's trustworthiness are both still in hand.
 *
 * In order:
 * 1. `hostReportsChildExitStatus === false` ⇒ `unknown/host_status_unavailable` (the numbers
 *    describe a wrapper, so they are dropped rather than reported);
 * 2. a positive integer `signal` ⇒ `signaled(signal)`, whatever the code (node-pty pairs `0` with
 *    every signalled death);
 * 3. a malformed code (NaN, ±Infinity, a fraction) ⇒ `unknown/cause_unreported`: malformed
 *    evidence is not evidence;
 * 4. a negative code ⇒ `unknown/stop_unverified`: stop paths pass a negative code to mean "we
 *    asked it to stop and never saw it die";
 * 5. otherwise `exited(exitCode)`, including `0`.
 *
 * Total over observations and pure; never returns `operator_close` (only the controller knows a
 * stop was asked for).
 *
 * @throws TypeError when `observation` is not an object (a bare code is
 * `resolveUnreportedExitCause`'s), naming what it got.
 *
 * @example
 * ```ts
 * resolveProcessExitCause({ exitCode: 0, signal: 9 }) // { kind: 'signaled', signal: 9 }
 * resolveProcessExitCause({ exitCode: 0 })            // { kind: 'exited', exitCode: 0 }
 * ```
 */
export function resolveProcessExitCause(observation: ProcessExitObservation): TerminalExitCause {
  // Why refuse rather than resolve: a JavaScript caller passing a bare code (or nothing) would get a
  // raw "Cannot read properties of undefined" from here; a number is `resolveUnreportedExitCause`'s.
  const given: unknown = observation
  if (typeof given !== 'object' || given === null) {
    throw new TypeError(`Expected the exit observation to be an object ({ exitCode, signal?, hostReportsChildExitStatus? }), got ${showValue(given)}`)
  }
  if (observation.hostReportsChildExitStatus === false) {
    return { kind: 'unknown', reason: 'host_status_unavailable' }
  }
  if (isSignalEvidence(observation.signal)) {
    return { kind: 'signaled', signal: observation.signal }
  }
  if (!isWellFormedExitCode(observation.exitCode)) {
    return { kind: 'unknown', reason: 'cause_unreported' }
  }
  // Why: a negative code is the stop paths' "we asked it to stop and never saw it die" — an
  // absence of evidence, not an exit status.
  if (observation.exitCode < 0) {
    return { kind: 'unknown', reason: 'stop_unverified' }
  }
  // Why `+ 0`: it turns -0 into 0, so the cause survives a JSON round trip unchanged.
  return { kind: 'exited', exitCode: observation.exitCode + 0 }
}

/**
 * The cause for an exit delivered without one — a relay or an older sender that forwards a code
 * and nothing else.
 *
 * Zero is the ambiguous code and the only one refused: node-pty pairs it with every signalled
 * death, and a wrapper returns it for any outcome at all. A nonzero status is never fabricated
 * that way, so it is still reported as `exited`. A negative code is a stop sentinel
 * (`stop_unverified`); a malformed one is `cause_unreported`.
 *
 * @example
 * ```ts
 * resolveUnreportedExitCause(0)   // { kind: 'unknown', reason: 'cause_unreported' }
 * resolveUnreportedExitCause(137) // { kind: 'exited', exitCode: 137 }
 * ```
 */
export function resolveUnreportedExitCause(exitCode: number): TerminalExitCause {
  if (!isWellFormedExitCode(exitCode)) {
    return { kind: 'unknown', reason: 'cause_unreported' }
  }
  if (exitCode < 0) {
    return { kind: 'unknown', reason: 'stop_unverified' }
  }
  return exitCode === 0
    ? { kind: 'unknown', reason: 'cause_unreported' }
    : { kind: 'exited', exitCode }
}

/**
 * One line an operator or a coordinating agent can read without decoding a number.
 *
 * The sentences are a stored contract (hosts persist them as a "last failure"); they are kept
 * word for word from the origin app. Each of the six leaves gets its own sentence.
 *
 * @throws TypeError when `cause` is not a cause — say the whole exit event instead of its
 * `cause` — naming what it got (never a sentence about `undefined`).
 */
export function describeTerminalExitCause(cause: TerminalExitCause): string {
  const value: unknown = cause
  const sentence = sentenceOrUndefined(value)
  if (sentence === undefined) throw new TypeError(notACauseMessage(value))
  return sentence
}

/**
 * `value` as a cause, or a `TypeError` naming it. Read through `unknown`: a JavaScript caller (or
 * an `any`) may hand over anything, say the whole exit event instead of its `cause`; that is
 * refused by name rather than described as `undefined` — or, in a guard, answered as if it were a
 * cause (`isProvenExitCause(event)` was `true`: the event has no `kind`, so it is not `'unknown'`).
 */
function requireCause(cause: TerminalExitCause): TerminalExitCause {
  describeTerminalExitCause(cause)
  return cause
}

/** The sentence of a cause; `undefined` when `value` is not one. */
function sentenceOrUndefined(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { kind, signal, exitCode, reason } = value as Record<string, unknown>
  if (kind === 'operator_close') return 'Terminal closed by operator request'
  // Only a number a cause may hold: "killed by signal -1" or "exited with code NaN" would state
  // what no evidence says (`isTerminalExitCause`'s rules; extra fields are not looked at here).
  if (kind === 'signaled' && isSignalEvidence(signal)) return `Agent process killed by signal ${signal}`
  if (kind === 'exited' && isWellFormedExitCode(exitCode) && exitCode >= 0) return `Agent process exited with code ${exitCode}`
  if (kind === 'unknown') {
    switch (reason) {
      case 'stop_unverified':
        return 'Agent process stop was requested but never confirmed'
      case 'host_status_unavailable':
        return 'Agent process ended; this host cannot report why'
      case 'cause_unreported':
        return 'Agent process ended; the reporting host did not say why'
    }
  }
  return undefined
}

/** Why `value` is not a {@link TerminalExitCause}, naming it (and the likely mix-up: an exit event). */
function notACauseMessage(value: unknown): string {
  const shown = showValue(value)
  const hint =
    hasCause(value)
      ? ' — it has a `cause`: pass that (an exit event carries its cause as `event.cause`)'
      : ''
  return (
    "Expected a TerminalExitCause ({ kind: 'operator_close' }, { kind: 'signaled', signal }, { kind: 'exited', exitCode } " +
    `or { kind: 'unknown', reason } with a known reason), got ${shown}${hint}`
  )
}

/**
 * Whether `value` carries a `cause` to pass instead: not one valued `undefined` (a provider's exit
 * event, whose cause is then absent: the provider could not tell). Total: a getter that throws is no cause.
 */
function hasCause(value: unknown): boolean {
  try {
    return typeof value === 'object' && value !== null && (value as { cause?: unknown }).cause !== undefined
  } catch {
    return false
  }
}

/**
 * `value` for an error message (this module imports nothing, so not `describeValue`). Total: a
 * value whose rendering throws (a BigInt inside an object, a throwing `toJSON`, a revoked proxy)
 * is shown by its tag.
 */
function showValue(value: unknown): string {
  let shown: string
  try {
    shown = typeof value === 'object' && value !== null ? (JSON.stringify(value) ?? String(value)) : typeof value === 'string' ? JSON.stringify(value) : String(value)
  } catch {
    try {
      shown = Object.prototype.toString.call(value)
    } catch {
      shown = `[unprintable ${typeof value}]`
    }
  }
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown
}

/**
 * True when a run that ended this way was torn down deliberately rather than lost: only `operator_close`.
 *
 * @throws TypeError when `cause` is not a cause (as {@link describeTerminalExitCause}).
 */
export function isDeliberateTerminalExit(cause: TerminalExitCause): boolean {
  return requireCause(cause).kind === 'operator_close'
}

/**
 * Whether an exit code is positive evidence that the process ended.
 *
 * Negative codes are synthetic stop sentinels: the host lost contact before it could vouch for
 * the child, so cleanup must take the "unverifiable" path rather than treat the terminal as
 * exited. Malformed codes prove nothing either.
 *
 * This asks *whether* the process ended; the cause resolvers ask *why*. They deliberately
 * disagree about `0`:
 *
 * - `resolveUnreportedExitCause(0)` is `unknown`: a bare zero cannot tell a clean finish from a
 *   signal — an unknowable **reason**;
 * - `isProvenProcessExit(0)` is `true`: a host forwards a non-negative code only after it saw the
 *   process end — a known **fact of death**, whatever the reason.
 *
 * Do not route `hostReportsChildExitStatus` or a signal through here to "narrow" the zero: a
 * wrapper such as `login(1)` forks the shell and waits for it, so its own exit *is* evidence that
 * the shell died. Treating those exits as unproven would strand every such terminal that a user
 * closed with `exit`.
 */
export function isProvenProcessExit(exitCode: number): boolean {
  return resolveProcessExitCause({ exitCode }).kind !== 'unknown'
}

/**
 * True when the cause is proven — `operator_close`, `signaled` or `exited` — rather than `unknown`.
 *
 * @throws TypeError when `cause` is not a cause (as {@link describeTerminalExitCause}): an exit
 * event passed whole would otherwise count as proven.
 */
export function isProvenExitCause(cause: TerminalExitCause): boolean {
  return requireCause(cause).kind !== 'unknown'
}
