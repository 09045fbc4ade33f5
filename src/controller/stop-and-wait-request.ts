import { resolveWaitDeadline, type PtyStopAndWaitOptions } from '../contracts/index.js'
import { assertAbortSignal } from './abort.js'
import { describeValue } from './argument-validation.js'

/** A `stopAndWait` call's options, checked and resolved against the controller's clock. */
export type StopAndWaitRequest = {
  /** The absolute time (on the controller's clock) after which the stop answers `false`. */
  deadlineAt: number
  /** Passed to the provider's shutdown, and makes the verification poll (see `verifyStop`). */
  keepHistory?: boolean
  /** Aborting it makes the wait answer `false` at once. */
  signal?: AbortSignal
}

/**
 * Check and resolve the options of `stopAndWait`: `deadlineMs` is an absolute epoch time on the
 * controller's clock (`Date.now() + 5_000`, as the seed origin passes it), `timeoutMs` a duration;
 * neither gives `defaultTimeoutMs`. Throws a `TypeError` naming the option for anything malformed.
 */
export function resolveStopAndWaitRequest(options: unknown, defaultTimeoutMs: number, now: number): StopAndWaitRequest {
  if (options === undefined) return { deadlineAt: now + defaultTimeoutMs }
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`Expected the \`options\` argument to be an object, got ${describeValue(options)}`)
  }
  const given = options as PtyStopAndWaitOptions & { signal?: unknown }
  const request: StopAndWaitRequest = { deadlineAt: resolveWaitDeadline(given, defaultTimeoutMs, now) }
  if (given.keepHistory !== undefined) {
    if (typeof given.keepHistory !== 'boolean') {
      throw new TypeError(`Expected the \`keepHistory\` option to be a boolean, got ${describeValue(given.keepHistory)}`)
    }
    request.keepHistory = given.keepHistory
  }
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
