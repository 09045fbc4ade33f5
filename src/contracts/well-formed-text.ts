/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The index of the first lone surrogate in `text`, or `-1` when it is well-formed UTF-16. Internal:
 * a PTY and a program's arguments carry UTF-8, where a lone surrogate has no encoding — it would
 * silently arrive as U+FFFD — so text bound for them is refused instead of altered.
 */
export function loneSurrogateIndex(text: string): number {
  return text.search(LONE_SURROGATE)
}

/** `U+D83D`: how a refusal names the lone surrogate at `index` of `text`. */
export function describeCodeUnit(text: string, index: number): string {
  return `U+${text.charCodeAt(index).toString(16).toUpperCase()}`
}
