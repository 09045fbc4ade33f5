/**
 * `kill(ownerId)` while an `adoptSlot` of the owner's slot is under way answers `true`: a stop is
 * committed. Whatever the adoption then answers — refused for another reason (the store's views
 * disagree, a `slotCreateClaim` that is not the slot's, the store or the attach failing), `null`,
 * or the owner — the owner the `kill` named ends stopped: never a live process behind a `true`,
 * and never handed back to the adopter as if it were live (the `kill` wins).
 */
import { describe, expect, it } from 'vitest'
import { createInMemorySlotStore, type PtySlotOwner, type PtySlotStore } from '../../src/spawn/index.js'
import { answerOf, createHarness, holdAttaches, slotOwnedElsewhere, slotOwnerWithUnverifiedStop, type Harness, queueAdoption } from './controller-harness.js'
import { argumentRefusalOf } from '../support/bad-input.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}


describe('a kill of the owner while the adoption waits, then the adoption is refused for another reason', () => {
  it('slot_owner_conflict: the adoption rejects, and the owner the kill named is stopped (before: true, and it ran on)', async () => {
    const inner = createInMemorySlotStore()
    let persisted: PtySlotOwner | null = null
    // The live view names the owner; the persisted view names another PTY (a stale restore).
    const store: PtySlotStore = { ...inner, getPersistedOwner: () => persisted }
    const { h, owner, other } = await slotOwnedElsewhere(store)
    const stale = await h.run(other.spawn({ sessionId: 'stale' }))
    persisted = { ptyId: stale.id, hostId: 'local', incarnationId: stale.incarnationId! }
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    release()
    expect(await h.run(adopting).catch((error: unknown) => error)).toMatchObject({ code: 'slot_owner_conflict' })
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(shutdownCalls(h)).toEqual([[owner.id, { expectedIncarnationId: owner.incarnationId, immediate: true }]])
    // The PTY nobody killed runs on.
    expect(h.provider.getPty(stale.id)?.live).toBe(true)
    await other.dispose({ stopPtys: false })
  })

  it('a slotCreateClaim that is not the slot\'s: the adoption rejects (TypeError), and the owner the kill named is stopped', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const wrongClaim = h.controller.claimSlotCreate({ key: 'another-pane' })
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' }, slotCreateClaim: wrongClaim })
    expect(h.controller.kill(owner.id)).toBe(true)
    expect(await h.run(adopting).catch((error: unknown) => error)).toBeInstanceOf(TypeError)
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    wrongClaim()
    await other.dispose({ stopPtys: false })
  })

  it('the store rejects in the turn: the adoption rejects with it, and the owner the kill named is stopped', async () => {
    const inner = createInMemorySlotStore()
    let fail = false
    const store: PtySlotStore = {
      ...inner,
      getPersistedOwner: (slot) => {
        if (fail) throw new Error('store offline')
        return inner.getPersistedOwner(slot)
      },
    }
    const { h, owner, other } = await slotOwnedElsewhere(store)
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    fail = true
    release()
    expect(await h.run(adopting).catch((error: unknown) => (error as Error).message)).toBe('store offline')
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    await other.dispose({ stopPtys: false })
  })

  it('the attach fails (the host refuses it): null, and the owner the kill named is stopped where it runs', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const spawn = h.provider.spawn.bind(h.provider)
    h.provider.spawn = async (options) => {
      if (options.attachOnly === true) throw new Error('host busy')
      return spawn(options)
    }
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    release()
    expect(await h.run(adopting)).toBeNull()
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(shutdownCalls(h)).toEqual([[owner.id, { expectedIncarnationId: owner.incarnationId, immediate: true }]])
    await other.dispose({ stopPtys: false })
  })

  it('the slot changed hands before the turn (another owner adopted): the owner the kill named is stopped, the new one runs on', async () => {
    const store = createInMemorySlotStore()
    const { h, owner, other } = await slotOwnedElsewhere(store)
    const { release, adopting } = await queueAdoption(h)
    expect(h.controller.kill(owner.id)).toBe(true)
    // Another window rebinds the slot to a new PTY meanwhile.
    const next = await h.run(other.spawn({ sessionId: 'next' }))
    store.bindOwner({ key: 'pane' }, { ptyId: next.id, hostId: 'local', incarnationId: next.incarnationId! })
    release()
    const adopted = await h.run(adopting)
    await h.settle()
    expect(adopted).toMatchObject({ result: { id: next.id } })
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(h.provider.getPty(next.id)?.live).toBe(true)
    await other.dispose({ stopPtys: false })
  })
})

/** An in-memory slot store whose persisted-view reads wait, once `holdReads()` is called, until `releaseReads()` (the adoption's store read in flight). */
function storeWithHeldPersistedReads() {
  const inner = createInMemorySlotStore()
  let hold = false
  const held: (() => void)[] = []
  const store: PtySlotStore = {
    ...inner,
    getPersistedOwner: async (slot) => {
      if (hold) await new Promise<void>((resolve) => held.push(resolve))
      return inner.getPersistedOwner(slot)
    },
  }
  return {
    store,
    holdReads: () => (hold = true),
    releaseReads: () => {
      hold = false
      for (const read of held.splice(0)) read()
    },
  }
}

describe('a kill of the owner during the adoption\'s own turn, after its stop check: the kill wins', () => {
  it('while its attach is in flight: kill answers true, the owner is stopped, and the adoption does not hand it back (null once it exited)', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    // Its exit comes when the test says: after the adoption's attach published it.
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    const answerAttaches = holdAttaches(h)
    let answered = false
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } }).finally(() => (answered = true))
    await h.settle()
    expect(h.controller.kill(owner.id)).toBe(true)
    answerAttaches()
    await h.settle()
    // Before: the materialized owner, handed back while its stop was under way.
    expect(answered).toBe(false)
    expect(shutdownCalls(h)).toEqual([[owner.id, { expectedIncarnationId: owner.incarnationId }]])
    h.provider.emitExit(owner.id, { exitCode: 0, signal: 1 })
    expect(await h.run(adopting)).toBeNull()
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[owner.incarnationId, { kind: 'operator_close' }]])
    await other.dispose({ stopPtys: false })
  })

  it('an owner this controller tracks, killed while the adoption reads the persisted view: the adoption waits for the stop, then answers null', async () => {
    const { store, holdReads, releaseReads } = storeWithHeldPersistedReads()
    const h = createHarness({ controller: { store } })
    const owner = await h.run(h.controller.spawn({ slot: { key: 'pane' } }))
    await h.settle()
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    holdReads()
    let answered = false
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } }).finally(() => (answered = true))
    await h.settle()
    // The turn began (no stop to wait for then), and reads the persisted view: the tab is closed now.
    expect(h.controller.kill(owner.id)).toBe(true)
    releaseReads()
    await h.settle()
    // Before: the owner, handed back while its stop was under way.
    expect(answered).toBe(false)
    h.provider.emitExit(owner.id, { exitCode: 0, signal: 1 })
    expect(await h.run(adopting)).toBeNull()
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
  })
})

describe('adoptSlot arguments, and late calls', () => {
  it('an option it does not know is refused naming it (before: ignored — a misspelt slotCreateClaim waited behind the caller\'s own claim for ever)', async () => {
    const h = createHarness({ controller: { store: createInMemorySlotStore() } })
    const release = h.controller.claimSlotCreate({ key: 'pane' })
    const misspelt = h.controller.adoptSlot({ slot: { key: 'pane' }, slotCreatClaim: release } as never).then(() => 'adopted', (error: unknown) => error)
    await h.settle()
    const answer = await Promise.race([misspelt, Promise.resolve('still waiting')])
    expect(answer).toBeInstanceOf(TypeError)
    expect(answer).toMatchObject({ message: 'Unknown option `slotCreatClaim`: did you mean `slotCreateClaim`? (an unknown option would be ignored)' })
    // No `signal` option: an adoption given one would not stop waiting when it aborts.
    await expect(h.controller.adoptSlot({ slot: { key: 'pane' }, signal: AbortSignal.abort() } as never)).rejects.toThrow(/^Unknown option `signal`/)
    await expect(h.controller.adoptSlot('pane' as never)).rejects.toThrow(argumentRefusalOf('Expected the `options` argument to be an object, got "pane" (string)', 'options', 'pane'))
    // The call meant still works, inside the claim.
    expect(await h.run(h.controller.adoptSlot({ slot: { key: 'pane' }, slotCreateClaim: release }))).toBeNull()
    release()
  })

  it('disposed while the adoption reads the persisted view: it rejects naming adoptSlot (before: attach), and the owner a kill marked is stopped', async () => {
    const { store, holdReads, releaseReads } = storeWithHeldPersistedReads()
    const { h, owner, other } = await slotOwnedElsewhere(store)
    holdReads()
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } })
    await h.settle()
    expect(h.controller.kill(owner.id)).toBe(true)
    await h.run(h.controller.dispose())
    releaseReads()
    const refusal = await h.run(adopting).catch((error: unknown) => error)
    expect(refusal).toMatchObject({ code: 'controller_disposed', method: 'adoptSlot' })
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    // Nothing is left coming: a late kill has nothing to mark.
    expect(h.controller.kill(owner.id)).toBe(false)
    await other.dispose({ stopPtys: false })
  })
})

describe('disposed while the adoption\'s attach is in flight', () => {
  it('with a kill of the owner marked: one forced shutdown of the incarnation attached (before: two), and the adoption rejects controller_disposed (before: null)', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const answerAttaches = holdAttaches(h)
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } }).catch((error: unknown) => error)
    await h.settle()
    expect(h.controller.kill(owner.id)).toBe(true)
    const disposing = h.controller.dispose()
    answerAttaches()
    await h.run(disposing)
    const refusal = await h.run(adopting)
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    // Before: the attach stopped it, then the refused adoption dispatched the same stop again.
    expect(shutdownCalls(h)).toEqual([[owner.id, { immediate: true, expectedIncarnationId: owner.incarnationId }]])
    // Before: `null`, "the slot has no owner", for an adoption the disposal overtook.
    expect(refusal).toMatchObject({ code: 'controller_disposed', method: 'adoptSlot' })
    await other.dispose({ stopPtys: false })
  })

  it('with no kill: the adoption rejects controller_disposed (before: null), and the owner it never published runs on', async () => {
    const { h, owner, other } = await slotOwnedElsewhere()
    const answerAttaches = holdAttaches(h)
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } }).catch((error: unknown) => error)
    await h.settle()
    const disposing = h.controller.dispose()
    answerAttaches()
    await h.run(disposing)
    expect(await h.run(adopting)).toMatchObject({ code: 'controller_disposed', method: 'adoptSlot' })
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(true)
    expect(shutdownCalls(h)).toEqual([])
    await other.dispose({ stopPtys: false })
  })
})

describe('an owner whose stop went unverified before the adoption began', () => {
  it('is revived and handed back at once: its kept stop intent is no stop under way, nothing to wait for', async () => {
    const { h, owner } = await slotOwnerWithUnverifiedStop()
    const adopted = answerOf(h.controller.adoptSlot({ slot: { key: 'pane' } }))
    await h.settle()
    await h.settle()
    expect(adopted()).toMatchObject({ result: { id: owner.id, incarnationId: owner.incarnationId } })
  })
})

describe('a slot spawn after its owner was revived from an unverified stop', () => {
  it('answers without waiting a stop window: the revived owner keeps its stop intent, but no stop is under way', async () => {
    const { h, owner } = await slotOwnerWithUnverifiedStop()
    await h.run(h.controller.adoptSlot({ slot: { key: 'pane' } }))
    const answered = answerOf(h.controller.spawn({ slot: { key: 'pane' } }))
    for (let i = 0; i < 5; i++) await h.settle()
    // Before: it waited the whole `unconfirmedAfterMs` (10 s) for a stop nobody was running.
    expect(answered()).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId })
  })
})
