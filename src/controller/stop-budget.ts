import { clampTimerDelay } from '../contracts/index.js'
import { abortOf } from './abort.js'
import type { PtyClock } from './clock.js'
import type { ControllerCore } from './controller-core.js'
import type { ControllerTimers } from './controller-timers.js'
import type { StopAndWaitRequest } from './stop-and-wait-request.js'
import type { StopVerificationTiming } from './verify-stop.js'

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

/**
 * The time one `stopAndWait` may take, as its phases wait on it: `deadlinePassed` resolves when
 * the request's deadline passes, its `signal` aborts (an aborted wait gives up exactly like a passed
 * deadline) or the controller is disposed; `remainingMs` is the time left; `sleep` pauses on the
 * controller's timers. `close` stops waiting (call it once the stop has answered).
 */
export type StopBudget = StopVerificationTiming & {
  /** Cancel the deadline timer and the abort listener. */
  close: () => void
}

/** Open the budget of a `stopAndWait` request on the controller's clock and timers. */
export function openStopBudget(core: Pick<ControllerCore, 'clock' | 'timers' | 'disposed'>, request: StopAndWaitRequest): StopBudget {
  const remainingMs = (): number => Math.max(0, request.deadlineAt - core.clock.now())
  const deadline = deadlineOf(core.timers, core.clock, request.deadlineAt, core.disposed)
  const aborted = abortOf(request.signal)
  return {
    deadlinePassed: Promise.race([deadline.promise, aborted.promise.then(() => 'deadline' as const)]),
    remainingMs,
    sleep: (ms) => core.timers.after(ms).promise,
    close: () => {
      deadline.cancel()
      aborted.cancel()
    },
  }
}
