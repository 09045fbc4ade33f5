import type { PtyClock, PtyTimerHandle } from './clock.js'

/** A one-shot timer as a promise, with a way to cancel it. */
export type PendingTimer = {
  /**
   * Resolves with `'timer'` when the timer fires, or at once when every timer is cleared (dispose);
   * never rejects, never resolves once cancelled.
   */
  promise: Promise<'timer'>
  /** Cancel the timer (harmless after it fired). */
  cancel: () => void
}

/**
 * Every timer a controller arms, over its clock, so that `dispose` can cancel them all at once and
 * a callback that throws is reported instead of escaping into the clock.
 */
export class ControllerTimers {
  readonly #clock: PtyClock
  readonly #onError: (error: unknown) => void
  readonly #handles = new Set<PtyTimerHandle>()
  /** The pending {@link ControllerTimers.after} timers, with how to resolve them early. */
  readonly #waiters = new Map<PtyTimerHandle, () => void>()
  #resolveCleared!: () => void
  /**
   * Resolves once {@link ControllerTimers.clearAll} ran (dispose): for a wait that has no timer of
   * its own — a question to a provider that never answers — to give up with the rest.
   */
  readonly cleared: Promise<'cleared'> = new Promise((resolve) => {
    this.#resolveCleared = () => resolve('cleared')
  })

  /** Track timers on `clock`; errors thrown by callbacks go to `onError`. */
  constructor(clock: PtyClock, onError: (error: unknown) => void) {
    this.#clock = clock
    this.#onError = onError
  }

  /** Call `callback` once after `ms` milliseconds (at most ~24.8 days: the clock clamps, see `withClampedDelays`). */
  set(callback: () => void, ms: number): PtyTimerHandle {
    const handle: PtyTimerHandle = this.#clock.setTimeout(() => {
      this.#handles.delete(handle)
      try {
        callback()
      } catch (error) {
        this.#onError(error)
      }
    }, ms)
    this.#handles.add(handle)
    return handle
  }

  /** Cancel one timer. */
  clear(handle: PtyTimerHandle): void {
    this.#handles.delete(handle)
    this.#waiters.delete(handle)
    this.#clock.clearTimeout(handle)
  }

  /** A timer as a promise, for racing against other outcomes. */
  after(ms: number): PendingTimer {
    let handle: PtyTimerHandle | undefined
    const promise = new Promise<'timer'>((resolve) => {
      const fire = (): void => resolve('timer')
      handle = this.set(() => {
        this.#waiters.delete(handle)
        fire()
      }, ms)
      this.#waiters.set(handle, fire)
    })
    return {
      promise,
      cancel: () => {
        if (handle !== undefined) this.clear(handle)
      },
    }
  }

  /**
   * Cancel every pending timer. Callbacks of {@link ControllerTimers.set} never run; promises of
   * {@link ControllerTimers.after} resolve at once. Why: whoever still waits on one (a caller's
   * `stopAndWait` or listing that outlived `dispose`) must give up now, not hang forever on a timer
   * that will never fire.
   */
  clearAll(): void {
    for (const handle of this.#handles) this.#clock.clearTimeout(handle)
    this.#handles.clear()
    const waiters = [...this.#waiters.values()]
    this.#waiters.clear()
    for (const fire of waiters) fire()
    this.#resolveCleared()
  }

  /**
   * `answer`, or `fallback` once every timer is cleared (dispose) if it has not settled by then:
   * a caller awaiting a provider that never answers is released by `dispose`.
   */
  async orAtDispose<T, F>(answer: Promise<T>, fallback: F): Promise<T | F> {
    const settled = await Promise.race([answer.then((value) => ({ value })), this.cleared])
    return settled === 'cleared' ? fallback : settled.value
  }
}
