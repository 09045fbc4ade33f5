import type { PtyProvider, PtySpawnResult } from '../contracts/index.js'
import { incarnationOf, incarnationsAgree } from '../contracts/incarnation.js'
import { RUN_ALWAYS } from './rollback-journal.js'
import type { ObservedExit, RuntimePtySpawnState } from './spawn-state.js'

/**
 * Watch the provider's exits from just before the physical call until the end of the run. Why: an
 * exit can race the reply of a spawn whose id the runtime could not expect (no session id, no
 * slot owner), so no pending registration fences it; the watcher does. A provider already watched
 * by this run is not subscribed again.
 */
export function watchExits(state: RuntimePtySpawnState, provider: PtyProvider): void {
  // Kept on the state, not in a WeakMap keyed by it: this runs on every spawn's way to the fork.
  const watched = state.exitWatchedProviders
  if (watched?.includes(provider) === true) {
    return
  }
  if (watched === null) state.exitWatchedProviders = [provider]
  else watched.push(provider)
  // The listener reaches this run's exits only while subscribed: a provider may keep a listener
  // after its unsubscribe (the fake's call log keeps every argument), and with it every exit this
  // run saw — concurrent spawns each see the others' exits.
  let exits: ObservedExit[] | undefined = state.observedExits
  const unsubscribe = provider.onExit((event) => {
    exits?.push({ id: event.id, ...incarnationOf(event.incarnationId) })
  })
  state.journal.record(
    'stop watching exits',
    () => {
      exits = undefined
      return unsubscribe()
    },
    RUN_ALWAYS,
  )
}

/** Whether the watcher saw `result`'s process exit (same id, incarnations agreeing). */
export function sawExitOf(state: RuntimePtySpawnState, result: PtySpawnResult): boolean {
  return state.observedExits.some((exit) => exit.id === result.id && incarnationsAgree(exit.incarnationId, result.incarnationId))
}
