import { checkLaunchShape } from '../contracts/launch-shape.js'
import { randomBytes } from 'node:crypto'
import { MAX_PTY_DIMENSION, type ProviderSpawnOptions } from '../contracts/index.js'
import { SshOptionError } from './ssh-option-error.js'

/** The largest `cols`/`rows` accepted: the contracts' one limit, what a pty's `winsize` (unsigned short) can hold. */
export const SSH_MAX_DIMENSION = MAX_PTY_DIMENSION
/** Columns of a spawn that names none. */
export const SSH_DEFAULT_COLS = 80
/** Rows of a spawn that names none. */
export const SSH_DEFAULT_ROWS = 24
/** Quote `value` for a POSIX shell: one single-quoted word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** What the SSH provider expects of `env`'s keys: names the launch's `sh` can `export`. */
const SSH_ENVIRONMENT_KEYS_EXPECTED = 'an object whose keys are shell variable names (letters, digits and `_`, not first a digit: the remote `sh` exports them)'
/** What the SSH provider expects of an `envToDelete` name: one the launch's `sh` can `unset`. */
const SSH_VARIABLE_NAME_EXPECTED = 'a shell variable name (letters, digits and `_`, not first a digit: the remote `sh` unsets it)'

/** Refuse a `cols`/`rows` value that is not a positive integer a pty can hold: `invalid_spawn_option` for a spawn, `invalid_option` for a resize. */
export function assertSshDimension(option: 'cols' | 'rows', value: unknown, code: 'invalid_spawn_option' | 'invalid_option' = 'invalid_spawn_option'): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > SSH_MAX_DIMENSION) {
    // A resize's size is an argument (`invalid_option`), worded as every provider words it; a spawn's an option.
    throw new SshOptionError(option, `an integer from 1 to ${SSH_MAX_DIMENSION}`, value, false, undefined, code, code === 'invalid_option' ? 'argument' : 'option')
  }
}

/**
 * The environment variable every launch runs under. A launch given up before its marker arrived
 * (the link dropped, or the marker came too late) has no pid to be found by; its processes are
 * found by this variable in the remote `/proc/<pid>/environ` instead (see `findLaunchesByNonce` in
 * `remote-process.ts`). Set to the nonce (16 hex digits, random per launch) by `env` before the
 * launch's shell starts, so the shell running the preamble carries it; then, after the spawn's
 * `env`/`envToDelete` and right before the program is `exec`ed, to `<nonce>:<pid>` — the pid of
 * the launch's shell, which sshd made a session leader: the program, and every process it starts
 * that keeps its environment, name the launch's session. A spawn's `env` and `envToDelete` may not
 * name it (`SshOptionError`).
 */
export const SSH_LAUNCH_NONCE_VARIABLE = 'PTYKIT_SSH_LAUNCH'

/** A spawn turned into what goes over the wire. */
export type RemoteLaunch = {
  /** The `exec` request's command (run by the login user's shell). */
  command: string
  /** The nonce of this launch's marker, and of its {@link SSH_LAUNCH_NONCE_VARIABLE}. */
  nonce: string
  cols: number
  rows: number
  /** The program, for listings (`null` for the login shell). */
  file: string | null
  /** A startup command to write into the program once it runs. */
  startupCommand: string | undefined
}

/**
 * Build the remote command of a spawn: a small POSIX `sh` preamble that applies `env` /
 * `envToDelete` / `cwd`, prints the launch marker (an OSC sequence, `ESC ] ptykit-ssh; nonce; pid;
 * start time BEL`, which terminals ignore should one leak; pid and start time of the shell, which then
 * `exec`s the program, so the pid is the program's) and `exec`s `file` + `args`, or the login
 * shell — all under {@link SSH_LAUNCH_NONCE_VARIABLE}: the nonce, set by `env` before the
 * preamble's shell starts, then `<nonce>:<the shell's pid>` right before the `exec`. Why not `env` requests: sshd accepts only the names its `AcceptEnv`
 * lists, silently.
 *
 * @throws SshOptionError when an option is malformed.
 */
export function createRemoteLaunch(options: ProviderSpawnOptions): RemoteLaunch {
  // Every field's shape, as the local providers check it (one wording; a NUL refused anywhere: the
  // exec request is a C string on the server, and OpenSSH drops the whole connection — every PTY on
  // it — on one that holds a NUL). Below: what only a remote `sh` refuses.
  checkLaunchShape(options, (option, expected, value, secret) => new SshOptionError(option, expected, value, secret))
  const cols = options.cols ?? SSH_DEFAULT_COLS
  const rows = options.rows ?? SSH_DEFAULT_ROWS
  assertSshDimension('cols', cols)
  assertSshDimension('rows', rows)
  const lines: string[] = []
  for (const [index, name] of (options.envToDelete ?? []).entries()) {
    // Named by index, as every provider names a refused element; a name `sh` cannot `unset` (`A-B`) is refused on SSH only.
    if (!ENV_NAME.test(name)) throw new SshOptionError(`envToDelete[${index}]`, SSH_VARIABLE_NAME_EXPECTED, name)
    // The launch's own: without it (or with another value) an abandoned launch could not be found.
    if (name === SSH_LAUNCH_NONCE_VARIABLE) throw new SshOptionError('envToDelete', `variable names other than ${SSH_LAUNCH_NONCE_VARIABLE} (set by the provider)`, name)
    lines.push(`unset ${name}`)
  }
  for (const [name, value] of Object.entries(options.env ?? {})) {
    // Named `env`, as every provider names a refused key: the key is the value refused. A name
    // the environment can hold but `sh` cannot `export` (`A-B`, `1X`) is refused on SSH only.
    if (!ENV_NAME.test(name)) throw new SshOptionError('env', SSH_ENVIRONMENT_KEYS_EXPECTED, name)
    // Not its value: it may be a secret, or another launch's nonce (an `env` copied from a process
    // that runs in a ptykit SSH PTY).
    if (name === SSH_LAUNCH_NONCE_VARIABLE) throw new SshOptionError(`env.${name}`, `a variable other than ${SSH_LAUNCH_NONCE_VARIABLE} (set by the provider)`, name)
    lines.push(`export ${name}=${shellQuote(value)}`)
  }
  const nonce = randomBytes(8).toString('hex')
  // Before the marker: a `cwd` or a program the remote refuses ends the launch with a refusal
  // marker naming the option and why (read back by {@link parseLaunchRefusal}), so the spawn
  // rejects as the local providers' do — an option error naming `cwd` or `file` — instead of
  // starting a PTY that exits 126 or 127 at once. Only the remote can tell: it runs the checks.
  const refuse = (option: 'cwd' | 'file', why: LaunchRefusalReason): string =>
    `{ printf '\\033]${LAUNCH_REFUSAL_TAG};${nonce};${option};${why}\\007'; exit 127; }`
  if (options.cwd !== undefined) {
    const quoted = shellQuote(options.cwd)
    lines.push(
      `[ -e ${quoted} ] || ${refuse('cwd', 'missing')}`,
      `[ -d ${quoted} ] || ${refuse('cwd', 'not-directory')}`,
      `cd -- ${quoted} 2>/dev/null || ${refuse('cwd', 'not-enterable')}`,
    )
  }
  const file = options.file ?? null
  if (file !== null) {
    const quoted = shellQuote(file)
    if (file.includes('/')) {
      lines.push(
        `[ -e ${quoted} ] || ${refuse('file', 'missing')}`,
        `[ -f ${quoted} ] || ${refuse('file', 'not-file')}`,
        `[ -x ${quoted} ] || ${refuse('file', 'not-executable')}`,
      )
    } else lines.push(`command -v -- ${quoted} >/dev/null 2>&1 || ${refuse('file', 'not-on-path')}`)
  }
  // `$$` inside `$(…)` is still the outer shell's pid; field 20 after the `) ` is field 22 (starttime).
  // The boot id names this machine and boot: pid and start time identify the program only within it.
  lines.push(
    `b=; read -r b 2>/dev/null </proc/sys/kernel/random/boot_id`,
    `printf '\\033]ptykit-ssh;${nonce};%s;%s;%s\\007' "$$" "$(sed 's/.*) //' /proc/$$/stat 2>/dev/null | cut -d' ' -f20)" "$b"`,
  )
  // After `env`/`envToDelete`: what the program (and what it starts) carries names the launch's
  // session — `$$`, the shell sshd made a session leader, whose pid the program takes.
  lines.push(`export ${SSH_LAUNCH_NONCE_VARIABLE}=${nonce}:$$`)
  lines.push(file === null ? 'exec "${SHELL:-/bin/sh}" -l' : `exec ${[file, ...(options.args ?? [])].map(shellQuote).join(' ')}`)
  return {
    command: `exec env ${SSH_LAUNCH_NONCE_VARIABLE}=${nonce} /bin/sh -c ${shellQuote(lines.join('\n'))}`,
    nonce,
    cols,
    rows,
    file,
    startupCommand: options.command,
  }
}

/**
 * What the launch marker said: the program's pid and start time (clock ticks after boot, `null`
 * without a readable `/proc`), and the remote's boot id (`/proc/sys/kernel/random/boot_id`, `null`
 * when unreadable). Within one boot id, pid and start time name exactly one process — so another
 * connection that reads the same boot id is on the same machine and can tell whether it lives.
 */
export type LaunchMarker = { pid: number; startTime: string | null; bootId: string | null }

/**
 * How many characters after a launch was adopted without its marker (see
 * {@link LaunchMarkerScanner.adopt}) are still searched for it: a late marker comes before anything
 * the program writes, so within what a server's read of a PTY holds.
 */
export const LAUNCH_MARKER_LATE_STRIP_CHARS = 64 * 1024

/**
 * Finds the launch marker at the head of a PTY's output and strips it. Feed decoded text until
 * {@link LaunchMarkerScanner.marker} is set; every call returns the output to deliver.
 */
export class LaunchMarkerScanner {
  /** The marker, once seen. */
  marker: LaunchMarker | null = null
  #pending = ''
  readonly #pattern: RegExp
  readonly #nonce: string
  /** Characters after an adoption still searched for a late marker (0: none, or not adopted). */
  #adoptedBudget = 0

  /** Create a scanner for one launch's nonce. */
  constructor(nonce: string) {
    this.#pattern = new RegExp(`\\u001b\\]ptykit-ssh;${nonce};(\\d+);(\\d*);([0-9a-f-]*)\\u0007`)
    this.#nonce = nonce
  }

  /** Feed text; returns what to deliver (nothing until the marker was seen, then everything). */
  push(text: string): string {
    if (this.#adoptedBudget > 0) return this.#strip(text)
    if (this.marker !== null) return text
    this.#pending += text
    const match = this.#pattern.exec(this.#pending)
    if (match === null) return ''
    const optional = (field: string | undefined): string | null => (field === '' || field === undefined ? null : field)
    this.marker = { pid: Number(match[1]), startTime: optional(match[2]), bootId: optional(match[3]) }
    const rest = this.#pending.slice(0, match.index) + this.#pending.slice(match.index + match[0].length)
    this.#pending = ''
    return rest
  }

  /**
   * The marker did not come, and the launch was found by its nonce ({@link LaunchMarker} as a look
   * read it, see `findStartedLaunch`): take it as the marker, and return the text held back so far
   * (the PTY's first output, as after a marker). A marker of this nonce that comes after all (it
   * was late, behind a login rc's output, not discarded) is still stripped, within the first
   * {@link LAUNCH_MARKER_LATE_STRIP_CHARS} characters that follow.
   */
  adopt(marker: LaunchMarker): string {
    if (this.marker !== null) return ''
    this.marker = marker
    this.#adoptedBudget = LAUNCH_MARKER_LATE_STRIP_CHARS
    return this.takePending()
  }

  /** Whether `tail` (from an ESC to the end of the text) may be the start of this nonce's marker, cut short. */
  #mayStartMarker(tail: string): boolean {
    const head = `\u001b]ptykit-ssh;${this.#nonce};`
    return head.startsWith(tail) || (tail.startsWith(head) && /^[0-9a-f;-]*$/.test(tail.slice(head.length)))
  }

  /** After an adoption: strip a late marker, holding back a tail that may be the start of one. */
  #strip(text: string): string {
    let pending = this.#pending + text
    this.#pending = ''
    const match = this.#pattern.exec(pending)
    if (match !== null) {
      this.#adoptedBudget = 0
      return pending.slice(0, match.index) + pending.slice(match.index + match[0].length)
    }
    this.#adoptedBudget -= text.length
    if (this.#adoptedBudget <= 0) return pending
    const escape = pending.lastIndexOf('\u001b')
    if (escape >= 0 && this.#mayStartMarker(pending.slice(escape))) {
      this.#pending = pending.slice(escape)
      pending = pending.slice(0, escape)
    }
    return pending
  }

  /** The text held back while waiting for the marker (for an exit before it). */
  takePending(): string {
    const pending = this.#pending
    this.#pending = ''
    return pending
  }
}

/** The tag of a launch's refusal marker: `ESC ] ptykit-ssh-refused; nonce; option; reason BEL`. */
const LAUNCH_REFUSAL_TAG = 'ptykit-ssh-refused'

/** Why the remote refused a launch's `cwd` or `file` (the refusal marker's last field). */
export type LaunchRefusalReason = 'missing' | 'not-directory' | 'not-enterable' | 'not-file' | 'not-executable' | 'not-on-path'

/** What each reason says, after the refused value — the wording of the local providers' refusals. */
const LAUNCH_REFUSAL_DETAIL: Record<LaunchRefusalReason, string> = {
  missing: 'it does not exist',
  'not-directory': 'it is not a directory',
  'not-enterable': 'it cannot be entered',
  'not-file': 'it is not a regular file',
  'not-executable': 'it is not executable',
  'not-on-path': 'no executable of that name on the PATH',
}

/**
 * The option error a launch's refusal marker stands for, or `null` when `output` (what the launch
 * printed before it ended) holds no refusal marker of `nonce`. The error names the option (`cwd` or
 * `file`), shows the value as the spawn gave it, and says why and on which host — as the node-pty
 * provider's refusal does for a local program or directory.
 */
export function parseLaunchRefusal(output: string, nonce: string, options: ProviderSpawnOptions, hostId: string): SshOptionError | null {
  const match = new RegExp(`\\u001b\\]${LAUNCH_REFUSAL_TAG};${nonce};(cwd|file);([a-z-]+)\\u0007`).exec(output)
  if (match === null) return null
  const option = match[1] as 'cwd' | 'file'
  const detail = LAUNCH_REFUSAL_DETAIL[match[2] as LaunchRefusalReason]
  if (detail === undefined) return null
  const expected = option === 'cwd' ? 'an existing directory' : 'an executable file (a path, or a name found on PATH)'
  return new SshOptionError(option, expected, options[option], false, `${detail} on ${hostId}`)
}
