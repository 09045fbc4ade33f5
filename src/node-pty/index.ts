/**
 * `ptykit/node-pty`: real PTYs through node-pty.
 *
 * `createNodePtyProvider()` returns a `PtyProvider` that validates spawn options before touching
 * the OS, reports signalled deaths as signals, delivers every byte before the exit (also on
 * Node 20, whose libuv drops the tail), stops whole sessions with HUP → TERM → KILL, and reads cwd
 * and foreground process from the OS. node-pty itself is an optional peer dependency, loaded on
 * the first spawn.
 *
 * Exported: the provider, its options and errors, the defaults of its options, and the types a
 * `loadNodePty` option implements. Tuning constants of the drain, the stop loop, the death watch
 * and the process scans are internal (see docs/node-pty-provider.md for what they do).
 *
 * @packageDocumentation
 */
export {
  NODE_PTY_DEFAULT_TERMINAL_NAME,
  createNodePtyProvider,
  type NodePtyProvider,
  type NodePtyOutputMode,
  type NodePtyProviderOptions,
} from './node-pty-provider.js'
export { NodePtyOptionError, isNodePtyOptionError } from './node-pty-option-error.js'
export {
  NodePtyProviderError,
  isNodePtyProviderError,
  type NodePtyProviderErrorCode,
} from './node-pty-provider-error.js'
export { NODE_PTY_INHERITED_ENV_EXCLUDED } from './launch-plan.js'
export { NODE_PTY_DISPOSE_LATE_EXIT_MS, NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS } from './stop-schedule.js'
export {
  NODE_PTY_PACKAGE_NAME,
  type NodePtyDisposable,
  type NodePtyModule,
  type NodePtySpawnOptions,
  type NodePtyTerminal,
} from './node-pty-module.js'
