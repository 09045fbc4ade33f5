import { defineErrorBrand } from '../contracts/error-brand.js'
/**
 * Stable codes of {@link PtySpawnError}. Match on the code, never on the message.
 *
 * - `invalid_spawn_options`: the options are malformed (a programmer error; nothing started),
 *   also when the provider refused an option before starting a process (`option` names it);
 * - `scope_lease_refused`: the runtime refused the scope spawn lease;
 * - `client_disconnected`: the caller's `signal` aborted before the provider was called (the
 *   signal's `reason` is the `cause`; {@link isPtySpawnAbortError} recognizes it);
 * - `slot_owner_conflict`: live state and the persisted store name different owners;
 * - `slot_owner_changed`: the slot's owner changed while the spawn was deciding;
 * - `slot_owner_unverified`: the owner's host could not prove it present or absent, or the slot
 *   store could not be read or answered neither an owner nor none, or its `retireOwner` threw or
 *   answered neither a boolean nor a count of rows;
 * - `claim_conflict`: the claim key is held in another scope;
 * - `claim_ownership_unknown`: a host's listing failed (or advertised a claim owner without an
 *   incarnation, or two owners of one key) while the claim imported its proven owners, so nobody
 *   can say whether the key is free — fail closed, never spawn a second owner; also when the claim
 *   registry's `ensure` answered an owner the pipeline cannot read;
 * - `execution_owner_unavailable`: the owning host is unreachable — unknown, never absent;
 * - `provider_spawn_failed`: the provider rejected the spawn;
 * - `exited_during_start`: the process exited before the spawn could be published;
 * - `registration_refused`: the runtime's admission gate refused the PTY, or a runtime hook before
 *   the provider call threw or answered what the pipeline cannot use (a `getPtyOutputSequence`
 *   answer that is no sequence);
 * - `commit_failed`: publishing the spawned PTY failed (it was stopped again).
 */
export type PtySpawnErrorCode =
  | 'invalid_spawn_options'
  | 'scope_lease_refused'
  | 'client_disconnected'
  | 'slot_owner_conflict'
  | 'slot_owner_changed'
  | 'slot_owner_unverified'
  | 'claim_conflict'
  | 'claim_ownership_unknown'
  | 'execution_owner_unavailable'
  | 'provider_spawn_failed'
  | 'exited_during_start'
  | 'registration_refused'
  | 'commit_failed'

/**
 * Whether a physical process may exist after the failure:
 * - `not_started`: no process was started;
 * - `rolled_back`: a process started and was stopped again by the rollback;
 * - `unknown`: a process started and its stop could not be confirmed — or the provider could not
 *   tell whether its launch went through (its rejection says `processMayExist`: a remote host that
 *   did not answer the spawn request); the provider stops such a process once it can.
 */
export type PtySpawnFailureOutcome = 'not_started' | 'rolled_back' | 'unknown'

/** The typed error every spawn failure is reported with; the original error is its `cause`. */
export class PtySpawnError extends Error {
  /** The stable code. */
  readonly code: PtySpawnErrorCode
  /** Whether a process may still exist. */
  readonly outcome: PtySpawnFailureOutcome
  /** The PTY id involved, when one was known. */
  readonly ptyId: string | undefined
  /**
   * For `invalid_spawn_options`: the refused option's name (`file`, `cwd`, `cols`, `slot.key`…),
   * whether the pipeline or the provider refused it; the refusal itself is the `cause`.
   */
  readonly option: string | undefined
  /**
   * For `invalid_spawn_options`: the refused value, as given (`undefined` when none was, and for an
   * environment value, which may be a secret and is never kept or shown).
   */
  readonly value: unknown

  /** Create a spawn error. */
  constructor(
    code: PtySpawnErrorCode,
    message: string,
    options: { cause?: unknown; outcome?: PtySpawnFailureOutcome; ptyId?: string; option?: string; value?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.outcome = options.outcome ?? 'not_started'
    this.ptyId = options.ptyId
    this.option = options.option
    this.value = options.value
    PTY_SPAWN_ERROR_BRAND.mark(this)
  }
}
const PTY_SPAWN_ERROR_BRAND = defineErrorBrand(PtySpawnError, 'PtySpawnError')

/** True for a {@link PtySpawnError}, also across duplicate copies of the package. */
export function isPtySpawnError(value: unknown): value is PtySpawnError {
  return PTY_SPAWN_ERROR_BRAND.is(value)
}

/**
 * True for the error of a spawn whose `signal` aborted it: a {@link PtySpawnError} with code
 * `client_disconnected` (its `cause` is the signal's `reason`). Nothing was started. Like
 * `isAbortError` helpers elsewhere, for a caller that treats its own abort as "not a failure".
 */
export function isPtySpawnAbortError(value: unknown): value is PtySpawnError {
  return isPtySpawnError(value) && value.code === 'client_disconnected'
}
