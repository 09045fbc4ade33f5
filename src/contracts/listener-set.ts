import { argumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'
import { assertOptionsBag, optionNamesOf } from './known-options.js'
import type { Unsubscribe } from './provider.js'

/** The options of the factory below: any other name is refused, not ignored. */
const LISTENER_SET_OPTION_NAMES = optionNamesOf<ListenerSetOptions>()('onListenerError')

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
   * Subscribe `listener`. Throws a `TypeError` (`code: 'invalid_option'`, `option: 'listener'`,
   * `value`) naming the argument and the value when `listener` is not a function.
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
  onListenerError?: ((error: unknown) => void) | undefined
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
 * @throws TypeError when `options` is not an object, holds an option other than
 * `onListenerError` (naming it), or `onListenerError` is not a function.
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
  assertOptionsBag('listener set', options, LISTENER_SET_OPTION_NAMES)
  const onListenerError = options.onListenerError ?? rethrowOnMicrotask
  if (typeof onListenerError !== 'function') {
    throw argumentRefusal(`Expected the \`onListenerError\` option to be a function, got ${describeValue(onListenerError)}`, 'onListenerError', onListenerError)
  }
  type Entry = { readonly listener: (event: E) => void }
  // Why copied only while a `fire` walks the array: events fire per output chunk, and a spawn
  // pipeline subscribes and unsubscribes once per spawn (its exit watch) — copying the array on
  // every change made each change O(listeners) in garbage, 50 spawns at once O(n²). A `fire` that
  // walks it marks it shared, and a change during that walk replaces it with a copy, so the walk
  // keeps its snapshot (see ListenerSet: added during a fire, first called by the next one).
  let entries: Entry[] = []
  /** `fire`s walking `entries` right now (nested fires count twice): change a copy, not it. */
  let walking = 0

  const call = (entry: Entry, event: E): void => {
    try {
      entry.listener(event)
    } catch (error) {
      onListenerError(error)
    }
  }

  /** The array to change: `entries` itself, or its copy while a walk holds it. */
  const writable = (): Entry[] => {
    if (walking > 0) {
      entries = entries.slice()
      walking = 0
    }
    return entries
  }

  return {
    add(listener) {
      if (typeof listener !== 'function') {
        // Typed as every provider argument refusal: a provider's `onData(5)` reaches this.
        throw argumentRefusal(`Expected the \`listener\` argument to be a function, got ${describeValue(listener)}`, 'listener', listener)
      }
      const entry: Entry = { listener }
      writable().push(entry)
      return () => {
        const index = entries.indexOf(entry)
        if (index >= 0) writable().splice(index, 1)
      }
    },
    fire(event) {
      const snapshot = entries
      // The usual case (one controller per provider), per output chunk: no loop set-up, and
      // nothing to protect (a listener added now is not called by this fire anyway).
      if (snapshot.length === 1) {
        call(snapshot[0] as Entry, event)
        return
      }
      walking++
      try {
        for (let i = 0; i < snapshot.length; i++) call(snapshot[i] as Entry, event)
      } finally {
        // A change during the walk swapped `entries` for a copy (and reset the count): the
        // snapshot is then nobody's, and this walk's mark is moot.
        if (entries === snapshot && walking > 0) walking--
      }
    },
    clear() {
      entries = []
      walking = 0
    },
    get size() {
      return entries.length
    },
  }
}
