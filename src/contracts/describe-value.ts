/**
 * Internal (not exported from `ptykit/contracts`): how every ptykit module shows a bad value in a
 * `TypeError` message — "Expected the `cols` option to be a positive integer, got 0 (number)".
 * One rendering for the whole SDK, so messages read the same whichever module refused the value.
 */

/** The longest rendering of a value: enough to recognize it, short enough for one log line. */
export const DESCRIBED_VALUE_MAX_CHARS = 200

/** `value (type)`: strings as JSON, objects and arrays as (truncated) JSON, functions by kind. */
export function describeValue(value: unknown): string {
  let shown: string
  if (typeof value === 'string') shown = JSON.stringify(value)
  else if (typeof value === 'function') shown = '[function]'
  else if (typeof value === 'object' && value !== null) {
    try {
      shown = JSON.stringify(value) ?? Object.prototype.toString.call(value)
    } catch {
      // Why: a circular or exotic object must still produce a message, never a second error.
      shown = Object.prototype.toString.call(value)
    }
  } else shown = String(value)
  if (shown.length > DESCRIBED_VALUE_MAX_CHARS) shown = `${shown.slice(0, DESCRIBED_VALUE_MAX_CHARS)}…`
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  return `${shown} (${type})`
}
