import type { EventEmitter } from 'node:events'
import { describeThrownValue } from './argument-validation.js'
import type { ControllerReport } from './controller-core.js'
import { PtyControllerError, type PtyControllerErrorCode } from './pty-controller-error.js'
import type { PtyControllerEvents } from './events.js'

/**
 * Emit to each listener separately, so that one that throws neither hides the event from the
 * others nor reaches the caller (a provider's callback); the throw is reported `listener_threw`.
 */
export function emitToEachListener<E extends Exclude<keyof PtyControllerEvents, 'error'>>(
  emitter: EventEmitter,
  event: E,
  payload: Parameters<PtyControllerEvents[E]>[0],
  report: ControllerReport,
): void {
  for (const listener of emitter.rawListeners(event)) {
    try {
      ;(listener as (value: typeof payload) => void).call(emitter, payload)
    } catch (error) {
      report('listener_threw', `A \`${event}\` listener threw ${describeThrownValue(error)}`, error, payload.ptyId)
    }
  }
}

/**
 * Hand a fault the controller survived to its `error` listeners. With none the fault is dropped:
 * a bare EventEmitter would throw here and crash the host over a fault already survived.
 */
export function reportToErrorListeners(
  emitter: EventEmitter,
  code: PtyControllerErrorCode,
  message: string,
  cause: unknown,
  ptyId?: string,
): void {
  const error = new PtyControllerError(code, message, {
    ...(cause === undefined ? {} : { cause }),
    ...(ptyId === undefined ? {} : { ptyId }),
  })
  for (const listener of emitter.rawListeners('error')) {
    try {
      ;(listener as (value: PtyControllerError) => void).call(emitter, error)
    } catch {
      // An `error` listener that throws has nowhere left to report to.
    }
  }
}
