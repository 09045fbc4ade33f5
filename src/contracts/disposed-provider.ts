import type { PtyProvider } from './provider.js'

/**
 * Internal (not exported from `ptykit/contracts`): the methods of a {@link PtyProvider} (and of a
 * bundled provider's own, `attach`, `listExits`, `forgetExits` of the pty host) that answer with a
 * promise — refused after `dispose()` with a rejection, however they are written (an `async`
 * function or a plain one returning a promise, as the pty host's `spawn`). An `async` method not
 * listed rejects too; every other method but those {@link refuseCallsAfterDispose} leaves
 * answering is refused with a throw.
 */
export const PROVIDER_PROMISE_METHODS: ReadonlySet<string> = new Set([
  'spawn',
  'attach',
  'shutdown',
  'listProcesses',
  'listExits',
  'forgetExits',
  'probeLiveness',
  'getCwd',
  'getForegroundProcess',
  'hasChildProcesses',
  'confirmForeground',
  'resetInputModes',
  'clearBuffer',
  'getBufferSnapshot',
])

/**
 * Internal: the methods of a provider that stay callable once it is disposed (see
 * {@link refuseCallsAfterDispose}): `dispose`, `detach` (the pty host's: it answers with the
 * dispose), the subscriptions, and `isConnected` (the SSH provider's: a state, `false` once
 * disposed, as the pty host's `connected`).
 */
const ANSWERED_AFTER_DISPOSE: ReadonlySet<string> = new Set(['dispose', 'detach', 'onData', 'onBytes', 'onExit', 'onOutputLoss', 'isConnected'])

/**
 * Internal: the rule of `PtyProvider.dispose` for every bundled provider, applied to `provider`
 * in place. Once `isDisposed()` says so, each method but `dispose` (idempotent), `detach` (which
 * answers with the dispose), `isConnected` and the `on*` subscriptions is refused with
 * `refusal(method, ptyId, args)` (an error whose `code` is `provider_disposed`, naming the method,
 * and carrying `ptyId` — see {@link disposedCallPtyId} — so that every provider's refusal names the
 * PTY alike): a method in
 * {@link PROVIDER_PROMISE_METHODS}, or any `async` one, rejects; any other throws. Why refuse, not answer: a disposed
 * provider no longer knows what runs (a pty host's or SSH host's sessions may outlive it), so an
 * empty listing or a `null` would be a guess passed off as an answer — and providers answered
 * differently (node-pty and the fake `[]`, SSH and the pty host a rejection). Returns `provider`.
 */
export function refuseCallsAfterDispose<P extends object>(
  provider: P,
  isDisposed: () => boolean,
  refusal: (method: string, ptyId: string | undefined, args: unknown[]) => Error,
): P {
  const target = provider as unknown as Record<string, unknown>
  for (const name of Object.keys(target)) {
    if (ANSWERED_AFTER_DISPOSE.has(name)) continue
    const descriptor = Object.getOwnPropertyDescriptor(target, name)
    // Getters (`authoritativeListings`, `connected`) and plain values (`name`) are no calls.
    if (descriptor === undefined || !('value' in descriptor) || typeof descriptor.value !== 'function') continue
    const method = descriptor.value as (...args: unknown[]) => unknown
    // An `async` method answers with a promise whether listed or not (a provider's own method —
    // the pty host's `forgetExits` — added after the list was written would otherwise throw).
    const refuseWith = PROVIDER_PROMISE_METHODS.has(name) || isAsyncFunction(method)
      ? (args: unknown[]): unknown => Promise.reject(refusal(name, disposedCallPtyId(name, args), args))
      : (args: unknown[]): unknown => {
          throw refusal(name, disposedCallPtyId(name, args), args)
        }
    target[name] = function (this: unknown, ...args: unknown[]): unknown {
      return isDisposed() ? refuseWith(args) : method.apply(this, args)
    }
  }
  return provider
}

/**
 * Internal: the PTY a call refused after dispose names — its first argument when that is a string
 * (`write('abc', …)`, `hasPty('abc')`, `getCwd('abc')`, the pty host's `attach('abc')`), as it is
 * given (the refusal comes before the arguments are checked); `undefined` for `spawn` (its options
 * name no PTY yet) and for a call whose first argument is no string (a listing, `forgetExits`).
 */
export function disposedCallPtyId(method: string, args: readonly unknown[]): string | undefined {
  return method !== 'spawn' && typeof args[0] === 'string' ? args[0] : undefined
}

/** Whether `fn` is an `async function` (its constructor is `AsyncFunction`, not `Function`). */
function isAsyncFunction(fn: (...args: unknown[]) => unknown): boolean {
  return fn.constructor.name === 'AsyncFunction'
}
