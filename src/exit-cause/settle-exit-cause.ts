import { OPERATOR_CLOSE_EXIT_CAUSE, type TerminalExitCause } from './terminal-exit-cause.js'

/** What the settler knows about the incarnation whose exit is being settled. */
export type ExitSettlementContext = {
  /** A stop was requested through the controller for this very incarnation (not an earlier one). */
  stopRequested: boolean
}

/**
 * The operator-close rule: combine an observed cause with the controller's own record of a stop.
 *
 * - No stop requested: the observed cause stands unchanged.
 * - A stop was requested for this incarnation: the exit that follows is the stop landing, so any
 *   observed cause — `signaled` (a kill is a signal), `exited`, `host_status_unavailable`,
 *   `cause_unreported` — settles to `operator_close`.
 * - Except `unknown/stop_unverified`: an unconfirmed stop is not a completed close, so it stays.
 *
 * Pure and idempotent: settling a settled cause changes nothing.
 *
 * @throws TypeError when `context` is not an object whose `stopRequested` is a boolean (a bare
 *   `true` in its place would otherwise read as "no stop", and an operator close as a signal).
 *
 * @example
 * ```ts
 * settleExitCause({ kind: 'signaled', signal: 1 }, { stopRequested: true }) // operator_close
 * ```
 */
export function settleExitCause(
  observed: TerminalExitCause,
  context: ExitSettlementContext,
): TerminalExitCause {
  const isObject = typeof context === 'object' && context !== null
  const stopRequested: unknown = isObject ? context.stopRequested : undefined
  if (typeof stopRequested !== 'boolean') {
    throw new TypeError(
      `Expected the settlement context to be { stopRequested: boolean }, got ${isObject ? `{ stopRequested: ${typeof stopRequested} }` : typeof context}`,
    )
  }
  if (!stopRequested) return observed
  if (observed.kind === 'unknown' && observed.reason === 'stop_unverified') return observed
  return OPERATOR_CLOSE_EXIT_CAUSE
}
