import type { ExecutionHostId, PtyIncarnationId, PtySpawnResult } from '../contracts/index.js'
import { sawExitOf } from './exit-watch.js'
import { messageOf, ownSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'
import { isPtyExitedDuringStartError } from './types.js'

// The runtime's registration of the PTY through a spawn: pending for the expected id (stage 4),
// moved to the real id and past the admission gate (stage 10), committed last.

function beginPending(state: RuntimePtySpawnState, ptyId: string, incarnationId: PtyIncarnationId | null): void {
  const runtime = state.deps.runtime
  if (runtime?.beginPtyRegistration === undefined) {
    return
  }
  runtime.beginPtyRegistration(ptyId, incarnationId)
  const pending = { ptyId, incarnationId, active: true }
  state.pendingRegistration = pending
  state.journal.record(`cancel pending registration ${ptyId}`, () => {
    if (pending.active) {
      pending.active = false
      runtime.cancelPendingPtyRegistration?.(ptyId, incarnationId)
    }
  })
}

/**
 * Stage 4: a pending registration (wildcard incarnation) for the id the spawn expects — the slot
 * owner's, else the caller's session id. Returns that id; `undefined` when none can be expected.
 */
export function beginExpectedRegistration(state: RuntimePtySpawnState): string | undefined {
  state.stage = 'begin_registration'
  const expectedPtyId = state.slotOwner?.ptyId ?? state.args.sessionId
  if (expectedPtyId !== undefined) {
    beginPending(state, expectedPtyId, null)
  }
  return expectedPtyId
}

/** Cancel a pending registration for another id, and begin one for the reply's id and incarnation. */
function movePending(state: RuntimePtySpawnState, result: PtySpawnResult): void {
  const pending = state.pendingRegistration
  if (pending?.ptyId === result.id) {
    return
  }
  if (pending !== null && pending.active) {
    pending.active = false
    state.deps.runtime?.cancelPendingPtyRegistration?.(pending.ptyId, pending.incarnationId)
  }
  beginPending(state, result.id, result.incarnationId ?? null)
}

/**
 * Stage 10: move the pending registration to the real id; the admission gate precedes any
 * publication. An id the caller tracks on another host than `hostId` (the PTY's) is refused first.
 */
export function admitRegistration(state: RuntimePtySpawnState, result: PtySpawnResult, hostId: ExecutionHostId): void {
  state.stage = 'admission'
  movePending(state, result)
  const holder = state.deps.hostHoldingPtyId?.(result.id, hostId)
  if (holder !== undefined) {
    throw ownSpawnError(
      state,
      'registration_refused',
      `Registration of PTY ${JSON.stringify(result.id)} on host ${JSON.stringify(hostId)} refused: a PTY under that id is tracked on host ${JSON.stringify(holder)} (the providers of two hosts mint the same ids: give each its own id prefix)`,
      { ptyId: result.id },
    )
  }
  try {
    state.deps.runtime?.assertPtyRegistrationAllowed?.(result.id, result.incarnationId)
  } catch (error) {
    const code = isPtyExitedDuringStartError(error) ? 'exited_during_start' : 'registration_refused'
    throw ownSpawnError(state, code, `Registration of PTY ${JSON.stringify(result.id)} refused: ${messageOf(error)}`, { cause: error, ptyId: result.id })
  }
}

/**
 * Commit, last step: refuse a PTY the watcher saw exit, then turn the pending registration into a
 * registered PTY (the registration is then no longer the rollback's to cancel).
 */
export function commitRegistration(state: RuntimePtySpawnState, result: PtySpawnResult): void {
  state.stage = 'commit'
  if (sawExitOf(state, result)) {
    throw ownSpawnError(state, 'exited_during_start', `PTY ${JSON.stringify(result.id)} exited before it was registered`, { ptyId: result.id })
  }
  const runtime = state.deps.runtime
  if (runtime?.commitPtyRegistration === undefined) return
  try {
    runtime.commitPtyRegistration(result.id, result.incarnationId)
  } catch (error) {
    const code = isPtyExitedDuringStartError(error) ? 'exited_during_start' : 'commit_failed'
    throw ownSpawnError(state, code, `Registration of PTY ${JSON.stringify(result.id)} failed: ${messageOf(error)}`, { cause: error, ptyId: result.id })
  }
  if (state.pendingRegistration !== null) {
    state.pendingRegistration.active = false
  }
}
