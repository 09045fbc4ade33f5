import { argumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'

/**
 * The largest `cols` or `rows` anywhere in ptykit (spawn options, `resize`, every provider). The
 * kernel stores each in an `unsigned short` (`struct winsize`), so a larger value would silently
 * wrap to a tiny or zero size.
 */
export const MAX_PTY_DIMENSION = 65_535

/**
 * Whether `value` is a size a PTY can have: an integer from 1 to {@link MAX_PTY_DIMENSION}.
 * Internal (not exported from `ptykit/contracts`): for checks that report in their own words (a
 * provider's reply, a fake's script); {@link assertPtyDimension} throws the standard refusal.
 */
export function isPtyDimension(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_PTY_DIMENSION
}

/**
 * The one size validator: throw a `TypeError` naming the option or argument and the value unless
 * `value` is an integer from 1 to {@link MAX_PTY_DIMENSION}.
 */
export function assertPtyDimension(
  name: 'cols' | 'rows',
  value: unknown,
  kind: 'option' | 'argument' = 'option',
): asserts value is number {
  if (!isPtyDimension(value)) {
    throw argumentRefusal(`Expected the \`${name}\` ${kind} to be an integer from 1 to ${MAX_PTY_DIMENSION}, got ${describeValue(value)}`, name, value)
  }
}

/**
 * Internal (not exported from `ptykit/contracts`): the one refusal of a bad `resize` size, by the
 * controller, the terminal handle and the fake: unless `value` is an integer from 1 to
 * {@link MAX_PTY_DIMENSION}, throw a `TypeError` naming the argument and the value, with the code
 * every provider's resize refusal carries (`PtyProvider.resize`): `code: 'invalid_option'`,
 * `option` (`'cols'` or `'rows'`) and `value`. Why a code: a host matching on it saw none from the
 * controller and the fake, `invalid_spawn_option` (a spawn's code) from node-pty and SSH, and
 * `invalid_option` from the pty host.
 */
export function assertResizeDimension(name: 'cols' | 'rows', value: unknown): asserts value is number {
  if (!isPtyDimension(value)) {
    throw argumentRefusal(`Expected the \`${name}\` argument to be an integer from 1 to ${MAX_PTY_DIMENSION}, got ${describeValue(value)}`, name, value)
  }
}
