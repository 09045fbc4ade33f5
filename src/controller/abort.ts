import { describeValue } from './argument-validation.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** What {@link raceAbort} resolves with when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('ptykit.aborted')

/** Throw a `TypeError` naming the option unless it is absent or an `AbortSignal`. */
export function assertAbortSignal(value: unknown): asserts value is AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return
  throw argumentRefusal(`Expected the \`signal\` option to be an AbortSignal, got ${describeValue(value)}`, 'signal', value)
}

/**
 * Wait for `pending` or for `signal` to abort, whichever comes first. An already aborted signal
 * answers {@link ABORTED} at once. The wait's hold on the signal is released either way (it shares
 * the signal's one abort listener: {@link onAbortShared}), and a rejection of `pending` after the
 * abort is swallowed (nobody waits for it any more).
 */
export function raceAbort<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (signal === undefined) return pending
  if (signal.aborted) {
    pending.catch(() => undefined)
    return Promise.resolve(ABORTED)
  }
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const stopWaiting = onAbortShared(signal, () => {
      pending.catch(() => undefined)
      resolve(ABORTED)
    })
    pending.then(
      (value) => {
        stopWaiting()
        resolve(value)
      },
      (error: unknown) => {
        stopWaiting()
        reject(error)
      },
    )
  })
}

/** The callbacks waiting on one signal, behind its one abort listener (see {@link onAbortShared}). */
type SharedAbort = { readonly callbacks: Set<() => void>; readonly listener: () => void }

const sharedAborts = new WeakMap<AbortSignal, SharedAbort>()

/**
 * Call `callback` once when `signal` aborts; answers its unsubscribe (idempotent). Every callback
 * of one signal shares ONE abort listener, added with the first and removed with the last. Why:
 * a host passes one long-lived signal (a window's, a panel's, the app's) to every terminal's
 * `output()` — and to its `stopAndWait`, `attach`, `spawn`, listing and renderer-serializer calls —
 * and a listener each made Node warn `MaxListenersExceededWarning: Possible EventTarget memory leak
 * detected` from the 11th call in flight on — a false alarm, each listener was removed at its end.
 * Every wait of the controller on a caller's signal goes through here.
 */
export function onAbortShared(signal: AbortSignal, callback: () => void): () => void {
  let shared = sharedAborts.get(signal)
  if (shared === undefined) {
    const callbacks = new Set<() => void>()
    const listener = (): void => {
      sharedAborts.delete(signal)
      const waiting = [...callbacks]
      callbacks.clear()
      // Each callback runs, as each would with a listener of its own; the first throw then goes on
      // to the signal's dispatch (which reports it), as that callback's own listener's would.
      let failure: { error: unknown } | undefined
      for (const callback of waiting) {
        try {
          callback()
        } catch (error) {
          failure ??= { error }
        }
      }
      if (failure !== undefined) throw failure.error
    }
    shared = { callbacks, listener }
    sharedAborts.set(signal, shared)
    signal.addEventListener('abort', listener, { once: true })
  }
  const { callbacks, listener } = shared
  callbacks.add(callback)
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0 || sharedAborts.get(signal) !== shared) return
    sharedAborts.delete(signal)
    signal.removeEventListener('abort', listener)
  }
}

/**
 * Resolves `'aborted'` once `signal` aborts (at once if it already has); never without a signal.
 * `cancel` releases the wait's hold on the signal (one abort listener shared by every wait on it:
 * {@link onAbortShared}).
 */
export function abortOf(signal: AbortSignal | undefined): { promise: Promise<'aborted'>; cancel: () => void } {
  if (signal === undefined) return { promise: new Promise(() => {}), cancel: () => {} }
  if (signal.aborted) return { promise: Promise.resolve('aborted'), cancel: () => {} }
  let stopWaiting!: () => void
  const promise = new Promise<'aborted'>((resolve) => {
    stopWaiting = onAbortShared(signal, () => resolve('aborted'))
  })
  return { promise, cancel: stopWaiting }
}
