/**
 * `ptykit/spawn`: the spawn-execute pipeline — ordered stages over injected runtime, store, claim
 * and provider hooks, with a rollback journal, abort before the physical spawn, and single-flight
 * claims. Platform-free.
 *
 * @packageDocumentation
 */
export {
  PtySpawnError,
  isPtySpawnError,
  type PtySpawnErrorCode,
  type PtySpawnFailureOutcome,
} from './pty-spawn-error.js'
export type {
  ClaimedOwner,
  ClaimedOwnerRegistry,
  EnsureClaimArgs,
  EnsureClaimResult,
  PtyExecutionContext,
  PtySlotOwner,
  PtySlotStore,
  PtySpawnDeps,
  PtySpawnOutcome,
  PtySpawnRuntime,
  ScopeSpawnLeaseRelease,
} from './types.js'
