import { spawn } from 'node:child_process'
import { closeSync, existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeValue } from '../contracts/describe-value.js'
import { resolveProgram, whyNotExecutable } from '../node-pty/launch-plan.js'
import { assertIntegerOption, assertKnownPtyHostOptions, invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { optionNamesOf } from '../contracts/known-options.js'
import { openHostLogForLaunch, readHostLogSince } from './host-log.js'
import { assertScrollbackRowsFit } from './screen-limit.js'
import { assertSocketPathOption, ensurePrivateSocketDir, ptyHostPaths } from './socket-security.js'

/** A command that starts the pty host: a program and its arguments (the host's flags are appended). */
export type PtyHostCommand = {
  /** The program, for example `process.execPath`. */
  file: string
  /** Its arguments, before the host's own flags. */
  args: readonly string[]
}

/** The flags a started host gets: where to listen and how to behave. */
export type PtyHostLaunchFlags = {
  /** The socket path. */
  socketPath: string
  /** `--idle-exit-ms`. */
  idleExitMs?: number | undefined
  /** `--history-chars`. */
  historyChars?: number | undefined
  /** `--scrollback-rows`. */
  scrollbackRows?: number | undefined
  /** `--exited-history-bytes`: the budget of ended sessions' histories (see `PtyHostServerOptions`). */
  exitedHistoryBytes?: number | undefined
  /** `--exited-session-memory`: how many ended sessions keep their exit (see `PtyHostServerOptions`). */
  exitedSessionMemory?: number | undefined
}

function thisFile(): string {
  // Why both: the CommonJS build has `__filename`, the ESM build has `import.meta.url`.
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url)
}

/**
 * How this copy of ptykit starts its host, the first of:
 *
 * 1. `node <package>/dist/pty-host/host-main.js` when this code runs from the built package (the
 *    `ptykit` package.json above this file), or `node --import tsx src/pty-host/host-main.ts` when
 *    it runs from the sources;
 * 2. `node <dir>/host-main.js` when that file exists, `<dir>` being the directory of the file this
 *    code was bundled into (an app that bundles ptykit ships ptykit's host there, bundled too);
 * 3. `node <package>/dist/pty-host/host-main.js` of a `ptykit` package installed where that bundle
 *    runs (Node's resolution from the bundle's directory);
 * 4. else `node <dir>/host-main.js`, which does not exist: the provider then refuses to start it,
 *    `host_unavailable` naming the file and what to ship or pass.
 */
export function defaultPtyHostCommand(): PtyHostCommand {
  const here = thisFile()
  if (here.endsWith('.ts')) {
    return { file: process.execPath, args: ['--import', 'tsx', join(dirname(here), 'host-main.ts')] }
  }
  const beside = join(dirname(here), 'host-main.js')
  const packageDir = ptykitPackageAbove(here) ?? (existsSync(beside) ? null : installedPtykitPackage(here))
  return { file: process.execPath, args: [packageDir === null ? beside : join(packageDir, 'dist', 'pty-host', 'host-main.js')] }
}

/** The directory of the `ptykit` package this file is part of, or `null` (a bundle of an app). */
function ptykitPackageAbove(here: string): string | null {
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'ptykit') return dir
      } catch {
        // Not ours; keep looking.
      }
    }
    if (dirname(dir) === dir) return null
  }
}

/** The directory of a `ptykit` package Node resolves from `here` (in a `node_modules` above it), or `null`. */
function installedPtykitPackage(here: string): string | null {
  try {
    return dirname(createRequire(here).resolve('ptykit/package.json'))
  } catch {
    return null
  }
}

/**
 * Why the default host command cannot start a host — its program file (the script `node` would
 * run) does not exist — or `null` when it can. This happens to an app that bundled ptykit into its
 * own file (an IDE extension, an Electron app) and shipped neither `node_modules/ptykit` nor a
 * bundled host beside its bundle: the host would exit 1 at once, its stderr discarded.
 */
export function missingDefaultHostProgram(command: PtyHostCommand): PtyHostError | null {
  const program = command.args.at(-1)
  if (program === undefined || existsSync(program)) return null
  const here = thisFile()
  return new PtyHostError(
    'host_unavailable',
    `ptykit cannot start its pty host: the host program ${program} does not exist. ptykit runs here from ${here}, ` +
      'not from an installed ptykit package: an app that bundles ptykit (esbuild, webpack) must ship the host too — ' +
      `bundle ptykit's dist/pty-host/host-main.js into ${program} (node-pty kept external, and shipped with @xterm/headless ` +
      'and @xterm/addon-serialize unless bundled), or ship node_modules/ptykit, or pass the `hostCommand` option ' +
      "({ file: process.execPath, args: ['<path of a host-main.js>'] }). See \"Bundling\" in ptykit's docs/pty-host.md.",
    { option: 'hostCommand', value: command },
  )
}

/** The command line for a host with these flags. */
export function ptyHostArgs(command: PtyHostCommand, flags: PtyHostLaunchFlags): string[] {
  const args = [...command.args, '--socket', flags.socketPath]
  if (flags.idleExitMs !== undefined) args.push('--idle-exit-ms', String(flags.idleExitMs))
  if (flags.historyChars !== undefined) args.push('--history-chars', String(flags.historyChars))
  if (flags.scrollbackRows !== undefined) args.push('--scrollback-rows', String(flags.scrollbackRows))
  if (flags.exitedHistoryBytes !== undefined) args.push('--exited-history-bytes', String(flags.exitedHistoryBytes))
  if (flags.exitedSessionMemory !== undefined) args.push('--exited-session-memory', String(flags.exitedSessionMemory))
  return args
}

/**
 * Set, with `ELECTRON_RUN_AS_NODE=1`, in the environment of a host this app starts with its own
 * Electron binary: it tells the host that the launcher added `ELECTRON_RUN_AS_NODE`, so the host
 * removes both before its PTYs inherit its environment (a shell must not run every Electron app,
 * the editor's own CLI included, as plain Node).
 */
export const PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE = 'PTYKIT_PTY_HOST_ADDED_ELECTRON_RUN_AS_NODE'

/** What {@link ptyHostLaunchEnv} reads of the app's process (a parameter, so tests can be Electron). */
export type PtyHostLaunchRuntime = {
  /** The app's binary (`process.execPath`): Node's, or an Electron app's own executable. */
  readonly execPath: string
  /** `process.versions.electron`: set when the app runs in Electron. */
  readonly electronVersion: string | undefined
  readonly env: NodeJS.ProcessEnv
}

function currentRuntime(): PtyHostLaunchRuntime {
  return { execPath: process.execPath, electronVersion: process.versions.electron, env: process.env }
}

/**
 * The environment a host started with `file` gets: the app's own (`undefined`: inherited), except
 * in an Electron app starting its own binary (`process.execPath`, which every host command of this
 * module names). That binary runs the app again — a second window, or the host script as an
 * Electron main process — unless `ELECTRON_RUN_AS_NODE` is set, as VS Code sets it for its own pty
 * host; so it is added (with {@link PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE}, for the host to remove
 * both), unless the app already runs with it (a VS Code extension host: its PTYs have it too).
 */
export function ptyHostLaunchEnv(file: string, runtime: PtyHostLaunchRuntime = currentRuntime()): NodeJS.ProcessEnv | undefined {
  if (runtime.electronVersion === undefined || file !== runtime.execPath) return undefined
  // Electron reads a variable that is set and not empty.
  if (runtime.env.ELECTRON_RUN_AS_NODE) return undefined
  return { ...runtime.env, ELECTRON_RUN_AS_NODE: '1', [PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE]: '1' }
}

/**
 * In the host process, at its start: remove `ELECTRON_RUN_AS_NODE` from `env` when its launcher
 * added it (see {@link ptyHostLaunchEnv}), so the PTYs the host spawns inherit the app's
 * environment as it was.
 */
export function forgetLauncherRunAsNode(env: NodeJS.ProcessEnv = process.env): void {
  if (env[PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE] !== '1') return
  delete env.ELECTRON_RUN_AS_NODE
  delete env[PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE]
}

/** The exit code of a host that refused to start because another host holds the socket's lock. */
export const PTY_HOST_ALREADY_RUNNING_EXIT_CODE = 3

/**
 * The exit code of a host that could not start because `@xterm/headless` or
 * `@xterm/addon-serialize` (optional peers it needs for its screens) cannot be loaded where it
 * runs: its stderr is discarded, so the code is what tells the app.
 */
export const PTY_HOST_PEER_MISSING_EXIT_CODE = 4

/** A host process this app started: its pid, and how it ended, once it did. */
export type LaunchedPtyHost = {
  /** Its pid (when the OS gave one). */
  pid: number | undefined
  /** Its exit code once it exited (`null` when a signal ended it, or it never started), `undefined` while it runs. */
  exitCode(): number | null | undefined
  /** How it ended, in words (`exit code 1`, `signal SIGKILL`, `a start error: …`), `undefined` while it runs. */
  exitDescription(): string | undefined
  /** The command line it was started with, quoted as for a POSIX shell: a failure names it, to run it by hand. */
  readonly commandLine: string
  /** The log it writes its stderr to (`<socket>.log`), or `null` when it could not be opened (its stderr is then discarded). */
  readonly logPath: string | null
  /** What it wrote to its log since it started (the newest part of a long text), `''` for nothing. */
  logSinceStart(): string
}

/** `words` as one POSIX shell command line: a word with anything but safe characters single-quoted. */
function shellCommandLine(words: readonly string[]): string {
  return words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(' ')
}

/**
 * Refuse a host command that is not `{ file: string, args: string[] }`: `file` a non-empty string,
 * each argument a string, none with a NUL (a C string ends there). `option` is the caller's name
 * for it (`command` of {@link launchPtyHost}, `hostCommand` of the provider).
 *
 * @throws PtyHostError `invalid_option` naming the option (or its bad part) and the value.
 */
export function assertPtyHostCommand(option: string, command: unknown): asserts command is PtyHostCommand {
  if (command === null || typeof command !== 'object') throw invalidPtyHostOption(option, 'an object { file: string, args: string[] }', command)
  const { file, args } = command as { file?: unknown; args?: unknown }
  if (typeof file !== 'string' || file.length === 0 || file.includes('\0')) {
    throw invalidPtyHostOption(`${option}.file`, 'a non-empty string without NUL characters', file)
  }
  if (!Array.isArray(args)) throw invalidPtyHostOption(`${option}.args`, 'an array of strings', args)
  args.forEach((arg: unknown, index) => {
    if (typeof arg !== 'string' || arg.includes('\0')) throw invalidPtyHostOption(`${option}.args[${index}]`, 'a string without NUL characters', arg)
  })
}

/** Every flag `launchPtyHost` reads (complete: checked at compile time). */
const PTY_HOST_LAUNCH_FLAG_NAMES = optionNamesOf<PtyHostLaunchFlags>()('socketPath', 'idleExitMs', 'historyChars', 'scrollbackRows', 'exitedHistoryBytes', 'exitedSessionMemory')

/**
 * Refuse launch flags a host would refuse at its start (it would exit at once, its stderr
 * discarded): an object with an absolute `socketPath`, and integer `idleExitMs`,
 * `historyChars`, `scrollbackRows` and `exitedHistoryBytes` within the host's bounds — as `createPtyHostProvider` checks
 * the options of the same names.
 *
 * @throws PtyHostError `invalid_option` naming the option and the value.
 */
export function assertPtyHostLaunchFlags(flags: unknown): asserts flags is PtyHostLaunchFlags {
  if (flags === null || typeof flags !== 'object') throw invalidPtyHostOption('flags', 'an object { socketPath: string, … }', flags)
  assertKnownPtyHostOptions(flags, PTY_HOST_LAUNCH_FLAG_NAMES)
  const { socketPath, idleExitMs, historyChars, scrollbackRows, exitedHistoryBytes, exitedSessionMemory } = flags as Record<string, unknown>
  assertSocketPathOption(socketPath)
  assertIntegerOption('idleExitMs', idleExitMs, 0)
  assertIntegerOption('historyChars', historyChars, 1)
  assertIntegerOption('scrollbackRows', scrollbackRows, 0)
  if (scrollbackRows !== undefined) assertScrollbackRowsFit(scrollbackRows as number)
  assertIntegerOption('exitedHistoryBytes', exitedHistoryBytes, 0)
  assertIntegerOption('exitedSessionMemory', exitedSessionMemory, 1)
}

/**
 * {@link launchPtyHost}, keeping track of the host's exit (its `exit` event still fires though the
 * child is unref'd). Refuses a program that does not resolve to an executable file (as the child's
 * `execvp` would: a path, or a name on `PATH`), naming `<option>.file`: the spawn would fail
 * after this returned, with no pid and nobody to tell.
 *
 * @throws PtyHostError `invalid_option` naming `<option>.file` and the program.
 */
export function startPtyHostProcess(command: PtyHostCommand, flags: PtyHostLaunchFlags, option = 'command'): LaunchedPtyHost {
  const cwd = process.cwd()
  if (resolveProgram(command.file, cwd, process.env) === null) {
    const refused = `${option}.file`
    const message = `Expected the \`${refused}\` option to be an executable file (a path, or a name found on PATH), got ${describeValue(command.file)}: ${whyNotExecutable(command.file, cwd)}`
    throw new PtyHostError('invalid_option', message, { option: refused, value: command.file })
  }
  const args = ptyHostArgs(command, flags)
  const env = ptyHostLaunchEnv(command.file)
  const log = openLogOf(flags.socketPath)
  let child
  try {
    child = spawn(command.file, args, { detached: true, stdio: ['ignore', 'ignore', log === null ? 'ignore' : log.fd], ...(env === undefined ? {} : { env }) })
  } finally {
    // The child has its own copy of the descriptor once spawned.
    if (log !== null) closeSync(log.fd)
  }
  let exitCode: number | null | undefined
  let exitDescription: string | undefined
  child.on('error', (error) => {
    if (exitCode !== undefined) return
    exitCode = null
    exitDescription = `a start error: ${error.message}`
  })
  child.once('exit', (code, signal) => {
    exitCode = code
    exitDescription = code === null ? `signal ${String(signal)}` : `exit code ${code}`
  })
  child.unref()
  return {
    pid: child.pid,
    exitCode: () => exitCode,
    exitDescription: () => exitDescription,
    commandLine: shellCommandLine([command.file, ...args]),
    logPath: log === null ? null : log.path,
    logSinceStart: () => (log === null ? '' : readHostLogSince(log)),
  }
}

/**
 * The log a host on `socketPath` is started with (see `openHostLogForLaunch`), its private
 * directory made first as the host makes it; `null` when that cannot be done — the host, which
 * checks the directory itself, then fails saying why.
 */
function openLogOf(socketPath: string): ReturnType<typeof openHostLogForLaunch> {
  try {
    ensurePrivateSocketDir(socketPath)
  } catch {
    return null
  }
  return openHostLogForLaunch(ptyHostPaths(socketPath).logPath)
}

/**
 * Start a pty host in the background: detached (its own session, so the app's terminal and
 * process group do not reach it), no stdin or stdout, its stderr appended to the log
 * `<socketPath>.log` (0600, beside the socket: what a host that fails to start, or meets an
 * uncaught error, says), and unref'd, so the app may exit while it runs. Returns its pid (when the
 * OS gave one).
 *
 * Every argument is checked first, nothing started on a refusal: a host given a bad flag would
 * exit at once, its stderr discarded, and the pid returned would name a process already gone.
 *
 * In an Electron app, a `command.file` that is `process.execPath` (the app's own binary) is started
 * with `ELECTRON_RUN_AS_NODE=1` (without it the binary starts the app again), which the host
 * removes before its PTYs inherit its environment; unless the app already runs with it.
 *
 * @throws PtyHostError `invalid_option` naming the bad option and its value: `command` (or
 * `command.file`, `command.args[i]`; a `command.file` that is no executable file, as a path or a
 * name on `PATH`), `flags`, `socketPath` (missing, or not absolute), `idleExitMs`,
 * `historyChars`, `scrollbackRows`, `exitedHistoryBytes`.
 */
export function launchPtyHost(command: PtyHostCommand, flags: PtyHostLaunchFlags): number | undefined {
  assertPtyHostCommand('command', command)
  assertPtyHostLaunchFlags(flags)
  return startPtyHostProcess(command, flags).pid
}
