/**
 * Internal (not exported from `ptykit/contracts`): call a function that should return a promise —
 * usually a provider method — and always get a promise back. A synchronous throw (a provider that
 * validates its arguments before going async, or a plain bug) becomes a rejection, and a plain
 * value a resolved promise, so the caller has one failure path to handle.
 */
export function callProvider<T>(call: () => T | PromiseLike<T>): Promise<Awaited<T>> {
  try {
    return Promise.resolve(call()) as Promise<Awaited<T>>
  } catch (error) {
    return Promise.reject(error)
  }
}
