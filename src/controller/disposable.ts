import type { PtyDisposable } from '../contracts/index.js'

/**
 * An unsubscribe function that is also a `Disposable`: call it, or let `using` call it at the end
 * of a scope (`using sub = terminal.onData(…)`). Calling it more than once is harmless.
 */
export type DisposableUnsubscribe = (() => void) & Disposable

/** Wrap `unsubscribe` so it runs at most once and can be used with `using`. */
export function disposableUnsubscribe(unsubscribe: () => void): DisposableUnsubscribe {
  let done = false
  const once = (): void => {
    if (done) return
    done = true
    unsubscribe()
  }
  return Object.assign(once, { [Symbol.dispose]: once })
}

/**
 * A registration whose `dispose` is also its `[Symbol.dispose]`, so `using registration = …`
 * releases it at the end of a scope.
 */
export function disposableRegistration(dispose: () => void): PtyDisposable & Disposable {
  return { dispose, [Symbol.dispose]: dispose }
}
