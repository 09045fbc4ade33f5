import type { PtySpawnResult } from '../contracts/index.js'
import { definedFields } from '../contracts/defined-fields.js'
import type { PtySpawnError } from './pty-spawn-error.js'
import { ensureClaim, type ClaimBranch } from './claim-stage.js'
import { spawnFresh } from './fresh-spawn-stage.js'
import {
  admitPreAllocatedHandle,
  holdScopeLease,
  NO_SCOPE_LEASE,
  prepareExecutionContext,
  readOutputSequence,
  rebaseOutputSequenceOnProvider,
  requestScopeLease,
} from './host-runtime-stages.js'
import { isPromiseLike } from '../contracts/promise-like.js'
import { admitRegistration, beginExpectedRegistration, commitRegistration } from './registration-stages.js'
import { attachToSlotOwner, bindSlotOwner, lookUpSlotOwner, plannedSlotBinding, recordSlotBindingUndo } from './slot-owner-stages.js'
import { classifyFailure, failedSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'
import type { PtySpawnOutcome } from './types.js'

/**
 * The stages in order (rule SP1): each sets `state.stage` and records its undo in `state.journal`.
 *
 * Why the awaits stand here, each only where a hook or the provider answers with a promise: a stage
 * adds no microtask turn of its own, and a lease granted at once (the in-memory runtime's usual
 * answer) adds none either, so a spawn reaches the provider call in the turn it was asked in —
 * nothing can race the stages before it, and the caller's turn does not pay for turns it never
 * needed.
 */
async function runStages(state: RuntimePtySpawnState): Promise<PtySpawnOutcome> {
  const lease = requestScopeLease(state) // 1. scope lease
  if (lease !== NO_SCOPE_LEASE) holdScopeLease(state, isPromiseLike(lease) ? await lease : lease)
  admitPreAllocatedHandle(state) // 2. pre-allocated handle
  const slotOwnerLookup = lookUpSlotOwner(state) // 3. slot owner
  if (slotOwnerLookup !== undefined) state.slotOwner = await slotOwnerLookup
  const expectedPtyId = beginExpectedRegistration(state) // 4. pending registration
  readOutputSequence(state, expectedPtyId) // 5. output sequence before the call

  // 6–9. The abort check right before the physical call, then the claim (7a), slot (7b) or fresh (7c) branch.
  let result: PtySpawnResult
  let claimBranch: ClaimBranch | null = null
  if (state.args.claim !== undefined) {
    claimBranch = await ensureClaim(state)
    result = claimBranch.result
  } else {
    const attached = state.slotOwner === null ? null : await attachToSlotOwner(state, state.slotOwner)
    result = attached ?? (await spawnFresh(state))
  }
  state.result = definedFields(result)

  const hostId = claimBranch?.owner.hostId ?? state.slotOwner?.hostId ?? state.hostId
  admitRegistration(state, result, hostId) // 10. registration moves to the real id, admission gate
  const reconciledSequence = rebaseOutputSequenceOnProvider(state, result) // 11. sequence rebase
  prepareExecutionContext(state, result, hostId) // 12. execution context

  // Commit: bind the slot, then register.
  const binding = plannedSlotBinding(state, result, hostId)
  if (binding !== undefined) {
    // The undo first (rule SP1): a store whose write lands in part and then rejects must not keep
    // the slot bound to the PTY the rollback stops (`retireOwner` retires only this very owner).
    recordSlotBindingUndo(state, binding)
    await bindSlotOwner(state, binding)
  }
  commitRegistration(state, result)

  // A field the provider answered `undefined` is absent in the outcome (see definedFields): hosts
  // spread it over defaults, store it, and test keys with `in`.
  const outcome: PtySpawnOutcome = { result: definedFields(result), hostId }
  if (claimBranch !== null) {
    outcome.claimDisposition = claimBranch.disposition
    outcome.claimOwner = claimBranch.owner
    if (state.joinedAnotherStart) outcome.joinedAnotherStart = true
  }
  if (reconciledSequence !== undefined) {
    outcome.reconciledSequence = reconciledSequence
  }
  if (binding !== undefined) {
    outcome.slotOwner = binding.owner
  }
  return outcome
}

/**
 * Run the spawn pipeline: the ordered stages of docs/spawn-pipeline.md (see "A spawn" in docs/architecture.md) against the injected hooks.
 *
 * 1. scope lease; 2. admit the pre-allocated handle; 3. resolve the slot owner (live + persisted,
 * disagreement is `slot_owner_conflict`); 4. begin the pending registration for the expected id;
 * 5. read the output sequence; 6. abort check, only right before the physical provider call;
 * 7. claim branch (single-flight ensure) or slot branch (attach-only to the owner, fresh spawn only
 * after a typed host-reported absence); 8. `onPtySpawnCommitted` once; 9. reject a reply whose
 * process already exited; 10. move the pending registration to the real id and pass the admission
 * gate; 11. rebase the output sequence; 12. prepare the execution context; then commit (bind the
 * slot, register the PTY).
 *
 * Every stage records its undo in a rollback journal; on any failure the undos run in reverse
 * (a PTY this run started is shut down immediately, incarnation-fenced; a re-attached, adopted or
 * joined owner is left running), and the promise rejects with a {@link PtySpawnError}: its `code`
 * is stable, `cause` is the original error (an `AggregateError` of it and the failed undos when
 * some undo threw), `outcome` says whether a process may still exist, `ptyId` names the PTY.
 * The lease is released and the handle revoked on every path.
 *
 * The outcome is also stored on `state.outcome` (or the error on `state.error`).
 *
 * @throws TypeError when the state was already executed.
 */
export async function executeRuntimePtySpawn(state: RuntimePtySpawnState): Promise<PtySpawnOutcome> {
  if (state.status !== 'ready') {
    throw new TypeError(`Expected a spawn state that was not executed yet, got one that is ${state.status}`)
  }
  state.status = 'running'
  let outcome: PtySpawnOutcome
  try {
    outcome = await runStages(state)
  } catch (error) {
    const failure = classifyFailure(state, error)
    const spawnError = failedSpawnError(state, failure, await state.journal.rollBack())
    state.status = 'failed'
    state.error = spawnError
    // The joiners of a claim this run created learn its final error, after the rollback.
    state.runSettled?.reject(spawnError)
    throw spawnError
  }
  // Committed: the joiners of a claim this run created may adopt its PTY now.
  state.runSettled?.resolve()
  // Why ignore `finish` failures: the PTY is committed; a lease/handle release that throws is the
  // host's bug and must not turn a published PTY into a reported failure.
  const finished = state.journal.finish()
  if (isPromiseLike(finished)) await finished
  state.status = 'succeeded'
  state.outcome = outcome
  return outcome
}
