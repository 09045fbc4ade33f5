/**
 * A provider may keep what a spawn handed it for as long as it likes: the spawn options (the fake
 * keeps them for `getPty(id).spawnOptions`, a host's provider may keep them to respawn) and the
 * exit listener the run watches with (the fake's call log keeps every argument, after the
 * unsubscribe too). Neither may keep the run: its journal, its arguments, its dependencies (the
 * controller's, through a controller) and every exit it saw. Found by helper-160: a fake shared by
 * a suite kept every spawn's run, and concurrent spawns each kept the exits of all the others.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { executeRuntimePtySpawn } from '../../src/spawn/index.js'
import { createHarness } from './harness.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Collect garbage until every ref is cleared (a few rounds: finalization runs between turns). */
async function collected(refs: readonly WeakRef<object>[]): Promise<boolean> {
  for (let round = 0; round < 5 && refs.some((ref) => ref.deref() !== undefined); round++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
  return refs.every((ref) => ref.deref() === undefined)
}

describe('a finished spawn run, over a provider that keeps what it was given', () => {
  it('is not kept by the spawn options or the exit listener the provider keeps', async () => {
    const h = createHarness()
    const other = await h.spawn({})
    const refs = await (async () => {
      const state = h.state({ file: 'make', onPtySpawnCommitted: () => {} })
      const running = executeRuntimePtySpawn(state)
      // An exit this run sees while it watches (it lands in the run's observed exits).
      h.provider.emitExit(other.result.id, { exitCode: 0 })
      const outcome = await running
      expect(state.observedExits).toHaveLength(1)
      return { outcome: outcome.result.id, refs: [new WeakRef(state), new WeakRef(state.journal), new WeakRef(state.observedExits)] }
    })()
    // The provider still holds both: the options with the run's commit hook, and the exit listener.
    expect(h.provider.getPty(refs.outcome)?.spawnOptions.onPtySpawnCommitted).toBeTypeOf('function')
    expect(h.provider.calls.filter((call) => call.method === 'onExit').length).toBeGreaterThanOrEqual(2)
    expect(await collected(refs.refs)).toBe(true)
  })

  it('a commit hook the provider calls after its spawn answered does nothing (the run reported the commit itself)', async () => {
    const h = createHarness()
    let commits = 0
    const outcome = await h.spawn({ onPtySpawnCommitted: () => commits++ })
    expect(commits).toBe(1)
    h.provider.getPty(outcome.result.id)?.spawnOptions.onPtySpawnCommitted?.()
    expect(commits).toBe(1)
  })
})
