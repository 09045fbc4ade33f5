import type { PtyExitEvent } from '../contracts/index.js'
import { exitCauseFromWire, isProvenProcessExit, type TerminalExitCause } from '../exit-cause/index.js'

/**
 * The cause a provider's exit event is evidence for, before the operator-close rule.
 *
 * A valid `cause` is kept; a missing or malformed one is resolved from the code with
 * `exitCauseFromWire`. When the spawn said a wrapper owns the exit status
 * (`hostReportsChildExitStatus === false`), a cause derived from a code or a signal describes the
 * wrapper, so it becomes `unknown/host_status_unavailable`; only an `unknown` the provider itself
 * reported (such as `stop_unverified`) may stand.
 */
export function observedExitCause(event: PtyExitEvent, hostReportsChildExitStatus: boolean): TerminalExitCause {
  const observed = exitCauseFromWire({ code: event.code, cause: event.cause })
  if (hostReportsChildExitStatus) return observed
  return observed.kind === 'unknown' && observed.reason !== 'cause_unreported'
    ? observed
    : { kind: 'unknown', reason: 'host_status_unavailable' }
}

/**
 * Whether the operator-close rule applies to a provider's exit `event`: a stop of its incarnation
 * was requested while the process lived — this controller's own (`ownStopRequested`, its record's
 * mark) or one the provider attests (`stopRequestedBeforeDeath`: an earlier run of the app, or
 * another app on a shared host, asked for it) — and the provider did not know the process dead
 * before the stop request (`diedBeforeStopRequest`, which wins: the process ended on its own).
 * Without an event (a synthetic exit of the controller's own) only its own mark counts.
 */
export function stopRequestedBeforeExit(ownStopRequested: boolean, event: PtyExitEvent | undefined): boolean {
  if (event?.diedBeforeStopRequest === true) return false
  return ownStopRequested || event?.stopRequestedBeforeDeath === true
}

/** True for `unknown/stop_unverified`: the death was not confirmed, so the process may be alive. */
export function isUnverifiedCause(cause: TerminalExitCause): boolean {
  return cause.kind === 'unknown' && cause.reason === 'stop_unverified'
}

/**
 * Combine several providers' three-valued answers about one id: any `true` wins; all `false`
 * (and at least one answer) is `false`; anything else is `null` (unknown).
 */
export function combineAnswers(answers: readonly (boolean | null)[]): boolean | null {
  if (answers.includes(true)) return true
  if (answers.length > 0 && answers.every((answer) => answer === false)) return false
  return null
}

/**
 * Whether a provider's exit event certifies the death: any exit the provider itself observed
 * (`observed` absent or `'provider'`), whatever its code — as the seed origin's
 * `providerExitObserved` does; a `'synthetic'` one only with a code that proves an exit
 * (`isProvenProcessExit`: an integer ≥ 0, the origin's `exitCode >= 0`) and a cause that is not
 * `stop_unverified`. A synthetic exit with a negative or malformed code (`NaN`, `1.5`) proves
 * nothing: the process may still run.
 */
export function certifiesDeath(event: PtyExitEvent, hostReportsChildExitStatus: boolean): boolean {
  if (event.observed !== 'synthetic') return true
  return isProvenProcessExit(event.code) && !isUnverifiedCause(observedExitCause(event, hostReportsChildExitStatus))
}
