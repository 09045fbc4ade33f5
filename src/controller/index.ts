/**
 * `ptykit/controller`: `createPtyController()`, the default `RuntimePtyController` — routes PTYs to
 * providers by host, runs spawns through the spawn pipeline, settles exits from evidence with the
 * operator-close rule, fences by incarnation, escalates and verifies stops, applies producer flow
 * control, and publishes typed events (`spawn`, `data`, `exit`, `liveness`, `error`).
 *
 * @packageDocumentation
 */
export type { PtyClock, PtyTimerHandle } from './clock.js'
export type {
  PtyControllerOptions,
  PtyControllerRuntime,
  PtyFlowControlOptions,
  PtyProviderRegistry,
  PtyStopTimingOptions,
} from './controller-options.js'
export {
  PtyControllerDisposedError,
  PtyControllerError,
  isPtyControllerDisposedError,
  isPtyControllerError,
  type PtyControllerErrorCode,
} from './pty-controller-error.js'
export type {
  PtyControllerBytesEvent,
  PtyControllerDataEvent,
  PtyControllerEvents,
  PtyControllerExitEvent,
  PtyControllerInputModesResetEvent,
  PtyControllerLivenessEvent,
  PtyControllerOutputLossEvent,
  PtyControllerSpawnEvent,
} from './events.js'
export type { ProducerFlowControlMode, ProducerFlowState } from './flow-control.js'
export { PTY_LIVENESS_REASONS, type PtyLivenessReason } from './liveness-reasons.js'
export type { PtyAttachOptions, PtyControllerDisposeOptions, PtyInspectOptions, PtyWriteOptions } from './controller-types.js'
export { createPtyController } from './create-pty-controller.js'
export { PtyController } from './pty-controller.js'
export type { PtyTerminal } from './pty-terminal.js'
export { OUTPUT_ITERATOR_MAX_QUEUED_CHARS, type PtyTerminalOutputOptions } from './terminal-output.js'
export type { DisposableUnsubscribe } from './disposable.js'
export { STOP_UNCONFIRMED_AFTER_MS } from './stop-constants.js'
export { RENDERER_SERIALIZE_TIMEOUT_MS } from './renderer-serializers.js'
