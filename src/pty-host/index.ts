/**
 * `ptykit/pty-host`: PTYs in a separate, persistent pty host process.
 *
 * `createPtyHostProvider()` returns a `PtyProvider` that talks to a pty host (`ptykit-pty-host`,
 * started on demand) over a private Unix domain socket. The host runs PTYs through ptykit's
 * node-pty provider and keeps them alive while no app is connected: a restarted app lists them,
 * attaches, replays what it missed from a bounded ring (loss is reported), and paints a
 * `@xterm/headless` snapshot aligned with the stream. `startPtyHost()` runs a host in-process.
 *
 * @packageDocumentation
 */
export {
  PTY_HOST_CONNECT_TIMEOUT_MS,
  PTY_HOST_RECONNECT_MAX_ATTEMPTS,
  PTY_HOST_REQUEST_TIMEOUT_MS,
  createPtyHostProvider,
  type PtyHostExitToForget,
  type PtyHostProvider,
  type PtyHostProviderOptions,
  type PtyHostReplayFrom,
  type PtyHostSpawnEnvironment,
} from './pty-host-provider.js'
export {
  PTY_HOST_DEFAULT_IDLE_EXIT_MS,
  PTY_HOST_FIRST_CLIENT_GRACE_MS,
  startPtyHost,
  type PtyHostServer,
  type PtyHostServerOptions,
} from './pty-host-server.js'
export { PTY_HOST_DEFAULT_HISTORY_CHARS, PTY_HOST_DEFAULT_SCROLLBACK_ROWS, type PtyHostBufferSnapshot } from './session-history.js'
export { PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND } from './screen-feeder.js'
export { PTY_HOST_MAX_SCREEN_CELLS } from './screen-limit.js'
export { PtyHostError, isPtyHostError, type PtyHostErrorCode } from './pty-host-error.js'
export { PTY_HOST_PROTOCOL_VERSION } from './protocol.js'
export { PTY_HOST_ACK_HIGH_WATERMARK_CHARS, PTY_HOST_ACK_LOW_WATERMARK_CHARS, PTY_HOST_ACK_MAX_HOLD_MS } from './session-flow.js'
export { PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR, PTY_HOST_EXITED_SESSION_MEMORY } from './host-sessions.js'
export { defaultPtyHostCommand, launchPtyHost, type PtyHostCommand, type PtyHostLaunchFlags } from './launch-pty-host.js'
export { defaultPtyHostSocketPath } from './socket-security.js'
export { PTY_HOST_STOP_TIMEOUT_MS, stopPtyHost, type StopPtyHostOptions } from './stop-pty-host.js'
