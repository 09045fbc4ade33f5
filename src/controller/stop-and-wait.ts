import { assertAbortSignal } from './abort.js'
import {
  clampTimerDelay,
  resolveWaitDeadline,
  type PtyIncarnationId,
  type PtyProvider,
  type PtyStopAndWaitOptions,
} from '../contracts/index.js'
import { describeValue } from './argument-validation.js'
import type { PtyClock } from './clock.js'
import type { ControllerTimers } from './controller-timers.js'

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

/** A one-shot outcome as a promise, with a way to stop waiting for it. */
export type PendingOutcome<T> = { promise: Promise<T>; cancel: () => void }

/**
 * Resolves `'deadline'` when the clock reaches `deadlineAt` — also for a deadline beyond what one
 * `setTimeout` can hold (the timer is re-armed in clamped steps, so a huge deadline means "wait
 * until verified", never an overflow that fires at once) — or when the controller's timers are all
 * cleared (dispose: whoever still waits gives up).
 */
export function deadlineOf(timers: ControllerTimers, clock: PtyClock, deadlineAt: number, disposed: () => boolean): PendingOutcome<'deadline'> {
  let current: { cancel: () => void } | undefined
  let cancelled = false
  const promise = new Promise<'deadline'>((resolve) => {
    const arm = (): void => {
      if (cancelled) return
      const left = deadlineAt - clock.now()
      if (left <= 0 || disposed()) {
        resolve('deadline')
        return
      }
      const timer = timers.after(clampTimerDelay(left))
      current = timer
      void timer.promise.then(arm)
    }
    arm()
  })
  return {
    promise,
    cancel: () => {
      cancelled = true
      current?.cancel()
    },
  }
}

/** Resolves `'aborted'` once `signal` aborts (at once if it already has); never without a signal. */
export function abortOf(signal: AbortSignal | undefined): PendingOutcome<'aborted'> {
  if (signal === undefined) return { promise: new Promise(() => {}), cancel: () => {} }
  let onAbort: (() => void) | undefined
  const promise = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) {
      resolve('aborted')
      return
    }
    onAbort = () => resolve('aborted')
    signal.addEventListener('abort', onAbort, { once: true })
  })
  return {
    promise,
    cancel: () => {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
    },
  }
}

/**
 * When `stopAndWait` forces (`shutdown({ immediate: true })`): after `forceAfterMs`, but never
 * later than half the time left, so the forced stop always happens within the deadline with time
 * to verify it (a deadline of 5 s or less used to force only when it had already passed).
 */
export function forceDelayMs(forceAfterMs: number, remainingMs: number): number {
  return clampTimerDelay(Math.min(forceAfterMs, remainingMs / 2))
}

/** The shutdown options of one stop step: the incarnation fence, the time left and `keepHistory`. */
export function shutdownOptionsFor(
  immediate: boolean,
  incarnationId: PtyIncarnationId | undefined,
  remainingMs: number,
  keepHistory: boolean | undefined,
): Parameters<PtyProvider['shutdown']>[1] {
  return {
    ...(immediate ? { immediate: true } : {}),
    ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }),
    // Why a duration, not `deadlineMs`: the controller's clock need not be the provider's (a
    // manual clock in tests, a remote host's skew), and a duration means the same on both.
    timeoutMs: clampTimerDelay(remainingMs),
    ...(keepHistory === undefined ? {} : { keepHistory }),
  }
}
