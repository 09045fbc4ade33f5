import type { ExecutionHostId, PtySpawnResult } from '../contracts/index.js'
import { describeValue } from '../contracts/describe-value.js'
import { isOutputSequence, malformedSequenceAnswer } from './output-sequence-answer.js'
import { RUN_ALWAYS } from './rollback-journal.js'
import { ownSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'
import type { ScopeSpawnLeaseRelease } from './types.js'

// The stages that call the host's runtime hooks alone: each is skipped when the runtime lacks its
// hook, and records its undo in the run's journal as soon as its side effect happened. None awaits:
// where a hook may answer later, the run awaits it in its own frame, and only when it did answer
// with a promise (see runStages).

/** What {@link requestScopeLease} answers for a runtime that takes no leases (it has no `acquireScopeSpawn`). */
export const NO_SCOPE_LEASE: unique symbol = Symbol('no scope lease')

/**
 * Stage 1, asking: the runtime's answer to the scope's shared spawn lease — a release function, or
 * a promise of one while an exclusive holder keeps the scope (unchecked here: see
 * {@link holdScopeLease}); {@link NO_SCOPE_LEASE} when the runtime takes no leases. The run waits
 * only for a promise, then holds the lease with {@link holdScopeLease}.
 */
export function requestScopeLease(state: RuntimePtySpawnState): unknown {
  state.stage = 'scope_lease'
  const runtime = state.deps.runtime
  if (runtime?.acquireScopeSpawn === undefined) return NO_SCOPE_LEASE
  return runtime.acquireScopeSpawn(state.args.scopeId)
}

/**
 * Stage 1, holding: the granted lease is released on every path (success too). An answer that is
 * not a release function fails the spawn at once with `scope_lease_refused`, naming the hook and
 * showing the answer: kept, it was called only at the end of the spawn, threw there, and the lease
 * the runtime may hold was never released.
 */
export function holdScopeLease(state: RuntimePtySpawnState, release: unknown): void {
  if (typeof release !== 'function') {
    const scopeId = state.args.scopeId
    throw ownSpawnError(
      state,
      'scope_lease_refused',
      `The runtime's acquireScopeSpawn answered ${describeValue(release)} ${scopeId === undefined ? 'without a scope' : `for scope ${JSON.stringify(scopeId)}`}: expected the lease's release function (or a promise of it)`,
    )
  }
  state.journal.record('release scope lease', release as ScopeSpawnLeaseRelease, RUN_ALWAYS)
}

/** Stage 2: trust the caller's pre-allocated handle for this spawn only (revoked on every path). */
export function admitPreAllocatedHandle(state: RuntimePtySpawnState): void {
  state.stage = 'admit_handle'
  const runtime = state.deps.runtime
  const handle = state.args.preAllocatedHandle
  if (handle !== undefined && runtime?.admitHandle !== undefined) {
    runtime.admitHandle(handle)
    state.journal.record('revoke admitted handle', () => runtime.revokeHandle?.(handle), RUN_ALWAYS)
  }
}

/**
 * Stage 5: the expected id's output sequence, read before the provider is called (0 when no id is
 * expected, or the runtime has no `getPtyOutputSequence`, or it answers `undefined` or `null`: the
 * seed's `?? 0`). Any other answer that is no sequence (a finite number ≥ 0) fails the spawn with `registration_refused` — the code of every
 * pre-spawn runtime hook's failure — naming the hook, the PTY and the answer, before anything is
 * forked: handed to stage 11's rebase, it was placed under the provider's count (`"x" + 5`).
 */
export function readOutputSequence(state: RuntimePtySpawnState, expectedPtyId: string | undefined): void {
  state.stage = 'read_output_sequence'
  const runtime = state.deps.runtime
  if (expectedPtyId === undefined || runtime?.getPtyOutputSequence === undefined) {
    state.sequenceBeforeSpawn = 0
    return
  }
  // `undefined`/`null`: the runtime counts nothing for the id yet — 0, as the seed reads it (`?? 0`).
  const answer: unknown = runtime.getPtyOutputSequence(expectedPtyId) ?? 0
  if (!isOutputSequence(answer)) {
    throw ownSpawnError(state, 'registration_refused', malformedSequenceAnswer('getPtyOutputSequence', answer, expectedPtyId), { ptyId: expectedPtyId })
  }
  state.sequenceBeforeSpawn = answer
}

/**
 * Stage 11: rebase the output sequence on the provider's (rule SP3). The reconciled sequence;
 * `null` when the runtime refused the provider's numbers (or has no hook); `undefined` when the
 * reply carries no provider sequence. An answer that is neither `null` nor a sequence (a finite
 * number ≥ 0) fails the spawn with `commit_failed`, naming the hook and showing the answer.
 */
export function rebaseOutputSequenceOnProvider(state: RuntimePtySpawnState, result: PtySpawnResult): number | null | undefined {
  state.stage = 'rebase_sequence'
  if (result.providerSequence === undefined) return undefined
  const runtime = state.deps.runtime
  const reconciled: unknown = runtime?.synchronizePtyOutputSequenceFromProvider?.(result.id, result.providerSequence, state.sequenceBeforeSpawn) ?? null
  if (reconciled !== null) {
    const id = result.id
    state.journal.record(`undo output sequence sync ${id}`, () => runtime?.undoPtyOutputSequenceSync?.(id))
  }
  if (reconciled !== null && !isOutputSequence(reconciled)) {
    // Why: trusted, it became the PTY's output sequence, and every data event's `seq` was built on
    // it (`"seventeen" + 5` is `"seventeen5"`). The undo above is recorded first: it may have applied.
    throw ownSpawnError(
      state,
      'commit_failed',
      malformedSequenceAnswer('synchronizePtyOutputSequenceFromProvider', reconciled, result.id),
      { ptyId: result.id },
    )
  }
  return reconciled as number | null
}

/** Stage 12: the PTY's execution context; cleared on a rollback only for a PTY this run started. */
export function prepareExecutionContext(state: RuntimePtySpawnState, result: PtySpawnResult, hostId: ExecutionHostId): void {
  state.stage = 'execution_context'
  const runtime = state.deps.runtime
  if (runtime?.preparePtyExecutionContext === undefined) return
  runtime.preparePtyExecutionContext(result.id, { hostId })
  if (state.startedProcess) {
    const id = result.id
    state.journal.record(`clear execution context ${id}`, () => runtime.clearPtyExecutionContext?.(id))
  }
}
