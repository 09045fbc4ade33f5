import { describeValue } from '../contracts/describe-value.js'
import { isPtyDimension } from '../contracts/pty-dimension.js'
import { MAX_PTY_DIMENSION, isPtyIncarnationId, type PtyProvider, type PtySpawnResult } from '../contracts/index.js'
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
 * What is wrong with a provider's `spawn` reply, as `[field, expected, value]`; `undefined` for a
 * well-formed one. Only the fields the pipeline and the controller build on: a hand-written
 * provider that answers `{ id: 42 }` must not have `42` published as an id no call then accepts.
 */
export function malformedReplyField(reply: unknown): [field: string, expected: string, value: unknown] | undefined {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) return ['reply', 'an object ({ id, … })', reply]
  const r = reply as Record<string, unknown>
  if (typeof r['id'] !== 'string' || r['id'].length === 0) return ['id', 'a non-empty string', r['id']]
  if (r['incarnationId'] !== undefined && !isPtyIncarnationId(r['incarnationId'])) return ['incarnationId', 'absent, or a string of 1–128 characters', r['incarnationId']]
  const pid = r['pid']
  if (pid !== undefined && pid !== null && !(Number.isSafeInteger(pid) && (pid as number) > 0)) return ['pid', 'absent, null, or a positive integer', pid]
  for (const flag of ['isReattach', 'exitedBeforeSpawnReply', 'hostReportsChildExitStatus'] as const) {
    if (r[flag] !== undefined && typeof r[flag] !== 'boolean') return [flag, 'absent, or a boolean', r[flag]]
  }
  for (const size of ['cols', 'rows'] as const) {
    const value = r[size]
    if (value !== undefined && !isPtyDimension(value)) {
      return [size, `absent, or an integer from 1 to ${MAX_PTY_DIMENSION}`, value]
    }
  }
  return undefined
}

/**
 * Stage 6's answer, read before anything is built on it: a malformed reply fails the spawn with
 * `provider_spawn_failed`, naming the field and the value. The provider may have started a process
 * all the same: unless the reply says it attached to an existing one, the run takes charge of
 * stopping it by the id the provider gave (its own, however malformed); a reply without one leaves
 * the outcome `unknown`.
 */
export function assertProviderReply(state: RuntimePtySpawnState, provider: PtyProvider, reply: unknown): asserts reply is PtySpawnResult {
  const malformed = malformedReplyField(reply)
  if (malformed === undefined) return
  const [field, expected, value] = malformed
  const r = typeof reply === 'object' && reply !== null ? (reply as Record<string, unknown>) : undefined
  if (r?.['isReattach'] !== true) {
    const id = r?.['id']
    // Stopped by the id as given, fenced only by an incarnation id that is one (a malformed one
    // would make the provider refuse the stop of the very process it just started).
    const incarnationId = r?.['incarnationId']
    const target = { id, ...(isPtyIncarnationId(incarnationId) ? { incarnationId } : {}) } as PtySpawnResult
    if ((typeof id === 'string' && id.length > 0) || typeof id === 'number') takeChargeOfStartedProcess(state, provider, target)
    else state.startedProcess = true
  }
  state.stage = 'check_reply'
  throw ownSpawnError(
    state,
    'provider_spawn_failed',
    `Provider ${JSON.stringify(provider.name)} answered spawn with a malformed reply: expected ${field === 'reply' ? 'the reply' : `\`${field}\``} to be ${expected}, got ${describeValue(value)}`,
  )
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
