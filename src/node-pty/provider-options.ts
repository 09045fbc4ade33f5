import { isAbsolute } from 'node:path'
import { isMaxPendingInputBytes, MAX_PENDING_INPUT_BYTES_EXPECTED } from '../contracts/write-settlement.js'
import type { DEFAULT_MAX_PENDING_INPUT_BYTES, ExecutionHostId, PtyListProcessesOptions, PtyProcessInfo, PtyProvider } from '../contracts/index.js'
import { ENVIRONMENT_KEYS_EXPECTED, isEnvironmentVariableName } from '../contracts/environment-record.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import type { NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS } from './stop-schedule.js'
import { findUnknownOption, optionNamesOf, unknownOptionExpectation, isOptionsObject } from '../contracts/known-options.js'

/** The `$TERM` of spawned PTYs unless the host names another: what xterm.js and VS Code emulate. */
export const NODE_PTY_DEFAULT_TERMINAL_NAME = 'xterm-256color'

/** Options of {@link createNodePtyProvider}. Every field is optional. */
export type NodePtyProviderOptions = {
  /** The provider's `name`. Default `'node-pty'`. */
  name?: string | undefined
  /** The host id of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId | undefined
  /**
   * `false` when the spawned program is a wrapper whose status is not the child's (macOS
   * `login(1)`, a container shim): every exit then resolves to `unknown/host_status_unavailable`.
   * Default `true`.
   */
  hostReportsChildExitStatus?: boolean | undefined
  /** `$TERM` of spawned PTYs. Default {@link NODE_PTY_DEFAULT_TERMINAL_NAME}. */
  terminalName?: string | undefined
  /** The program a spawn without `file` runs. Default: `$SHELL` when usable, else `/bin/sh`. */
  defaultShell?: string | undefined
  /** The working directory of a spawn without `cwd`. Default: `process.cwd()` at spawn time. */
  defaultCwd?: string | undefined
  /** The environment spawns inherit (before their own `env`). Default: `process.env` at spawn time. */
  inheritedEnv?: Readonly<Record<string, string | undefined>> | undefined
  /**
   * Prove that every byte a PTY's child wrote was delivered before reporting its exit, so no tail
   * is lost (Linux: the master is read to its end when the child dies or libuv ends the stream
   * early; elsewhere: the slave side is held and drained to a marker; see the docs). Default
   * `true`; `false` gives node-pty's raw (lossy) behaviour.
   */
  drainOutputAtExit?: boolean | undefined
  /**
   * How output is delivered. `'string'` (default): decoded UTF-8 text on `onData`. `'bytes'`:
   * every chunk goes out undecoded, as the `Buffer` node-pty read, on `onBytes` (and never on
   * `onData`); flow control and `providerSequence` count bytes. The PTY keeps `IUTF8`, as in string
   * mode. For hosts that forward output to a renderer or a socket. See the node-pty guide.
   */
  output?: NodePtyOutputMode | undefined
  /**
   * Stop the PTY's whole session on shutdown (background jobs, which an interactive shell puts in
   * process groups of their own), not only the leader's process group. Default `true`.
   */
  sweepSession?: boolean | undefined
  /**
   * When the app's process ends without having disposed this provider — `process.exit()`, an
   * uncaught exception or unhandled rejection: whatever emits the process's `'exit'` — SIGKILL
   * every process its PTYs still run (each PTY's session, as a stop covers it), synchronously,
   * before the process is gone. Without it, what survives the app is what survives raw node-pty:
   * programs that ignore the hang-up, `nohup` jobs, and — as node-pty leaves every master
   * descriptor open in later children (see Platform notes in the node-pty guide) — the earlier
   * terminals those hold.
   *
   * No ending signal is listened for (at most `SIGCHLD`, to hear children die): an app that dies
   * of an unhandled `SIGINT`/`SIGTERM`/`SIGHUP` runs no `'exit'` listener, and leaves what raw node-pty leaves. Handle the signal (dispose, then die of
   * it, as the getting-started guide shows; or call `process.exit()`). Registered while a PTY of the
   * provider may have processes (from a spawn until all its PTYs ended and their stops completed,
   * or `dispose()` resolved and the exits it caused that were still owed came, or 30 s passed). In a worker thread it cannot be kept, and the provider is refused
   * unless it is `false` (dispose a worker's provider before the worker ends: see the node-pty
   * guide, "In a worker thread"). `dispose()` remains the graceful stop
   * (hang-up, then TERM, then KILL); this is the last resort. A `SIGKILL` of the app or a crash of
   * Node runs no code: only a separate process (the pty host) survives that. Not on Windows.
   * Default `true` (the pty host's own provider defaults to `false`: its sessions are meant to
   * outlive it, see the pty host guide).
   */
  killOnProcessExit?: boolean | undefined
  /**
   * The most bytes of input held for one PTY whose program does not read them yet (its kernel
   * input buffer, a few KiB, is full: the program is busy, stopped, or slower than the writer). A
   * write that would take the held input past it — or that is larger than it — is refused
   * `input_backlog_full`, nothing of it written; earlier writes keep their place, and the same
   * write goes through once the program has read enough. A positive integer, or
   * `Number.POSITIVE_INFINITY` for no bound (the memory held then grows for as long as a writer
   * outpaces the program). Default {@link DEFAULT_MAX_PENDING_INPUT_BYTES} (64 MiB). Windows, and
   * a terminal node-pty writes itself, are not bounded (see the node-pty guide).
   */
  maxPendingInputBytes?: number | undefined
  /** Grace after SIGHUP before SIGTERM. Default {@link NODE_PTY_HANGUP_GRACE_MS}. */
  hangupGraceMs?: number | undefined
  /** Grace after SIGTERM before SIGKILL. Default {@link NODE_PTY_TERMINATE_GRACE_MS}. */
  terminateGraceMs?: number | undefined
  /** Deadline of a shutdown that names none. Default {@link NODE_PTY_SHUTDOWN_DEADLINE_MS}. */
  shutdownDeadlineMs?: number | undefined
  /**
   * How to load node-pty. Default: `import('node-pty')` on the first spawn. Inject a module (or a
   * loader that fails) for tests, or to hand over a copy a bundler placed elsewhere.
   */
  loadNodePty?: (() => Promise<unknown>) | undefined
  /** The platform to behave as. Default `process.platform`. For tests of platform branches. */
  platform?: NodeJS.Platform | undefined
}

/** How the node-pty provider delivers output (its `output` option). */
export type NodePtyOutputMode = 'string' | 'bytes'

/**
 * The node-pty provider: a {@link PtyProvider} whose optional capabilities are all present, plus
 * a few node-pty specifics. (It keeps no screen, so `clearBuffer`/`getBufferSnapshot` are absent,
 * and it has no flow control of its own, so `acknowledgeData` is absent too.)
 */
export type NodePtyProvider = Omit<PtyProvider, 'listProcesses'> &
  Required<
    Pick<
      PtyProvider,
      | 'getSize'
      | 'pauseProducer'
      | 'resumeProducer'
      | 'hasPty'
      | 'probeLiveness'
      | 'getCwd'
      | 'getForegroundProcess'
      | 'hasChildProcesses'
      | 'confirmForeground'
      | 'supportsForegroundProcessEvidence'
      | 'dispose'
      | 'onBytes'
      | 'writeBytes'
    >
  > & {
  /** The PTYs this provider holds, each row exact: an optional field is absent, never `undefined` (see {@link PtyProvider.listProcesses}). */
  listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
  /** Always true: this provider owns every process it lists, so a missing row proves absence. */
  readonly authoritativeListings: true
  /** Same as `dispose()`, for `await using provider = createNodePtyProvider()`. */
  [Symbol.asyncDispose](): Promise<void>
  /** The leader pid of a live PTY; `null` when unknown or exited. */
  getPid(id: string): number | null
}

function assertNonNegativeInteger(option: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new NodePtyOptionError(option, 'a non-negative integer (milliseconds)', value)
  }
}

/** Every option `createNodePtyProvider` reads (complete: checked at compile time). */
const NODE_PTY_PROVIDER_OPTION_NAMES = optionNamesOf<NodePtyProviderOptions>()(
  'name', 'hostId', 'hostReportsChildExitStatus', 'terminalName', 'defaultShell', 'defaultCwd', 'inheritedEnv', 'drainOutputAtExit',
  'output', 'sweepSession', 'killOnProcessExit', 'maxPendingInputBytes', 'hangupGraceMs', 'terminateGraceMs', 'shutdownDeadlineMs', 'loadNodePty', 'platform',
)

/** Check every provider option; throws {@link NodePtyOptionError} naming the first bad one. */
export function validateProviderOptions(options: NodePtyProviderOptions): void {
  if (!isOptionsObject(options)) throw new NodePtyOptionError('options', 'an object', options)
  // A misspelt option would be ignored, its default used: refused, naming the one meant.
  const unknown = findUnknownOption(options, NODE_PTY_PROVIDER_OPTION_NAMES)
  if (unknown !== undefined) {
    // Its value is not shown: nobody knows what it holds (a misspelt `inheritedEnv` holds secrets).
    throw new NodePtyOptionError(unknown.name, unknownOptionExpectation(unknown), (options as Record<string, unknown>)[unknown.name], undefined, true)
  }
  for (const key of ['name', 'hostId', 'terminalName', 'defaultShell', 'defaultCwd'] as const) {
    const value = options[key]
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      throw new NodePtyOptionError(key, 'a non-empty string', value)
    }
  }
  // Why absolute: a relative default would follow the host's current directory, which changes.
  if (options.defaultCwd !== undefined && !isAbsolute(options.defaultCwd)) {
    throw new NodePtyOptionError('defaultCwd', 'an absolute path', options.defaultCwd)
  }
  for (const key of ['hostReportsChildExitStatus', 'drainOutputAtExit', 'sweepSession', 'killOnProcessExit'] as const) {
    const value = options[key]
    if (value !== undefined && typeof value !== 'boolean') throw new NodePtyOptionError(key, 'a boolean', value)
  }
  for (const key of ['hangupGraceMs', 'terminateGraceMs', 'shutdownDeadlineMs'] as const) {
    if (options[key] !== undefined) assertNonNegativeInteger(key, options[key])
  }
  if (options.maxPendingInputBytes !== undefined && !isMaxPendingInputBytes(options.maxPendingInputBytes)) {
    throw new NodePtyOptionError('maxPendingInputBytes', MAX_PENDING_INPUT_BYTES_EXPECTED, options.maxPendingInputBytes)
  }
  if (options.output !== undefined && options.output !== 'string' && options.output !== 'bytes') {
    throw new NodePtyOptionError('output', "'string' or 'bytes'", options.output)
  }
  if (options.loadNodePty !== undefined && typeof options.loadNodePty !== 'function') {
    throw new NodePtyOptionError('loadNodePty', 'a function', options.loadNodePty)
  }
  // Checked once here, as a spawn's `env` is at each spawn: an array would become variables named "0", "1"….
  const inherited: unknown = options.inheritedEnv
  if (inherited !== undefined) {
    if (inherited === null || typeof inherited !== 'object' || Array.isArray(inherited)) {
      throw new NodePtyOptionError('inheritedEnv', 'an object of string values (like process.env)', inherited)
    }
    for (const [key, value] of Object.entries(inherited)) {
      if (!isEnvironmentVariableName(key)) throw new NodePtyOptionError('inheritedEnv', ENVIRONMENT_KEYS_EXPECTED, key)
      if (value !== undefined && typeof value !== 'string') throw new NodePtyOptionError(`inheritedEnv.${key}`, 'a string', value)
    }
  }
}

