import { defineErrorBrand } from '../contracts/error-brand.js'

/**
 * Thrown (or rejected with) by the calls that would start or bind a PTY after `dispose()` —
 * `spawn`, `attach`, `claimSlotCreate`, `adoptSlot`: a disposed controller starts and adopts
 * nothing. Every other method — writes, acks, stops, queries, listings, the foreground, input-mode
 * and renderer-serializer members — answers harmlessly instead of throwing (a refused write,
 * `false`, `null`, a no-op), because such calls arrive late from async callbacks: an ack from a
 * renderer's write callback must not crash the host.
 */
export class PtyControllerDisposedError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'controller_disposed' as const
  /** The method that was called. */
  readonly method: string

  /**
   * Create the error for a call to `method`: made after `dispose()`, or (`inFlight`) made before
   * and overtaken by it.
   */
  constructor(method: string, inFlight = false) {
    super(inFlight ? `The PTY controller was disposed while \`${method}\` was in flight` : `Cannot call \`${method}\` on a disposed PTY controller`)
    this.method = method
    DISPOSED_ERROR_BRAND.mark(this)
  }
}
const DISPOSED_ERROR_BRAND = defineErrorBrand(PtyControllerDisposedError, 'PtyControllerDisposedError')

/** True for a {@link PtyControllerDisposedError}, also across duplicate copies of the package. */
export function isPtyControllerDisposedError(value: unknown): value is PtyControllerDisposedError {
  return DISPOSED_ERROR_BRAND.is(value)
}

/**
 * Stable codes of {@link PtyControllerError}, the faults reported on the controller's `error`
 * event:
 *
 * - `listener_threw`: one of your event listeners threw, or the promise it returned rejected; the
 *   other listeners still ran. Also the rejected promise of an `async` `onPtySpawnCommitted` hook;
 * - `provider_threw`: a provider callback or query threw where the controller could carry on;
 * - `shutdown_failed`: a provider rejected (or threw from) a shutdown;
 * - `flow_control_failed`: a provider's `pauseProducer`/`resumeProducer`/`acknowledgeData` threw
 *   (flow control is an optimization riding the data path, so this never stops delivery);
 * - `consumer_not_acknowledging`: a PTY's producer was paused for the maximum hold
 *   (`flowControl.pauseMaxHoldMs`) without its consumer acknowledging enough output; the debt was
 *   forgiven and the producer resumed (reported once per PTY);
 * - `listing_failed`: a host's process listing failed or timed out;
 * - `bookkeeping_failed`: the runtime, slot store or claim registry threw while the controller
 *   recorded an exit or released an owner, or while it read or started the output sequence of a
 *   PTY the spawn pipeline had already committed or an `attach` attached (the spawn still resolves:
 *   the PTY runs). Also a runtime output-sequence answer that is not a sequence (a finite number
 *   ≥ 0; the message names the hook and shows the answer): a `getPtyOutputSequence` answer
 *   (`undefined` and `null` are read as 0, as the seed reads them), for which that PTY is counted from 0; a `notePtyOutput` that fails (throws,
 *   or answers no sequence), reported once per PTY while the controller counts that PTY's output
 *   itself; in an `attach` (an `adoptSlot`'s too), its `getPtyOutputSequence` read before the
 *   provider is asked (a throw or no sequence: that attach answers `false`, the provider not asked)
 *   and a sequence rebase (`synchronizePtyOutputSequenceFromProvider`) that throws or answers
 *   neither `null` nor a sequence (that answer's rebase undone): that attach answers `false`; and the
 *   same rebase of a process the controller started whose reply had no `providerSequence` (undone;
 *   the spawn resolves);
 * - `output_dropped`: output held for spawns in flight passed `IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS`
 *   (a hung spawn while a chatty PTY kept writing); the oldest was dropped. The spawn that then
 *   publishes the PTY also reports what was dropped as an `outputLoss`;
 * - `provider_event_malformed`: a provider emitted an event the controller cannot read (not an
 *   object, no id, `data` that is not a string, `bytes` that is not a `Uint8Array`, an output-loss
 *   range that is not one); it was dropped. Reported once per provider, event and field;
 * - `output_overrun`: a terminal handle's `output()` iterator queued more output than its
 *   `maxQueuedChars` without being pulled (opened and forgotten, or read more slowly than the
 *   program writes once flow control let the program run); it dropped that output and ended, and
 *   its next pull rejects with the same code;
 * - `renderer_unresponsive`: a registered renderer serializer did not answer `serializeBuffer`
 *   within its `timeoutMs` (`RENDERER_SERIALIZE_TIMEOUT_MS` by default: a hung or crashed view);
 *   the provider's snapshot answered instead.
 */
export type PtyControllerErrorCode =
  | 'listener_threw'
  | 'provider_threw'
  | 'shutdown_failed'
  | 'flow_control_failed'
  | 'consumer_not_acknowledging'
  | 'listing_failed'
  | 'bookkeeping_failed'
  | 'output_dropped'
  | 'provider_event_malformed'
  | 'output_overrun'
  | 'renderer_unresponsive'

/**
 * A fault the controller survived, reported on its `error` event. The original error is `cause`.
 * The controller reports it and carries on; the one call that also rejects with it is a
 * single-host `listProcesses(hostId)` whose host did not answer (`listing_failed`), because an
 * empty answer would claim the host runs nothing; and an `output()` iterator's next pull rejects
 * with the `output_overrun` that ended it.
 */
export class PtyControllerError extends Error {
  /** The stable code. */
  readonly code: PtyControllerErrorCode
  /** The PTY involved, when there was one. */
  readonly ptyId: string | undefined

  /** Create a fault report. */
  constructor(code: PtyControllerErrorCode, message: string, options: { cause?: unknown; ptyId?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.ptyId = options.ptyId
    CONTROLLER_ERROR_BRAND.mark(this)
  }
}
const CONTROLLER_ERROR_BRAND = defineErrorBrand(PtyControllerError, 'PtyControllerError')

/** True for a {@link PtyControllerError}, also across duplicate copies of the package. */
export function isPtyControllerError(value: unknown): value is PtyControllerError {
  return CONTROLLER_ERROR_BRAND.is(value)
}
