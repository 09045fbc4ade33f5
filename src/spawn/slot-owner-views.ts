import { incarnationOf, incarnationsAgree } from '../contracts/incarnation.js'
import type { PtySlotOwner } from './types.js'

/**
 * What a slot store's two views say together: one owner (or none), or a conflict. A spawn with a
 * slot and `adoptSlot` both read the slot through this one rule.
 */
export type SlotOwnerViews = { kind: 'agreed'; owner: PtySlotOwner | null } | { kind: 'conflict'; live: PtySlotOwner; persisted: PtySlotOwner }

/**
 * The slot's owner as the live and persisted views agree on it. They agree when either is empty,
 * or when both name the same PTY on the same host and their incarnations agree where both attest
 * one (a view that never learned the incarnation does not contradict one that did). The agreed
 * owner carries the live view's incarnation, else the persisted one's. An `incarnationId: null` (a
 * store over SQL or JSON, whose empty column reads `null`) is read as not attested, as an absent one.
 */
export function agreeOnSlotOwner(liveView: PtySlotOwner | null, persistedView: PtySlotOwner | null): SlotOwnerViews {
  const live = withoutNullIncarnation(liveView)
  const persisted = withoutNullIncarnation(persistedView)
  if (live !== null && persisted !== null) {
    const same = live.ptyId === persisted.ptyId && live.hostId === persisted.hostId && incarnationsAgree(live.incarnationId, persisted.incarnationId)
    if (!same) return { kind: 'conflict', live, persisted }
  }
  const base = live ?? persisted
  if (base === null) return { kind: 'agreed', owner: null }
  return { kind: 'agreed', owner: { ptyId: base.ptyId, hostId: base.hostId, ...incarnationOf(live?.incarnationId ?? persisted?.incarnationId) } }
}

/**
 * The `slot_owner_conflict` message for a slot whose views disagree: both owners, and their
 * incarnations when the two name the same PTY on the same host (the incarnation is then the reason).
 */
export function describeSlotOwnerConflict(slotKey: string, live: PtySlotOwner, persisted: PtySlotOwner): string {
  const owner = (view: PtySlotOwner): string => {
    const sameProcess = live.ptyId === persisted.ptyId && live.hostId === persisted.hostId
    const incarnation = sameProcess ? ` (incarnation ${JSON.stringify(view.incarnationId ?? null)})` : ''
    return `${JSON.stringify(view.ptyId)} on ${JSON.stringify(view.hostId)}${incarnation}`
  }
  return `Slot ${JSON.stringify(slotKey)}: live state names PTY ${owner(live)}, the persisted store ${owner(persisted)}`
}

/**
 * `view` with an `incarnationId` of `null` left out: a store over SQL or JSON answers its empty
 * column as `null`, which means "not attested" — kept, it contradicted every incarnation (a
 * `slot_owner_conflict` against the other view) and fenced the adoption's attach by a value no
 * process has.
 */
function withoutNullIncarnation(view: PtySlotOwner | null): PtySlotOwner | null {
  if (view === null || (view as { incarnationId?: unknown }).incarnationId !== null) return view
  return { ptyId: view.ptyId, hostId: view.hostId }
}
