import { describeValue } from '../contracts/describe-value.js'
import type { PtyProvider, PtySpawnResult } from '../contracts/index.js'
import { sawExitOf } from './exit-watch.js'
import { messageOf, ownSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'

// The guards around every physical `provider.spawn` of a run (fresh, attach-only, or a claim's
// creating spawn): find the provider, check the abort signal, take charge of a started process,
// report the commit hook's failure, reject a reply whose process already exited.

/** The provider of `hostId`; `execution_owner_unavailable` when none is registered. */
export function providerFor(state: RuntimePtySpawnState, hostId: string, ptyId?: string): PtyProvider {
  const provider = state.deps.resolveProvider(hostId)
  if (provider === undefined) {
    throw ownSpawnError(
      state,
      'execution_owner_unavailable',
      `No provider is registered for host ${JSON.stringify(hostId)}: it is unreachable`,
      ptyId === undefined ? {} : { ptyId },
    )
  }
  return provider
}

/** Stage 6: fail with `client_disconnected` when the caller's signal fired; run right before the physical call. */
export function checkAbort(state: RuntimePtySpawnState): void {
  state.stage = 'abort_check'
  const signal = state.args.signal
  if (signal?.aborted === true) {
    throw ownSpawnError(
      state,
      'client_disconnected',
      `The spawn was aborted (its signal fired: ${describeAbortReason(signal.reason)}) before the provider was called`,
      { cause: signal.reason },
    )
  }
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
 * The run started `result`'s process: it is ours to stop (rule SP2). The undo shuts it down at
 * once, incarnation-fenced, and records whether that worked as the failure's `outcome`.
 */
export function takeChargeOfStartedProcess(state: RuntimePtySpawnState, provider: PtyProvider, result: PtySpawnResult): void {
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

/**
 * Stage 8: fire `onPtySpawnCommitted` (once-guarded), and fail the spawn when it threw. Called once
 * the started process is recorded for rollback, so the rollback stops it and the error says
 * `rolled_back`, not `not_started`.
 */
export function reportSpawnCommitted(state: RuntimePtySpawnState): void {
  state.reportPtySpawnCommitted()
  const failure = state.commitHookFailure
  if (failure === null) return
  state.stage = 'commit'
  throw ownSpawnError(state, 'commit_failed', `onPtySpawnCommitted threw after the process started: ${messageOf(failure.error)}`, {
    cause: failure.error,
    ...(state.result === null ? {} : { ptyId: state.result.id }),
  })
}

/** Stage 9: `exited_during_start` when the reply says (or the watcher saw) its process already exited. */
export function rejectExitedReply(state: RuntimePtySpawnState, result: PtySpawnResult): void {
  state.stage = 'check_reply'
  if (result.exitedBeforeSpawnReply === true || sawExitOf(state, result)) {
    throw ownSpawnError(state, 'exited_during_start', `PTY ${JSON.stringify(result.id)} exited before the spawn replied`, { ptyId: result.id })
  }
}
