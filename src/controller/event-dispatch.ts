import type { EventEmitter } from 'node:events'
import { isPromiseLike } from '../contracts/promise-like.js'
import { describeThrownValue } from './argument-validation.js'
import type { ControllerReport } from './controller-core.js'
import { PtyControllerError, type PtyControllerErrorCode } from './pty-controller-error.js'
import type { PtyControllerEvents } from './events.js'

/**
 * Emit to each listener separately, so that one that throws neither hides the event from the
 * others nor reaches the caller (a provider's callback); the throw is reported `listener_threw`.
 * So is the rejection of a promise a listener returns (an `async` listener whose `await` fails):
 * left alone it would be an unhandled rejection, which ends a Node process by default.
 */
export function emitToEachListener<E extends Exclude<keyof PtyControllerEvents, 'error'>>(
  emitter: EventEmitter,
  event: E,
  payload: Parameters<PtyControllerEvents[E]>[0],
  report: ControllerReport,
): void {
  for (const listener of emitter.rawListeners(event)) {
    try {
      const returned: unknown = (listener as (value: typeof payload) => unknown).call(emitter, payload)
      // Most listeners return nothing: one comparison per listener on the per-chunk path.
      if (returned !== undefined) reportRejection(returned, event, payload.ptyId, report)
    } catch (error) {
      report('listener_threw', `A \`${event}\` listener threw ${describeThrownValue(error)}`, error, payload.ptyId)
    }
  }
}

/** When a listener returned a promise (a thenable), report its rejection as `listener_threw`. */
function reportRejection(returned: unknown, event: string, ptyId: string, report: ControllerReport): void {
  observeRejection(returned, (error) => {
    report('listener_threw', `A \`${event}\` listener's promise rejected with ${describeThrownValue(error)}`, error, ptyId)
  })
}

/**
 * When a callback of the host's returned a promise (a thenable), hand its rejection to
 * `onRejected` — which would otherwise be an unhandled rejection, ending a Node process by default.
 * A thenable whose `then` throws counts as rejected. Anything else is left alone.
 */
export function observeRejection(returned: unknown, onRejected: (error: unknown) => void): void {
  if (returned === undefined || !isPromiseLike(returned)) return
  try {
    returned.then(undefined, onRejected)
  } catch (error) {
    onRejected(error)
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
      const returned: unknown = (listener as (value: PtyControllerError) => unknown).call(emitter, error)
      // An `async` one's rejection likewise: it has nowhere left to report to either.
      observeRejection(returned, ignoreRejection)
    } catch {
      // An `error` listener that throws has nowhere left to report to.
    }
  }
}

/** The rejection of an `error` listener's promise: it has nowhere left to report to. */
function ignoreRejection(): void {}
