import { callProvider } from '../contracts/call-provider.js'
import { clampTimerDelay, type PtyIncarnationId, type PtyProvider, type PtyShutdownOptions } from '../contracts/index.js'
import { reportProviderGone, type ControllerCore } from './controller-core.js'
import type { PtyRecord } from './pty-record.js'

/**
 * How a dispatched shutdown ended: carried out, refused/failed (reported `shutdown_failed`),
 * refused `provider_disposed` — the provider is disposed, or being disposed and stopping its PTYs
 * itself (reported once per provider) —, or refused `provider_detached` — the provider let go of
 * its PTYs, which run on: nothing was stopped and no exit will be reported (reported once per
 * provider).
 */
export type ShutdownOutcome = 'resolved' | 'rejected' | 'provider_disposed' | 'provider_detached'

/**
 * Ask the provider to shut a PTY down, fenced by incarnation. A synchronous throw counts as a
 * rejection; a rejection is reported as `shutdown_failed` and answered `'rejected'` — a disposed provider's
 * refusal reported once for the provider and answered `'provider_disposed'`, a detached one's
 * likewise answered `'provider_detached'` —, never thrown.
 * `stepOptions`, when given, replace the default options (a `stopAndWait` step's timeout and
 * `keepHistory`); `reportRejection`, when given, decides from the rejection whether (and when) its
 * report is made (a `stopAndWait` step whose deadline ran out, and a `kill` whose provider ran out
 * of time, hold it: see `held-stop-report.ts`).
 */
export function dispatchShutdown(
  core: ControllerCore,
  provider: PtyProvider,
  ptyId: string,
  incarnationId: PtyIncarnationId | undefined,
  immediate: boolean,
  stepOptions?: PtyShutdownOptions,
  reportRejection: (report: () => void, error: unknown) => void = (report) => report(),
): Promise<ShutdownOutcome> {
  const options = stepOptions ?? {
    ...(immediate ? { immediate: true } : {}),
    ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }),
  }
  return callProvider(() => provider.shutdown(ptyId, options)).then(
    () => 'resolved' as const,
    (error: unknown) => {
      // A gone provider (disposed, or detached) refuses every stop: reported once for the provider.
      const gone = reportProviderGone(core, provider, 'shutdown_failed', error)
      if (gone !== null) return gone
      reportRejection(() => core.report('shutdown_failed', `Provider ${provider.name} could not shut down ${ptyId}`, error, ptyId), error)
      return 'rejected' as const
    },
  )
}

/**
 * {@link dispatchShutdown} of a tracked record's incarnation, as a stop of it (`kill`, a
 * `stopAndWait` step): a shutdown that **completes** proves that stop done — the provider's stop
 * covers the whole PTY, not only the leader — so it clears `stopUnproven` (see
 * `stopAnsweredByDeath`), also once the stop that sent it gave up.
 */
export function dispatchStopOf(
  core: ControllerCore,
  record: PtyRecord,
  immediate: boolean,
  stepOptions?: PtyShutdownOptions,
  reportRejection?: (report: () => void, error: unknown) => void,
): Promise<ShutdownOutcome> {
  return dispatchShutdown(core, record.provider, record.ptyId, record.incarnationId, immediate, stepOptions, reportRejection).then((outcome) => {
    if (outcome === 'resolved') record.stopUnproven = false
    return outcome
  })
}

/** The shutdown options of one stop step: the incarnation fence, the time left and `keepHistory`. */
export function shutdownOptionsFor(
  immediate: boolean,
  incarnationId: PtyIncarnationId | undefined,
  remainingMs: number,
  keepHistory: boolean | undefined,
): PtyShutdownOptions {
  return {
    ...(immediate ? { immediate: true } : {}),
    ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }),
    // Why a duration, not `deadlineMs`: the controller's clock need not be the provider's (a
    // manual clock in tests, a remote host's skew), and a duration means the same on both.
    timeoutMs: clampTimerDelay(remainingMs),
    ...(keepHistory === undefined ? {} : { keepHistory }),
  }
}
