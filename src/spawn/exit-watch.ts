import type { PtyProvider, PtySpawnResult } from '../contracts/index.js'
import { incarnationOf, incarnationsAgree } from '../contracts/incarnation.js'
import type { RuntimePtySpawnState } from './spawn-state.js'

/** The providers each run already watches, so that a stage never subscribes twice. */
const watchedProviders = new WeakMap<RuntimePtySpawnState, Set<PtyProvider>>()

/**
 * Watch the provider's exits from just before the physical call until the end of the run. Why: an
 * exit can race the reply of a spawn whose id the runtime could not expect (no session id, no
 * slot owner), so no pending registration fences it; the watcher does.
 */
export function watchExits(state: RuntimePtySpawnState, provider: PtyProvider): void {
  const watched = watchedProviders.get(state) ?? new Set<PtyProvider>()
  if (watched.has(provider)) {
    return
  }
  watched.add(provider)
  watchedProviders.set(state, watched)
  const exits = state.observedExits
  const unsubscribe = provider.onExit((event) => {
    exits.push({ id: event.id, ...incarnationOf(event.incarnationId) })
  })
  state.journal.record('stop watching exits', () => unsubscribe(), { always: true })
}

/** Whether the watcher saw `result`'s process exit (same id, incarnations agreeing). */
export function sawExitOf(state: RuntimePtySpawnState, result: PtySpawnResult): boolean {
  return state.observedExits.some((exit) => exit.id === result.id && incarnationsAgree(exit.incarnationId, result.incarnationId))
}
