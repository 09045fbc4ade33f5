/**
 * `ptykit`: a curated facade of the names most hosts need — the whole exit-cause algebra, the core
 * contracts (`RuntimePtyController`, `PtyProvider`, spawn options and results, events, write
 * settlements, incarnation ids), the seed's `executeRuntimePtySpawn`, and the default controller.
 * Everything else lives only in its subpath (`ptykit/contracts`, `ptykit/spawn`,
 * `ptykit/controller`); providers always come from theirs (`ptykit/node-pty`, `ptykit/ssh`,
 * `ptykit/pty-host`, `ptykit/testing`).
 *
 * @packageDocumentation
 */
export * from './exit-cause/index.js'
export {
  isWriteAccepted,
  type ExecutionHostId,
  type PtyControllerInventory,
  type PtyControllerTerminalIdentity,
  type PtyBytesEvent,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyLivenessVerdict,
  type PtyProvider,
  type PtySpawnOptions,
  type PtySpawnResult,
  type RuntimePtyController,
  type TerminalInputKind,
  type WriteSettlement,
} from './contracts/index.js'
export { PtySpawnError, executeRuntimePtySpawn, isPtySpawnError, type PtySpawnErrorCode } from './spawn/index.js'
export {
  PtyController,
  PtyControllerDisposedError,
  PtyControllerError,
  createPtyController,
  isPtyControllerDisposedError,
  isPtyControllerError,
  type PtyControllerBytesEvent,
  type PtyControllerDataEvent,
  type PtyControllerErrorCode,
  type PtyControllerEvents,
  type PtyControllerExitEvent,
  type PtyControllerLivenessEvent,
  type PtyControllerOptions,
  type PtyControllerOutputLossEvent,
  type PtyControllerSpawnEvent,
  type PtyTerminal,
} from './controller/index.js'
