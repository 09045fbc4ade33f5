import { describeValue } from '../contracts/describe-value.js'
import { isOptionsObject } from '../contracts/known-options.js'
import type { PtySlot } from '../contracts/index.js'
import type { PtySlotOwner, PtySlotStore } from './types.js'

/** A plain copy of both views of an {@link InMemorySlotStore}, keyed by {@link slotStoreKey}. */
export type InMemorySlotStoreSnapshot = {
  /** The live view. */
  live: Record<string, PtySlotOwner>
  /** The persisted view. */
  persisted: Record<string, PtySlotOwner>
}

/** The default slot store (a {@link PtySlotStore} with synchronous answers): two in-memory maps standing for the live runtime view and the persisted one. */
export type InMemorySlotStore = {
  /** The live view's owner; `null` when none. */
  getLiveOwner(slot: PtySlot): PtySlotOwner | null
  /** The persisted view's owner (synchronous here); `null` when none. */
  getPersistedOwner(slot: PtySlot): PtySlotOwner | null
  /** Bind the slot to `owner` in both views. */
  bindOwner(slot: PtySlot, owner: PtySlotOwner): void
  /** Remove the binding from each view that still names exactly `expected`; whether any did. */
  retireOwner(slot: PtySlot, expected: PtySlotOwner): boolean
  /** Set (or with `null`, clear) only the live view's owner — a test helper to seed disagreement. */
  setLiveOwner(slot: PtySlot, owner: PtySlotOwner | null): void
  /** Set (or with `null`, clear) only the persisted view's owner — a test helper to seed disagreement. */
  setPersistedOwner(slot: PtySlot, owner: PtySlotOwner | null): void
  /** A plain copy of both views, keyed by {@link slotStoreKey}, for assertions. */
  inspect(): InMemorySlotStoreSnapshot
}

/**
 * Internal: whether `slot` is a slot `slotStoreKey` can key — an object whose `key` is a non-empty
 * string and whose `scopeId` is absent or one. (A spawn's malformed slot goes on to the pipeline,
 * which refuses it naming the option.)
 */
export function isWellFormedSlot(slot: unknown): slot is PtySlot {
  if (!isOptionsObject(slot)) return false
  const { key, scopeId } = slot as { key?: unknown; scopeId?: unknown }
  return typeof key === 'string' && key.length > 0 && (scopeId === undefined || (typeof scopeId === 'string' && scopeId.length > 0))
}

/**
 * The map key of a slot: scope and key, JSON-encoded so that no choice of characters in either can
 * make two different slots collide.
 *
 * @throws TypeError when `slot` is not a slot (`{ scopeId?, key }`, non-empty strings).
 */
export function slotStoreKey(slot: PtySlot): string {
  const given: unknown = slot
  if (!isWellFormedSlot(given)) throw new TypeError(`Expected the \`slot\` argument to be a slot ({ scopeId?, key }: non-empty strings), got ${describeValue(given)}`)
  return JSON.stringify([slot.scopeId ?? null, slot.key])
}

function sameOwner(a: PtySlotOwner, b: PtySlotOwner): boolean {
  return a.ptyId === b.ptyId && a.hostId === b.hostId && a.incarnationId === b.incarnationId
}

function copy(owner: PtySlotOwner): PtySlotOwner {
  return { ...owner }
}

/**
 * Create the default slot store. `bindOwner` writes both views; `retireOwner` removes the binding
 * from each view that still names exactly the expected owner (id, host and incarnation) and
 * answers whether any did — a binding that changed meanwhile is left alone.
 */
export function createInMemorySlotStore(): InMemorySlotStore {
  const live = new Map<string, PtySlotOwner>()
  const persisted = new Map<string, PtySlotOwner>()
  const set = (map: Map<string, PtySlotOwner>, slot: PtySlot, owner: PtySlotOwner | null): void => {
    if (owner === null) {
      map.delete(slotStoreKey(slot))
    } else {
      map.set(slotStoreKey(slot), copy(owner))
    }
  }
  const store: InMemorySlotStore = {
    getLiveOwner(slot) {
      const owner = live.get(slotStoreKey(slot))
      return owner === undefined ? null : copy(owner)
    },
    getPersistedOwner(slot) {
      const owner = persisted.get(slotStoreKey(slot))
      return owner === undefined ? null : copy(owner)
    },
    bindOwner(slot, owner) {
      set(live, slot, owner)
      set(persisted, slot, owner)
    },
    retireOwner(slot, expected) {
      const key = slotStoreKey(slot)
      let retired = false
      for (const map of [live, persisted]) {
        const current = map.get(key)
        if (current !== undefined && sameOwner(current, expected)) {
          map.delete(key)
          retired = true
        }
      }
      return retired
    },
    setLiveOwner(slot, owner) {
      set(live, slot, owner)
    },
    setPersistedOwner(slot, owner) {
      set(persisted, slot, owner)
    },
    inspect() {
      return {
        live: Object.fromEntries([...live].map(([key, owner]) => [key, copy(owner)])),
        persisted: Object.fromEntries([...persisted].map(([key, owner]) => [key, copy(owner)])),
      }
    },
  }
  return store satisfies PtySlotStore
}
