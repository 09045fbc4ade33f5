/**
 * A host kills (or stops and waits for) an id whose spawn has not reached the provider yet — queued
 * behind its slot's turn (another spawn or adoption of the slot, a `claimSlotCreate` claim) or
 * behind the stop of the id's previous PTY (a restart) — or whose `attach` is in flight. Before,
 * `kill` answered `false` (or `true` for the previous PTY alone), nothing was marked, and the
 * process the spawn then started ran on; `stopAndWait` answered `true` before it even started. Now
 * such a spawn or attach is marked as a spawn in flight is: what it publishes under the id is
 * stopped as soon as it lands (`operator_close`, fenced by its incarnation), and `stopAndWait`
 * waits for it. Over node-pty: test/node-pty/stop-while-spawning.node-pty.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createInMemoryPtyRuntime, createInMemorySlotStore, type PtySlotStore } from '../../src/spawn/index.js'
import { createHarness, type Harness, holdAttaches, slotOwnedElsewhere, queueAdoption } from './controller-harness.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

/** `[incarnationId, cause]` of every exit the controller published, in order. */
function exitCauses(h: Harness): unknown[][] {
  return h.exits().map((exit) => [exit.incarnationId, exit.cause])
}

/**
 * A restart of `job` queued behind the stop of its previous PTY, which is slow to die (its exit
 * comes when the test emits it): the previous PTY's reply and the restart's spawn.
 */
async function restartBehindSlowStop(h: Harness): Promise<{ old: Awaited<ReturnType<Harness['controller']['spawn']>>; restarted: ReturnType<Harness['controller']['spawn']> }> {
  h.provider.scriptNextSpawn({ id: 'job', shutdown: 'never_confirm' })
  const old = await h.run(h.controller.spawn({ sessionId: 'job' }))
  await h.settle()
  // "restart": kill, then spawn at once (the spawn waits for the stop to settle).
  expect(h.controller.kill('job')).toBe(true)
  const restarted = h.controller.spawn({ sessionId: 'job' })
  await h.settle()
  return { old, restarted }
}

/**
 * The previous PTY of {@link restartBehindSlowStop} dies now: the restart lands, a new incarnation,
 * and is stopped at once — nothing is left running, and both exits are operator closes.
 */
async function expectRestartStoppedWhenLanded(h: Harness, old: Awaited<ReturnType<typeof restartBehindSlowStop>>['old'], restarted: Awaited<ReturnType<typeof restartBehindSlowStop>>['restarted']): Promise<void> {
  h.provider.emitExit('job', { exitCode: 0, signal: 1 })
  const reply = await h.run(restarted)
  await h.settle()
  expect(reply.incarnationId).not.toBe(old.incarnationId)
  expect(h.provider.livePtyIds()).toEqual([])
  expect(shutdownCalls(h)).toContainEqual(['job', { expectedIncarnationId: reply.incarnationId }])
  expect(exitCauses(h)).toEqual([
    [old.incarnationId, { kind: 'operator_close' }],
    [reply.incarnationId, { kind: 'operator_close' }],
  ])
}

function slotHarness(): Harness {
  return createHarness({ controller: { store: createInMemorySlotStore(), runtime: createInMemoryPtyRuntime() } })
}

describe('kill of an id whose spawn is queued, or whose attach is in flight', () => {
  it("a spawn queued behind its slot's turn (a claimSlotCreate claim): true, and its process is stopped when it lands", async () => {
    const h = slotHarness()
    const release = h.controller.claimSlotCreate({ key: 'pane' })
    const spawned = h.controller.spawn({ sessionId: 'tab-1', slot: { key: 'pane' } })
    await h.settle()
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([]) // still waiting for the slot
    expect(h.controller.kill('tab-1')).toBe(true)
    release()
    const reply = await h.run(spawned)
    await h.settle()
    expect(reply.id).toBe('tab-1')
    expect(shutdownCalls(h)).toEqual([['tab-1', { expectedIncarnationId: reply.incarnationId }]])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits().map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['tab-1', reply.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.hasPty('tab-1')).toBe(false)
    expect(h.controller.kill('tab-1')).toBe(false) // nothing left marked
  })

  it("a spawn of the slot queued after the kill is not stopped by it: it starts a new process once the killed one ended", async () => {
    const h = slotHarness()
    const release = h.controller.claimSlotCreate({ key: 'pane' })
    const first = h.controller.spawn({ sessionId: 'tab-1', slot: { key: 'pane' } })
    expect(h.controller.kill('tab-1')).toBe(true)
    const second = h.controller.spawn({ sessionId: 'tab-1', slot: { key: 'pane' } })
    release()
    const a = await h.run(first)
    const b = await h.run(second)
    await h.settle()
    expect(b.incarnationId).not.toBe(a.incarnationId)
    expect(shutdownCalls(h)).toEqual([['tab-1', { expectedIncarnationId: a.incarnationId }]])
    expect(h.provider.getPty('tab-1')).toMatchObject({ live: true, incarnationId: b.incarnationId })
    expect(exitCauses(h)).toEqual([[a.incarnationId, { kind: 'operator_close' }]])
  })

  it('a restart queued behind the stop of the previous PTY: a kill after it is queued stops the new process too', async () => {
    const h = createHarness()
    const { old, restarted } = await restartBehindSlowStop(h)
    // Then the job is cancelled: kill again, before the restart started its process.
    expect(h.controller.kill('job')).toBe(true)
    await expectRestartStoppedWhenLanded(h, old, restarted)
  })

  it('a restart whose previous PTY just ended but that has not started its process yet: true, and it is stopped when it lands', async () => {
    const h = createHarness()
    const { restarted } = await restartBehindSlowStop(h)
    let answer: boolean | undefined
    // The old PTY's exit: the restart is still waiting (it resumes a few turns later).
    h.controller.once('exit', () => {
      answer = h.controller.kill('job')
    })
    h.provider.emitExit('job', { exitCode: 0, signal: 1 })
    const reply = await h.run(restarted)
    await h.settle()
    expect(answer).toBe(true)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([
      [expect.any(String), { kind: 'operator_close' }],
      [reply.incarnationId, { kind: 'operator_close' }],
    ])
  })

  it('an attach in flight: true, and the PTY it attaches is stopped as soon as it is published', async () => {
    const h = createHarness()
    // A PTY this controller does not track (one an earlier run of the app left on the host).
    const orphan = await h.provider.spawn({ sessionId: 'job-6' })
    const attaching = h.controller.attach('job-6')
    expect(h.controller.kill('job-6')).toBe(true)
    expect(await h.run(attaching)).toBe(true)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['job-6', { expectedIncarnationId: orphan.incarnationId }]])
    expect(h.provider.getPty('job-6')?.live).toBe(false)
    expect(exitCauses(h)).toEqual([[orphan.incarnationId, { kind: 'operator_close' }]])
    // An attach begun after the kill is not stopped by it.
    await h.provider.spawn({ sessionId: 'job-9' })
    expect(h.controller.kill('job-9')).toBe(false)
    expect(await h.run(h.controller.attach('job-9'))).toBe(true)
    await h.settle()
    expect(h.provider.getPty('job-9')?.live).toBe(true)
  })

  it('stopAndWait of an id whose spawn is queued behind its slot waits for it, and stops what it published', async () => {
    const h = slotHarness()
    const release = h.controller.claimSlotCreate({ key: 'pane' })
    const spawned = h.controller.spawn({ sessionId: 'tab-1', slot: { key: 'pane' } })
    await h.settle()
    // Nobody holds the id yet: before, that read as "stopped" at once (true), and the spawn then ran.
    const stopped = h.controller.stopAndWait('tab-1', { timeoutMs: 10_000 })
    expect(h.controller.hasPty('tab-1')).toBe(null)
    release()
    const reply = await h.run(spawned)
    expect(await h.run(stopped)).toBe(true)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([[reply.incarnationId, { kind: 'operator_close' }]])
  })

  it('stopAndWait while a restart is queued behind the stop of the previous PTY: waits for it and stops it too', async () => {
    const h = createHarness()
    const { old, restarted } = await restartBehindSlowStop(h)
    // The job is cancelled: before, this verified the previous PTY gone (true) and the restart ran on.
    let verdict: boolean | undefined
    const stopped = h.controller.stopAndWait('job', { timeoutMs: 10_000 }).then((answer) => (verdict = answer))
    await h.settle()
    h.provider.emitExit('job', { exitCode: 0, signal: 1 })
    const reply = await h.run(restarted)
    await h.run(stopped)
    await h.settle()
    expect(verdict).toBe(true)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([
      [old.incarnationId, { kind: 'operator_close' }],
      [reply.incarnationId, { kind: 'operator_close' }],
    ])
  })

  it('stopAndWait waits only for the spawns begun before it: one queued after it runs', async () => {
    const h = slotHarness()
    h.provider.scriptNextSpawn({ id: 'tab', hang: true })
    const first = h.controller.spawn({ sessionId: 'tab', slot: { key: 'pane' } })
    await h.settle()
    const stopped = h.controller.stopAndWait('tab', { timeoutMs: 10_000 })
    // A restart of the tab, queued behind the first spawn's slot turn, begun after the stopAndWait.
    const second = h.controller.spawn({ sessionId: 'tab', slot: { key: 'pane' } })
    h.provider.releaseSpawn('tab')
    const a = await h.run(first)
    expect(await h.run(stopped)).toBe(true)
    const b = await h.run(second)
    await h.settle()
    expect(b.incarnationId).not.toBe(a.incarnationId)
    expect(h.provider.getPty('tab')).toMatchObject({ live: true, incarnationId: b.incarnationId })
    expect(exitCauses(h)).toEqual([[a.incarnationId, { kind: 'operator_close' }]])
  })
})

describe('an attach whose caller gave up (its signal aborted) after a kill marked it', () => {
  it('the kill answered true, so the process the host attaches is stopped once it answers (before: left running)', async () => {
    const h = createHarness()
    const orphan = await h.provider.spawn({ sessionId: 'job-8' })
    const answer = holdAttaches(h)
    const abort = new AbortController()
    const attaching = h.controller.attach('job-8', { signal: abort.signal })
    await h.settle()
    expect(h.controller.kill('job-8')).toBe(true)
    abort.abort()
    expect(await h.run(attaching)).toBe(false)
    answer()
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['job-8', { expectedIncarnationId: orphan.incarnationId, immediate: true }]])
    expect(h.provider.getPty('job-8')?.live).toBe(false)
  })

  it('one nobody killed is left running, as any attach given up on', async () => {
    const h = createHarness()
    await h.provider.spawn({ sessionId: 'job-9' })
    const answer = holdAttaches(h)
    const abort = new AbortController()
    const attaching = h.controller.attach('job-9', { signal: abort.signal })
    await h.settle()
    abort.abort()
    expect(await h.run(attaching)).toBe(false)
    answer()
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty('job-9')?.live).toBe(true)
  })
})

describe('stopAndWait that gives up while a spawn is still queued, or an attach in flight', () => {
  // Before, the spawn or attach still coming at the deadline was "left alone" after the `false`:
  // the process it then started or attached ran on, though the caller had asked for a stop.

  it("a spawn queued behind its slot's turn past the deadline: false, and its process is stopped when it lands", async () => {
    const h = slotHarness()
    const release = h.controller.claimSlotCreate({ key: 'pane' })
    const spawned = h.controller.spawn({ sessionId: 'tab-1', slot: { key: 'pane' } })
    await h.settle()
    expect(await h.run(h.controller.stopAndWait('tab-1', { timeoutMs: 1_000 }))).toBe(false)
    release()
    const reply = await h.run(spawned)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['tab-1', { expectedIncarnationId: reply.incarnationId }]])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([[reply.incarnationId, { kind: 'operator_close' }]])
  })

  it('a restart queued behind the slow stop of the previous PTY past the deadline: false, and the new process is stopped when it lands', async () => {
    const h = createHarness()
    const { old, restarted } = await restartBehindSlowStop(h)
    expect(await h.run(h.controller.stopAndWait('job', { timeoutMs: 1_000 }))).toBe(false)
    await expectRestartStoppedWhenLanded(h, old, restarted)
  })

  it('an attach in flight past the deadline: false, and the PTY it attaches is stopped as soon as it is published', async () => {
    const h = createHarness()
    const orphan = await h.provider.spawn({ sessionId: 'job-6' })
    const answer = holdAttaches(h)
    const attaching = h.controller.attach('job-6')
    expect(await h.run(h.controller.stopAndWait('job-6', { timeoutMs: 1_000 }))).toBe(false)
    answer()
    expect(await h.run(attaching)).toBe(true)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['job-6', { expectedIncarnationId: orphan.incarnationId }]])
    expect(h.provider.getPty('job-6')?.live).toBe(false)
    expect(exitCauses(h)).toEqual([[orphan.incarnationId, { kind: 'operator_close' }]])
  })
})

describe('kill of a slot owner whose adoption waits for its turn', () => {

  it('kill answers true, and the owner the adoption attaches is stopped as soon as it is published', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const { release, adopting } = await queueAdoption(h)
    // Before: false — nothing tracked, nothing coming — and the adoption then attached it, running on.
    expect(h.controller.kill(owner.id)).toBe(true)
    release()
    const adopted = await h.run(adopting)
    await h.settle()
    expect(adopted === null || adopted.result.incarnationId === owner.incarnationId).toBe(true)
    expect(shutdownCalls(h)).toEqual([[owner.id, { expectedIncarnationId: owner.incarnationId }]])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([[owner.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.kill(owner.id)).toBe(false) // nothing left marked
    await other.dispose({ stopPtys: false })
  })

  it('the controller disposed while the marked adoption still waits for its turn: the kill still stops the owner (before: true, and it ran on)', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    // Disposal refuses the adoption in its turn: it never attaches the owner the kill marked.
    const disposed = h.controller.dispose()
    expect(await h.run(adopting).catch((error: unknown) => error)).toMatchObject({ code: 'controller_disposed' })
    await h.run(disposed)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([[owner.id, { expectedIncarnationId: owner.incarnationId, immediate: true }]])
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    release()
    await other.dispose({ stopPtys: false })
  })

  it('the same for an owner only the persisted view names, read asynchronously (a restored session)', async () => {
    const inner = createInMemorySlotStore()
    const store: PtySlotStore = { ...inner, getLiveOwner: () => null, getPersistedOwner: async (slot) => inner.getPersistedOwner(slot) }
    const { h, owner, other } = await slotOwnedElsewhere(store)
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    release()
    await h.run(adopting)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    expect(exitCauses(h)).toEqual([[owner.incarnationId, { kind: 'operator_close' }]])
    await other.dispose({ stopPtys: false })
  })

  it('stopAndWait of the owner does not wait for the turn: it stops the owner where it runs (true), and marks the adoption', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const { release, adopting } = await queueAdoption(h)
    // The turn is held past the stop's deadline: an adoption never starts a process, and the one it
    // would attach runs already — so the stop ends it where it runs, as for any id, and verifies it.
    expect(await h.run(h.controller.stopAndWait(owner.id, { timeoutMs: 1_000 }))).toBe(true)
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    // Not "coming": the adoption cannot bring a process back, so absence stays proven.
    expect(h.controller.hasPty(owner.id)).toBe(false)
    release()
    expect(await h.run(adopting)).toBeNull() // its owner is gone
    await other.dispose({ stopPtys: false })
  })

  it('stopAndWait of the owner whose stop the host cannot carry out: false, and what the adoption attaches is stopped as it lands', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    h.provider.setShutdownBehaviour(owner.id, 'fail')
    const { release, adopting } = await queueAdoption(h)
    expect(await h.run(h.controller.stopAndWait(owner.id, { timeoutMs: 1_000 }))).toBe(false)
    h.provider.setShutdownBehaviour(owner.id, 'confirm')
    release()
    await h.run(adopting)
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(exitCauses(h)).toEqual([[owner.incarnationId, { kind: 'operator_close' }]])
    await other.dispose({ stopPtys: false })
  })

  it('a kill of an id that is not the slot owner answers false while the adoption waits', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill('another-tab')).toBe(false)
    release()
    const adopted = await h.run(adopting)
    await h.settle()
    expect(adopted).toMatchObject({ materialized: true, result: { id: owner.id, incarnationId: owner.incarnationId } })
    expect(h.provider.getPty(owner.id)?.live).toBe(true)
    expect(shutdownCalls(h)).toEqual([])
    await other.dispose({ stopPtys: false })
  })

  it('a kill of an owner whose death this controller proved answers false while the adoption waits (nothing to stop)', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    const owner = await h.run(h.controller.spawn({ slot: { key: 'pane' } }))
    // The store still names it (its binding is retired by the next slot spawn, which proves absence).
    h.provider.emitExit(owner.id, { exitCode: 0 })
    await h.settle()
    store.bindOwner({ key: 'pane' }, { ptyId: owner.id, hostId: 'local', incarnationId: owner.incarnationId! })
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(false)
    release()
    expect(await h.run(adopting)).toBeNull()
  })

  it('an adoption begun after the kill is not stopped by it', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    expect(h.controller.kill(owner.id)).toBe(false) // not tracked, nothing coming: not looked for
    const adopted = await h.run(h.controller.adoptSlot({ slot: { key: 'pane' } }))
    await h.settle()
    expect(adopted).toMatchObject({ materialized: true })
    expect(h.provider.getPty(owner.id)?.live).toBe(true)
    await other.dispose({ stopPtys: false })
  })
})

describe('a queued spawn that never runs', () => {
  it("refused by its slot's turn (a slotCreateClaim of another slot): nothing stays coming — hasPty false, kill false", async () => {
    const h = slotHarness()
    const otherClaim = h.controller.claimSlotCreate({ key: 'other' })
    const refused = await h.controller.spawn({ sessionId: 'tab', slot: { key: 'pane' }, slotCreateClaim: otherClaim }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TypeError)
    expect(h.controller.hasPty('tab')).toBe(false)
    expect(h.controller.kill('tab')).toBe(false)
    expect(await h.run(h.controller.stopAndWait('tab', { timeoutMs: 1_000 }))).toBe(true)
    otherClaim()
  })
})

describe("a terminal handle's kill and stop are its own incarnation's", () => {
  it('the old terminal stopped while its restart is queued: the restart runs', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'tab', shutdown: 'never_confirm' })
    const old = await h.run(h.controller.spawnTerminal({ sessionId: 'tab' }))
    await h.settle()
    // "restart the terminal": kill, then spawn (queued until the old one's stop settles) …
    expect(h.controller.kill('tab')).toBe(true)
    const restarted = h.controller.spawnTerminal({ sessionId: 'tab' })
    await h.settle()
    // … while the old terminal's view closes: its handle kills and stops itself, not the restart.
    expect(old.kill()).toBe(true)
    const oldStopped = old.stop({ timeoutMs: 10_000 })
    await h.settle()
    h.provider.emitExit('tab', { exitCode: 0, signal: 1 })
    const next = await h.run(restarted)
    expect(await h.run(oldStopped)).toBe(true)
    await h.settle()
    expect(h.provider.getPty('tab')).toMatchObject({ live: true, incarnationId: next.incarnationId })
    expect(h.exits().map((exit) => exit.incarnationId)).toEqual([old.incarnationId])
  })

  it("an ended terminal's kill while the id's respawn is in flight: false, and the respawn runs", async () => {
    const h = createHarness()
    const old = await h.run(h.controller.spawnTerminal({ sessionId: 'tab' }))
    h.provider.emitExit('tab', { exitCode: 0 })
    await h.settle()
    h.provider.scriptNextSpawn({ id: 'tab', hang: true })
    const respawned = h.controller.spawn({ sessionId: 'tab' })
    await h.settle()
    // Before, the dead terminal's handle marked the respawn: its process was stopped when it landed.
    expect(old.kill()).toBe(false)
    h.provider.releaseSpawn('tab')
    const next = await h.run(respawned)
    await h.settle()
    expect(h.provider.getPty('tab')).toMatchObject({ live: true, incarnationId: next.incarnationId })
    expect(shutdownCalls(h)).toEqual([])
  })
})
