import { describeValue } from './argument-validation.js'

/** What {@link raceAbort} resolves with when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('ptykit.aborted')

/** Throw a `TypeError` naming the option unless it is absent or an `AbortSignal`. */
export function assertAbortSignal(value: unknown): asserts value is AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return
  throw new TypeError(`Expected the \`signal\` option to be an AbortSignal, got ${describeValue(value)}`)
}

/**
 * Wait for `pending` or for `signal` to abort, whichever comes first. An already aborted signal
 * answers {@link ABORTED} at once. The abort listener is removed either way, and a rejection of
 * `pending` after the abort is swallowed (nobody waits for it any more).
 */
export function raceAbort<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (signal === undefined) return pending
  if (signal.aborted) {
    pending.catch(() => undefined)
    return Promise.resolve(ABORTED)
  }
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => {
      pending.catch(() => undefined)
      resolve(ABORTED)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
