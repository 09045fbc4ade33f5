#!/usr/bin/env node
/**
 * The pty host process (`ptykit-pty-host`): `ptykit-pty-host [--socket <path>] [--idle-exit-ms <n>]
 * [--history-chars <n>] [--scrollback-rows <n>] [--exited-history-bytes <n>] [--exited-session-memory <n>] [--screen-chars-per-second <n>] [--ack-max-hold-ms <n>]`. Started on demand by `createPtyHostProvider`, or
 * by hand. Exits 0 when idle (not before `PTY_HOST_FIRST_CLIENT_GRACE_MS` while no client has come)
 * or on SIGTERM/SIGINT, 3 when another host already serves the socket, 2 on a bad flag, 1 on any
 * other start failure. `--help` prints the usage.
 *
 * @packageDocumentation
 */
import { isPtyHostError } from './pty-host-error.js'
import { PTY_HOST_ALREADY_RUNNING_EXIT_CODE, PTY_HOST_PEER_MISSING_EXIT_CODE, forgetLauncherRunAsNode } from './launch-pty-host.js'
import { loadHeadlessScreens } from './headless-screen.js'
import { PTY_HOST_LOG_MAX_BYTES } from './host-log.js'
import { PTY_HOST_FIRST_CLIENT_GRACE_MS, startPtyHost, type PtyHostServerOptions } from './pty-host-server.js'

/** The host's numeric flags, and the server option each sets (the parser and the usage read this one list). */
const NUMERIC_FLAGS = {
  '--idle-exit-ms': 'idleExitMs',
  '--history-chars': 'historyChars',
  '--scrollback-rows': 'scrollbackRows',
  '--exited-history-bytes': 'exitedHistoryBytes',
  '--exited-session-memory': 'exitedSessionMemory',
  '--screen-chars-per-second': 'screenCharsPerSecond',
  '--ack-max-hold-ms': 'ackMaxHoldMs',
} as const

/** The flags in `--help`'s usage line, four to a line. */
const USAGE_FLAGS = ['[--socket <path>]', ...Object.keys(NUMERIC_FLAGS).map((flag) => `[${flag} <n>]`)]
  .reduce<string[][]>((lines, flag, index) => (index % 4 === 0 ? [...lines, [flag]] : (lines.at(-1)!.push(flag), lines)), [])
  .map((line) => line.join(' '))
  .join('\n  ')

const USAGE = `Usage: ptykit-pty-host ${USAGE_FLAGS}

The ptykit pty host: runs PTYs that outlive the app, on a Unix socket (default: the user's shared
socket, defaultPtyHostSocketPath()). Apps reach it through createPtyHostProvider() from
ptykit/pty-host, which starts it on demand. Exits 0 when idle or on SIGTERM/SIGINT, 3 when another
host already serves the socket, 2 on a bad flag, 1 on any other start failure.
`

/**
 * Whether `--help` or `-h` stands where a flag goes (not as a flag's value: `--socket --help` names
 * a socket), alone or among other flags. Why not only alone: `--socket /x --help` was read as a
 * `--help` needing a value (exit 2, no usage), the very answer `--help` was made to replace.
 */
function asksForHelp(argv: readonly string[]): boolean {
  for (let index = 0; index < argv.length; index += 2) if (argv[index] === '--help' || argv[index] === '-h') return true
  return false
}

/** Parse the command line into server options (throws a TypeError naming a bad flag). */
export function parsePtyHostArgs(argv: readonly string[]): PtyHostServerOptions {
  const options: PtyHostServerOptions = {}
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index]!
    const value = argv[index + 1]
    if (value === undefined) throw new TypeError(`The flag ${flag} needs a value`)
    index += 1
    if (flag === '--socket') options.socketPath = value
    else if (flag in NUMERIC_FLAGS) {
      const parsed = Number(value)
      if (!Number.isSafeInteger(parsed) || parsed < 0) throw new TypeError(`Expected ${flag} to be a non-negative integer, got ${JSON.stringify(value)}`)
      options[NUMERIC_FLAGS[flag as keyof typeof NUMERIC_FLAGS]] = parsed
    } else throw new TypeError(`Unknown flag ${JSON.stringify(flag)}`)
  }
  return options
}

let loggedBytes = 0

/**
 * Write a line to stderr — the log `<socket>.log` when an app started this host — with the time.
 * At most {@link PTY_HOST_LOG_MAX_BYTES} per host: a host that fails the same way in a loop must
 * not fill the disk (the next launch starts a log that large afresh).
 */
function logLine(text: string): void {
  if (loggedBytes >= PTY_HOST_LOG_MAX_BYTES) return
  let line = `${new Date().toISOString()} ptykit-pty-host[${process.pid}]: ${text}\n`
  loggedBytes += Buffer.byteLength(line)
  if (loggedBytes >= PTY_HOST_LOG_MAX_BYTES) line += `${new Date().toISOString()} ptykit-pty-host[${process.pid}]: the log is full; further messages are dropped\n`
  try {
    process.stderr.write(line)
  } catch {
    // Nowhere to say it.
  }
}

async function main(): Promise<void> {
  forgetLauncherRunAsNode()
  const argv = process.argv.slice(2)
  // Why before parsing: `--help` takes no value, and a person who asks gets the usage, not "needs a value".
  if (asksForHelp(argv)) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  let options: PtyHostServerOptions
  try {
    options = parsePtyHostArgs(argv)
  } catch (error) {
    logLine(`${(error as Error).message} (see ptykit-pty-host --help)`)
    process.exit(2)
  }
  // Why: a bug in one session's handling must never take every session down with the host.
  process.on('uncaughtException', (error) => logLine(`uncaught: ${error.stack ?? String(error)}`))
  process.on('unhandledRejection', (error) => logLine(`unhandled rejection: ${error instanceof Error ? (error.stack ?? String(error)) : String(error)}`))
  process.on('SIGHUP', () => undefined)
  try {
    // Loaded first (the server loads them again, from the module cache): a host without its peers
    // says so by its exit code, which the app that started it reads (and its log).
    await loadHeadlessScreens()
  } catch (error) {
    logLine(error instanceof Error ? error.message : String(error))
    process.exit(PTY_HOST_PEER_MISSING_EXIT_CODE)
  }
  try {
    // The grace: the app that started this process connects once it listens; an idle exit before
    // its hello would make it start another (see PTY_HOST_FIRST_CLIENT_GRACE_MS).
    const host = await startPtyHost({ ...options, firstClientGraceMs: PTY_HOST_FIRST_CLIENT_GRACE_MS, onClosed: () => process.exit(0), log: logLine })
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void host.close())
  } catch (error) {
    logLine(error instanceof Error ? error.message : String(error))
    process.exit(isPtyHostError(error) && error.code === 'host_already_running' ? PTY_HOST_ALREADY_RUNNING_EXIT_CODE : 1)
  }
}

void main()
