import { assertKnownOptions, isOptionsObject, optionNamesOf } from '../contracts/known-options.js'
import { describeValue } from '../contracts/describe-value.js'
import { callProvider } from '../contracts/call-provider.js'
import { malformedListing } from '../contracts/listing-rows.js'
import { askedDeadline } from '../contracts/deadline.js'
import { abortOf, assertAbortSignal } from './abort.js'
import {
  remainingWaitMs,
  resolveWaitDeadline,
  type ExecutionHostId,
  type PtyListOptions,
  type ProviderProcessInfo,
  type PtyProcessInfo,
  type PtyProvider,
} from '../contracts/index.js'
import type { ControllerTimers } from './controller-timers.js'
import { withForegroundEvidence } from './foreground-evidence.js'
import { definedFields } from '../contracts/defined-fields.js'
import { LIST_PROCESSES_DEFAULT_DEADLINE_MS } from './stop-constants.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/**
 * One listing request, resolved once for every host it goes to: the absolute deadline (epoch
 * milliseconds, what providers are given as `deadlineMs`), the wait it leaves, and the caller's
 * abort signal.
 */
export type ListingBudget = {
  /** The absolute deadline in epoch milliseconds (`Date.now()` based, as the seed origin passes it). */
  deadlineAt: number
  /** Milliseconds left at the request, clamped to what a timer holds; `0` = ask once, do not wait. */
  waitMs: number
  /** The caller's signal, if any. */
  signal: AbortSignal | undefined
  /** Add each row's confirmed foreground evidence (`includeForegroundProcessEvidence`), within the deadline. */
  includeForegroundProcessEvidence: boolean
}

/** What one host said to a listing. */
export type HostListingAnswer =
  | { kind: 'rows'; rows: PtyProcessInfo[] }
  | { kind: 'failed'; message: string; cause: unknown }
  | { kind: 'aborted' }

/** The options of the controller's listings (`listProcesses`, `listProcessesWithHostScope`). */
const LIST_OPTION_NAMES = optionNamesOf<PtyListOptions>()('deadlineMs', 'timeoutMs', 'signal', 'includeForegroundProcessEvidence')

/**
 * Read a caller's listing options into one {@link ListingBudget}.
 *
 * Why `Date.now()` and not the controller's clock: `deadlineMs` is an epoch time the caller took
 * from `Date.now()` (the seed origin's `Date.now() + 5_000`); the controller's clock only measures
 * the remaining wait.
 *
 * @throws TypeError naming the option when both forms are given, a value is not finite, or `signal`
 * is not an `AbortSignal`.
 */
export function resolveListingBudget(options: PtyListOptions | undefined): ListingBudget {
  if (options !== undefined && !isOptionsObject(options)) {
    throw argumentRefusal(`Expected the listing options to be an object, got ${describeValue(options)}`, 'options', options)
  }
  // Every option: a misspelt `includeForegroundProcessEvidence` was ignored (rows without evidence).
  assertKnownOptions('', options, LIST_OPTION_NAMES)
  const signal = options?.signal
  assertAbortSignal(signal)
  const now = Date.now()
  const deadlineAt = resolveWaitDeadline(options, LIST_PROCESSES_DEFAULT_DEADLINE_MS, now)
  const includeForegroundProcessEvidence = options?.includeForegroundProcessEvidence
  if (includeForegroundProcessEvidence !== undefined && typeof includeForegroundProcessEvidence !== 'boolean') {
    throw argumentRefusal(`Expected the \`includeForegroundProcessEvidence\` option to be a boolean, got ${describeValue(includeForegroundProcessEvidence)}`, 'includeForegroundProcessEvidence', includeForegroundProcessEvidence)
  }
  return {
    deadlineAt,
    waitMs: remainingWaitMs(deadlineAt, now),
    signal,
    includeForegroundProcessEvidence: includeForegroundProcessEvidence === true,
  }
}

/**
 * Ask one host for its rows, bounded by the budget: a rejection, a non-array answer or the deadline
 * is `failed`; the caller's abort is `aborted`. Rows are stamped with the host id (and, when asked,
 * carry foreground evidence; a failed confirmation is `null` and goes to `onForegroundEvidenceError`).
 * Never throws.
 * A deadline already past still asks once and takes an answer that is ready without waiting.
 */
export async function listOneHost(
  hostId: ExecutionHostId,
  provider: PtyProvider,
  budget: ListingBudget,
  timers: ControllerTimers,
  onForegroundEvidenceError: (error: unknown) => void = () => {},
): Promise<HostListingAnswer> {
  if (budget.signal?.aborted === true) return { kind: 'aborted' }
  const deadline = timers.after(budget.waitMs)
  // One abort listener per signal, however many listings wait on it (see onAbortShared).
  const aborted = abortOf(budget.signal)
  try {
    let pending: Promise<ProviderProcessInfo[]> = callProvider(() => provider.listProcesses({ deadlineMs: askedDeadline(budget.deadlineAt) }))
    if (budget.includeForegroundProcessEvidence) {
      // Only for a listing that can be read: a malformed one fails below, and its rows are asked nothing.
      pending = pending.then((rows) => (malformedListing(rows) === undefined ? withForegroundEvidence(provider, rows, onForegroundEvidenceError) : rows))
    }
    const answer = await Promise.race([
      pending.then(
        (rows) => ({ rows }),
        (error: unknown) => ({ error }),
      ),
      deadline.promise.then(() => 'deadline' as const),
      aborted.promise,
    ])
    if (answer === 'aborted') return { kind: 'aborted' }
    if (answer === 'deadline') {
      // The timer resolves early when dispose clears every timer: say that, not "too slow".
      const why = timers.cleared ? `before the PTY controller was disposed (the wait was cut short)` : `within ${budget.waitMs} ms`
      return { kind: 'failed', message: `Host ${hostId} did not list its processes ${why}`, cause: undefined }
    }
    if ('error' in answer) return { kind: 'failed', message: `Host ${hostId} failed to list its processes`, cause: answer.error }
    const malformed = malformedListing(answer.rows)
    if (malformed !== undefined) return { kind: 'failed', message: `Host ${hostId} answered a malformed listing: ${malformed}`, cause: undefined }
    // A field a provider answered `undefined` is absent in the controller's rows (see definedFields).
    return { kind: 'rows', rows: answer.rows.map((row) => ({ ...definedFields(row), hostId })) }
  } finally {
    deadline.cancel()
    aborted.cancel()
  }
}
