import { describeValue } from '../contracts/describe-value.js'
import { incarnationOf, incarnationsAgree, isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH } from '../contracts/incarnation.js'
import type { PtySlot } from '../contracts/index.js'
import { isPromiseLike } from '../contracts/promise-like.js'
import { PtySpawnError } from './pty-spawn-error.js'
import type { PtySlotOwner, PtySlotStore } from './types.js'

/**
 * What a slot store's two views say together: one owner (or none), or a conflict. A spawn with a
 * slot and `adoptSlot` both read the slot through this one rule.
 */
export type SlotOwnerViews = { kind: 'agreed'; owner: PtySlotOwner | null } | { kind: 'conflict'; live: PtySlotOwner; persisted: PtySlotOwner }

/**
 * The slot's owner as the live and persisted views agree on it. They agree when either is empty,
 * or when both name the same PTY on the same host and their incarnations agree where both attest
 * one (a view that never learned the incarnation does not contradict one that did). The agreed
 * owner carries the live view's incarnation, else the persisted one's. The views are owners as
 * {@link readSlotOwnerViews} reads them from a store (an `incarnationId: null` already left out).
 */
export function agreeOnSlotOwner(live: PtySlotOwner | null, persisted: PtySlotOwner | null): SlotOwnerViews {
  if (live !== null && persisted !== null) {
    const same = live.ptyId === persisted.ptyId && live.hostId === persisted.hostId && incarnationsAgree(live.incarnationId, persisted.incarnationId)
    if (!same) return { kind: 'conflict', live, persisted }
  }
  const base = live ?? persisted
  if (base === null) return { kind: 'agreed', owner: null }
  return { kind: 'agreed', owner: { ptyId: base.ptyId, hostId: base.hostId, ...incarnationOf(live?.incarnationId ?? persisted?.incarnationId) } }
}

/**
 * A slot as the caller passed it, for a message: `Slot "pane"`, or `Slot "pane" of scope "ws"`
 * when it names a scope. Why the scope: slots of different scopes may share a key, and the store
 * keys them by both (`slotStoreKey`); a message naming the key alone does not say which one it is.
 * `noun` is `'slot'` inside a sentence (`…claim of slot "pane" of scope "ws"`).
 */
export function describeSlot(slot: PtySlot, noun: 'Slot' | 'slot' = 'Slot'): string {
  const scope = slot.scopeId === undefined ? '' : ` of scope ${JSON.stringify(slot.scopeId)}`
  return `${noun} ${JSON.stringify(slot.key)}${scope}`
}

/**
 * The `slot_owner_conflict` message for a slot whose views disagree: the slot (as the caller passed
 * it), both owners, and their incarnations when the two name the same PTY on the same host (the
 * incarnation is then the reason).
 */
export function describeSlotOwnerConflict(slot: PtySlot, live: PtySlotOwner, persisted: PtySlotOwner): string {
  const owner = (view: PtySlotOwner): string => {
    const sameProcess = live.ptyId === persisted.ptyId && live.hostId === persisted.hostId
    const incarnation = sameProcess ? ` (incarnation ${JSON.stringify(view.incarnationId ?? null)})` : ''
    return `${JSON.stringify(view.ptyId)} on ${JSON.stringify(view.hostId)}${incarnation}`
  }
  return `${describeSlot(slot)}: live state names PTY ${owner(live)}, the persisted store ${owner(persisted)}`
}

/** The slot store's two reads, as a refusal of a malformed answer names them. */
export type SlotOwnerRead = 'getLiveOwner' | 'getPersistedOwner'

/**
 * What is wrong with a slot store's answer, or `undefined` when it reads as an owner or as none.
 * `null` and `undefined` are "no owner"; an owner is an object (not an array) whose `ptyId` and
 * `hostId` are non-empty strings and whose `incarnationId` is `null`, absent (`undefined`) or an
 * incarnation id (a string of 1 to {@link PTY_INCARNATION_ID_MAX_LENGTH} characters). Other keys
 * (a row's extra columns) are ignored.
 */
function malformedSlotOwner(read: SlotOwnerRead, answer: unknown): string | undefined {
  if (answer === null || answer === undefined) return undefined
  if (read === 'getLiveOwner' && isPromiseLike(answer)) return 'a promise (the live view must answer synchronously; only getPersistedOwner may answer later)'
  if (typeof answer !== 'object' || Array.isArray(answer)) return 'neither an owner ({ ptyId, hostId, incarnationId? }) nor null'
  const { ptyId, hostId, incarnationId } = answer as { ptyId?: unknown; hostId?: unknown; incarnationId?: unknown }
  if (typeof ptyId !== 'string' || ptyId.length === 0) return `an owner whose \`ptyId\` is not a non-empty string, got ${describeValue(ptyId)}`
  if (typeof hostId !== 'string' || hostId.length === 0) return `an owner whose \`hostId\` is not a non-empty string, got ${describeValue(hostId)}`
  if (incarnationId !== null && incarnationId !== undefined && !isPtyIncarnationId(incarnationId)) {
    return `an owner whose \`incarnationId\` is neither null nor an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters), got ${describeValue(incarnationId)}`
  }
  return undefined
}

/**
 * A slot store's answer as an owner (a plain copy: `ptyId`, `hostId`, and the incarnation when
 * attested) or `null`. `undefined` reads as `null` (a store over a map or a key-value service
 * answers a missing key so), an `incarnationId` of `null` as not attested.
 *
 * @throws PtySpawnError `slot_owner_unverified` (made by `refuse`) naming the read and showing the
 * answer, when the answer is neither an owner nor none: nobody can say who owns the slot, so
 * nothing may be attached, retired or spawned on its word.
 */
function slotOwnerOf(slot: PtySlot, read: SlotOwnerRead, answer: unknown, refuse: (message: string) => Error): PtySlotOwner | null {
  const malformed = malformedSlotOwner(read, answer)
  if (malformed !== undefined) {
    // Why: a promise the live view answered is never awaited; its rejection must not go unhandled.
    if (isPromiseLike(answer)) Promise.resolve(answer).catch(() => undefined)
    throw refuse(`${describeSlot(slot)}: the slot store's ${read} answered ${describeValue(answer)}: ${malformed}`)
  }
  if (answer === null || answer === undefined) return null
  const owner = answer as PtySlotOwner
  // Why `?? undefined`: a store over SQL or JSON answers its empty column as `null`, which means
  // "not attested" — kept, it contradicted every incarnation (a `slot_owner_conflict` against the
  // other view) and fenced the adoption's attach by a value no process has.
  return { ptyId: owner.ptyId, hostId: owner.hostId, ...incarnationOf(owner.incarnationId ?? undefined) }
}

/** How {@link readSlotOwnerViews} refuses a malformed answer by default: a `slot_owner_unverified` {@link PtySpawnError}. */
function slotOwnerUnverified(message: string): PtySpawnError {
  return new PtySpawnError('slot_owner_unverified', message, { outcome: 'not_started' })
}

/**
 * Read the slot's owner from both views of `store` — `getLiveOwner`, then `getPersistedOwner`
 * (awaited) — and agree on it ({@link agreeOnSlotOwner}). The one place a spawn with a slot (stage
 * 3) and `adoptSlot` read a host's store: its answers are checked before anything trusts them. A
 * store that throws or rejects fails the read with its own error.
 *
 * @param refuse makes the error for a malformed answer (the pipeline makes its run's own);
 * default: a `slot_owner_unverified` {@link PtySpawnError}, outcome `not_started`.
 * @throws PtySpawnError `slot_owner_unverified` when either view answers neither an owner nor
 * none — an object without a non-empty string `ptyId` or `hostId`, an `incarnationId` neither
 * `null`, absent nor an incarnation id, a number, a string, an array (or a promise from the live
 * view, which must answer synchronously) — its message naming the read and showing the answer.
 */
export async function readSlotOwnerViews(store: PtySlotStore, slot: PtySlot, refuse: (message: string) => Error = slotOwnerUnverified): Promise<SlotOwnerViews> {
  const live = slotOwnerOf(slot, 'getLiveOwner', store.getLiveOwner(slot), refuse)
  const persisted = slotOwnerOf(slot, 'getPersistedOwner', await store.getPersistedOwner(slot), refuse)
  return agreeOnSlotOwner(live, persisted)
}

/**
 * The live view's answer, for a glance that must not fail (which PTY a stop under way, or a `kill`
 * meanwhile, concerns): the answer as given — unchecked —, or `undefined` when the read threw or
 * answered a promise (never awaited: the live view answers synchronously; its rejection is not left
 * unhandled). Whoever acts on the owner reads it again through {@link readSlotOwnerViews}, which
 * refuses a malformed answer.
 */
export function glanceAtLiveOwner(store: PtySlotStore, slot: PtySlot): unknown {
  let answer: unknown
  try {
    answer = store.getLiveOwner(slot)
  } catch {
    return undefined
  }
  if (!isPromiseLike(answer)) return answer
  Promise.resolve(answer).catch(() => undefined)
  return undefined
}
