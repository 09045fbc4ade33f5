/**
 * `kill(ownerId)` while an `adoptSlot` waits for its turn marks the adoption only when the stop it
 * commits can reach that very owner, and no other process: the slot store must attest its
 * incarnation (the fence of a stop that may come long after the `kill`, when the adoption ends),
 * and its host must have a provider here (as `attach` on a host without one answers `false`).
 * Otherwise nothing is marked, and `kill` answers `false` for it ("false on doubt") rather than a
 * `true` that is either not carried out or carried out on a newer process under the same id.
 * And the adoption's attach is fenced by that incarnation too: a newer process under the id is
 * neither attached nor stopped. A provider without incarnation ids is still adopted (unfenced).
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createInMemorySlotStore, type PtySlotOwner, type PtySlotStore } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createHarness, slotOwnedElsewhere, type Harness, queueAdoption } from './controller-harness.js'
import { withoutIncarnations } from '../support/without-incarnations.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

/** The owner as a store that does not keep incarnations names it (one written by an older version, or for a provider without them). */
function withoutIncarnation(owner: PtySlotOwner | null): PtySlotOwner | null {
  return owner === null ? null : { ptyId: owner.ptyId, hostId: owner.hostId }
}

describe('the slot store names the owner without an incarnation', () => {
  it('kill answers false (nothing could fence a later stop), and a respawn of the id meanwhile runs on (before: true, and an unfenced stop ended the respawn)', async () => {
    const inner = createInMemorySlotStore()
    const store: PtySlotStore = {
      ...inner,
      getLiveOwner: (slot) => withoutIncarnation(inner.getLiveOwner(slot)),
      getPersistedOwner: async (slot) => withoutIncarnation(await inner.getPersistedOwner(slot)),
    }
    // Another window of the app owns the slot: this controller does not track its PTY.
    const { h, owner, other } = await slotOwnedElsewhere(store)
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(false)
    // The owner ends on its own, and the other window starts a new process under the same id.
    h.provider.emitExit(owner.id, { exitCode: 0 })
    await h.settle()
    const respawn = await h.run(other.spawn({ sessionId: owner.id }))
    expect(respawn.incarnationId).not.toBe(owner.incarnationId)
    release()
    expect(await h.run(adopting)).toBeNull()
    await h.settle()
    expect(h.provider.getPty(owner.id)).toMatchObject({ live: true, incarnationId: respawn.incarnationId })
    expect(shutdownCalls(h)).toEqual([])
    await other.dispose({ stopPtys: false })
  })
})

describe('the slot store names a host this controller has no provider for', () => {
  it('kill answers false, as for an attach on that host (before: true, and nothing was ever stopped)', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    // The owner runs on a host only another window reaches.
    const remote = createFakePtyProvider({ scheduling: 'manual', idPrefix: 'remote-', hostId: 'ssh:box' })
    const other = createPtyController({ providers: { 'ssh:box': remote }, store })
    const owner = await h.run(other.spawn({ slot: { key: 'pane' }, hostId: 'ssh:box' }))
    await remote.settle()
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(false)
    release()
    // This controller cannot attach it: no owner it could adopt.
    expect(await h.run(adopting)).toBeNull()
    await h.settle()
    await remote.settle()
    expect(remote.getPty(owner.id)?.live).toBe(true)
    expect(h.errors()).toEqual([])
    await other.dispose({ stopPtys: false })
  })

  it('a PTY live under the id here is still killed: true (the marked adoption is not what answers)', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    store.bindOwner({ key: 'pane' }, { ptyId: 'shared', hostId: 'ssh:box' })
    const local = await h.run(h.controller.spawn({ sessionId: 'shared' }))
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill('shared')).toBe(true)
    await h.settle()
    expect(h.provider.getPty('shared')?.live).toBe(false)
    expect(shutdownCalls(h)).toEqual([['shared', { expectedIncarnationId: local.incarnationId }]])
    release()
    expect(await h.run(adopting)).toBeNull()
  })
})

describe('the owner the store names ended, and another window started a new process under its id', () => {
  it.each([
    ['a provider that honours the fence', false],
    ['a provider that ignores it (attaches whatever runs under the id)', true],
  ])('the adoption attaches only the incarnation the store names, with %s: null, and a kill that marked it leaves the new process running (before: attached, published and stopped)', async (_, ignoresFence) => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    if (ignoresFence) {
      const spawn = h.provider.spawn.bind(h.provider)
      h.provider.spawn = async ({ expectedIncarnationId: _ignored, ...options }) => spawn(options)
    }
    // An earlier window created the slot's owner and let go of it (the binding stays).
    const earlier = createPtyController({ provider: h.provider, store })
    const owner = await h.run(earlier.spawn({ slot: { key: 'pane' } }))
    await h.run(earlier.dispose({ stopPtys: false }))
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    // The owner ends on its own; another window starts a new process under the same id.
    h.provider.emitExit(owner.id, { exitCode: 0 })
    await h.settle()
    const another = createPtyController({ provider: h.provider, store: createInMemorySlotStore() })
    const respawn = await h.run(another.spawn({ sessionId: owner.id }))
    expect(respawn.incarnationId).not.toBe(owner.incarnationId)
    release()
    expect(await h.run(adopting)).toBeNull()
    await h.settle()
    expect(h.provider.getPty(owner.id)).toMatchObject({ live: true, incarnationId: respawn.incarnationId })
    // Nothing of the new process was published here; the stop the kill committed is fenced by the owner's incarnation.
    expect(h.events.filter((entry) => entry.type === 'spawn')).toEqual([])
    expect(shutdownCalls(h)).toEqual([[owner.id, { immediate: true, expectedIncarnationId: owner.incarnationId }]])
    await another.dispose({ stopPtys: false })
  })
})

describe('the slot changed owner, under the same id, while the adoption waited', () => {
  it('a kill of the owner the store named then stops that incarnation alone: the adoption adopts the new one, running (before: the kill\'s mark carried into its attach, which stopped it)', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    // Another window owns the slot: this controller does not track its PTY.
    const other = createPtyController({ provider: h.provider, store })
    const owner = await h.run(other.spawn({ slot: { key: 'pane' } }))
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    // The owner ends on its own (its binding retired), and the other window binds the slot to a
    // new process under the same id.
    h.provider.emitExit(owner.id, { exitCode: 0 })
    await h.settle()
    const successor = await h.run(other.spawn({ slot: { key: 'pane' }, sessionId: owner.id }))
    expect(successor.incarnationId).not.toBe(owner.incarnationId)
    expect(store.getLiveOwner({ key: 'pane' })).toEqual({ ptyId: owner.id, hostId: 'local', incarnationId: successor.incarnationId })
    release()
    const adoption = await h.run(adopting)
    await h.settle()
    expect(adoption).toMatchObject({ result: { id: owner.id, incarnationId: successor.incarnationId }, materialized: true })
    expect(h.provider.getPty(owner.id)).toMatchObject({ live: true, incarnationId: successor.incarnationId })
    expect(h.controller.hasPty(owner.id)).toBe(true)
    // The stop the kill committed went to the incarnation it was asked about, fenced.
    expect(shutdownCalls(h)).toEqual([[owner.id, { immediate: true, expectedIncarnationId: owner.incarnationId }]])
    await other.dispose({ stopPtys: false })
  })
})

describe('a provider without incarnation ids (supported: the contract makes them optional)', () => {
  it('adoptSlot still adopts the owner, attached unfenced; a kill while it waits answers false, and the owner runs on adopted', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const provider = withoutIncarnations(fake)
    const store = createInMemorySlotStore()
    // An earlier window created the slot's owner and let go of it (the binding stays, with no incarnation).
    const earlier = createPtyController({ provider, store })
    const spawning = earlier.spawn({ slot: { key: 'pane' } })
    await fake.settle()
    const owner = await spawning
    await earlier.dispose({ stopPtys: false })
    expect(store.getLiveOwner({ key: 'pane' })).toEqual({ ptyId: owner.id, hostId: 'local' })
    const controller = createPtyController({ provider, store })
    const release = controller.claimSlotCreate({ key: 'pane' })
    const adopting = controller.adoptSlot({ slot: { key: 'pane' } })
    await fake.settle()
    expect(controller.kill(owner.id)).toBe(false)
    release()
    await fake.settle()
    const adoption = await adopting
    expect(adoption).toEqual({ result: { id: owner.id, hostId: 'local', isReattach: true, pid: owner.pid }, owner: { ptyId: owner.id, hostId: 'local' }, materialized: true })
    expect(controller.hasPty(owner.id)).toBe(true)
    expect(fake.getPty(owner.id)?.live).toBe(true)
    const attach = fake.calls.filter((call) => call.method === 'spawn').at(-1)
    expect(attach?.args[0]).toEqual({ sessionId: owner.id, attachOnly: true })
    // Adopted: a kill now reaches it.
    expect(controller.kill(owner.id)).toBe(true)
    await fake.settle()
    expect(fake.getPty(owner.id)?.live).toBe(false)
    await controller.dispose()
  })
})

describe('a slot store that answers incarnationId: null (its empty SQL or JSON column)', () => {
  it('adoptSlot adopts the owner, read as one whose incarnation is not attested (before: the attach was fenced by null, and nothing was adopted)', async () => {
    const inner = createInMemorySlotStore()
    const nulled = (owner: PtySlotOwner | null): PtySlotOwner | null => (owner === null ? null : ({ ...owner, incarnationId: null } as unknown as PtySlotOwner))
    const store: PtySlotStore = { ...inner, getLiveOwner: (slot) => nulled(inner.getLiveOwner(slot)), getPersistedOwner: (slot) => nulled(inner.getPersistedOwner(slot)) }
    const h = createHarness({ controller: { store } })
    // An earlier window created the slot's owner and let go of it (the binding stays).
    const earlier = createPtyController({ provider: h.provider, store: inner })
    const owner = await h.run(earlier.spawn({ slot: { key: 'pane' } }))
    await h.run(earlier.dispose({ stopPtys: false }))
    const adoption = await h.run(h.controller.adoptSlot({ slot: { key: 'pane' } }))
    expect(adoption).toMatchObject({ result: { id: owner.id, incarnationId: owner.incarnationId } })
    expect(h.controller.hasPty(owner.id)).toBe(true)
  })
})
