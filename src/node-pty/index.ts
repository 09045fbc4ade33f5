/**
 * `ptykit/node-pty`: real PTYs through node-pty.
 *
 * `createNodePtyProvider()` returns a `PtyProvider` that validates spawn options before touching
 * the OS, reports signalled deaths as signals, delivers every byte before the exit (also on
 * Node 20, whose libuv drops the tail), stops whole sessions with HUP → TERM → KILL, and reads cwd
 * and foreground process from the OS. node-pty itself is an optional peer dependency, loaded on
 * the first spawn.
 *
 * @packageDocumentation
 */
export {
  NODE_PTY_DEFAULT_TERMINAL_NAME,
  NODE_PTY_EXITED_ID_MEMORY,
  createNodePtyProvider,
  type NodePtyProvider,
  type NodePtyProviderOptions,
} from './node-pty-provider.js'
export {
  NODE_PTY_SCAN_INTERVAL_PER_STOP_MS,
  NODE_PTY_SCAN_MAX_INTERVAL_MS,
  NODE_PTY_SCAN_MIN_INTERVAL_MS,
} from './liveness-scanner.js'
export { NodePtyOptionError, isNodePtyOptionError } from './node-pty-option-error.js'
export {
  NodePtyProviderError,
  isNodePtyProviderError,
  type NodePtyProviderErrorCode,
} from './node-pty-provider-error.js'
export {
  NODE_PTY_DEFAULT_COLS,
  NODE_PTY_DEFAULT_ROWS,
  NODE_PTY_EXECVP_DEFAULT_PATH,
  NODE_PTY_FALLBACK_SHELL,
  NODE_PTY_FALLBACK_WINDOWS_SHELL,
  NODE_PTY_INHERITED_ENV_EXCLUDED,
  NODE_PTY_MAX_DIMENSION,
} from './launch-plan.js'
export {
  NODE_PTY_HANGUP_GRACE_MS,
  NODE_PTY_KILL_RESERVE_MS,
  NODE_PTY_SHUTDOWN_DEADLINE_MS,
  NODE_PTY_TERMINATE_GRACE_MS,
  planStopSchedule,
  type StopScheduleOptions,
  type StopSignal,
  type StopStep,
} from './stop-schedule.js'
export {
  NODE_PTY_DRAIN_GIVE_UP_MS,
  NODE_PTY_DRAIN_MARKER_NONCE_BYTES,
  NODE_PTY_DRAIN_MARKER_POOL_SIZE,
  NODE_PTY_DRAIN_MARKER_PREFIX,
  NODE_PTY_DRAIN_RETRY_INTERVAL_MS,
} from './exit-drain.js'
export { NODE_PTY_DEATH_POLL_INTERVAL_MS, NODE_PTY_DEATH_WATCH_IDLE_MS } from './child-death-watch.js'
export { NODE_PTY_LAUNCH_COMMAND_FALLBACK_MS } from './node-pty-session.js'
export { NODE_PTY_PROCESS_QUERY_TIMEOUT_MS } from './process-inspector.js'
export { NODE_PTY_FOREGROUND_CONFIRM_INTERVAL_MS } from './foreground-evidence.js'
export {
  NODE_PTY_PACKAGE_NAME,
  type NodePtyDisposable,
  type NodePtyModule,
  type NodePtySpawnOptions,
  type NodePtyTerminal,
} from './node-pty-module.js'
