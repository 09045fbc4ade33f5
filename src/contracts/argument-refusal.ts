/**
 * Internal (not exported from `ptykit/contracts`): the one shape of a refused argument or option,
 * thrown by every check ptykit shares (a provider method's arguments, a wait budget, a listener, an
 * options bag) and so by every provider that reaches one: a `TypeError` (a programmer error) with
 * `code: 'invalid_option'`, `option` (the argument or option refused) and `value`, whose message
 * names the option and shows the value.
 *
 * Why one shape: the shared checks threw a plain `TypeError` without `code` or `option` — a
 * `listProcesses({ deadlineMs: 'soon' })` or an `onData(5)` reached them through every provider —
 * where each provider's own refusals carried both, so a host matching on `code` missed them.
 */

/** A refused argument or option: a `TypeError` carrying `code`, `option` and `value`. */
export type ArgumentRefusal = TypeError & { code: 'invalid_option'; option: string; value: unknown }

/**
 * The refusal of `value` for `option`, with the given message (which names the option and shows
 * the value: the caller's words).
 *
 * @param message - the whole message: "Expected the `timeoutMs` option to be …, got -1 (number)".
 * @param option - the argument or option refused (`ptyId`, `timeoutMs`, `options`, `listener`).
 * @param value - the refused value, as given.
 */
export function argumentRefusal(message: string, option: string, value: unknown): ArgumentRefusal {
  return Object.assign(new TypeError(message), { code: 'invalid_option' as const, option, value })
}
