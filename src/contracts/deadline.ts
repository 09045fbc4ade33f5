import { argumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'
import { findMisspeltOption, isOptionsObject, optionNamesOf, unknownOptionMessage } from './known-options.js'

/**
 * The longest delay `setTimeout` can hold (2³¹−1 ms, about 24.8 days). A longer delay is not
 * "later" to Node: it warns `TimeoutOverflowWarning` and fires after 1 ms. Every wait derived from
 * a caller's value is clamped to this, so a huge deadline means "wait until done", never "give up now".
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/**
 * How far in the past a positive `deadlineMs` may lie before it is refused as a duration misread:
 * a `deadlineMs` of 5 000 meant as "within five seconds" (that is `timeoutMs`) is
 * 1970-01-01T00:00:05Z — a deadline long past, which a stop reads as "no grace: SIGKILL now" and a
 * listing as "do not wait". No clock reading that old is a deadline anyone means, so it is refused
 * with a `TypeError` that names the option and points at `timeoutMs`. The limit is the longest wait a timer can hold
 * (about 24.8 days): a deadline computed from a real clock and used late is never that stale. The
 * limit is counted back from the `now` given to {@link resolveWaitDeadline} — `Date.now()` wherever
 * a caller's option is read (the controller too, also when given a `clock` of its own: a deadline
 * taken from a manual clock that starts at 0 is refused, as it is no epoch time). A `Date` a test
 * set near 0 (`vi.setSystemTime(0)`) refuses nothing. Zero and negative values are kept (read
 * either way, they mean "check once, do not wait").
 */
export const LONG_PAST_DEADLINE_MS = MAX_TIMER_DELAY_MS

/**
 * How long a call may wait, in either of two forms. Give at most one.
 *
 * - `deadlineMs`: a **point in time**, in epoch milliseconds (`Date.now() + 5_000`), as the seed
 *   origin passes it. A deadline already past means "check once, do not wait"; a positive one
 *   further back than {@link LONG_PAST_DEADLINE_MS} (about 24.8 days: `5_000` is in 1970) is
 *   refused, as a duration given in the wrong option.
 * - `timeoutMs`: a duration from now, in milliseconds.
 */
export type PtyWaitBudget = {
  /**
   * An absolute epoch time in milliseconds (`Date.now() + 5_000`) after which the call gives up.
   * Not a duration: a positive value more than about 24.8 days in the past (`5_000` is in 1970) is
   * refused with a `TypeError`; use `timeoutMs` for a duration.
   */
  deadlineMs?: number | undefined
  /**
   * A duration in milliseconds from the call, after which it gives up. Not a point in time: a
   * value longer than about 24.8 days that is within as much of the current epoch time
   * (`Date.now() + 5_000`) is refused with a `TypeError`; use `deadlineMs` for that.
   */
  timeoutMs?: number | undefined
}

/** The two names of a wait budget; a near miss of either is refused (`timeoutMS`, `deadline`). */
const WAIT_BUDGET_OPTION_NAMES = optionNamesOf<PtyWaitBudget>()('deadlineMs', 'timeoutMs')

/**
 * Turn a {@link PtyWaitBudget} into one absolute deadline (epoch milliseconds on the given clock).
 *
 * Throws a `TypeError` with `code: 'invalid_option'`, `option` (the option refused; `deadlineMs`
 * when both are given) and `value`, naming the option and showing the value, when both forms are given, when either is not a finite
 * number (or `timeoutMs` is negative), when `deadlineMs` is positive and more than
 * {@link LONG_PAST_DEADLINE_MS} before `now` (a duration given as `deadlineMs`: `5_000` is in 1970,
 * and a stop would read it as "no grace"), or when `timeoutMs` is longer than
 * {@link LONG_PAST_DEADLINE_MS} and within as much of `now` (a point in time given as
 * `timeoutMs`: `Date.now() + 5_000` would wait 56 years). With neither, the deadline is
 * `now + defaultTimeoutMs`. An option that misspells either name (`timeoutMS`, `timeout_ms`,
 * `deadline`) is refused with a `TypeError` naming it, rather than ignored, and so is a `budget`
 * that is neither `undefined` nor an object (`null`, an array).
 *
 * @param budget - the caller's options (only `deadlineMs` and `timeoutMs` are used; other keys
 *   pass unless they misspell one of them); `undefined` means neither.
 * @param defaultTimeoutMs - the duration used when the caller gives neither form.
 * @param now - the current time on the clock the deadline is measured by (defaults to `Date.now()`).
 * @returns the absolute deadline in milliseconds.
 */
export function resolveWaitDeadline(
  budget: PtyWaitBudget | undefined,
  defaultTimeoutMs: number,
  now: number = Date.now(),
): number {
  // Why: a misspelt budget (`{ timeoutMS: 1000 }`, `{ deadline: … }`) would be ignored and the
  // default wait used — a stop that waits 5 s where 1 s was asked. Only near misses of the two
  // names are refused: the same object carries the call's other options.
  // Why refuse a non-object: `null` or `[]` read as "no budget" would wait the default instead of
  // reporting the caller's mistake, and a provider reading its other options would crash on `null`.
  // Every refusal below is the typed one (`code: 'invalid_option'`, `option`, `value`) whichever
  // provider or controller reached it: a plain `TypeError` gave a host matching on `code` nothing.
  if (budget !== undefined && !isOptionsObject(budget)) throw argumentRefusal(`Expected the \`options\` argument to be an object, got ${describeValue(budget)}`, 'options', budget)
  const misspelt = budget === undefined ? undefined : findMisspeltOption(budget, WAIT_BUDGET_OPTION_NAMES)
  if (misspelt !== undefined) {
    const value = (budget as Record<string, unknown>)[misspelt.name]
    throw argumentRefusal(`${unknownOptionMessage('', misspelt)}, got ${describeValue(value)}`, misspelt.name, value)
  }
  const deadlineMs = budget?.deadlineMs
  const timeoutMs = budget?.timeoutMs
  if (deadlineMs !== undefined && timeoutMs !== undefined) {
    throw argumentRefusal(
      `Give either the \`deadlineMs\` option (an absolute epoch time) or the \`timeoutMs\` option (a duration), not both; got deadlineMs ${describeValue(deadlineMs)} and timeoutMs ${describeValue(timeoutMs)}`,
      'deadlineMs',
      deadlineMs,
    )
  }
  if (deadlineMs !== undefined) {
    if (typeof deadlineMs !== 'number' || !Number.isFinite(deadlineMs)) {
      throw argumentRefusal(
        `Expected the \`deadlineMs\` option to be a finite absolute epoch time in milliseconds (for example Date.now() + 5000), got ${describeValue(deadlineMs)}`,
        'deadlineMs',
        deadlineMs,
      )
    }
    if (deadlineMs > 0 && deadlineMs < now - LONG_PAST_DEADLINE_MS) {
      throw argumentRefusal(
        `Expected the \`deadlineMs\` option to be an absolute epoch time in milliseconds (for example Date.now() + 5000), got ${deadlineMs}, which is ${new Date(deadlineMs).toISOString()}, long past: for a duration, give the \`timeoutMs\` option (epoch seconds are not milliseconds)`,
        'deadlineMs',
        deadlineMs,
      )
    }
    return deadlineMs
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw argumentRefusal(
        `Expected the \`timeoutMs\` option to be a non-negative finite duration in milliseconds, got ${describeValue(timeoutMs)}`,
        'timeoutMs',
        timeoutMs,
      )
    }
    // The mirror of the check above: a point in time given as a duration (`Date.now() + 5000`
    // would wait 56 years). A duration longer than a timer can hold that reads as a time within
    // as much of now is nothing else; a test clock near 0 refuses nothing.
    if (timeoutMs > LONG_PAST_DEADLINE_MS && Math.abs(timeoutMs - now) <= LONG_PAST_DEADLINE_MS) {
      throw argumentRefusal(
        `Expected the \`timeoutMs\` option to be a duration in milliseconds (for example 5000), got ${timeoutMs}, which reads as the time ${new Date(timeoutMs).toISOString()}: for a point in time, give the \`deadlineMs\` option`,
        'timeoutMs',
        timeoutMs,
      )
    }
    return now + timeoutMs
  }
  return now + defaultTimeoutMs
}

/**
 * The milliseconds left until `deadline`, as a delay `setTimeout` can hold: never negative, never
 * above {@link MAX_TIMER_DELAY_MS}. `0` means the deadline has passed: check once, do not wait.
 *
 * @param deadline - an absolute time on the same clock as `now`.
 * @param now - the current time (defaults to `Date.now()`).
 */
export function remainingWaitMs(deadline: number, now: number = Date.now()): number {
  return clampTimerDelay(deadline - now)
}

/**
 * The clock a wait counts on once its deadline has been read: monotonic, the one timers count on.
 * Why not `Date.now()`: the wall clock jumps (a laptop resumed from sleep, NTP stepping it, a test's
 * mocked `Date`) while timers do not follow — re-read at every timer, a frozen or stepped-back `Date`
 * kept stops polling or waiting for ever (or for the time stepped back), and a leap forward skipped
 * graces and failed stops that were succeeding. A caller's epoch deadline is read once, against
 * `Date.now()`, when its call arrives ({@link onWaitClock}); from then on only this clock counts.
 */
export function waitClockNow(): number {
  return performance.now()
}

/**
 * An epoch deadline (a caller's `deadlineMs`, or `Date.now() + timeoutMs`), read now, on
 * {@link waitClockNow}'s clock.
 *
 * @param epochDeadline - an absolute time in epoch milliseconds.
 */
export function onWaitClock(epochDeadline: number): number {
  return performance.now() + (epochDeadline - Date.now())
}

/**
 * Clamp a delay to what `setTimeout` can hold: `[0, MAX_TIMER_DELAY_MS]`; `NaN` becomes `0`.
 *
 * @param delayMs - the wanted delay in milliseconds.
 */
export function clampTimerDelay(delayMs: number): number {
  if (!(delayMs > 0)) return 0
  return delayMs > MAX_TIMER_DELAY_MS ? MAX_TIMER_DELAY_MS : delayMs
}

/** The most a caller takes off the deadline it gives a provider (see {@link askedDeadline}). */
export const PROVIDER_ANSWER_MARGIN_MS = 50

/**
 * The deadline to give a provider whose answer the caller awaits until `deadline`: a little
 * earlier — a tenth of the wait, at most {@link PROVIDER_ANSWER_MARGIN_MS} — so an answer the
 * provider makes at its deadline (with what it could read by then) arrives before the caller's wait
 * ends. Given the same deadline, the caller's timer, armed first, fired first and the answer was lost.
 *
 * @param deadline - when the caller stops waiting (epoch milliseconds).
 * @param now - the current time (defaults to `Date.now()`).
 */
export function askedDeadline(deadline: number, now: number = Date.now()): number {
  return deadline - answerMarginMs(deadline - now)
}

/**
 * The duration form of {@link askedDeadline}: what to give a provider as `timeoutMs` when the
 * caller waits `waitMs` (on a clock that need not be the provider's).
 *
 * @param waitMs - how long the caller waits for the answer.
 */
export function askedTimeoutMs(waitMs: number): number {
  return waitMs - answerMarginMs(waitMs)
}

function answerMarginMs(waitMs: number): number {
  return waitMs > 0 ? Math.min(PROVIDER_ANSWER_MARGIN_MS, Math.floor(waitMs / 10)) : 0
}
