import { callerSpawnOptionName } from './fresh-spawn-stage.js'
import { refusedOptionOf } from './provider-option-refusal.js'
import { isPtySpawnError, PtySpawnError, type PtySpawnErrorCode } from './pty-spawn-error.js'
import type { RollbackFailure } from './rollback-journal.js'
import type { PtySpawnStage, RuntimePtySpawnState } from './spawn-state.js'

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

/** A `PtySpawnError` this run raises itself (a stage's own refusal), remembered as the run's own. */
export function ownSpawnError(
  state: RuntimePtySpawnState,
  code: PtySpawnErrorCode,
  message: string,
  options: { cause?: unknown; ptyId?: string } = {},
): PtySpawnError {
  const error = new PtySpawnError(code, message, options)
  ownErrors.set(error, state)
  return error
}

/**
 * Whether a provider's rejection says `flag`, exactly `true` (see `PtyProvider.spawn`):
 * `processMayExist`, its launch may have gone through; `processStarted`, it started a process and
 * stopped it again.
 */
function saysTrue(error: unknown, flag: 'processMayExist' | 'processStarted'): boolean {
  return typeof error === 'object' && error !== null && (error as Record<string, unknown>)[flag] === true
}

/** The message of a thrown value, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The code of a failure that is not a `PtySpawnError`: by its stage, except that a provider's
 * refusal of an option (before any process started) is `invalid_spawn_options`.
 */
export function codeOfFailure(stage: PtySpawnStage, error: unknown): PtySpawnErrorCode {
  if (stage === 'provider_spawn' && refusedOptionOf(error) !== undefined) return 'invalid_spawn_options'
  return CODE_BY_STAGE[stage]
}

/**
 * `{ option }` when the failure's cause is a provider's option refusal, or another run's
 * `PtySpawnError` naming one (a joined claim's creator was refused it).
 */
function optionOf(state: RuntimePtySpawnState, cause: unknown): { option?: string; value?: unknown } {
  if (isPtySpawnError(cause)) return cause.option === undefined ? {} : { option: cause.option, value: cause.value }
  const refused = refusedOptionOf(cause)
  // A provider names its own options (`slotKey`); the caller is told the one it wrote (`slot.key`).
  return refused === undefined ? {} : { option: callerSpawnOptionName(state.args, refused.option), value: refused.value }
}

function describeFailures(failures: RollbackFailure[]): string {
  return failures.map((failure) => `${failure.label}: ${messageOf(failure.error)}`).join('; ')
}

/** What a failure was, read before the rollback runs: the code, message and cause the caller gets. */
export type ClassifiedFailure = {
  /** The error the stage threw. */
  error: unknown
  /** The stable code: the error's own, or its stage's. */
  code: PtySpawnErrorCode
  /** The message. */
  message: string
  /** The original error (for an error this run raised itself, that error's own cause). */
  cause: unknown
  /** Whether the error was raised by this run (not by a joined claim's creator). */
  ownError: boolean
}

/** The failure path, before the rollback: classify what the stage threw, by its stage. */
export function classifyFailure(state: RuntimePtySpawnState, error: unknown): ClassifiedFailure {
  const stage = state.stage ?? 'scope_lease'
  const ownError = isPtySpawnError(error) && ownErrors.get(error) === state
  return {
    error,
    code: isPtySpawnError(error) ? error.code : codeOfFailure(stage, error),
    message: isPtySpawnError(error) ? error.message : `Spawn failed at stage ${stage}: ${messageOf(error)}`,
    cause: ownError ? (error as PtySpawnError).cause : error,
    ownError,
  }
}

/**
 * The failure path, after the rollback (rule SP1): the one `PtySpawnError` the caller gets — its
 * `cause` (the original error, or an `AggregateError` of it and the undos that threw), its
 * `outcome` (whether a process this run started may still exist) and the PTY id it concerns.
 */
export function failedSpawnError(state: RuntimePtySpawnState, failure: ClassifiedFailure, undoFailures: RollbackFailure[]): PtySpawnError {
  const { error, ownError } = failure
  let cause = failure.cause
  // A provider that could not tell whether its launch went through says so (`processMayExist`,
  // see `PtyProvider.spawn`): "no process was started" would be a guess; one that started a
  // process and stopped it again says that (`processStarted`): "not started" would be false.
  const foreignOutcome =
    isPtySpawnError(error) && !ownError ? error.outcome : saysTrue(error, 'processMayExist') ? 'unknown' : saysTrue(error, 'processStarted') ? 'rolled_back' : 'not_started'
  const outcome = state.startedProcess ? (state.shutdownOutcome ?? 'unknown') : foreignOutcome
  if (undoFailures.length > 0) {
    cause = new AggregateError(
      [cause, ...undoFailures.map((undo) => undo.error)],
      `${undoFailures.length} rollback step(s) failed after the spawn failed: ${describeFailures(undoFailures)}`,
    )
  }
  const ptyId = state.result?.id ?? (isPtySpawnError(error) ? error.ptyId : undefined) ?? state.pendingRegistration?.ptyId
  return new PtySpawnError(failure.code, failure.message, {
    ...(cause === undefined ? {} : { cause }),
    outcome,
    ...(ptyId === undefined ? {} : { ptyId }),
    ...optionOf(state, failure.cause),
  })
}
