import type { PtyProvider } from '../contracts/index.js'
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
}

/** Report that a provider method threw (`provider_threw`), naming the provider and the method. */
export function reportProviderThrow(core: ControllerCore, provider: PtyProvider, what: string, error: unknown, ptyId?: string): void {
  core.report('provider_threw', `Provider ${provider.name} threw from ${what}`, error, ptyId)
}
