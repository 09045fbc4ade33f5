/**
 * A host's slot store answers whatever its rows hold (SQL, JSON files, a key-value service). An
 * answer that is neither an owner nor "none" — a `ptyId` or `hostId` that is not a non-empty
 * string, an `incarnationId` neither `null`, absent nor an incarnation id, a number, a string, an
 * array — refuses the slot spawn and `adoptSlot` alike with `slot_owner_unverified`, naming the
 * store's read and showing the answer, before anything acts on it: no attach, no retire, no lease
 * or registration left, and the slot works again once the store answers well. `undefined` reads as
 * `null` ("no owner"), as a store over a map answers a missing key.
 */
import { describe, expect, it } from 'vitest'
import { describeValue } from '../../src/contracts/describe-value.js'
import { createInMemoryPtyRuntime, createInMemorySlotStore, isPtySpawnError, type PtySlotOwner, type PtySlotStore } from '../../src/spawn/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createHarness } from './controller-harness.js'

const slot = { scopeId: 'repo', key: 'pane' }

const MALFORMED: [string, unknown][] = [
  ['a numeric ptyId', { ptyId: 5, hostId: 'local' }],
  ['an empty ptyId', { ptyId: '', hostId: 'local' }],
  ['no ptyId', { hostId: 'local' }],
  ['a numeric hostId', { ptyId: 'pty-1', hostId: 7 }],
  ['an empty hostId', { ptyId: 'pty-1', hostId: '' }],
  ['no hostId', { ptyId: 'pty-1' }],
  ['a numeric incarnationId', { ptyId: 'pty-1', hostId: 'local', incarnationId: 42 }],
  ['an empty incarnationId', { ptyId: 'pty-1', hostId: 'local', incarnationId: '' }],
  ['an incarnationId of an object', { ptyId: 'pty-1', hostId: 'local', incarnationId: { id: 'i' } }],
  ['a number', 5],
  ['a string', 'pty-1'],
  ['an array', [{ ptyId: 'pty-1', hostId: 'local' }]],
  ['true', true],
]

type Read = 'getLiveOwner' | 'getPersistedOwner'

/**
 * The in-memory store, whose `read` answers `answer` while `bad()` is true (the persisted view
 * through a promise when `async`), every call recorded.
 */
function storeAnswering(read: Read, answer: unknown, options: { async?: boolean } = {}) {
  const inner = createInMemorySlotStore()
  const calls: string[] = []
  let bad = true
  const store: PtySlotStore = {
    getLiveOwner: (s) => {
      calls.push('getLiveOwner')
      return bad && read === 'getLiveOwner' ? (answer as PtySlotOwner) : inner.getLiveOwner(s)
    },
    getPersistedOwner: (s) => {
      calls.push('getPersistedOwner')
      const value = bad && read === 'getPersistedOwner' ? (answer as PtySlotOwner) : inner.getPersistedOwner(s)
      return options.async === true ? Promise.resolve(value) : value
    },
    bindOwner: (s, owner) => {
      calls.push('bindOwner')
      inner.bindOwner(s, owner)
    },
    retireOwner: (s, expected) => {
      calls.push('retireOwner')
      return inner.retireOwner(s, expected)
    },
  }
  return { inner, store, calls, heal: () => (bad = false), spoil: () => (bad = true) }
}

function expectRefusal(error: unknown, read: Read, answer: unknown): void {
  expect(isPtySpawnError(error)).toBe(true)
  expect(error).toMatchObject({ code: 'slot_owner_unverified', outcome: 'not_started' })
  const message = (error as Error).message
  expect(message).toContain(`the slot store's ${read} answered ${describeValue(answer)}`)
  // The slot as the caller passed it, scope included (slots of two scopes may share a key).
  expect(message).toMatch(/^Slot "pane" of scope "repo": /)
}

describe.each(['getLiveOwner', 'getPersistedOwner'] as const)('a slot store whose %s answers a malformed owner', (read) => {
  it.each(MALFORMED)('%s: the slot spawn is refused (slot_owner_unverified, naming the read and the answer) before any attach, and leaks nothing', async (_, answer) => {
    const { inner, store, calls, heal } = storeAnswering(read, answer, { async: read === 'getPersistedOwner' })
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { store, runtime } })
    const error = await h.run(h.controller.spawn({ slot })).catch((e: unknown) => e)
    expectRefusal(error, read, answer)
    // Nothing acted on the answer (before: a `ptyId` of 5 was attached and its binding retired;
    // an owner on host 7 was a `slot_owner_conflict`; a number read as an owner of id undefined).
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
    expect(calls.filter((call) => call === 'retireOwner' || call === 'bindOwner')).toEqual([])
    const left = runtime.inspect()
    expect(left.heldLeases).toEqual([])
    expect(left.pendingRegistrations).toEqual([])
    expect(left.registeredPtys).toEqual([])
    expect(inner.inspect()).toEqual({ live: {}, persisted: {} })
    // The slot is not held: once the store answers well, the next spawn creates its owner.
    heal()
    const created = await h.run(h.controller.spawn({ slot }))
    expect(created.isReattach).toBe(false)
    expect(inner.getLiveOwner(slot)).toEqual({ ptyId: created.id, hostId: 'local', incarnationId: created.incarnationId })
    await h.controller.dispose()
  })

  it.each(MALFORMED)('%s: adoptSlot is refused the same way, attaches nothing, and adopts the owner once the store answers well', async (_, answer) => {
    const { inner, store, calls, heal, spoil } = storeAnswering(read, answer, { async: read === 'getPersistedOwner' })
    heal()
    const h = createHarness({ controller: { store } })
    // The slot's owner, created by an earlier window over the same provider (its binding stays).
    const earlier = createPtyController({ provider: h.provider, store: inner })
    const owner = await h.run(earlier.spawn({ slot }))
    await h.run(earlier.dispose({ stopPtys: false }))
    const spawnCalls = h.provider.calls.filter((call) => call.method === 'spawn').length
    spoil()
    const error = await h.run(h.controller.adoptSlot({ slot })).catch((e: unknown) => e)
    expectRefusal(error, read, answer)
    // Before: a TypeError from the attach (`ptyId` 5), `null` (an owner on host 7, or whose
    // incarnation 42 fenced its attach), or a TypeError reading a property of a number.
    expect(h.provider.calls.filter((call) => call.method === 'spawn').length).toBe(spawnCalls)
    expect(calls).not.toContain('retireOwner')
    expect(h.events.filter((entry) => entry.type === 'spawn')).toEqual([])
    expect(inner.getLiveOwner(slot)).toEqual({ ptyId: owner.id, hostId: 'local', incarnationId: owner.incarnationId })
    heal()
    const adoption = await h.run(h.controller.adoptSlot({ slot }))
    expect(adoption).toMatchObject({ result: { id: owner.id, incarnationId: owner.incarnationId, isReattach: true }, materialized: true })
    expect(h.events.filter((entry) => entry.type === 'spawn')).toHaveLength(1)
    await h.controller.dispose()
  })
})

describe('a slot store that answers undefined for "no owner" (a map or key-value lookup of a missing key)', () => {
  it('the slot spawn reads it as null and creates the owner (before: slot_owner_unverified, "Cannot read properties of undefined")', async () => {
    const inner = createInMemorySlotStore()
    const orUndefined = (owner: PtySlotOwner | null): PtySlotOwner | null => owner ?? (undefined as unknown as null)
    const store: PtySlotStore = { ...inner, getLiveOwner: (s) => orUndefined(inner.getLiveOwner(s)), getPersistedOwner: async (s) => orUndefined(inner.getPersistedOwner(s)) }
    const h = createHarness({ controller: { store } })
    const created = await h.run(h.controller.spawn({ slot }))
    expect(created.isReattach).toBe(false)
    expect(inner.getLiveOwner(slot)).toMatchObject({ ptyId: created.id })
    await h.controller.dispose()
  })

  it('adoptSlot reads it as null: the slot has no owner (before: a TypeError)', async () => {
    const inner = createInMemorySlotStore()
    const store: PtySlotStore = { ...inner, getLiveOwner: () => undefined as unknown as null, getPersistedOwner: () => undefined as unknown as null }
    const h = createHarness({ controller: { store } })
    expect(await h.run(h.controller.adoptSlot({ slot }))).toBeNull()
    await h.controller.dispose()
  })
})

describe('a slot store whose getLiveOwner answers a promise (the live view must answer synchronously)', () => {
  it('the spawn and adoptSlot are refused naming the read, and a rejection of that promise is not left unhandled', async () => {
    const inner = createInMemorySlotStore()
    const store: PtySlotStore = { ...inner, getLiveOwner: () => Promise.reject(new Error('offline')) as unknown as null }
    const h = createHarness({ controller: { store } })
    for (const call of [() => h.controller.spawn({ slot }), () => h.controller.adoptSlot({ slot })]) {
      const error = await h.run(call() as Promise<unknown>).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'slot_owner_unverified', outcome: 'not_started' })
      expect((error as Error).message).toContain("the slot store's getLiveOwner answered {} (object): a promise (the live view must answer synchronously")
    }
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
    await h.controller.dispose()
  })
})

it('a slot_owner_conflict names the slot with its scope, from a spawn and from adoptSlot alike', async () => {
  const store = createInMemorySlotStore()
  store.setLiveOwner(slot, { ptyId: 'a', hostId: 'local' })
  store.setPersistedOwner(slot, { ptyId: 'b', hostId: 'local' })
  const h = createHarness({ controller: { store } })
  for (const call of [() => h.controller.spawn({ slot }), () => h.controller.adoptSlot({ slot })]) {
    const error = await h.run(call() as Promise<unknown>).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'slot_owner_conflict', message: 'Slot "pane" of scope "repo": live state names PTY "a" on "local", the persisted store "b" on "local"' })
  }
  await h.controller.dispose()
})
