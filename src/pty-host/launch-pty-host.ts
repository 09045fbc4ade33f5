import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

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
  idleExitMs?: number
  /** `--history-chars`. */
  historyChars?: number
  /** `--scrollback-rows`. */
  scrollbackRows?: number
}

function thisFile(): string {
  // Why both: the CommonJS build has `__filename`, the ESM build has `import.meta.url`.
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url)
}

/**
 * How this copy of ptykit starts its host: `node <package>/dist/pty-host/host-main.js` from the
 * built package, or `node --import tsx src/pty-host/host-main.ts` when running from the sources.
 */
export function defaultPtyHostCommand(): PtyHostCommand {
  const here = thisFile()
  if (here.endsWith('.ts')) {
    return { file: process.execPath, args: ['--import', 'tsx', join(dirname(here), 'host-main.ts')] }
  }
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'ptykit') {
          return { file: process.execPath, args: [join(dir, 'dist', 'pty-host', 'host-main.js')] }
        }
      } catch {
        // Not ours; keep looking.
      }
    }
    if (dirname(dir) === dir) break
  }
  return { file: process.execPath, args: [join(dirname(here), 'host-main.js')] }
}

/** The command line for a host with these flags. */
export function ptyHostArgs(command: PtyHostCommand, flags: PtyHostLaunchFlags): string[] {
  const args = [...command.args, '--socket', flags.socketPath]
  if (flags.idleExitMs !== undefined) args.push('--idle-exit-ms', String(flags.idleExitMs))
  if (flags.historyChars !== undefined) args.push('--history-chars', String(flags.historyChars))
  if (flags.scrollbackRows !== undefined) args.push('--scrollback-rows', String(flags.scrollbackRows))
  return args
}

/** The exit code of a host that refused to start because another host holds the socket's lock. */
export const PTY_HOST_ALREADY_RUNNING_EXIT_CODE = 3

/** A host process this app started: its pid, and how it ended, once it did. */
export type LaunchedPtyHost = {
  /** Its pid (when the OS gave one). */
  pid: number | undefined
  /** Its exit code once it exited (`null` when a signal ended it), `undefined` while it runs. */
  exitCode(): number | null | undefined
}

/** {@link launchPtyHost}, keeping track of the host's exit (its `exit` event still fires though the child is unref'd). */
export function startPtyHostProcess(command: PtyHostCommand, flags: PtyHostLaunchFlags): LaunchedPtyHost {
  const child = spawn(command.file, ptyHostArgs(command, flags), { detached: true, stdio: 'ignore' })
  let exitCode: number | null | undefined
  child.on('error', () => {
    exitCode ??= null
  })
  child.once('exit', (code) => {
    exitCode = code
  })
  child.unref()
  return { pid: child.pid, exitCode: () => exitCode }
}

/**
 * Start a pty host in the background: detached (its own session, so the app's terminal and
 * process group do not reach it), no stdio, and unref'd, so the app may exit while it runs.
 * Returns its pid (when the OS gave one).
 */
export function launchPtyHost(command: PtyHostCommand, flags: PtyHostLaunchFlags): number | undefined {
  return startPtyHostProcess(command, flags).pid
}
