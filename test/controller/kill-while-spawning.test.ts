/**
 * A host kills a PTY whose spawn (`sessionId`) is still in flight: an orchestrator's timeout
 * handler (`setTimeout(() => controller.kill(jobId), ms)`) fired during a burst of spawns, a tab
 * closed while its terminal is still starting. Before, `kill` answered `false`, dispatched nothing,
 * and when the spawn landed its process ran on (leaked; a caller that ignores the boolean never
 * learned). Now the stop is marked for that spawn: the process it publishes is stopped as soon as
 * it lands (its exit an operator close, fenced by its incarnation), and `kill` answers `true`.
 * Over node-pty: test/node-pty/stop-while-spawning.node-pty.test.ts. A spawn still queued (behind
 * its slot's turn, or a restart's wait) and an attach in flight: kill-while-queued.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createClaimedOwnerRegistry, createInMemoryPtyRuntime, createInMemorySlotStore } from '../../src/spawn/index.js'
import { createHarness, type Harness } from './controller-harness.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

describe('kill of an id whose spawn is in flight', () => {
  it('answers true, and stops the process the spawn publishes as soon as it lands: operator_close, fenced by its incarnation', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-1', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-1' })
    await h.settle()
    expect(h.provider.pendingSpawnCount()).toBe(1) // the provider started it; the reply is still on its way
    expect(h.controller.kill('job-1')).toBe(true)
    expect(shutdownCalls(h)).toEqual([]) // nothing to address yet: no incarnation is known
    h.provider.releaseSpawn('job-1')
    const reply = await h.run(spawned)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['job-1', { expectedIncarnationId: reply.incarnationId }]])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.events.filter((entry) => entry.type === 'spawn' || entry.type === 'exit').map((entry) => entry.type)).toEqual(['spawn', 'exit'])
    expect(h.exits().map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['job-1', reply.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.hasPty('job-1')).toBe(false)
    // The stop was that spawn's: nothing is left marked.
    expect(h.controller.kill('job-1')).toBe(false)
  })

  it('a spawn that fails meanwhile leaves nothing to stop, and nothing runs', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-2', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-2' }).catch((error: unknown) => error)
    await h.settle()
    expect(h.controller.kill('job-2')).toBe(true)
    h.provider.failSpawn('job-2', new Error('ENOENT'))
    expect(await h.run(spawned)).toBeInstanceOf(Error)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits()).toEqual([])
    expect(h.controller.kill('job-2')).toBe(false)
    // Nor does the kill linger for the id: the next spawn of it runs.
    const next = await h.run(h.controller.spawn({ sessionId: 'job-2' }))
    await h.settle()
    expect(h.provider.getPty('job-2')).toMatchObject({ live: true, incarnationId: next.incarnationId })
    expect(shutdownCalls(h)).toEqual([])
  })

  it('a later spawn of the same id is not stopped by the kill of the earlier one', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-3', hang: true })
    const first = h.controller.spawn({ sessionId: 'job-3' })
    await h.settle()
    expect(h.controller.kill('job-3')).toBe(true)
    h.provider.releaseSpawn('job-3')
    const a = await h.run(first)
    await h.settle()
    const b = await h.run(h.controller.spawn({ sessionId: 'job-3' }))
    await h.settle()
    expect(b.incarnationId).not.toBe(a.incarnationId)
    expect(h.provider.getPty('job-3')).toMatchObject({ live: true, incarnationId: b.incarnationId })
    expect(shutdownCalls(h)).toEqual([['job-3', { expectedIncarnationId: a.incarnationId }]])
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[a.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.hasPty('job-3')).toBe(true)
  })

  it('a spawn of the same id started after the kill, while the killed one is still in flight, is not stopped', async () => {
    const h = createHarness()
    // The second spawn's provider call comes once the test opens it: the first one's process has
    // been stopped by then (the fake refuses an id that is live).
    const spawn = h.provider.spawn.bind(h.provider)
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let calls = 0
    h.provider.spawn = async (...args) => {
      calls += 1
      if (calls === 2) await gate
      return spawn(...args)
    }
    h.provider.scriptNextSpawn({ id: 'job-4', hang: true })
    const first = h.controller.spawn({ sessionId: 'job-4' })
    await h.settle()
    expect(h.controller.kill('job-4')).toBe(true)
    const second = h.controller.spawn({ sessionId: 'job-4' })
    await h.settle()
    h.provider.releaseSpawn('job-4')
    const a = await h.run(first)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    open()
    const b = await h.run(second)
    await h.settle()
    expect(h.provider.getPty('job-4')).toMatchObject({ live: true, incarnationId: b.incarnationId })
    expect(shutdownCalls(h)).toEqual([['job-4', { expectedIncarnationId: a.incarnationId }]])
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[a.incarnationId, { kind: 'operator_close' }]])
  })

  it('a process that exits on its own as the spawn lands keeps its own cause, and no stop is sent', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-5', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-5' })
    await h.settle()
    expect(h.controller.kill('job-5')).toBe(true)
    // Its exit comes during the publication (held behind the `spawn` event), before the stop.
    h.controller.once('spawn', () => h.provider.emitExit('job-5', { exitCode: 3 }))
    h.provider.releaseSpawn('job-5')
    const reply = await h.run(spawned)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[reply.incarnationId, { kind: 'exited', exitCode: 3 }]])
  })

  it('a listener of the publication that stops the PTY itself: one stop, not two', async () => {
    const h = createHarness()
    // Its stop is not confirmed yet when the spawn's own check comes (a provider slower to exit).
    h.provider.scriptNextSpawn({ id: 'job-8', hang: true, shutdown: 'never_confirm' })
    const spawned = h.controller.spawn({ sessionId: 'job-8' })
    await h.settle()
    expect(h.controller.kill('job-8')).toBe(true)
    h.controller.once('spawn', (event) => expect(h.controller.kill(event.ptyId)).toBe(true))
    h.provider.releaseSpawn('job-8')
    const reply = await h.run(spawned)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['job-8', { expectedIncarnationId: reply.incarnationId }]])
    expect(h.provider.getPty('job-8')?.live).toBe(true)
    expect(h.exits()).toEqual([])
  })

  it("a claim spawn that adopts another id's PTY leaves nothing to stop: the claim's owner runs on", async () => {
    const claims = createClaimedOwnerRegistry()
    const h = createHarness({ controller: { claims, runtime: createInMemoryPtyRuntime() } })
    const owner = await h.run(h.controller.spawn({ sessionId: 'agent-a', claim: { key: 'agent' } }))
    await h.settle()
    // A second caller asks for the same claim under an id of its own, and kills that id at once.
    const adopting = h.controller.spawn({ sessionId: 'agent-b', claim: { key: 'agent' } })
    h.controller.kill('agent-b')
    const reply = await h.run(adopting)
    await h.settle()
    expect(reply).toMatchObject({ id: 'agent-a', claimDisposition: 'adopted' })
    // Before, the kill of 'agent-b' (which never ran) stopped 'agent-a', the first caller's.
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty('agent-a')).toMatchObject({ live: true, incarnationId: owner.incarnationId })
    expect(h.exits()).toEqual([])
    expect(h.controller.hasPty('agent-a')).toBe(true)
  })

  it("a slot spawn that adopts the slot's owner under another id leaves nothing to stop: the owner runs on", async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store, runtime: createInMemoryPtyRuntime() } })
    const owner = await h.run(h.controller.spawn({ sessionId: 'pane-a', slot: { key: 'pane' } }))
    await h.settle()
    const adopting = h.controller.spawn({ sessionId: 'pane-b', slot: { key: 'pane' } })
    // The slot's spawns take turns (the slot gate): its spawn is in flight a few microtasks later.
    let killed = false
    for (let turn = 0; turn < 10 && !killed; turn += 1) {
      await Promise.resolve()
      killed = h.controller.kill('pane-b')
    }
    expect(killed).toBe(true)
    const reply = await h.run(adopting)
    await h.settle()
    expect(reply).toMatchObject({ id: 'pane-a', isReattach: true })
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty('pane-a')).toMatchObject({ live: true, incarnationId: owner.incarnationId })
    expect(h.exits()).toEqual([])
  })

  it('answers true after dispose too (a stop is committed: the spawn is undone as it lands), and the spawn is undone as before', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-7', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-7' }).catch((error: unknown) => error)
    await h.settle()
    const disposed = h.controller.dispose()
    // (Before: false, though its process is stopped when it lands — see kill-after-dispose.test.ts.)
    expect(h.controller.kill('job-7')).toBe(true)
    h.provider.releaseSpawn('job-7')
    await h.run(disposed)
    expect(await h.run(spawned)).toBeInstanceOf(Error)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
  })
})
