import { carriesErrorCode } from '../contracts/error-code.js'
import type {
  ExecutionHostId,
  ProviderSequence,
  PtyClaim,
  PtyIncarnationId,
  PtyProvider,
  PtySlot,
  PtySpawnOptions,
  PtySpawnResult,
} from '../contracts/index.js'

/**
 * The `code` a provider puts on the error it rejects an `attachOnly` spawn with when the PTY is
 * proven absent (no live PTY has that id, or the live one is another incarnation).
 *
 * Why a code and not a class or a message: only a *typed* host-reported absence may count as proof
 * that a slot's owner is gone (the pipeline then retires the binding and spawns fresh). Any other
 * attach failure — a timeout, a dropped connection, an untyped "not found" text — proves nothing
 * and is reported as `slot_owner_unverified`. Providers in other packages only need to set
 * `error.code = 'pty_absent'`; the fake provider's `FakePtyAbsentError` does.
 */
export const PTY_ABSENT_ERROR_CODE = 'pty_absent'

/** The shape of a typed host-reported absence (any error object carrying the code). */
export type PtyAbsentError = {
  /** Always {@link PTY_ABSENT_ERROR_CODE}. */
  code: typeof PTY_ABSENT_ERROR_CODE
}

/** True when `error` is a typed host-reported absence: an object whose `code` is {@link PTY_ABSENT_ERROR_CODE}. */
export function isPtyAbsentError(error: unknown): error is PtyAbsentError {
  return carriesErrorCode(error, PTY_ABSENT_ERROR_CODE)
}

/**
 * The `code` a runtime puts on the error {@link PtySpawnRuntime.assertPtyRegistrationAllowed} (or
 * `commitPtyRegistration`) throws when the PTY exited while its registration was pending (an
 * early-exit fence set by `notePtyExit`).
 *
 * Why: the pipeline reports that refusal as `exited_during_start` — the caller may retry — and any
 * other refusal as `registration_refused`. `createInMemoryPtyRuntime()` throws such errors.
 */
export const PTY_EXITED_DURING_START_ERROR_CODE = 'pty_exited_during_start'

/** The shape of a runtime's "exited while pending" refusal (any error object carrying the code). */
export type PtyExitedDuringStartRefusal = {
  /** Always {@link PTY_EXITED_DURING_START_ERROR_CODE}. */
  code: typeof PTY_EXITED_DURING_START_ERROR_CODE
}

/** True when `error` carries the code {@link PTY_EXITED_DURING_START_ERROR_CODE}. */
export function isPtyExitedDuringStartError(error: unknown): error is PtyExitedDuringStartRefusal {
  return carriesErrorCode(error, PTY_EXITED_DURING_START_ERROR_CODE)
}

/** Releases a scope spawn lease. Calling it more than once is harmless. */
export type ScopeSpawnLeaseRelease = () => void

/** Per-PTY context a host prepares before output is interpreted (host platform, path flavour…). */
export type PtyExecutionContext = {
  /** The host the PTY runs on. */
  hostId: ExecutionHostId
}

/**
 * The host's runtime state the spawn pipeline reads and writes. Every hook is optional: a missing
 * hook is a stage the host does not need. `createInMemoryPtyRuntime()` implements all of them.
 */
export type PtySpawnRuntime = {
  /**
   * Take a shared lease on the scope's terminal-mutation lock before anything else; released on
   * every path. May wait behind an exclusive holder, or throw to refuse the spawn. An answer that
   * is not a release function (nor a promise of one) refuses the spawn with `scope_lease_refused`.
   */
  acquireScopeSpawn?(scopeId: string | undefined): ScopeSpawnLeaseRelease | Promise<ScopeSpawnLeaseRelease>
  /** Trust the caller's pre-allocated terminal handle for the duration of this spawn. */
  admitHandle?(handle: string): void
  /** Stop trusting a handle admitted with {@link PtySpawnRuntime.admitHandle}. */
  revokeHandle?(handle: string): void
  /**
   * Record that a spawn for this id is in flight. `incarnationId` `null`/absent is a wildcard:
   * an exit of any incarnation of the id while pending sets the early-exit fence.
   */
  beginPtyRegistration?(ptyId: string, incarnationId?: PtyIncarnationId | null): void
  /** Forget a pending registration (and its early-exit fence). Idempotent. */
  cancelPendingPtyRegistration?(ptyId: string, incarnationId?: PtyIncarnationId | null): void
  /**
   * The admission gate before any publication: throws (the pipeline reports `exited_during_start`
   * or `registration_refused`) when the PTY exited while its registration was pending, or the
   * host refuses it.
   */
  assertPtyRegistrationAllowed?(ptyId: string, incarnationId?: PtyIncarnationId): void
  /** Turn the pending registration into a registered PTY (the last stage). */
  commitPtyRegistration?(ptyId: string, incarnationId?: PtyIncarnationId): void
  /** Record that a PTY's process exited (called by the controller for every provider exit). */
  notePtyExit?(ptyId: string, incarnationId?: PtyIncarnationId): void
  /**
   * The count of raw output chars admitted for the PTY so far (a finite number ≥ 0); 0 when
   * unknown (`undefined` and `null` are read as 0, as the seed reads them). Any other answer read
   * before the provider is called
   * (stage 5) refuses the spawn with `registration_refused`, nothing forked; a controller's
   * `attach()` reports it (`bookkeeping_failed`) and answers `false`; a controller that reads it as
   * a committed or attached PTY's sequence reports it and counts from 0.
   */
  getPtyOutputSequence?(ptyId: string): number
  /**
   * Rebase the PTY's output sequence on the provider's. `sequenceBeforeSpawn` is the runtime's
   * value read before the provider was called. Returns the reconciled sequence (a finite number
   * ≥ 0), or `null` when the provider's numbers were invalid and nothing changed; any other answer
   * fails the spawn with `commit_failed` (and the rebase is undone) — and a controller's `attach()`,
   * which rebases the PTY it attaches itself, answers `false` (undone, reported `bookkeeping_failed`).
   */
  synchronizePtyOutputSequenceFromProvider?(
    ptyId: string,
    providerSequence: ProviderSequence,
    sequenceBeforeSpawn: number,
  ): number | null
  /**
   * Undo the last {@link PtySpawnRuntime.synchronizePtyOutputSequenceFromProvider} for this PTY,
   * because its spawn rolled back (optional; without it a rolled-back rebase stays applied).
   */
  undoPtyOutputSequenceSync?(ptyId: string): void
  /** Prepare the execution context of the PTY (the last stage before publication). */
  preparePtyExecutionContext?(ptyId: string, context: PtyExecutionContext): void
  /** Forget the execution context of a PTY whose spawn rolled back. */
  clearPtyExecutionContext?(ptyId: string): void
}

/** The PTY that currently owns a slot, from live state or the persisted store. */
export type PtySlotOwner = {
  /** The owning PTY id. */
  ptyId: string
  /** The host it runs on. */
  hostId: ExecutionHostId
  /**
   * Its incarnation, when attested. A store that answers `null` here (its empty SQL or JSON
   * column) is read as not attested, as if the key were absent.
   */
  incarnationId?: PtyIncarnationId
}

/**
 * Where slot owners live: the runtime's live view and the host's persisted one. When both know an
 * owner and they disagree, the pipeline refuses with `slot_owner_conflict` rather than guess.
 */
export type PtySlotStore = {
  /**
   * The owner according to live runtime state; `null` (or `undefined`) when none. Synchronous. An
   * answer that is neither an owner nor none refuses the spawn or adoption with
   * `slot_owner_unverified` (see `docs/spawn-pipeline.md`, "Slot store").
   */
  getLiveOwner(slot: PtySlot): PtySlotOwner | null
  /** The owner according to the persisted store; `null` (or `undefined`) when none. Checked as {@link PtySlotStore.getLiveOwner}'s answer is. */
  getPersistedOwner(slot: PtySlot): PtySlotOwner | null | Promise<PtySlotOwner | null>
  /**
   * Bind the slot to its (new) owner, in both views. One that throws or rejects fails the spawn
   * with `commit_failed`, naming the slot and the PTY (which is stopped again).
   */
  bindOwner(slot: PtySlot, owner: PtySlotOwner): void | Promise<void>
  /**
   * Retire the binding only if it still names `expected`; returns whether it did (a count of rows
   * retired reads as that: `0` is `false`). Any other answer — `undefined` from a method that
   * forgot its `return` — refuses the spawn with `slot_owner_unverified`, naming `retireOwner`;
   * so does one that throws or rejects, naming the slot, with its error as the `cause`.
   */
  retireOwner(slot: PtySlot, expected: PtySlotOwner): boolean | Promise<boolean>
}

/** The live PTY that holds a claim. */
export type ClaimedOwner = {
  /** The claim key. */
  claimKey: string
  /** The claim's scope. */
  scopeId?: string
  /** The owning PTY. */
  ptyId: string
  /** Its host. */
  hostId: ExecutionHostId
  /** Its incarnation, when attested. */
  incarnationId?: PtyIncarnationId
  /** Its root pid, when the provider reported one (what a joined spawn publishes). */
  pid?: number
  /** A fresh id per reservation; releases and late liveness answers are fenced by it. */
  generation: string
}

/** What a claim's spawn callback reports: the PTY that now owns the claim. */
export type ClaimSpawnResult = {
  /** The new owner's PTY id. */
  ptyId: string
  /** Its incarnation, when attested. */
  incarnationId?: PtyIncarnationId
  /** Its root pid, when the provider reported one. */
  pid?: number
}

/** Arguments of {@link ClaimedOwnerRegistry.ensure}. */
export type EnsureClaimArgs = {
  /** The claim to satisfy. */
  claim: PtyClaim
  /** The host a fresh owner would run on. */
  hostId: ExecutionHostId
  /** Spawn a fresh owner; called at most once across concurrent ensures of one key. */
  spawn: () => Promise<ClaimSpawnResult>
  /**
   * Re-prove an existing owner is live. Throw (`execution_owner_unavailable`) when its host cannot
   * be reached: an unreachable owner is unknown, never absent.
   */
  isLive: (owner: ClaimedOwner) => Promise<boolean>
  /** Called when this ensure joins another caller's in-flight spawn. */
  onJoin?: (() => void) | undefined
  /**
   * Settles when this caller's spawn is decided: resolves once it committed, rejects with its final
   * error once it rolled back. When this caller creates the owner, a registry answers its
   * joiners only then — a joiner must not adopt a PTY the creator's rollback then stops, nor take
   * the creator's error before the rollback says whether its process was stopped. Without it,
   * joiners are answered as soon as `spawn` settles. Never await it before answering this caller
   * itself: the caller settles it only after its own `ensure` returned (awaiting it there deadlocks).
   */
  runSettled?: Promise<void> | undefined
}

/** The outcome of an ensure: this caller created the owner, or adopted an existing one. */
export type EnsureClaimResult = {
  /** `created` for the caller whose spawn ran; `adopted` for joiners and live owners. */
  disposition: 'created' | 'adopted'
  /** The owner. */
  owner: ClaimedOwner
}

/** Single-flight registry of claimed owners: "exactly one live PTY for this key". */
export type ClaimedOwnerRegistry = {
  /**
   * Ensure exactly one live owner for the claim. An answer the pipeline cannot read (an owner
   * without a non-empty string `ptyId` or `hostId`, an `incarnationId` neither `null`, absent nor
   * an incarnation id, a `pid` neither absent, `null` nor a positive integer (an adopted owner's is
   * published as the PTY's), another `disposition`, or — when it ran this call's `spawn` — an answer
   * other than `created` naming the PTY that spawn started) refuses the spawn with
   * `claim_ownership_unknown`, and a PTY that spawn started is stopped.
   */
  ensure(args: EnsureClaimArgs): Promise<EnsureClaimResult>
  /** The current owner of a claim, if any. */
  find(claim: PtyClaim): ClaimedOwner | null
  /**
   * Release the claim held by a PTY (only if `generation` matches, when given). Also called by a
   * creator's rollback while its `runSettled` is pending: from then on the key is not joinable, and
   * a new ensure waits for that run to settle before it starts over.
   */
  release(ptyId: string, generation?: string): void
  /**
   * Import an owner a host's listing advertises (the seed's `reconcileAgentSessionOwnerListings`),
   * so an ensure re-proves and adopts it instead of spawning a second one. A key the registry
   * already holds (live or reserved) is left as it is. Optional: without it a claim imports nothing.
   */
  importOwner?(owner: Omit<ClaimedOwner, 'generation'>): void
  /** Every current owner. */
  owners(): ClaimedOwner[]
}

/** What the pipeline is given: where to find providers, and the host's hooks. */
export type PtySpawnDeps = {
  /** The provider for a host; `undefined` when none is registered (the host is unreachable). */
  resolveProvider(hostId: ExecutionHostId): PtyProvider | undefined
  /** Runtime hooks; default: none (each stage that needs one is skipped). */
  runtime?: PtySpawnRuntime | undefined
  /** Slot owners; required when a spawn names a `slot`. */
  store?: PtySlotStore | undefined
  /** Claimed owners; required when a spawn names a `claim`. */
  claims?: ClaimedOwnerRegistry | undefined
  /**
   * Every host a claim imports proven owners from before it decides its key is free. Default: the
   * spawn's own host. The controller passes every registered host.
   */
  listHostIds?: (() => Iterable<ExecutionHostId>) | undefined
  /**
   * Another host than `hostId` on which the caller tracks a PTY under `ptyId` that is not proven
   * ended, or has one being spawned or attached; `undefined` when none. A reply naming such an id
   * (two hosts' providers minting the same ids) is refused at admission (stage 10) with
   * `registration_refused`, and a process this call started is stopped: accepted, it would take the
   * id over from the other host's PTY, which would run on untracked. Default: not checked. The
   * controller passes its records.
   */
  hostHoldingPtyId?: ((ptyId: string, hostId: ExecutionHostId) => ExecutionHostId | undefined) | undefined
}

/** What a successful pipeline run produced. */
export type PtySpawnOutcome = {
  /**
   * The provider's reply (or the adopted owner's identity). An optional field the provider gave as
   * `undefined` is absent here (the key left out), as in the controller's reply.
   */
  result: PtySpawnResult
  /** The host the PTY runs on. */
  hostId: ExecutionHostId
  /** For claimed spawns: created or adopted. */
  claimDisposition?: 'created' | 'adopted'
  /**
   * For claimed spawns that joined another caller's start still in flight: `true`. The process is
   * new (another call of the same pipeline started it), though this call adopted it.
   */
  joinedAnotherStart?: boolean
  /** The reconciled output sequence, when the provider sent one. */
  reconciledSequence?: number | null
  /**
   * For claimed spawns: the owner as the registry holds it (its `generation` fences a later
   * `claims.release(ptyId, generation)`).
   */
  claimOwner?: ClaimedOwner
  /** For slot spawns: the owner the slot is now bound to. */
  slotOwner?: PtySlotOwner
}

/** Re-exported for convenience: what callers pass in. */
export type { PtySpawnOptions }
