import { isPtyLiveOtherIncarnationError, type ExecutionHostId, type ProviderSpawnOptions, type PtySlot, type PtySpawnResult } from '../contracts/index.js'
import { watchExits } from './exit-watch.js'
import { incarnationOf } from '../contracts/incarnation.js'
import { definedFields } from '../contracts/defined-fields.js'
import { describeValue } from '../contracts/describe-value.js'
import { describeSlot, describeSlotOwnerConflict, readSlotOwnerViews } from './slot-owner-views.js'
import { assertProviderReply, checkAbort, providerFor, rejectExitedReply, reportSpawnCommitted, takeChargeOfStartedProcess } from './provider-call.js'
import { messageOf, ownSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'
import { isPtyAbsentError, type PtySlotOwner, type PtySlotStore } from './types.js'
import { isPtySpawnError } from './pty-spawn-error.js'

// A slot's owner through a spawn: resolved from the live and persisted views (stage 3), attached to
// instead of spawning a second one (branch 7b), retired only on a typed absence, and bound to the
// spawned PTY at the commit.

async function resolveSlotOwner(state: RuntimePtySpawnState, store: PtySlotStore, slot: PtySlot): Promise<PtySlotOwner | null> {
  let views: Awaited<ReturnType<typeof readSlotOwnerViews>>
  try {
    views = await readSlotOwnerViews(store, slot, (message) => ownSpawnError(state, 'slot_owner_unverified', message))
  } catch (error) {
    if (isPtySpawnError(error)) throw error
    // Why here: wrapped by stage alone, a store's own failure ("db down") named no slot at all.
    throw ownSpawnError(state, 'slot_owner_unverified', `${describeSlot(slot)}: the slot store could not be read: ${messageOf(error)}`, { cause: error })
  }
  if (views.kind === 'conflict') {
    const { live, persisted } = views
    throw ownSpawnError(
      state,
      'slot_owner_conflict',
      describeSlotOwnerConflict(slot, live, persisted),
      { ptyId: live.ptyId },
    )
  }
  const owner = views.owner
  if (owner === null) {
    return null
  }
  if (owner.hostId !== state.hostId) {
    throw ownSpawnError(
      state,
      'slot_owner_conflict',
      `${describeSlot(slot)} is owned by PTY ${JSON.stringify(owner.ptyId)} on host ${JSON.stringify(owner.hostId)}, but the spawn targets ${JSON.stringify(state.hostId)}`,
      { ptyId: owner.ptyId },
    )
  }
  return owner
}

/**
 * Stage 3: the lookup of the slot's owner (live and persisted views must agree), for the run to
 * await into `state.slotOwner`; `undefined` when the spawn names no slot.
 */
export function lookUpSlotOwner(state: RuntimePtySpawnState): Promise<PtySlotOwner | null> | undefined {
  state.stage = 'resolve_slot_owner'
  const { slot } = state.args
  const store = state.deps.store
  return slot === undefined || store === undefined ? undefined : resolveSlotOwner(state, store, slot)
}

/** Attach-only options: every launch field is cleared, so an attach can never launch anything. */
function attachOptions(state: RuntimePtySpawnState, owner: PtySlotOwner): ProviderSpawnOptions {
  const options: ProviderSpawnOptions = { sessionId: owner.ptyId, attachOnly: true }
  if (owner.incarnationId !== undefined) options.expectedIncarnationId = owner.incarnationId
  if (state.args.cols !== undefined) options.cols = state.args.cols
  if (state.args.rows !== undefined) options.rows = state.args.rows
  return options
}

/**
 * Whether an attach refusal is a typed **absence**. A "live, but another incarnation" refusal is
 * not one — neither under its own code nor as a `pty_absent` that names a live incarnation (an
 * older provider's way of saying it): the expected process is not proven gone.
 */
function isProvenAbsence(error: unknown): boolean {
  if (!isPtyAbsentError(error) || isPtyLiveOtherIncarnationError(error)) return false
  return (error as { liveIncarnationId?: unknown }).liveIncarnationId === undefined
}

/**
 * Branch 7b: attach-only to the slot's `owner` (after the abort check). `null` when its host proved
 * it absent and the binding was retired: the caller spawns fresh.
 */
export async function attachToSlotOwner(state: RuntimePtySpawnState, owner: PtySlotOwner): Promise<PtySpawnResult | null> {
  const { slot } = state.args
  const store = state.deps.store
  if (slot === undefined || store === undefined) {
    throw new TypeError('Expected a `slot` option and a `store` dependency for the slot branch, got neither')
  }
  const provider = providerFor(state, owner.hostId, owner.ptyId)
  checkAbort(state)
  state.stage = 'attach'
  watchExits(state, provider)
  let attached: PtySpawnResult
  try {
    attached = await provider.spawn(attachOptions(state, owner))
  } catch (error) {
    if (!isProvenAbsence(error)) {
      throw ownSpawnError(state, 'slot_owner_unverified', `Could not attach to slot owner ${JSON.stringify(owner.ptyId)}: ${messageOf(error)}`, { cause: error, ptyId: owner.ptyId })
    }
    // Proven absent: retire the binding (fenced on the owner), and check nobody took the slot meanwhile.
    state.stage = 'retire_slot_owner'
    let retired: unknown
    try {
      retired = await store.retireOwner(slot, owner)
    } catch (failure) {
      // Why here: wrapped by stage alone, a store's own failure ("db down") named no slot at all.
      // Nothing was started, bound or attached: the next spawn reads the store again.
      throw ownSpawnError(
        state,
        'slot_owner_unverified',
        `${describeSlot(slot)}: the slot store's retireOwner failed for PTY ${JSON.stringify(owner.ptyId)}, proven absent: ${messageOf(failure)}`,
        { cause: failure, ptyId: owner.ptyId },
      )
    }
    // A count of rows is a non-negative integer: NaN would read as "not retired", -1 as "retired".
    if (typeof retired !== 'boolean' && !(typeof retired === 'number' && Number.isSafeInteger(retired) && retired >= 0)) {
      // Why: a store whose `retireOwner` answers nothing (an `async` method that forgot its
      // `return`) was read as "the slot changed owner": every respawn of a dead owner's slot failed
      // `slot_owner_changed`, naming a change that never happened.
      throw ownSpawnError(
        state,
        'slot_owner_unverified',
        `${describeSlot(slot)}: the slot store's retireOwner answered ${describeValue(retired)} for PTY ${JSON.stringify(owner.ptyId)}, proven absent: expected true (the binding retired), false (the slot names another owner by now) or a count of rows retired`,
        { cause: error, ptyId: owner.ptyId },
      )
    }
    if (!retired) {
      throw ownSpawnError(state, 'slot_owner_changed', `${describeSlot(slot)} changed owner while PTY ${JSON.stringify(owner.ptyId)} was proven absent`, { cause: error, ptyId: owner.ptyId })
    }
    state.stage = 'resolve_slot_owner'
    const again = await resolveSlotOwner(state, store, slot)
    if (again !== null) {
      throw ownSpawnError(state, 'slot_owner_changed', `${describeSlot(slot)} is now owned by PTY ${JSON.stringify(again.ptyId)}`, { cause: error, ptyId: again.ptyId })
    }
    state.slotOwner = null
    return null
  }
  assertProviderReply(state, provider, attached)
  state.result = definedFields(attached)
  if (attached.isReattach !== true) {
    // Why: the provider started a process on an attach-only request; it is ours to stop.
    takeChargeOfStartedProcess(state, provider, attached)
    reportSpawnCommitted(state)
    throw ownSpawnError(state, 'slot_owner_changed', `An attach-only spawn of ${JSON.stringify(owner.ptyId)} started a new process ${JSON.stringify(attached.id)}`, { ptyId: attached.id })
  }
  if (attached.id !== owner.ptyId || (owner.incarnationId !== undefined && attached.incarnationId !== owner.incarnationId)) {
    throw ownSpawnError(
      state,
      'slot_owner_changed',
      `Attached to ${JSON.stringify(attached.id)} (incarnation ${JSON.stringify(attached.incarnationId ?? null)}), expected ${JSON.stringify(owner.ptyId)} (incarnation ${JSON.stringify(owner.incarnationId ?? null)})`,
      { ptyId: attached.id },
    )
  }
  // No `onPtySpawnCommitted` here: a re-attach starts no process (seed: only a fresh spawn commits).
  rejectExitedReply(state, attached)
  return attached
}

/** The commit's binding of the slot to the spawned PTY: the store to bind in, the slot, the new owner. */
export type SlotBinding = { store: PtySlotStore; slot: PtySlot; owner: PtySlotOwner }

/**
 * Commit, first half: the binding the slot gets, for the run to await `store.bindOwner` on;
 * `undefined` when the spawn names no slot.
 */
export function plannedSlotBinding(state: RuntimePtySpawnState, result: PtySpawnResult, hostId: ExecutionHostId): SlotBinding | undefined {
  state.stage = 'commit'
  const { slot } = state.args
  const store = state.deps.store
  if (slot === undefined || store === undefined) return undefined
  return { store, slot, owner: { ptyId: result.id, hostId, ...incarnationOf(result.incarnationId) } }
}

/**
 * Record, before `store.bindOwner` is awaited, that a rollback retires the binding of a PTY this
 * run started (a bind that failed half-way, or a later stage that failed, leaves no slot pointing at
 * a stopped PTY); a re-attached owner's binding stays.
 */
export function recordSlotBindingUndo(state: RuntimePtySpawnState, binding: SlotBinding): void {
  if (!state.startedProcess) return
  const { store, slot, owner } = binding
  state.journal.record(`retire the binding of ${describeSlot(slot)} to PTY ${JSON.stringify(owner.ptyId)}`, async () => {
    await store.retireOwner(slot, owner)
  })
}

/**
 * Commit, second half: `store.bindOwner` awaited. A bind that throws or rejects is `commit_failed`
 * naming the slot as the caller passed it and the PTY, with the store's error as the `cause` (the
 * rollback recorded by {@link recordSlotBindingUndo} stops the PTY and retires the binding).
 */
export async function bindSlotOwner(state: RuntimePtySpawnState, binding: SlotBinding): Promise<void> {
  const { store, slot, owner } = binding
  try {
    await store.bindOwner(slot, owner)
  } catch (error) {
    // Why: wrapped by stage alone, "Spawn failed at stage commit: disk full" named no slot.
    throw ownSpawnError(
      state,
      'commit_failed',
      `${describeSlot(slot)}: the slot store's bindOwner failed for PTY ${JSON.stringify(owner.ptyId)}: ${messageOf(error)}`,
      { cause: error, ptyId: owner.ptyId },
    )
  }
}
