import { describeValue } from './describe-value.js'

/**
 * The largest `cols` or `rows` anywhere in ptykit (spawn options, `resize`, every provider). The
 * kernel stores each in an `unsigned short` (`struct winsize`), so a larger value would silently
 * wrap to a tiny or zero size.
 */
export const MAX_PTY_DIMENSION = 65_535

/**
 * The one size validator: throw a `TypeError` naming the option or argument and the value unless
 * `value` is an integer from 1 to {@link MAX_PTY_DIMENSION}.
 */
export function assertPtyDimension(
  name: 'cols' | 'rows',
  value: unknown,
  kind: 'option' | 'argument' = 'option',
): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PTY_DIMENSION) {
    throw new TypeError(
      `Expected the \`${name}\` ${kind} to be an integer from 1 to ${MAX_PTY_DIMENSION}, got ${describeValue(value)}`,
    )
  }
}
