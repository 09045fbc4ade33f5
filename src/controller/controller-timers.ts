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
  /**
   * The pending {@link ControllerTimers.orAtDispose} waits, with how to give each up. Why a set and
   * not one shared "disposed" promise to race: every race adds a reaction to the promise it races,
   * and a shared one pending for the controller's life would keep one per question ever asked.
   */
  readonly #disposeWaiters = new Set<() => void>()
  #cleared = false

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
    // Once every timer was cleared (dispose): resolved at once, as a pending one is then — a timer
    // started now would be one nobody clears, holding the app open for `ms`.
    if (this.#cleared) return { promise: Promise.resolve('timer'), cancel: () => undefined }
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
    this.#cleared = true
    const disposeWaiters = [...this.#disposeWaiters]
    this.#disposeWaiters.clear()
    for (const giveUp of disposeWaiters) giveUp()
  }

  /**
   * Whether {@link ControllerTimers.clearAll} ran (dispose): a {@link ControllerTimers.after} promise
   * resolved since then was cut short, it did not come due.
   */
  get cleared(): boolean {
    return this.#cleared
  }

  /** How many {@link ControllerTimers.orAtDispose} waits are pending (for inspection and tests). */
  get pendingDisposeWaits(): number {
    return this.#disposeWaiters.size
  }

  /**
   * `answer`, or `fallback` once every timer is cleared (dispose) if it has not settled by then:
   * a caller awaiting a provider that never answers is released by `dispose`. A wait has no timer
   * of its own, and leaves nothing behind once `answer` settles.
   */
  orAtDispose<T, F>(answer: Promise<T>, fallback: F): Promise<T | F> {
    if (this.#cleared) return Promise.resolve(fallback)
    return new Promise<T | F>((resolve, reject) => {
      const giveUp = (): void => resolve(fallback)
      this.#disposeWaiters.add(giveUp)
      answer.then(
        (value) => {
          this.#disposeWaiters.delete(giveUp)
          resolve(value)
        },
        (error: unknown) => {
          this.#disposeWaiters.delete(giveUp)
          reject(error)
        },
      )
    })
  }
}
