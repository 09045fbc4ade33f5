import { describeValue } from './describe-value.js'
import type { Unsubscribe } from './provider.js'

/**
 * A set of listeners for one kind of event — the dispatcher every provider needs for `onData` and
 * `onExit` (and the controller for its own events), written once.
 *
 * - `add(listener)` subscribes and returns an idempotent {@link Unsubscribe}: calling it twice (or
 *   after `clear()`) does nothing. Each `add` is its own subscription: the same function added twice
 *   is called twice, and each unsubscribe removes only its own subscription.
 * - `fire(event)` calls the listeners subscribed when it starts, in subscription order (a snapshot):
 *   a listener added during a `fire` is first called by the next one, and a listener removed during
 *   a `fire` is still called by that one if it had not been reached yet.
 * - A listener that throws does not stop the others: its error goes to the `onListenerError`
 *   handler given to {@link createListenerSet} (by default, rethrown on its own microtask, so it
 *   surfaces as an uncaught error without corrupting the caller's state).
 */
export interface ListenerSet<E> {
  /**
   * Subscribe `listener`. Throws a `TypeError` naming the value when `listener` is not a function.
   *
   * @returns the unsubscribe function (idempotent)
   */
  add(listener: (event: E) => void): Unsubscribe
  /** Call every currently subscribed listener with `event` (see the snapshot rule above). */
  fire(event: E): void
  /** Drop every subscription (a later call of an old unsubscribe does nothing). */
  clear(): void
  /** How many subscriptions are live. */
  readonly size: number
}

/** Options of {@link createListenerSet}. */
export interface ListenerSetOptions {
  /**
   * Receives the error a listener threw (the other listeners still run). Default: rethrow it on
   * its own microtask, so a listener's bug is reported as uncaught and never vanishes.
   */
  onListenerError?: (error: unknown) => void
}

/** The default `onListenerError`: the error surfaces uncaught, on its own microtask. */
export function rethrowOnMicrotask(error: unknown): void {
  queueMicrotask(() => {
    throw error
  })
}

/**
 * Create a {@link ListenerSet}.
 *
 * @example
 * ```ts
 * const dataListeners = createListenerSet<PtyDataEvent>()
 * const provider = {
 *   onData: (listener: (event: PtyDataEvent) => void) => dataListeners.add(listener),
 *   // …and where output arrives:
 *   // dataListeners.fire({ id, data, incarnationId })
 * }
 * ```
 */
export function createListenerSet<E>(options: ListenerSetOptions = {}): ListenerSet<E> {
  const onListenerError = options.onListenerError ?? rethrowOnMicrotask
  if (typeof onListenerError !== 'function') {
    throw new TypeError(`Expected the \`onListenerError\` option to be a function, got ${describeValue(onListenerError)}`)
  }
  type Entry = { readonly listener: (event: E) => void }
  // Why copy-on-write: subscriptions change rarely, events fire per output chunk. `fire` reads the
  // current array (its snapshot for free); `add`/removal build a new one, never mutate a fired one.
  let entries: readonly Entry[] = []

  const call = (entry: Entry, event: E): void => {
    try {
      entry.listener(event)
    } catch (error) {
      onListenerError(error)
    }
  }

  return {
    add(listener) {
      if (typeof listener !== 'function') {
        throw new TypeError(`Expected the listener to be a function, got ${describeValue(listener)}`)
      }
      const entry: Entry = { listener }
      entries = [...entries, entry]
      return () => {
        const index = entries.indexOf(entry)
        if (index >= 0) entries = [...entries.slice(0, index), ...entries.slice(index + 1)]
      }
    },
    fire(event) {
      const snapshot = entries
      // The usual case (one controller per provider), per output chunk: no loop set-up.
      if (snapshot.length === 1) {
        call(snapshot[0] as Entry, event)
        return
      }
      for (const entry of snapshot) call(entry, event)
    },
    clear() {
      entries = []
    },
    get size() {
      return entries.length
    },
  }
}
