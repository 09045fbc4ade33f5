/**
 * `ptykit/exit-cause`: the exit-cause algebra. A tagged union of why a terminal's process is gone,
 * and pure functions that build it only from evidence. Imports nothing.
 *
 * @packageDocumentation
 */
export {
  OPERATOR_CLOSE_EXIT_CAUSE,
  UNVERIFIED_PROCESS_EXIT_CODE,
  describeTerminalExitCause,
  isDeliberateTerminalExit,
  isProvenExitCause,
  isProvenProcessExit,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  type ProcessExitObservation,
  type TerminalExitCause,
  type TerminalExitUnknownReason,
} from './terminal-exit-cause.js'
export { settleExitCause, type ExitSettlementContext } from './settle-exit-cause.js'
export { exitCauseFromWire, type WireExit } from './exit-cause-from-wire.js'
export { isTerminalExitCause } from './is-terminal-exit-cause.js'
