// How a terminal ended, in words for its status line: what ended (the tab's title: the shell, or
// the command) and why, read from the exit cause's tag. Not `describeTerminalExitCause`: its
// sentences are the seed's, written for an agent ("Agent process exited with code 3"), and a
// shell in a browser tab is not an agent.
import type { TerminalExitCause } from 'ptykit/exit-cause'

/** Why the process ended, when the cause cannot tell (`unknown`), by its reason. */
const UNKNOWN_REASON_WORDS: Record<string, string> = {
  stop_unverified: 'a stop was requested but never confirmed',
  host_status_unavailable: 'this host cannot report why',
  cause_unreported: 'the reporting host did not say why',
}

/**
 * Why a terminal ended, from its cause: `exited with code 3`, `killed by signal 9`, `closed` (a
 * stop was asked for: the page's close, the server's), `ended (cause unknown: …)`.
 */
export function describeTerminalEnd(cause: TerminalExitCause): string {
  switch (cause.kind) {
    case 'exited':
      return `exited with code ${cause.exitCode}`
    case 'signaled':
      return `killed by signal ${cause.signal}`
    case 'operator_close':
      return 'closed'
    case 'unknown':
      // A reason this example does not know (a newer ptykit's) is shown as it is named.
      return `ended (cause unknown: ${UNKNOWN_REASON_WORDS[cause.reason] ?? cause.reason})`
  }
}

/** The status line of a terminal titled `title` that ended with `cause`: `bash exited with code 3`. */
export function describeTerminalExit(title: string, cause: TerminalExitCause): string {
  return `${title} ${describeTerminalEnd(cause)}`
}
