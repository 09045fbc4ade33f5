/**
 * `ptykit/controller`: `createPtyController()`, the default `RuntimePtyController` — routes PTYs to
 * providers by host, runs spawns through the spawn pipeline, settles exits from evidence with the
 * operator-close rule, fences by incarnation, escalates and verifies stops, applies producer flow
 * control, and publishes typed events (`spawn`, `data`, `exit`, `liveness`, `error`).
 *
 * @packageDocumentation
 */
export { createSystemClock, type PtyClock, type PtyTimerHandle } from './clock.js'
export {
  resolvePtyControllerOptions,
  type PtyControllerOptions,
  type PtyControllerRuntime,
  type PtyFlowControlOptions,
  type PtyProviderRegistry,
  type PtyStopTimingOptions,
  type ResolvedPtyControllerOptions,
} from './controller-options.js'
export {
  PtyControllerDisposedError,
  PtyControllerError,
  isPtyControllerDisposedError,
  isPtyControllerError,
  type PtyControllerErrorCode,
} from './errors.js'
export type {
  PtyControllerDataEvent,
  PtyControllerEvents,
  PtyControllerExitEvent,
  PtyControllerInputModesResetEvent,
  PtyControllerLivenessEvent,
  PtyControllerSpawnEvent,
} from './events.js'
export {
  FLOW_CONTROL_ACK_SIZE_CHARS,
  FLOW_CONTROL_HIGH_WATERMARK_CHARS,
  FLOW_CONTROL_LOW_WATERMARK_CHARS,
  PRODUCER_PAUSE_MAX_HOLD_MS,
  PRODUCER_PAUSE_REASSERT_INTERVAL_MS,
  ProducerFlowControl,
  type ProducerFlowControlConfig,
  type ProducerFlowControlMode,
  type ProducerFlowState,
  type ProducerFlowTarget,
} from './flow-control.js'
export { IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS } from './in-flight-event-buffer.js'
export { PTY_LIVENESS_REASONS, type PtyLivenessReason } from './liveness-reasons.js'
export { EXITED_PTY_RECORDS_KEPT } from './pty-record.js'
export { INPUT_MODE_RESET_SEQUENCE } from './input-mode-reset.js'
export { RENDERER_SERIALIZER_WAIT_DEFAULT_MS } from './renderer-serializers.js'
export type { PtyAttachOptions, PtyInspectOptions, PtyWriteOptions } from './controller-types.js'
export { PtyController, createPtyController } from './pty-controller.js'
export type { PtyTerminal } from './pty-terminal.js'
export type { PtyTerminalOutputOptions } from './terminal-output.js'
export type { DisposableUnsubscribe } from './disposable.js'
export {
  LIST_PROCESSES_DEFAULT_DEADLINE_MS,
  STOP_DEFAULT_DEADLINE_MS,
  STOP_FORCE_AFTER_MS,
  STOP_UNCONFIRMED_AFTER_MS,
} from './stop-constants.js'
export { KEEP_HISTORY_STOP_POLL_MS, KEEP_HISTORY_STOP_SETTLE_MS } from './verify-stop.js'
