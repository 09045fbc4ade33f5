import { isTerminalExitCause } from './is-terminal-exit-cause.js'
import { resolveUnreportedExitCause, type TerminalExitCause } from './terminal-exit-cause.js'

/** An exit as it arrives over a process or network boundary: a code, and maybe a cause. */
export type WireExit = {
  /** The exit code the sender forwarded. Untrusted: a malformed value is not evidence. */
  code: number
  /** The sender's cause, if it sends one. Untrusted: validated with {@link isTerminalExitCause}. */
  cause?: unknown
}

/**
 * The cause of an exit that crossed a boundary.
 *
 * A present, valid cause is kept exactly as sent (so an `unknown` never becomes narrower on the
 * way). An absent or malformed cause is not evidence: the code alone is resolved with
 * {@link resolveUnreportedExitCause}, which refuses to read a bare `0` as a clean exit.
 *
 * @example
 * ```ts
 * exitCauseFromWire({ code: 0 })                                       // unknown/cause_unreported
 * exitCauseFromWire({ code: 0, cause: { kind: 'signaled', signal: 9 } }) // signaled(9)
 * ```
 */
export function exitCauseFromWire(exit: WireExit): TerminalExitCause {
  if (isTerminalExitCause(exit.cause)) return exit.cause
  return resolveUnreportedExitCause(exit.code)
}
