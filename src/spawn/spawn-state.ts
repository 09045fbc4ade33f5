import { LOCAL_EXECUTION_HOST_ID, type ExecutionHostId, type PtyIncarnationId, type PtyProvider, type PtySpawnOptions, type PtySpawnResult } from '../contracts/index.js'
import { refusedOptionOf } from './provider-option-refusal.js'
import { PtySpawnError, type PtySpawnFailureOutcome } from './pty-spawn-error.js'
import { RollbackJournal } from './rollback-journal.js'
import type { PtySlotOwner, PtySpawnDeps, PtySpawnOutcome } from './types.js'
import { validatePtySpawnDeps, validatePtySpawnOptions } from './validate-spawn-options.js'

/**
 * The stages of {@link executeRuntimePtySpawn}, in order. A failure is classified by the stage it
 * happened in (see `docs/spawn-pipeline.md` for the table).
 */
export type PtySpawnStage =
  | 'scope_lease'
  | 'admit_handle'
  | 'resolve_slot_owner'
  | 'begin_registration'
  | 'read_output_sequence'
  | 'abort_check'
  | 'claim'
  | 'attach'
  | 'retire_slot_owner'
  | 'provider_spawn'
  | 'check_reply'
  | 'admission'
  | 'rebase_sequence'
  | 'execution_context'
  | 'commit'

/** An exit the pipeline saw from the provider while it watched. */
export type ObservedExit = {
  /** The PTY id that exited. */
  id: string
  /** The incarnation that exited, when attested. */
  incarnationId?: PtyIncarnationId
}

/** A pending registration the pipeline began, and whether it is still its to cancel. */
export type PendingRegistration = {
  /** The id it was begun for. */
  ptyId: string
  /** The incarnation it was begun with; `null` is the wildcard. */
  incarnationId: PtyIncarnationId | null
  /** False once cancelled, moved or committed: its undo then does nothing. */
  active: boolean
}

/**
 * One spawn's state: what it was asked, what each stage found, and how it ended. Created by
 * {@link createRuntimePtySpawnState}, run once by {@link executeRuntimePtySpawn}; the fields are
 * exposed for diagnostics and tests, and are written only by the pipeline.
 */
export type RuntimePtySpawnState = {
  /** The hooks and provider registry. */
  readonly deps: PtySpawnDeps
  /** The validated spawn options. */
  readonly args: PtySpawnOptions
  /** The host a fresh PTY runs on (`args.hostId`, default `'local'`). */
  readonly hostId: ExecutionHostId
  /**
   * The once-guard around `args.onPtySpawnCommitted`; also handed to the provider. It never throws:
   * a hook that throws is kept in {@link RuntimePtySpawnState.commitHookFailure} and the pipeline
   * fails the spawn once it holds the started process, so the rollback stops it (`rolled_back`).
   */
  readonly reportPtySpawnCommitted: () => void
  /** The rollback journal of this run. */
  readonly journal: RollbackJournal
  /** `ready` until executed; then `running`, and finally `succeeded` or `failed`. */
  status: 'ready' | 'running' | 'succeeded' | 'failed'
  /** The stage running (or, after a failure, the stage that failed); `null` before the first. */
  stage: PtySpawnStage | null
  /** Whether `onPtySpawnCommitted` fired. */
  committed: boolean
  /** What `onPtySpawnCommitted` threw, when it threw; `null` otherwise. */
  commitHookFailure: {
    /** The thrown value. */
    error: unknown
  } | null
  /** The slot's owner resolved at stage 3; `null` when none (or after it was proven absent). */
  slotOwner: PtySlotOwner | null
  /** The pipeline's pending registration, if any. */
  pendingRegistration: PendingRegistration | null
  /** The runtime's output sequence of the expected id, read before the provider was called. */
  sequenceBeforeSpawn: number
  /**
   * The provider's (or the adopted owner's) reply, once known. An optional field the provider gave
   * as `undefined` is absent here (the key left out), as in the outcome's `result`.
   */
  result: PtySpawnResult | null
  /** True when this run physically started `result`'s process (a fresh spawn, not an attach or adoption). */
  startedProcess: boolean
  /** True when this run joined another caller's in-flight claim spawn. */
  joinedAnotherStart: boolean
  /**
   * Settled when this run is over (resolved on success, rejected with its final error), for the
   * joiners of a claim it creates (`EnsureClaimArgs.runSettled`); `null` until a claim asks for it.
   */
  runSettled: {
    /** Settles with the run. */
    promise: Promise<void>
    /** The run committed. */
    resolve: () => void
    /** The run failed with `error`, after its rollback. */
    reject: (error: unknown) => void
  } | null
  /** Exits the provider reported while this run watched (from the physical call to the end). */
  observedExits: ObservedExit[]
  /** The providers whose exits this run watches (`null`: none yet); each is subscribed once. */
  exitWatchedProviders: PtyProvider[] | null
  /** How the rollback's shutdown of a started process went, once it ran. */
  shutdownOutcome: Exclude<PtySpawnFailureOutcome, 'not_started'> | null
  /** The outcome of a successful run. */
  outcome?: PtySpawnOutcome
  /** The error of a failed run. */
  error?: PtySpawnError
}

/**
 * Create the state of one spawn, after validating the options **before any side effect**.
 *
 * Invalid options are reported as a `PtySpawnError` with code `invalid_spawn_options`, thrown
 * synchronously, whose `cause` is the `TypeError` naming the option and value (so a host can
 * handle every spawn failure by `code`, and a client that sent bad options gets a stable code).
 * A host wiring error — no `resolveProvider`, a `slot` without `store`, a `claim` without `claims` —
 * is thrown as a plain `TypeError`.
 *
 * @throws PtySpawnError `invalid_spawn_options`; TypeError for missing dependencies.
 */
export function createRuntimePtySpawnState(deps: PtySpawnDeps, args: PtySpawnOptions): RuntimePtySpawnState {
  try {
    validatePtySpawnOptions(args)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new PtySpawnError('invalid_spawn_options', message, { cause: error, ...refusedOptionOf(error) })
  }
  validatePtySpawnDeps(deps, args)
  const state: RuntimePtySpawnState = {
    deps,
    args,
    hostId: args.hostId ?? LOCAL_EXECUTION_HOST_ID,
    reportPtySpawnCommitted: () => {
      if (state.committed) {
        return
      }
      state.committed = true
      try {
        args.onPtySpawnCommitted?.()
      } catch (error) {
        // Why kept, not thrown: the hook may run inside the provider's spawn, which would then
        // stop the process itself and reject as if nothing had started (`not_started`).
        state.commitHookFailure = { error }
      }
    },
    journal: new RollbackJournal(),
    status: 'ready',
    stage: null,
    committed: false,
    commitHookFailure: null,
    slotOwner: null,
    pendingRegistration: null,
    sequenceBeforeSpawn: 0,
    result: null,
    startedProcess: false,
    joinedAnotherStart: false,
    runSettled: null,
    shutdownOutcome: null,
    observedExits: [],
    exitWatchedProviders: null,
  }
  return state
}
