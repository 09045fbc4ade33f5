import { describe, expect, it } from 'vitest'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  type ClaimedOwnerRegistry,
} from '../../src/spawn/index.js'
import { createHarness } from './controller-harness.js'

describe('spawn pipeline integration', () => {
  it('re-attaches a slot to its live owner, and spawns fresh once the owner exited', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    const slot = { scopeId: 'repo', key: 'pane-1' }
    const first = await h.controller.spawn({ slot })
    const again = await h.controller.spawn({ slot })
    expect(again).toMatchObject({ id: first.id, incarnationId: first.incarnationId, isReattach: true })
    expect(h.events.filter((entry) => entry.type === 'spawn').map((entry) => entry.event)).toEqual([
      expect.objectContaining({ ptyId: first.id, isReattach: false }),
      expect.objectContaining({ ptyId: first.id, isReattach: true }),
    ])
    h.provider.emitExit(first.id, { exitCode: 0 })
    // The proven exit retired the slot binding.
    expect(store.getLiveOwner(slot)).toBeNull()
    const fresh = await h.controller.spawn({ slot })
    expect(fresh.isReattach).toBe(false)
    expect(fresh.id).not.toBe(first.id)
  })

  it('keeps a stop intent across a re-attach to the same process', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const slot = { key: 'pane' }
    const { id, incarnationId } = await h.controller.spawn({ slot })
    h.controller.kill(id)
    // The slot's spawn waits for the stop; its window ends unverified, and the process the host
    // still holds is re-attached to (see pty-controller-respawn-while-stopping.test.ts).
    await expect(h.run(h.controller.spawn({ slot }))).resolves.toMatchObject({ id, incarnationId, isReattach: true })
    h.provider.emitExit(id, { exitCode: 0, signal: 1 })
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }, { kind: 'operator_close' }])
  })

  it('revives a PTY whose stop went unverified when its slot re-attaches to it', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const slot = { key: 'pane' }
    const { id, incarnationId } = await h.controller.spawn({ slot })
    h.controller.kill(id)
    await h.settle()
    expect(h.controller.write(id, 'x', 'driving')).toBe(false)
    const again = await h.controller.spawn({ slot })
    expect(again).toMatchObject({ id, incarnationId, isReattach: true })
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'live' })
    expect(h.controller.write(id, 'x', 'driving')).toBe(true)
    h.provider.setShutdownBehaviour(id, 'confirm')
    h.controller.kill(id)
    expect(h.exits().map((exit) => exit.cause)).toEqual([
      { kind: 'unknown', reason: 'stop_unverified' },
      { kind: 'operator_close' },
    ])
  })

  it('joins a claim while its owner lives, and releases it when the owner exits', async () => {
    const claims = createClaimedOwnerRegistry()
    const h = createHarness({ controller: { claims } })
    const claim = { key: 'agent-7' }
    const created = await h.controller.spawn({ claim })
    const adopted = await h.controller.spawn({ claim })
    expect(created.claimDisposition).toBe('created')
    expect(adopted).toMatchObject({ id: created.id, claimDisposition: 'adopted' })
    h.provider.emitExit(created.id, { exitCode: 1 })
    expect(claims.find(claim)).toBeNull()
    const next = await h.controller.spawn({ claim })
    expect(next.claimDisposition).toBe('created')
    expect(next.id).not.toBe(created.id)
  })

  it('never publishes an adopted claim owner that exited while the spawn was finishing', async () => {
    const inner = createClaimedOwnerRegistry()
    let exitAfterAdopting = false
    const claims: ClaimedOwnerRegistry = {
      ...inner,
      ensure: async (args) => {
        const ensured = await inner.ensure(args)
        // The owner exits after it was re-proven live, before the spawn publishes it.
        if (exitAfterAdopting && ensured.disposition === 'adopted') h.provider.emitExit(ensured.owner.ptyId, { exitCode: 1 })
        return ensured
      },
    }
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { claims, runtime } })
    const claim = { key: 'agent-7' }
    const created = await h.controller.spawn({ claim })
    exitAfterAdopting = true
    await expect(h.controller.spawn({ claim })).rejects.toMatchObject({ code: 'exited_during_start', ptyId: created.id })
    expect(h.exits()).toEqual([expect.objectContaining({ ptyId: created.id, code: 1 })])
    expect(h.controller.hasPty(created.id)).toBe(false)
    expect(h.controller.writeWithSettlement(created.id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(h.controller.inventory().allLivePtyIds).toEqual(new Set())
    expect(runtime.isPtyRegistered(created.id)).toBe(false)
    expect(claims.find(claim)).toBeNull()
  })

  it('never publishes a re-attached slot owner that exited after the pipeline committed it', async () => {
    const inner = createInMemoryPtyRuntime()
    let exitOnRelease: string | null = null
    const runtime: typeof inner = {
      ...inner,
      acquireScopeSpawn: async (scopeId) => {
        const release = await inner.acquireScopeSpawn(scopeId)
        return () => {
          release()
          // The lease is released after the commit: the owner exits in that last window.
          if (exitOnRelease !== null) h.provider.emitExit(exitOnRelease, { exitCode: 0, signal: 9 })
        }
      },
    }
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { runtime, store } })
    const slot = { key: 'pane' }
    const first = await h.controller.spawn({ slot })
    exitOnRelease = first.id
    await expect(h.controller.spawn({ slot })).rejects.toMatchObject({ code: 'exited_during_start', ptyId: first.id })
    expect(h.exits()).toEqual([expect.objectContaining({ ptyId: first.id, cause: { kind: 'signaled', signal: 9 } })])
    expect(h.controller.hasPty(first.id)).toBe(false)
    expect(h.controller.inventory().allLivePtyIds).toEqual(new Set())
    expect(runtime.isPtyRegistered(first.id)).toBe(false)
    expect(runtime.inspect().executionContexts).toEqual([])
    expect(store.getLiveOwner(slot)).toBeNull()
    exitOnRelease = null
    await expect(h.controller.spawn({ slot })).resolves.toMatchObject({ isReattach: false })
  })

  it('counts output in the runtime and reports the sequence on each data event', async () => {
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { runtime } })
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    h.provider.emitData(id, 'de')
    expect(h.data().map((event) => event.seq)).toEqual([3, 5])
    expect(runtime.getPtyOutputSequence(id)).toBe(5)
    expect(runtime.isPtyRegistered(id)).toBe(true)
    h.provider.emitExit(id, { exitCode: 0 })
    expect(runtime.isPtyRegistered(id)).toBe(false)
    // A proven exit lets the runtime forget the PTY's per-id state.
    expect(runtime.inspect().outputSequences).toEqual([])
    expect(runtime.inspect().executionContexts).toEqual([])
  })

  it('keeps the runtime state of a PTY whose exit is unverified: it may still be re-attached', async () => {
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { runtime } })
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    h.provider.emitExit(id, { exitCode: -1, observed: 'synthetic' })
    expect(h.exits()).toEqual([expect.objectContaining({ cause: { kind: 'unknown', reason: 'stop_unverified' } })])
    expect(runtime.getPtyOutputSequence(id)).toBe(3)
  })

  it('counts output itself when the runtime has no notePtyOutput', async () => {
    const h = createHarness({ controller: { runtime: {} } })
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abcd')
    expect(h.data().map((event) => event.seq)).toEqual([4])
  })

  it('rejects invalid spawn options with the pipeline error, publishing nothing', async () => {
    const h = createHarness()
    await expect(h.controller.spawn({ cols: 0 })).rejects.toMatchObject({ code: 'invalid_spawn_options' })
    expect(h.events).toEqual([])
  })

  it('reports a spawn on an unregistered host as execution_owner_unavailable', async () => {
    const h = createHarness()
    await expect(h.controller.spawn({ hostId: 'ssh:nowhere' })).rejects.toMatchObject({ code: 'execution_owner_unavailable' })
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })
})
