import { checkLaunchShape } from '../contracts/launch-shape.js'
import { accessSync, constants as fsConstants, statSync } from 'node:fs'
import { delimiter, isAbsolute, resolve } from 'node:path'
import { MAX_PTY_DIMENSION, type PtyProcessLaunch } from '../contracts/index.js'
import { isPtyDimension } from '../contracts/pty-dimension.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import { withoutStackTraces } from './without-stack-traces.js'

/** Columns when a spawn names none: the contract's default, and every terminal's traditional width. */
export const NODE_PTY_DEFAULT_COLS = 80

/** Rows when a spawn names none: the contract's default. */
export const NODE_PTY_DEFAULT_ROWS = 24

/**
 * The largest `cols` or `rows` accepted: ptykit's one limit, `MAX_PTY_DIMENSION` (65 535; the
 * kernel stores each in an `unsigned short`, `struct winsize`), the same for spawn and `resize`.
 */
export const NODE_PTY_MAX_DIMENSION = MAX_PTY_DIMENSION

/** The shell used when neither the spawn nor `$SHELL` names a usable one (POSIX guarantees it). */
export const NODE_PTY_FALLBACK_SHELL = '/bin/sh'

/** The shell used on Windows when `%COMSPEC%` is unset. */
export const NODE_PTY_FALLBACK_WINDOWS_SHELL = 'cmd.exe'

/**
 * Variables removed from the *inherited* environment, as node-pty itself does when given
 * `process.env`: they describe the host's own terminal (tmux, screen, a fixed size), not the new
 * PTY, and would make programs in it misbehave. A spawn's explicit `env` can still set them.
 */
export const NODE_PTY_INHERITED_ENV_EXCLUDED: readonly string[] = Object.freeze([
  'TMUX',
  'TMUX_PANE',
  'STY',
  'WINDOW',
  'WINDOWID',
  'TERMCAP',
  'COLUMNS',
  'LINES',
])

/**
 * The search path `execvp` uses when the child's environment has no `PATH` (glibc's and macOS's
 * default), so a bare program name is resolved as node-pty's child will resolve it.
 */
export const NODE_PTY_EXECVP_DEFAULT_PATH = '/bin:/usr/bin'

/** Everything node-pty needs to start a process, validated. */
export type NodePtyLaunchPlan = {
  /** The program, as given (a bare name is looked up on `PATH` by the child, as execvp does). */
  file: string
  /** Its arguments. */
  args: string[]
  /** An absolute, existing directory. */
  cwd: string
  /**
   * The child's full environment. `process.env` itself when the spawn inherits it unchanged (no
   * `env`, no `envToDelete`): node-pty copies it and removes the very same host-terminal
   * variables ({@link NODE_PTY_INHERITED_ENV_EXCLUDED}) when handed `process.env`, so a copy here
   * would only be made twice (~20 µs per spawn, measured, before the fork).
   */
  env: Readonly<Record<string, string | undefined>>
  /** Columns. */
  cols: number
  /** Rows. */
  rows: number
  /** The startup command to write once the shell runs, if any. */
  command: string | undefined
}

/** Where a launch plan's defaults come from. */
export type NodePtyLaunchContext = {
  /** The inherited environment. */
  env: Readonly<Record<string, string | undefined>>
  /** The directory used when the spawn names no `cwd`. */
  defaultCwd: string
  /**
   * True when `defaultCwd` is the provider's `defaultCwd` option: a spawn without `cwd` then checks
   * it is still a directory (one stat), and a refusal names that option. (`process.cwd()` just
   * answered, so it exists.)
   */
  defaultCwdIsOption?: boolean
  /**
   * True when `defaultCwd` is the working directory of the app the spawn is made for (the pty
   * host's): a spawn without `cwd` checks it is still a directory, and a refusal names `cwd` (what
   * the caller can pass), saying the directory is the app's.
   */
  defaultCwdIsApps?: boolean
  /** `process.platform`, or a stand-in. */
  platform: NodeJS.Platform
  /** A default shell chosen by the host; wins over `$SHELL`. */
  defaultShell?: string | undefined
}

/**
 * Validate a window size value: a spawn's (refused `invalid_spawn_option`) or a resize's (`code:
 * 'invalid_option'`, what `PtyProvider.resize` documents).
 */
export function assertPtyDimension(option: 'cols' | 'rows', value: unknown, code: 'invalid_spawn_option' | 'invalid_option' = 'invalid_spawn_option'): asserts value is number {
  // One phrase for every bad size, the one every provider and the controller use: a `0` refused as
  // "a positive integer" did not say the bound, a `65536` did not say the floor.
  if (!isPtyDimension(value)) {
    // A resize's size is an argument (`invalid_option`), worded as every provider words it; a spawn's an option.
    throw new NodePtyOptionError(option, `an integer from 1 to ${NODE_PTY_MAX_DIMENSION}`, value, undefined, false, code, code === 'invalid_option' ? 'argument' : 'option')
  }
}

/** The node-pty provider's refusal of a launch field (see `checkLaunchShape`). */
function refuseLaunchField(option: string, expected: string, value: unknown, secret: boolean): NodePtyOptionError {
  return new NodePtyOptionError(option, expected, value, undefined, secret)
}

/** How many program paths remember that they name a regular file (see {@link isExecutableFile}). */
export const NODE_PTY_REGULAR_FILE_MEMORY = 64

/**
 * Program paths last seen to name a regular file, oldest first. Only the file's *type* is
 * remembered: whether it may be executed is asked of the kernel on every spawn.
 */
const knownRegularFiles = new Set<string>()

/**
 * True when `path` names an executable regular file. Synchronous on purpose: it runs before every
 * spawn, and the metadata syscalls cost a few µs on the event loop, while going through the
 * thread pool delayed every spawn by a round trip (~0.1 ms measured), all of it before the fork.
 *
 * `access(X_OK)` is asked every time: a program removed or made non-executable since is refused at
 * once. Whether the path is a regular file (and not, say, a directory, which `X_OK` also admits) is
 * remembered per path after one `stat`. Why: on Node 20 a `statSync` builds a `Stats` with four
 * `Date`s — 15 µs of every spawn's path to the fork in place (measured with markers; the rest of the
 * launch plan took 12), for a fact that does not change while a program is installed. Were a path
 * remembered as a file replaced by a directory, the child's `execvp` would fail, and node-pty report
 * exit code 1, as it does for every program without this check.
 */
function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK)
  } catch {
    knownRegularFiles.delete(path)
    return false
  }
  if (knownRegularFiles.has(path)) return true
  try {
    if (statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false
  } catch {
    return false
  }
  knownRegularFiles.add(path)
  // A Set iterates in insertion order: the first entry is the oldest.
  if (knownRegularFiles.size > NODE_PTY_REGULAR_FILE_MEMORY) knownRegularFiles.delete(knownRegularFiles.values().next().value as string)
  return true
}

/**
 * How many bare program names (per `PATH` and cwd) remember where they were last found. A lookup
 * of a name late on a long `PATH` stats every entry before it (~0.3 ms per spawn measured for a
 * name in the 10th of 11 entries, loaded); with the memory a repeated spawn checks one candidate.
 */
export const NODE_PTY_PROGRAM_LOOKUP_MEMORY = 64

/**
 * Where each bare name was last found: key `file NUL PATH NUL cwd`, value the full candidate path.
 * Why this stays exact: the lookup only has to prove that *some* entry of `PATH` holds an
 * executable of that name (the child's execvp picks which), and a remembered candidate is checked
 * again before it is trusted; a candidate gone since falls back to the full search.
 */
const lastFoundPrograms = new Map<string, string>()

/** Search `PATH` for a bare name as execvp does: the first entry holding an executable file. */
function searchPath(file: string, cwd: string, path: string | undefined): string | null {
  const key = `${file}\0${path ?? ''}\0${cwd}`
  const remembered = lastFoundPrograms.get(key)
  if (remembered !== undefined && isExecutableFile(remembered)) return remembered
  lastFoundPrograms.delete(key)
  for (const dir of (path ?? '').split(delimiter)) {
    // Why against `cwd`: the child changes to it before its execvp, so a relative entry (`bin`)
    // and an empty one (the current directory) name places under the spawn's cwd, not the host's.
    const candidate = resolve(cwd, dir, file)
    // Most entries miss (`ENOENT`, a thrown error): no stack trace for those.
    if (withoutStackTraces(() => isExecutableFile(candidate))) {
      lastFoundPrograms.set(key, candidate)
      // A Map iterates in insertion order: the first key is the oldest.
      if (lastFoundPrograms.size > NODE_PTY_PROGRAM_LOOKUP_MEMORY) lastFoundPrograms.delete(lastFoundPrograms.keys().next().value as string)
      return candidate
    }
  }
  return null
}

/**
 * Resolve a program the way execvp does: a name with a slash is a path, a bare name is searched on
 * the child's `PATH` (`env`'s; read only for a bare name: a read of `process.env` costs a few µs).
 */
export function resolveProgram(file: string, cwd: string, env: NodePtyLaunchPlan['env']): string | null {
  if (file.includes('/')) {
    const full = isAbsolute(file) ? file : resolve(cwd, file)
    return isExecutableFile(full) ? full : null
  }
  return searchPath(file, cwd, env['PATH'] ?? NODE_PTY_EXECVP_DEFAULT_PATH)
}

/**
 * Refuse `path` unless it is a directory the host can see. `given` is the value as the caller
 * wrote it; a relative one is shown with the absolute path it resolved to. `whose` says what the
 * directory is when the caller did not name it (the app's working directory).
 */
function assertDirectory(option: 'cwd' | 'defaultCwd', given: string, path: string, whose?: string): void {
  const where = whose !== undefined ? `it (${whose})` : given === path ? 'it' : `it (${JSON.stringify(path)})`
  let isDirectory = false
  try {
    // Synchronous for the reason given at isExecutableFile.
    isDirectory = statSync(path).isDirectory()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new NodePtyOptionError(option, 'an existing directory', given, `${where} cannot be read (${String(code)})`)
  }
  if (!isDirectory) throw new NodePtyOptionError(option, 'an existing directory', given, `${where} is not a directory`)
}

/** Why a program did not resolve (the refusal's detail): missing, not a file, or not executable. */
export function whyNotExecutable(file: string, cwd: string): string {
  if (!file.includes('/')) return 'no executable of that name on the PATH'
  const full = isAbsolute(file) ? file : resolve(cwd, file)
  const where = full === file ? 'it' : `it (${JSON.stringify(full)})`
  const stat = withoutStackTraces(() => {
    try {
      return statSync(full, { throwIfNoEntry: false })
    } catch {
      return undefined
    }
  })
  if (stat === undefined) return `${where} does not exist`
  if (!stat.isFile()) return `${where} is not a regular file`
  return `${where} is not executable`
}

/** The user's shell: the host's choice, else `$SHELL` when it is a usable absolute path, else `/bin/sh`. */
export async function resolveDefaultShell(context: NodePtyLaunchContext): Promise<string> {
  if (context.platform === 'win32') {
    return context.defaultShell ?? context.env['COMSPEC'] ?? NODE_PTY_FALLBACK_WINDOWS_SHELL
  }
  if (context.defaultShell !== undefined) return context.defaultShell
  const shell = context.env['SHELL']
  if (shell !== undefined && isAbsolute(shell) && isExecutableFile(shell)) return shell
  return NODE_PTY_FALLBACK_SHELL
}

/**
 * An inherited environment as a fresh record, without the host-terminal variables
 * ({@link NODE_PTY_INHERITED_ENV_EXCLUDED}) and unset entries.
 */
export function withoutHostTerminalVariables(inherited: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(inherited)) {
    if (value !== undefined && !NODE_PTY_INHERITED_ENV_EXCLUDED.includes(key)) env[key] = value
  }
  return env
}

/** Build the child's environment: inherited (minus the host-terminal variables), then `env`, then deletions (their shape checked: `checkLaunchShape`). */
function buildEnvironment(launch: PtyProcessLaunch, inherited: NodePtyLaunchContext['env']): NodePtyLaunchPlan['env'] {
  // See NodePtyLaunchPlan.env: node-pty sanitizes process.env itself.
  if (inherited === process.env && launch.env === undefined && launch.envToDelete === undefined) return process.env
  const env = withoutHostTerminalVariables(inherited)
  for (const [key, value] of Object.entries(launch.env ?? {})) env[key] = value
  for (const name of launch.envToDelete ?? []) delete env[name]
  return env
}

/**
 * Validate a spawn's launch fields and resolve their defaults, touching nothing but the file
 * system's metadata. Every refusal happens here, before any process exists.
 *
 * @throws NodePtyOptionError naming the option and the value.
 */
export async function createNodePtyLaunchPlan(
  launch: PtyProcessLaunch,
  context: NodePtyLaunchContext,
): Promise<NodePtyLaunchPlan> {
  const cols = launch.cols ?? NODE_PTY_DEFAULT_COLS
  const rows = launch.rows ?? NODE_PTY_DEFAULT_ROWS
  assertPtyDimension('cols', cols)
  assertPtyDimension('rows', rows)
  // The fields' shapes, all before anything is looked up: an environment value may be a secret (a
  // token, a password), which a refusal never echoes.
  checkLaunchShape(launch, refuseLaunchField)

  let cwd = context.defaultCwd
  if (launch.cwd !== undefined) {
    cwd = resolve(context.defaultCwd, launch.cwd)
    assertDirectory('cwd', launch.cwd, cwd)
  } else if (context.defaultCwdIsOption === true) {
    assertDirectory('defaultCwd', cwd, cwd)
  } else if (context.defaultCwdIsApps === true) {
    assertDirectory('cwd', cwd, cwd, "the app's working directory, where a spawn that names no `cwd` starts")
  }

  const args: string[] = launch.args === undefined ? [] : [...launch.args]

  const env = buildEnvironment(launch, context.env)

  let file: string
  if (launch.file === undefined) {
    file = await resolveDefaultShell(context)
  } else {
    file = launch.file
  }
  // Why: node-pty's child sets `environ` to this env and calls execvp, so the child's PATH is the
  // one that counts. node-pty reports a missing program only after forking, as an exit with code 1 and an
  // execvp message on the screen. Checking here refuses it before any process exists. Windows
  // resolves programs differently (PATHEXT, App Paths), so it is left to node-pty there.
  if (context.platform !== 'win32' && resolveProgram(file, cwd, env) === null) {
    // Name what the caller set: their `file`, or the provider's `defaultShell` a spawn without one runs.
    const option = launch.file === undefined && context.defaultShell !== undefined ? 'defaultShell' : 'file'
    throw new NodePtyOptionError(option, 'an executable file (a path, or a name found on PATH)', launch.file ?? file, whyNotExecutable(file, cwd))
  }

  return { file, args, cwd, env, cols, rows, command: launch.command }
}
