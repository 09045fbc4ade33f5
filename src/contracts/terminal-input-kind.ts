/**
 * Why bytes are written to a PTY. Every write names one, so hosts can tell a person's input from
 * the machine's own.
 *
 * - `driving`: a person, client or driver acting on the run;
 * - `launch`: startup commands and prompts written by the host (a spawn's `command` is one);
 * - `query-reply`: the terminal's automatic answer to a query from the program (cursor position,
 *   device attributes).
 */
export type TerminalInputKind = 'driving' | 'launch' | 'query-reply'

const INPUT_KINDS: ReadonlySet<string> = new Set<TerminalInputKind>(['driving', 'launch', 'query-reply'])

/** True for one of the three {@link TerminalInputKind} values. */
export function isTerminalInputKind(value: unknown): value is TerminalInputKind {
  return typeof value === 'string' && INPUT_KINDS.has(value)
}
