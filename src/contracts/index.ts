/**
 * `ptykit/contracts`: the types a host, a controller and a provider agree on — the
 * `RuntimePtyController` contract, the `PtyProvider` interface, spawn options and results, write
 * settlements, input kinds, incarnation ids, liveness and inventory — plus a few tiny guards (a
 * provider's checks of a size, a wait budget, a misspelt spawn option).
 *
 * @packageDocumentation
 */
export {
  PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
  isPtyLiveOtherIncarnationError,
  type PtyLiveOtherIncarnationError,
} from './attach-refusal.js'
export type { ProviderBufferSnapshot, PtyProviderBufferSnapshot } from './buffer-snapshot.js'
export {
  LONG_PAST_DEADLINE_MS,
  MAX_TIMER_DELAY_MS,
  clampTimerDelay,
  remainingWaitMs,
  resolveWaitDeadline,
  type PtyWaitBudget,
} from './deadline.js'
export { MAX_PTY_DIMENSION, assertPtyDimension } from './pty-dimension.js'
export type { PtyCwdOptions } from './cwd-options.js'
export { LOCAL_EXECUTION_HOST_ID, type ExecutionHostId } from './execution-host.js'
export { createRecentIds, type RecentIds } from './recent-ids.js'
export {
  PTY_INCARNATION_ID_MAX_LENGTH,
  isPtyIncarnationId,
  toPtyIncarnationId,
  type PtyIncarnationId,
} from './incarnation.js'
export {
  createListenerSet,
  rethrowOnMicrotask,
  type ListenerSet,
  type ListenerSetOptions,
} from './listener-set.js'
export type { PtyControllerInventory, PtyControllerTerminalIdentity } from './inventory.js'
export type { PtyLivenessVerdict } from './liveness.js'
export type { ProviderProcessInfo, PtyForegroundProcessEvidence, PtyProcessInfo, PtyProcessInspection } from './process-info.js'
export type {
  PtyBytesEvent,
  PtyDataEvent,
  PtyExitEvent,
  PtyOutputLossEvent,
  PtyListProcessesOptions,
  PtyLivenessProbeOptions,
  PtyProvider,
  PtyShutdownOptions,
  PtySize,
  Unsubscribe,
} from './provider.js'
export type {
  PtyAdoptSlotOptions,
  PtyInspectProcessOptions,
  PtyListOptions,
  PtyRendererSerializer,
  PtySlotCreateRelease,
  PtyStopAndWaitOptions,
  RuntimePtyController,
} from './runtime-pty-controller.js'
export type {
  PtyBufferSerialization,
  PtyDisposable,
  PtyHostScopedListing,
  PtySlotAdoption,
  PtySpawnReply,
} from './runtime-pty-controller-answers.js'
export {
  assertNoMisspeltSpawnOption,
  findMisspeltSpawnOption,
  type MisspeltSpawnOption,
  type ProviderSequence,
  type ProviderSpawnOptions,
  type PtyClaim,
  type PtyProcessLaunch,
  type PtySlot,
  type PtySpawnOptions,
  type PtySpawnResult,
} from './spawn-options.js'
export { isTerminalInputKind, type TerminalInputKind } from './terminal-input-kind.js'
export {
  DEFAULT_MAX_PENDING_INPUT_BYTES,
  WRITE_ACCEPTED,
  isWriteAccepted,
  isWriteSettlement,
  refusedWrite,
  settlementFromProviderWrite,
  unverifiableWrite,
  type WriteRefusalReason,
  type WriteSettlement,
  type WriteUnverifiableReason,
} from './write-settlement.js'
