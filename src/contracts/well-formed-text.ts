/** `String.prototype.isWellFormed` (ES2024, in every Node this package supports; not in the ES2023 lib it compiles against). */
type MaybeWellFormed = { isWellFormed(): boolean }

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The index of the first lone surrogate in `text`, or `-1` when it is well-formed UTF-16. Internal:
 * a PTY and a program's arguments carry UTF-8, where a lone surrogate has no encoding — it would
 * silently arrive as U+FFFD — so text bound for them is refused instead of altered.
 */
export function loneSurrogateIndex(text: string): number {
  // The native check first, the regular expression only to find a refusal's index: it answers the
  // common case without the expression's lookarounds (warm, either costs well under a µs).
  if ((text as unknown as MaybeWellFormed).isWellFormed()) return -1
  return text.search(LONE_SURROGATE)
}

/** `U+D83D`: how a refusal names the lone surrogate at `index` of `text`. */
export function describeCodeUnit(text: string, index: number): string {
  return `U+${text.charCodeAt(index).toString(16).toUpperCase()}`
}
