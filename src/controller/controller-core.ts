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
  /** The providers whose refusal as disposed was reported already (once each: see {@link reportProviderDisposed}). */
  readonly disposedProvidersReported: WeakSet<PtyProvider>
  /** The providers whose refusal as detached was reported already (once each: see {@link reportProviderDetached}). */
  readonly detachedProvidersReported: WeakSet<PtyProvider>
}

/**
 * Whether `error` is a provider's refusal of a call made after its `dispose()` (`code:
 * 'provider_disposed'`, the rule of `PtyProvider.dispose`): every method of a disposed provider
 * but `dispose` and its subscriptions refuses so.
 */
export function isProviderDisposedRefusal(error: unknown): boolean {
  return carriesErrorCode(error, 'provider_disposed')
}

/**
 * Report, once per provider, that a call met the provider disposed (`code`: what the call's own
 * failure is reported as — `shutdown_failed`, `listing_failed`, `provider_threw`…). The host
 * disposed the provider before (or while) the controller that uses it: each later call the
 * controller makes for a PTY whose exit the provider never reported is refused the same way, and a
 * report per PTY and call was noise the host cannot act on (a stop's hang-up, force and
 * verification, each PTY of a `dispose()`): one says it all.
 */
export function reportProviderDisposed(core: ControllerCore, provider: PtyProvider, code: PtyControllerErrorCode, error: unknown): void {
  if (core.disposedProvidersReported.has(provider)) return
  core.disposedProvidersReported.add(provider)
  core.report(
    code,
    `Provider ${provider.name} was disposed before the controller, so its PTYs whose exit it did not report can no longer be stopped, verified or asked about (dispose the controller first)`,
    error,
  )
}

/**
 * Whether `error` is a provider's refusal of a call made after it was detached (`code:
 * 'provider_detached'`: the pty host provider's `detach()` closed its connection and left every
 * session running). Unlike a disposed provider, a detached one stops nothing and reports no exit:
 * its PTYs run on where this controller can no longer reach them — a stop refused so is not
 * carried out, and no exit report will come to settle it.
 */
export function isProviderDetachedRefusal(error: unknown): boolean {
  return carriesErrorCode(error, 'provider_detached')
}

/**
 * Report, once per provider, that a call met the provider detached (`code`: what the call's own
 * failure is reported as — `shutdown_failed`, `listing_failed`…). Why once, as for a disposed
 * provider: every later stop, verification and listing the controller makes for the provider's
 * PTYs is refused the same way — a `controller.dispose()` after a detach of 300 PTYs reported 600
 * `shutdown_failed` (each stop's hang-up and force), and each late `kill` or listing one more —,
 * noise the host cannot act on: one says it all. (A provider detached and then disposed is
 * reported once for each.)
 */
export function reportProviderDetached(core: ControllerCore, provider: PtyProvider, code: PtyControllerErrorCode, error: unknown): void {
  if (core.detachedProvidersReported.has(provider)) return
  core.detachedProvidersReported.add(provider)
  core.report(
    code,
    `Provider ${provider.name} was detached before the controller, so its PTYs keep running where the controller can no longer stop, verify or ask about them (attach them with a new provider; to let them go, dispose the controller with stopPtys: false)`,
    error,
  )
}

/**
 * Report a provider's refusal as disposed or detached once per provider
 * ({@link reportProviderDisposed}, {@link reportProviderDetached}); `false` when `error` is
 * neither (the caller reports it as its own failure).
 */
export function reportProviderGone(core: ControllerCore, provider: PtyProvider, code: PtyControllerErrorCode, error: unknown): boolean {
  if (isProviderDisposedRefusal(error)) reportProviderDisposed(core, provider, code, error)
  else if (isProviderDetachedRefusal(error)) reportProviderDetached(core, provider, code, error)
  else return false
  return true
}

/**
 * Report that a provider method threw (`provider_threw`), naming the provider and the method — a
 * disposed or detached provider's refusal once for the provider ({@link reportProviderGone}).
 */
export function reportProviderThrow(core: ControllerCore, provider: PtyProvider, what: string, error: unknown, ptyId?: string): void {
  // A disposed (or detached) provider refuses every call: said once for the provider, not per call.
  if (reportProviderGone(core, provider, 'provider_threw', error)) return
  core.report('provider_threw', `Provider ${provider.name} threw from ${what}`, error, ptyId)
}
