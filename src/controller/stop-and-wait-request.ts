import { assertKnownOptions, isOptionsObject, optionNamesOf } from '../contracts/known-options.js'
import { resolveWaitDeadline, type PtyStopAndWaitOptions } from '../contracts/index.js'
import { assertAbortSignal } from './abort.js'
import { assertOptionalBoolean, describeValue } from './argument-validation.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** A `stopAndWait` call's options, checked, with the deadline moved onto the controller's clock. */
export type StopAndWaitRequest = {
  /** The absolute time (on the controller's clock) after which the stop answers `false`. */
  deadlineAt: number
  /** Passed to the provider's shutdown, and makes the verification poll (see `verifyStop`). */
  keepHistory?: boolean
  /** Aborting it makes the wait answer `false` at once. */
  signal?: AbortSignal
}

/** The options of `stopAndWait`. */
const STOP_AND_WAIT_OPTION_NAMES = optionNamesOf<PtyStopAndWaitOptions>()('deadlineMs', 'timeoutMs', 'keepHistory', 'signal')

/**
 * Check and resolve the options of `stopAndWait`: `deadlineMs` is an absolute epoch time, read
 * against `epochNow` (`Date.now()`: the caller took it from there, `Date.now() + 5_000` as the seed
 * origin passes it), `timeoutMs` a duration; neither gives `defaultTimeoutMs`. The wait left is then
 * counted from `clockNow` on the controller's clock, whose origin is its own (a manual clock in a
 * test starts at 0), as listings do (`resolveListingBudget`). Throws a `TypeError` naming the option
 * for anything malformed.
 */
export function resolveStopAndWaitRequest(options: unknown, defaultTimeoutMs: number, clockNow: number, epochNow: number = Date.now()): StopAndWaitRequest {
  if (options === undefined) return { deadlineAt: clockNow + defaultTimeoutMs }
  if (!isOptionsObject(options)) {
    throw argumentRefusal(`Expected the \`options\` argument to be an object, got ${describeValue(options)}`, 'options', options)
  }
  // Every option, not only near misses of the wait budget's: an ignored one does something else than
  // asked — `{ expectedIncarnationId }` (a fence `stopAndWait` does not take: a terminal handle's
  // stop is the fenced one) stopped whatever process held the id.
  assertKnownOptions('', options, STOP_AND_WAIT_OPTION_NAMES)
  const given = options as PtyStopAndWaitOptions & { signal?: unknown }
  const request: StopAndWaitRequest = { deadlineAt: clockNow + (resolveWaitDeadline(given, defaultTimeoutMs, epochNow) - epochNow) }
  assertOptionalBoolean('keepHistory', given.keepHistory)
  if (given.keepHistory !== undefined) request.keepHistory = given.keepHistory
  if (given.signal !== undefined) {
    assertAbortSignal(given.signal)
    request.signal = given.signal
  }
  return request
}

/**
 * Check the options of `stopAndWait` without resolving them (a terminal handle whose incarnation
 * was replaced answers without a stop, but still reports a malformed call).
 *
 * @throws TypeError naming the option, as {@link resolveStopAndWaitRequest} does.
 */
export function assertStopAndWaitOptions(options: unknown): void {
  resolveStopAndWaitRequest(options, 0, 0)
}
