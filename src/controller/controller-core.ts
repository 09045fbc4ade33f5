import type { PtyProvider } from '../contracts/index.js'
import { carriesErrorCode } from '../contracts/error-code.js'
import type { PtyClock } from './clock.js'
import type { DeliveryGate } from './delivery-gate.js'
import type { HeldProviderEvent } from './in-flight-event-buffer.js'
import type { PtyControllerRuntime, ResolvedPtyControllerOptions } from './controller-options.js'
import type { ControllerTimers } from './controller-timers.js'
import type { PtyControllerErrorCode } from './pty-controller-error.js'
import type { PtyControllerEvents } from './events.js'
import type { ProducerFlowControl } from './flow-control.js'
import type { PtyRecordTable } from './pty-record-table.js'

/** Publish one controller event (never `error`: faults go through {@link ControllerReport}). */
export type ControllerEmit = <E extends Exclude<keyof PtyControllerEvents, 'error'>>(
  event: E,
  payload: Parameters<PtyControllerEvents[E]>[0],
) => void

/** Report a fault the controller survived on its `error` event. */
export type ControllerReport = (code: PtyControllerErrorCode, message: string, cause: unknown, ptyId?: string) => void

/**
 * What every controller module shares: the resolved options, the clock, timers and flow control,
 * the record table, and the two ways out (events and faults). Built once by the `PtyController`
 * facade and handed to each module; no module holds the facade itself.
 */
export type ControllerCore = {
  readonly options: ResolvedPtyControllerOptions
  readonly clock: PtyClock
  readonly runtime: PtyControllerRuntime
  readonly timers: ControllerTimers
  /** `null` when flow control is off (`flowControl: null`). */
  readonly flow: ProducerFlowControl | null
  readonly records: PtyRecordTable
  readonly emit: ControllerEmit
  /** One PTY's provider events in order when a listener re-enters (see `delivery-gate.ts`). */
  readonly delivery: DeliveryGate<HeldProviderEvent>
  /** Whether `event` has a listener: an event nobody listens to need not be built. */
  readonly listens: (event: Exclude<keyof PtyControllerEvents, 'error'>) => boolean
  readonly report: ControllerReport
  /** Whether `dispose()` was called. */
  readonly disposed: () => boolean
  /** The providers whose refusal as disposed was reported already (once each: see {@link reportProviderGone}). */
  readonly disposedProvidersReported: WeakSet<PtyProvider>
  /** The providers whose refusal as detached was reported already (once each: see {@link reportProviderGone}). */
  readonly detachedProvidersReported: WeakSet<PtyProvider>
}

/**
 * How a provider refused a call for being gone: `provider_disposed` — its `dispose()` ran (the rule
 * of `PtyProvider.dispose`: every method but `dispose` and the subscriptions refuses so; a disposed
 * provider stopped its PTYs and reported their exits) — or `provider_detached` — the pty host
 * provider's `detach()` closed its connection and left every session running: it stops nothing and
 * reports no exit, so a stop refused so is not carried out and no exit report will come to settle it.
 */
export type ProviderGone = 'provider_disposed' | 'provider_detached'

/** Whether `error` is a provider's refusal for being gone, and which ({@link ProviderGone}); `null` when it is neither. */
export function providerGoneRefusal(error: unknown): ProviderGone | null {
  if (carriesErrorCode(error, 'provider_disposed')) return 'provider_disposed'
  if (carriesErrorCode(error, 'provider_detached')) return 'provider_detached'
  return null
}

/** What the one report of a gone provider says, by how it went. */
const PROVIDER_GONE_MESSAGES: Record<ProviderGone, (name: string) => string> = {
  provider_disposed: (name) =>
    `Provider ${name} was disposed before the controller, so its PTYs whose exit it did not report can no longer be stopped, verified or asked about (dispose the controller first)`,
  provider_detached: (name) =>
    `Provider ${name} was detached before the controller, so its PTYs keep running where the controller can no longer stop, verify or ask about them (attach them with a new provider; to let them go, dispose the controller with stopPtys: false)`,
}

/**
 * Report a provider's refusal for being gone ({@link providerGoneRefusal}) once per provider and
 * way (`code`: what the call's own failure is reported as — `shutdown_failed`, `listing_failed`,
 * `provider_threw`…); answers how it went, or `null` when `error` is no such refusal (the caller
 * reports it as its own failure). Why once: every later call the controller makes for the
 * provider's PTYs is refused the same way, and a report per PTY and call was noise the host cannot
 * act on — a `controller.dispose()` after a detach of 300 PTYs reported 600 `shutdown_failed`
 * (each stop's hang-up and force); one says it all. (A provider detached and then disposed is
 * reported once for each.)
 */
export function reportProviderGone(core: ControllerCore, provider: PtyProvider, code: PtyControllerErrorCode, error: unknown): ProviderGone | null {
  const gone = providerGoneRefusal(error)
  if (gone === null) return null
  const reported = gone === 'provider_disposed' ? core.disposedProvidersReported : core.detachedProvidersReported
  if (!reported.has(provider)) {
    reported.add(provider)
    core.report(code, PROVIDER_GONE_MESSAGES[gone](provider.name), error)
  }
  return gone
}

/**
 * Report that a provider method threw (`provider_threw`), naming the provider and the method — a
 * disposed or detached provider's refusal once for the provider ({@link reportProviderGone}).
 */
export function reportProviderThrow(core: ControllerCore, provider: PtyProvider, what: string, error: unknown, ptyId?: string): void {
  // A disposed (or detached) provider refuses every call: said once for the provider, not per call.
  if (reportProviderGone(core, provider, 'provider_threw', error) !== null) return
  core.report('provider_threw', `Provider ${provider.name} threw from ${what}`, error, ptyId)
}
