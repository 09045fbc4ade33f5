/**
 * Internal (not exported from `ptykit/contracts`): whether a value is a promise (or any thenable)
 * to wait for — how a synchronous fast path tells "answered now" from "answers later".
 */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
