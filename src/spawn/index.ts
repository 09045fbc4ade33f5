/**
 * `ptykit/spawn`: the spawn-execute pipeline — ordered stages over injected runtime, store, claim
 * and provider hooks, with a rollback journal, abort before the physical spawn, and single-flight
 * claims. Platform-free.
 *
 * Exported: what a host calls (`executeRuntimePtySpawn`, the in-memory runtime, slot store and
 * claim registry) and implements (`PtySpawnRuntime`, `PtySlotStore`, `ClaimedOwnerRegistry`), and
 * the typed errors. The stages' machinery (rollback journal, scope leases, sequence rebase, owner
 * re-proof, option validation) is internal.
 *
 * @packageDocumentation
 */
export {
  PtySpawnError,
  isPtySpawnAbortError,
  isPtySpawnError,
  type PtySpawnErrorCode,
  type PtySpawnFailureOutcome,
} from './pty-spawn-error.js'
export {
  PTY_ABSENT_ERROR_CODE,
  PTY_EXITED_DURING_START_ERROR_CODE,
  isPtyAbsentError,
  isPtyExitedDuringStartError,
  type PtyAbsentError,
  type PtyExitedDuringStartRefusal,
} from './types.js'
export type {
  ClaimSpawnResult,
  ClaimedOwner,
  ClaimedOwnerRegistry,
  EnsureClaimArgs,
  EnsureClaimResult,
  PtyExecutionContext,
  PtySlotOwner,
  PtySlotStore,
  PtySpawnDeps,
  PtySpawnOptions,
  PtySpawnOutcome,
  PtySpawnRuntime,
  ScopeSpawnLeaseRelease,
} from './types.js'
export {
  createRuntimePtySpawnState,
  type ObservedExit,
  type PendingRegistration,
  type PtySpawnStage,
  type RuntimePtySpawnState,
} from './spawn-state.js'
export { executeRuntimePtySpawn } from './execute-runtime-pty-spawn.js'
export {
  CLAIMED_OWNER_REGISTRY_MAX_ENTRIES,
  createClaimedOwnerRegistry,
  type ClaimedOwnerRegistryOptions,
} from './claimed-owner-registry.js'
export { createInMemorySlotStore, slotStoreKey, type InMemorySlotStore, type InMemorySlotStoreSnapshot } from './in-memory-slot-store.js'
export {
  createInMemoryPtyRuntime,
  type InMemoryPtyRuntime,
  type InMemoryPtyRuntimeSnapshot,
  type ExecutionContextView,
  type OutputSequenceView,
  type PtyIdentityView,
} from './in-memory-pty-runtime.js'
// Types only: they are part of public shapes (`RuntimePtySpawnState.journal`,
// `InMemoryPtyRuntimeSnapshot.heldLeases`); the classes themselves are internal.
export type { RollbackJournal, RollbackFailure, RollbackStep } from './rollback-journal.js'
export type { ScopeLeaseView } from './scope-lease-table.js'
