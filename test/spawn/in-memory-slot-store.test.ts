import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId } from '../../src/contracts/index.js'
import { createInMemorySlotStore, slotStoreKey } from '../../src/spawn/index.js'

describe('createInMemorySlotStore', () => {
  it('binds both views and retires only a binding that still names the expected owner', () => {
    const store = createInMemorySlotStore()
    const slot = { scopeId: 'w', key: 'pane' }
    const owner = { ptyId: 'p', hostId: 'local', incarnationId: toPtyIncarnationId('i1') }
    store.bindOwner(slot, owner)
    expect(store.getLiveOwner(slot)).toEqual(owner)
    expect(store.getPersistedOwner(slot)).toEqual(owner)
    expect(store.retireOwner(slot, { ...owner, incarnationId: toPtyIncarnationId('i2') })).toBe(false)
    expect(store.getLiveOwner(slot)).toEqual(owner)
    expect(store.retireOwner(slot, owner)).toBe(true)
    expect(store.inspect()).toEqual({ live: {}, persisted: {} })
  })

  it('keeps slots of different scopes apart, whatever characters the keys hold', () => {
    expect(slotStoreKey({ scopeId: 'a:b', key: 'c' })).not.toBe(slotStoreKey({ scopeId: 'a', key: 'b:c' }))
    expect(slotStoreKey({ key: 'k' })).not.toBe(slotStoreKey({ scopeId: 'null', key: 'k' }))
  })

  it('the test helpers seed each view alone', () => {
    const store = createInMemorySlotStore()
    const slot = { key: 'pane' }
    store.setLiveOwner(slot, { ptyId: 'a', hostId: 'local' })
    store.setPersistedOwner(slot, { ptyId: 'b', hostId: 'local' })
    expect(store.getLiveOwner(slot)?.ptyId).toBe('a')
    expect(store.getPersistedOwner(slot)?.ptyId).toBe('b')
    store.setLiveOwner(slot, null)
    expect(store.getLiveOwner(slot)).toBeNull()
  })
})
