import { describeValue } from '../contracts/describe-value.js'
import { providerRefusedOption } from './provider-option-refusal.js'
import {
  isPtyLiveOtherIncarnationError,
  type PtyIncarnationId,
  type PtyProvider,
  type PtySlot,
  type PtySpawnResult,
  type ProviderSpawnOptions,
} from '../contracts/index.js'
import { importClaimOwnersFromListings } from './import-claim-owners.js'
import { isPtySpawnError, PtySpawnError, type PtySpawnErrorCode } from './pty-spawn-error.js'
import { proveOwnerLive } from './prove-owner-live.js'
import type { RollbackFailure } from './rollback-journal.js'
import type { PtySpawnStage, RuntimePtySpawnState } from './spawn-state.js'
import {
  isPtyAbsentError,
  isPtyExitedDuringStartError,
  type ClaimedOwner,
  type PtySlotOwner,
  type PtySlotStore,
  type PtySpawnOutcome,
} from './types.js'

/** The code a failure that is not already a `PtySpawnError` gets, by the stage it happened in. */
const CODE_BY_STAGE: Record<PtySpawnStage, PtySpawnErrorCode> = {
  scope_lease: 'scope_lease_refused',
  admit_handle: 'registration_refused',
  resolve_slot_owner: 'slot_owner_unverified',
  begin_registration: 'registration_refused',
  read_output_sequence: 'registration_refused',
  abort_check: 'client_disconnected',
  claim: 'execution_owner_unavailable',
  attach: 'slot_owner_unverified',
  retire_slot_owner: 'slot_owner_unverified',
  provider_spawn: 'provider_spawn_failed',
  check_reply: 'exited_during_start',
  admission: 'registration_refused',
  rebase_sequence: 'commit_failed',
  execution_context: 'commit_failed',
  commit: 'commit_failed',
}

/**
 * Errors a run created itself, mapped to that run: their `cause` is the original error. An error
 * of another run (a joined claim's creator) is itself the cause, and keeps its own `outcome`.
 */
const ownErrors = new WeakMap<PtySpawnError, RuntimePtySpawnState>()

function own(
  state: RuntimePtySpawnState,
  code: PtySpawnErrorCode,
  message: string,
  options: { cause?: unknown; ptyId?: string } = {},
): PtySpawnError {
  const error = new PtySpawnError(code, message, options)
  ownErrors.set(error, state)
  return error
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function incarnationOf(incarnationId: PtyIncarnationId | undefined): { incarnationId?: PtyIncarnationId } {
  return incarnationId === undefined ? {} : { incarnationId }
}

/** Live and persisted owners agree when id and host match, and incarnations match where both are known. */
function sameSlotOwner(a: PtySlotOwner, b: PtySlotOwner): boolean {
  return (
    a.ptyId === b.ptyId &&
    a.hostId === b.hostId &&
    (a.incarnationId === undefined || b.incarnationId === undefined || a.incarnationId === b.incarnationId)
  )
}

async function resolveSlotOwner(state: RuntimePtySpawnState, store: PtySlotStore, slot: PtySlot): Promise<PtySlotOwner | null> {
  const live = store.getLiveOwner(slot)
  const persisted = await store.getPersistedOwner(slot)
  if (live !== null && persisted !== null && !sameSlotOwner(live, persisted)) {
    throw own(
      state,
      'slot_owner_conflict',
      `Slot ${JSON.stringify(slot.key)}: live state names PTY ${JSON.stringify(live.ptyId)} on ${JSON.stringify(live.hostId)}, the persisted store ${JSON.stringify(persisted.ptyId)} on ${JSON.stringify(persisted.hostId)}`,
      { ptyId: live.ptyId },
    )
  }
  const base = live ?? persisted
  if (base === null) {
    return null
  }
  const owner: PtySlotOwner = {
    ptyId: base.ptyId,
    hostId: base.hostId,
    ...incarnationOf(live?.incarnationId ?? persisted?.incarnationId),
  }
  if (owner.hostId !== state.hostId) {
    throw own(
      state,
      'slot_owner_conflict',
      `Slot ${JSON.stringify(slot.key)} is owned by PTY ${JSON.stringify(owner.ptyId)} on host ${JSON.stringify(owner.hostId)}, but the spawn targets ${JSON.stringify(state.hostId)}`,
      { ptyId: owner.ptyId },
    )
  }
  return owner
}

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

function checkAbort(state: RuntimePtySpawnState): void {
  state.stage = 'abort_check'
  const signal = state.args.signal
  if (signal?.aborted === true) {
    throw own(
      state,
      'client_disconnected',
      `The spawn was aborted (its signal fired: ${describeAbortReason(signal.reason)}) before the provider was called`,
      { cause: signal.reason },
    )
  }
}

function providerFor(state: RuntimePtySpawnState, hostId: string, ptyId?: string): PtyProvider {
  const provider = state.deps.resolveProvider(hostId)
  if (provider === undefined) {
    throw own(
      state,
      'execution_owner_unavailable',
      `No provider is registered for host ${JSON.stringify(hostId)}: it is unreachable`,
      ptyId === undefined ? {} : { ptyId },
    )
  }
  return provider
}

function freshSpawnOptions(state: RuntimePtySpawnState): ProviderSpawnOptions {
  const a = state.args
  const options: ProviderSpawnOptions = { onPtySpawnCommitted: state.reportPtySpawnCommitted }
  if (a.file !== undefined) options.file = a.file
  if (a.args !== undefined) options.args = a.args
  if (a.command !== undefined) options.command = a.command
  if (a.cols !== undefined) options.cols = a.cols
  if (a.rows !== undefined) options.rows = a.rows
  if (a.cwd !== undefined) options.cwd = a.cwd
  if (a.env !== undefined) options.env = a.env
  if (a.envToDelete !== undefined) options.envToDelete = a.envToDelete
  if (a.sessionId !== undefined) options.sessionId = a.sessionId
  if (a.isNewSession !== undefined) options.isNewSession = a.isNewSession
  // Same precedence as the controller's record; a claim's scope must reach the listing rows, where
  // another controller imports the owner from (a row without it would read as another scope).
  const scopeId = a.scopeId ?? a.slot?.scopeId ?? a.claim?.scopeId
  if (scopeId !== undefined) options.scopeId = scopeId
  if (a.slot !== undefined) options.slotKey = a.slot.key
  if (a.claim !== undefined) options.claimKey = a.claim.key
  if (a.metadata !== undefined) options.metadata = a.metadata
  return options
}

/** Attach-only options: every launch field is cleared, so an attach can never launch anything. */
function attachOptions(state: RuntimePtySpawnState, owner: PtySlotOwner): ProviderSpawnOptions {
  const options: ProviderSpawnOptions = { sessionId: owner.ptyId, attachOnly: true }
  if (owner.incarnationId !== undefined) options.expectedIncarnationId = owner.incarnationId
  if (state.args.cols !== undefined) options.cols = state.args.cols
  if (state.args.rows !== undefined) options.rows = state.args.rows
  return options
}

function recordShutdown(state: RuntimePtySpawnState, provider: PtyProvider, result: PtySpawnResult): void {
  state.startedProcess = true
  state.journal.record(`shut down started PTY ${result.id}`, async () => {
    try {
      await provider.shutdown(result.id, { immediate: true, ...(result.incarnationId === undefined ? {} : { expectedIncarnationId: result.incarnationId }) })
      state.shutdownOutcome = 'rolled_back'
    } catch (error) {
      state.shutdownOutcome = 'unknown'
      throw error
    }
  })
}

/** The providers each run already watches, so that a stage never subscribes twice. */
const watchedProviders = new WeakMap<RuntimePtySpawnState, Set<PtyProvider>>()

/**
 * Watch the provider's exits from just before the physical call until the end of the run. Why: an
 * exit can race the reply of a spawn whose id the runtime could not expect (no session id, no
 * slot owner), so no pending registration fences it; the watcher does.
 */
function watchExits(state: RuntimePtySpawnState, provider: PtyProvider): void {
  const watched = watchedProviders.get(state) ?? new Set<PtyProvider>()
  if (watched.has(provider)) {
    return
  }
  watched.add(provider)
  watchedProviders.set(state, watched)
  const exits = state.observedExits
  const unsubscribe = provider.onExit((event) => {
    exits.push({ id: event.id, ...incarnationOf(event.incarnationId) })
  })
  state.journal.record('stop watching exits', () => unsubscribe(), { always: true })
}

function sawExitOf(state: RuntimePtySpawnState, result: PtySpawnResult): boolean {
  return state.observedExits.some(
    (exit) =>
      exit.id === result.id &&
      (exit.incarnationId === undefined || result.incarnationId === undefined || exit.incarnationId === result.incarnationId),
  )
}

/**
 * Fail the spawn when `onPtySpawnCommitted` threw. Called once the started process is recorded for
 * rollback, so the rollback stops it and the error says `rolled_back`, not `not_started`.
 */
function rethrowCommitHookFailure(state: RuntimePtySpawnState): void {
  const failure = state.commitHookFailure
  if (failure === null) return
  state.stage = 'commit'
  throw own(state, 'commit_failed', `onPtySpawnCommitted threw after the process started: ${messageOf(failure.error)}`, {
    cause: failure.error,
    ...(state.result === null ? {} : { ptyId: state.result.id }),
  })
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

function rejectExitedReply(state: RuntimePtySpawnState, result: PtySpawnResult): void {
  state.stage = 'check_reply'
  if (result.exitedBeforeSpawnReply === true || sawExitOf(state, result)) {
    throw own(state, 'exited_during_start', `PTY ${JSON.stringify(result.id)} exited before the spawn replied`, { ptyId: result.id })
  }
}

/** Stages 6–9 of a fresh spawn: abort check, the physical call, the commit report, the reply check. */
async function spawnFresh(state: RuntimePtySpawnState): Promise<PtySpawnResult> {
  const provider = providerFor(state, state.hostId)
  checkAbort(state)
  state.stage = 'provider_spawn'
  watchExits(state, provider)
  const result = await provider.spawn(freshSpawnOptions(state))
  state.result = result
  recordShutdown(state, provider, result)
  state.reportPtySpawnCommitted()
  rethrowCommitHookFailure(state)
  rejectExitedReply(state, result)
  return result
}

/** Stage 7, slot branch: attach-only to the owner; `null` when its host proved it absent (retired). */
async function attachToSlotOwner(state: RuntimePtySpawnState, store: PtySlotStore, slot: PtySlot, owner: PtySlotOwner): Promise<PtySpawnResult | null> {
  const provider = providerFor(state, owner.hostId, owner.ptyId)
  checkAbort(state)
  state.stage = 'attach'
  watchExits(state, provider)
  let attached: PtySpawnResult
  try {
    attached = await provider.spawn(attachOptions(state, owner))
  } catch (error) {
    if (!isProvenAbsence(error)) {
      throw own(state, 'slot_owner_unverified', `Could not attach to slot owner ${JSON.stringify(owner.ptyId)}: ${messageOf(error)}`, { cause: error, ptyId: owner.ptyId })
    }
    state.stage = 'retire_slot_owner'
    const retired = await store.retireOwner(slot, owner)
    if (!retired) {
      throw own(state, 'slot_owner_changed', `Slot ${JSON.stringify(slot.key)} changed owner while PTY ${JSON.stringify(owner.ptyId)} was proven absent`, { cause: error, ptyId: owner.ptyId })
    }
    state.stage = 'resolve_slot_owner'
    const again = await resolveSlotOwner(state, store, slot)
    if (again !== null) {
      throw own(state, 'slot_owner_changed', `Slot ${JSON.stringify(slot.key)} is now owned by PTY ${JSON.stringify(again.ptyId)}`, { cause: error, ptyId: again.ptyId })
    }
    state.slotOwner = null
    return null
  }
  state.result = attached
  if (attached.isReattach !== true) {
    // Why: the provider started a process on an attach-only request; it is ours to stop.
    recordShutdown(state, provider, attached)
    state.reportPtySpawnCommitted()
    rethrowCommitHookFailure(state)
    throw own(state, 'slot_owner_changed', `An attach-only spawn of ${JSON.stringify(owner.ptyId)} started a new process ${JSON.stringify(attached.id)}`, { ptyId: attached.id })
  }
  if (attached.id !== owner.ptyId || (owner.incarnationId !== undefined && attached.incarnationId !== owner.incarnationId)) {
    throw own(
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

type ClaimBranch = { result: PtySpawnResult; disposition: 'created' | 'adopted'; owner: ClaimedOwner }

/** Stage 7, claim branch: single-flight ensure; the spawn callback runs stages 6–9. */
async function ensureClaim(state: RuntimePtySpawnState): Promise<ClaimBranch> {
  const claims = state.deps.claims
  const claim = state.args.claim
  if (claims === undefined || claim === undefined) {
    throw new TypeError('Expected a `claim` option and a `claims` dependency for the claim branch, got neither')
  }
  state.stage = 'claim'
  // Why before the ensure: an adopted owner can exit after it was re-proven live and before it is
  // published; no pending registration fences it (its id was unknown), so the watcher must.
  const hostProvider = state.deps.resolveProvider(state.hostId)
  if (hostProvider !== undefined) {
    watchExits(state, hostProvider)
  }
  // Why before deciding the key is free: an owner another controller (or an earlier run) started
  // over the same provider is known only to the hosts' listings.
  try {
    await importClaimOwnersFromListings(state.deps, state.hostId)
  } catch (error) {
    throw isPtySpawnError(error) ? own(state, error.code, error.message, { cause: error.cause }) : error
  }
  let spawned: PtySpawnResult | null = null
  const ensured = await claims.ensure({
    claim,
    hostId: state.hostId,
    spawn: async () => {
      try {
        spawned = await spawnFresh(state)
      } catch (error) {
        // Why: joiners receive this error; give them a code, not a raw provider error.
        throw isPtySpawnError(error) ? error : own(state, codeOfFailure(state.stage ?? 'claim', error), messageOf(error), { cause: error })
      }
      return { ptyId: spawned.id, ...incarnationOf(spawned.incarnationId) }
    },
    isLive: (owner) => proveOwnerLive(state.deps.resolveProvider, owner),
    onJoin: () => {
      state.joinedAnotherStart = true
    },
  })
  const owner = ensured.owner
  if (ensured.disposition === 'created' && spawned !== null) {
    const generation = owner.generation
    state.journal.record(`release claim ${owner.claimKey}`, () => claims.release(owner.ptyId, generation))
    return { result: spawned, disposition: 'created', owner }
  }
  const result: PtySpawnResult = { id: owner.ptyId, isReattach: true, ...incarnationOf(owner.incarnationId) }
  state.result = result
  // No `onPtySpawnCommitted` here: adopting (or joining) an owner starts no process.
  return { result, disposition: 'adopted', owner }
}

function admissionCode(error: unknown): PtySpawnErrorCode {
  return isPtyExitedDuringStartError(error) ? 'exited_during_start' : 'registration_refused'
}

async function runStages(state: RuntimePtySpawnState): Promise<PtySpawnOutcome> {
  const { deps, args, journal } = state
  const runtime = deps.runtime

  // 1. Scope lease — released on every path.
  state.stage = 'scope_lease'
  if (runtime?.acquireScopeSpawn !== undefined) {
    const release = await runtime.acquireScopeSpawn(args.scopeId)
    journal.record('release scope lease', () => release(), { always: true })
  }

  // 2. The pre-allocated handle, trusted for this spawn only.
  state.stage = 'admit_handle'
  const handle = args.preAllocatedHandle
  if (handle !== undefined && runtime?.admitHandle !== undefined) {
    runtime.admitHandle(handle)
    journal.record('revoke admitted handle', () => runtime.revokeHandle?.(handle), { always: true })
  }

  // 3. The slot owner: live and persisted views must agree.
  state.stage = 'resolve_slot_owner'
  const slot = args.slot
  const store = deps.store
  if (slot !== undefined && store !== undefined) {
    state.slotOwner = await resolveSlotOwner(state, store, slot)
  }

  // 4. Pending registration for the expected id (wildcard incarnation).
  state.stage = 'begin_registration'
  const expectedPtyId = state.slotOwner?.ptyId ?? args.sessionId
  if (expectedPtyId !== undefined) {
    beginPending(state, expectedPtyId, null)
  }

  // 5. The output sequence before the provider is called.
  state.stage = 'read_output_sequence'
  state.sequenceBeforeSpawn = expectedPtyId === undefined ? 0 : (runtime?.getPtyOutputSequence?.(expectedPtyId) ?? 0)

  // 6–9. The abort check right before the physical call, then the claim or slot/fresh branch.
  let result: PtySpawnResult
  let claimBranch: ClaimBranch | null = null
  if (args.claim !== undefined) {
    claimBranch = await ensureClaim(state)
    result = claimBranch.result
  } else {
    const owner = state.slotOwner
    const attached = owner !== null && slot !== undefined && store !== undefined ? await attachToSlotOwner(state, store, slot, owner) : null
    result = attached ?? (await spawnFresh(state))
  }
  state.result = result

  // 10. Move the pending registration to the real id; the admission gate precedes any publication.
  state.stage = 'admission'
  movePending(state, result)
  try {
    runtime?.assertPtyRegistrationAllowed?.(result.id, result.incarnationId)
  } catch (error) {
    throw own(state, admissionCode(error), `Registration of PTY ${JSON.stringify(result.id)} refused: ${messageOf(error)}`, { cause: error, ptyId: result.id })
  }

  // 11. Rebase the output sequence on the provider's.
  state.stage = 'rebase_sequence'
  let reconciledSequence: number | null | undefined
  if (result.providerSequence !== undefined) {
    reconciledSequence = runtime?.synchronizePtyOutputSequenceFromProvider?.(result.id, result.providerSequence, state.sequenceBeforeSpawn) ?? null
    if (reconciledSequence !== null) {
      const id = result.id
      journal.record(`undo output sequence sync ${id}`, () => runtime?.undoPtyOutputSequenceSync?.(id))
    }
  }

  // 12. The execution context.
  state.stage = 'execution_context'
  const ptyHostId = claimBranch?.owner.hostId ?? state.slotOwner?.hostId ?? state.hostId
  if (runtime?.preparePtyExecutionContext !== undefined) {
    runtime.preparePtyExecutionContext(result.id, { hostId: ptyHostId })
    if (state.startedProcess) {
      const id = result.id
      journal.record(`clear execution context ${id}`, () => runtime.clearPtyExecutionContext?.(id))
    }
  }

  // Commit: bind the slot, then register.
  state.stage = 'commit'
  let slotOwner: PtySlotOwner | undefined
  if (slot !== undefined && store !== undefined) {
    const bound: PtySlotOwner = { ptyId: result.id, hostId: ptyHostId, ...incarnationOf(result.incarnationId) }
    await store.bindOwner(slot, bound)
    slotOwner = bound
    if (state.startedProcess) {
      journal.record(`retire slot binding ${result.id}`, async () => {
        await store.retireOwner(slot, bound)
      })
    }
  }
  if (sawExitOf(state, result)) {
    throw own(state, 'exited_during_start', `PTY ${JSON.stringify(result.id)} exited before it was registered`, { ptyId: result.id })
  }
  if (runtime?.commitPtyRegistration !== undefined) {
    try {
      runtime.commitPtyRegistration(result.id, result.incarnationId)
    } catch (error) {
      const code = isPtyExitedDuringStartError(error) ? 'exited_during_start' : 'commit_failed'
      throw own(state, code, `Registration of PTY ${JSON.stringify(result.id)} failed: ${messageOf(error)}`, { cause: error, ptyId: result.id })
    }
    if (state.pendingRegistration !== null) {
      state.pendingRegistration.active = false
    }
  }

  const outcome: PtySpawnOutcome = { result, hostId: ptyHostId }
  if (claimBranch !== null) {
    outcome.claimDisposition = claimBranch.disposition
    outcome.claimOwner = claimBranch.owner
  }
  if (reconciledSequence !== undefined) {
    outcome.reconciledSequence = reconciledSequence
  }
  if (slotOwner !== undefined) {
    outcome.slotOwner = slotOwner
  }
  return outcome
}

function describeFailures(failures: RollbackFailure[]): string {
  return failures.map((failure) => `${failure.label}: ${messageOf(failure.error)}`).join('; ')
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
    const stage = state.stage ?? 'scope_lease'
    const ownError = isPtySpawnError(error) && ownErrors.get(error) === state
    const code = isPtySpawnError(error) ? error.code : codeOfFailure(stage, error)
    const message = isPtySpawnError(error) ? error.message : `Spawn failed at stage ${stage}: ${messageOf(error)}`
    let cause: unknown = ownError ? error.cause : error
    const failures = await state.journal.rollBack()
    const foreignOutcome = isPtySpawnError(error) && !ownError ? error.outcome : 'not_started'
    const outcomeOfFailure = state.startedProcess ? (state.shutdownOutcome ?? 'unknown') : foreignOutcome
    if (failures.length > 0) {
      cause = new AggregateError(
        [cause, ...failures.map((failure) => failure.error)],
        `${failures.length} rollback step(s) failed after the spawn failed: ${describeFailures(failures)}`,
      )
    }
    const ptyId = state.result?.id ?? (isPtySpawnError(error) ? error.ptyId : undefined) ?? state.pendingRegistration?.ptyId
    const spawnError = new PtySpawnError(code, message, {
      ...(cause === undefined ? {} : { cause }),
      outcome: outcomeOfFailure,
      ...(ptyId === undefined ? {} : { ptyId }),
      ...optionOf(cause),
    })
    state.status = 'failed'
    state.error = spawnError
    throw spawnError
  }
  // Why ignore `finish` failures: the PTY is committed; a lease/handle release that throws is the
  // host's bug and must not turn a published PTY into a reported failure.
  await state.journal.finish()
  state.status = 'succeeded'
  state.outcome = outcome
  return outcome
}

/** A short, safe rendering of an abort reason for the message (the reason itself is the `cause`). */
function describeAbortReason(reason: unknown): string {
  try {
    if (reason instanceof Error) return `${reason.name}: ${reason.message}`
  } catch {
    // Fall through: a hostile reason must not turn the abort into another error.
  }
  return describeValue(reason)
}

/**
 * The code of a failure that is not a `PtySpawnError`: by its stage, except that a provider's
 * refusal of an option (before any process started) is `invalid_spawn_options`.
 */
function codeOfFailure(stage: PtySpawnStage, error: unknown): PtySpawnErrorCode {
  if (stage === 'provider_spawn' && providerRefusedOption(error) !== undefined) return 'invalid_spawn_options'
  return CODE_BY_STAGE[stage]
}

/** `{ option }` when the failure's cause is a provider's option refusal. */
function optionOf(cause: unknown): { option?: string } {
  const option = providerRefusedOption(cause)
  return option === undefined ? {} : { option }
}
