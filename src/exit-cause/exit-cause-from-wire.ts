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
 * {@link resolveUnreportedExitCause}, which refuses to read a bare `0` as a clean exit. One
 * refinement keeps that promise for senders newer than this receiver: a cause of kind `unknown`
 * whose reason is not recognized stays `unknown/cause_unreported`, whatever the code says.
 *
 * @example
 * ```ts
 * exitCauseFromWire({ code: 0 })                                       // unknown/cause_unreported
 * exitCauseFromWire({ code: 0, cause: { kind: 'signaled', signal: 9 } }) // signaled(9)
 * ```
 */
export function exitCauseFromWire(exit: WireExit): TerminalExitCause {
  if (typeof exit !== 'object' || exit === null) {
    throw new TypeError(`Expected the wire exit to be an object ({ code, cause? }), got ${exit === null ? 'null' : typeof exit}`)
  }
  if (isTerminalExitCause(exit.cause)) return exit.cause
  // Why: a newer sender may say `unknown` with a reason this receiver has never heard of. Reading
  // its code instead would turn "the sender could not tell" into `exited(n)` — narrower than it
  // left. It stays unknown, with the one reason this side can vouch for.
  if (isUnrecognizedUnknown(exit.cause)) return { kind: 'unknown', reason: 'cause_unreported' }
  return resolveUnreportedExitCause(exit.code)
}

function isUnrecognizedUnknown(cause: unknown): boolean {
  return typeof cause === 'object' && cause !== null && (cause as { kind?: unknown }).kind === 'unknown'
}
