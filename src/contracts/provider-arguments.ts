/**
 * Internal (not exported from `ptykit/contracts`): the checks of a provider method's arguments
 * that every bundled provider (node-pty, the pty host, the fake) makes the same way, so a host app
 * or a test suite calling a provider directly gets one typed answer whichever provider it holds:
 * a `TypeError` with `code: 'invalid_option'`, `option` (the argument or option refused) and
 * `value`, whose message names the option and shows the value.
 *
 * Why: the pty host answered `null` ("unknown") to a liveness probe of the id `5`, where node-pty
 * and the fake answered `false` ("proven absent") — neither an answer about a PTY —, and a bad
 * acknowledgement count, an unknown listing option or a `getCwd` `of` nobody reads was ignored.
 */
import { argumentRefusal, type ArgumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'
import { findUnknownOption, isOptionsObject, optionNamesOf } from './known-options.js'
import type { PtyCwdOptions } from './cwd-options.js'
import { isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH } from './incarnation.js'
import type { PtyListProcessesOptions, PtyShutdownOptions } from './provider.js'

/** A refused provider argument: a `TypeError` carrying `code`, `option` and `value`. */
export type ProviderArgumentError = ArgumentRefusal

/**
 * The refusal of `value` for the argument or option `option`: "Expected the `ptyId` argument to
 * be a non-empty string, got 5 (number)".
 */
export function providerArgumentError(option: string, expected: string, value: unknown, kind: 'argument' | 'option' = 'argument'): ProviderArgumentError {
  return argumentRefusal(`Expected the \`${option}\` ${kind} to be ${expected}, got ${describeValue(value)}`, option, value)
}

/** Whether `id` can be a PTY id: a non-empty string. */
export function isPtyIdArgument(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0
}

/** Refuse a PTY id that is no non-empty string, naming `ptyId`. */
export function assertPtyIdArgument(id: unknown): asserts id is string {
  if (!isPtyIdArgument(id)) throw providerArgumentError('ptyId', 'a non-empty string', id)
}

/**
 * What an acknowledgement count must be, as every refusal of one words it — the controller's and
 * its terminal handle's (`assertCharCount`) and the providers' ({@link assertAcknowledgedChars}):
 * one wording, whichever layer refuses (they said "a non-negative integer (a count of chars)" and
 * "a non-negative integer").
 */
export const CHAR_COUNT_EXPECTED = 'a non-negative integer (a count of chars)'

/**
 * Refuse an `acknowledgeData` count that is not a non-negative safe integer (`-1`, `NaN`, `1.5`,
 * `'5'`), naming `chars`. `0` is well formed (nothing more processed).
 */
export function assertAcknowledgedChars(chars: unknown): asserts chars is number {
  if (typeof chars !== 'number' || !Number.isSafeInteger(chars) || chars < 0) throw providerArgumentError('chars', CHAR_COUNT_EXPECTED, chars)
}

/** The options of a process listing. */
const LIST_OPTION_NAMES = optionNamesOf<PtyListProcessesOptions>()('deadlineMs', 'timeoutMs', 'membershipOnly')

/**
 * Refuse a listing's options that are not an object (naming `options`), an option nobody reads
 * (naming it, as the controller refuses it) and a `membershipOnly` that is not a boolean. The
 * wait budget (`deadlineMs`, `timeoutMs`) is each provider's `resolveWaitDeadline`'s to check.
 */
export function assertListProcessesOptions(options: unknown): asserts options is PtyListProcessesOptions | undefined {
  if (options === undefined) return
  if (!isOptionsObject(options)) throw providerArgumentError('options', 'an object', options)
  assertNoUnknownOption(options, LIST_OPTION_NAMES)
  const { membershipOnly } = options as { membershipOnly?: unknown }
  if (membershipOnly !== undefined && typeof membershipOnly !== 'boolean') throw providerArgumentError('membershipOnly', 'a boolean', membershipOnly, 'option')
}

/** The options of a provider's `shutdown`. */
const SHUTDOWN_OPTION_NAMES = optionNamesOf<PtyShutdownOptions>()('deadlineMs', 'timeoutMs', 'immediate', 'expectedIncarnationId', 'keepHistory')

/**
 * Refuse a shutdown's options that are not an object (naming `options`), an option nobody reads
 * (naming it and the option it likely misspells), an `immediate` or `keepHistory` that is not a
 * boolean, and an `expectedIncarnationId` that is no incarnation id. The wait budget (`deadlineMs`,
 * `timeoutMs`) is each provider's `resolveWaitDeadline`'s to check.
 *
 * Why every option: a misspelt fence (`expectedIncarnationID`, `incarnationId`) was ignored, and the
 * stop took whatever process held the id — a replacement the fence was there to leave alone —; an
 * `immediate: 'yes'` was read as `false`, a `keepHistory: 'yes'` dropped the history asked to be
 * kept. (The pty host and SSH providers checked the types, each its own way; none the names.)
 */
export function assertShutdownOptions(options: unknown): asserts options is PtyShutdownOptions | undefined {
  if (options === undefined) return
  if (!isOptionsObject(options)) throw providerArgumentError('options', 'an object', options)
  assertNoUnknownOption(options, SHUTDOWN_OPTION_NAMES)
  const { immediate, keepHistory, expectedIncarnationId } = options as Record<string, unknown>
  for (const [name, value] of [['immediate', immediate], ['keepHistory', keepHistory]] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw providerArgumentError(name, 'a boolean', value, 'option')
  }
  if (expectedIncarnationId !== undefined && !isPtyIncarnationId(expectedIncarnationId)) {
    throw providerArgumentError('expectedIncarnationId', `an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters)`, expectedIncarnationId, 'option')
  }
}

/** The options of `getCwd`. */
const CWD_OPTION_NAMES = optionNamesOf<PtyCwdOptions>()('of')

/** Refuse `getCwd` options that are not an object, an option nobody reads, and an `of` that is neither `'foreground'` nor `'leader'`. */
export function assertCwdOptions(options: unknown): asserts options is PtyCwdOptions | undefined {
  if (options === undefined) return
  if (!isOptionsObject(options)) throw providerArgumentError('options', 'an object', options)
  assertNoUnknownOption(options, CWD_OPTION_NAMES)
  const { of } = options as { of?: unknown }
  if (of !== undefined && of !== 'foreground' && of !== 'leader') throw providerArgumentError('of', "'foreground' or 'leader'", of, 'option')
}

/** Refuse the first option of `options` not in `known`, naming it and the option it likely misspells. */
function assertNoUnknownOption(options: object, known: readonly string[]): void {
  const unknown = findUnknownOption(options, known)
  if (unknown === undefined) return
  const value = (options as Record<string, unknown>)[unknown.name]
  throw argumentRefusal(`Unknown option \`${unknown.name}\`: ${unknown.hint} (an unknown option would be ignored), got ${describeValue(value)}`, unknown.name, value)
}
