import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs'
import { assertPrivate } from './socket-security.js'

/**
 * The size past which a launch starts the host log afresh: a host writes to it only what goes
 * wrong (a start failure, an uncaught error), so a log this large is old news or a runaway.
 */
export const PTY_HOST_LOG_MAX_BYTES = 1024 * 1024

/** How much of the log's newest text a start failure quotes. */
export const PTY_HOST_LOG_QUOTE_BYTES = 2048

/** The log a host is started with: its file descriptor (the host's stderr) and where this launch's text begins. */
export type PtyHostLogForLaunch = {
  /** Open for appending; the launcher closes it once the host has it. */
  fd: number
  /** The path, for messages. */
  path: string
  /** The log's size when this launch opened it: what the host writes comes after. */
  startOffset: number
}

/**
 * Open `<socket>.log` for a host about to start (its stderr): appended to, created 0600, never
 * through a symbolic link, started afresh past {@link PTY_HOST_LOG_MAX_BYTES}. Why a file: the host
 * is detached and outlives the app, so no pipe can carry what it says; before, its stderr went to
 * `/dev/null` and a host that failed to start was known only by its exit code. `null` when the
 * file cannot be opened or is not this user's private regular file: the host then starts with its
 * stderr discarded, as before — a log is a diagnosis, never a reason not to start.
 */
export function openHostLogForLaunch(logPath: string): PtyHostLogForLaunch | null {
  let fd: number
  try {
    fd = openSync(logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600)
  } catch {
    return null
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw new Error('not a regular file')
    assertPrivate(logPath, stats, 'log')
    let startOffset = stats.size
    if (startOffset > PTY_HOST_LOG_MAX_BYTES) {
      ftruncateSync(fd, 0)
      startOffset = 0
    }
    return { fd, path: logPath, startOffset }
  } catch {
    closeSync(fd)
    return null
  }
}

/**
 * What the host wrote to its log since `log.startOffset`, trimmed; its last
 * {@link PTY_HOST_LOG_QUOTE_BYTES} bytes when longer (the end says why it stopped). `''` when it
 * wrote nothing or the log cannot be read.
 */
export function readHostLogSince(log: Pick<PtyHostLogForLaunch, 'path' | 'startOffset'>): string {
  let fd: number
  try {
    fd = openSync(log.path, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return ''
  }
  try {
    const size = fstatSync(fd).size
    const from = Math.max(log.startOffset, size - PTY_HOST_LOG_QUOTE_BYTES)
    if (size <= from) return ''
    const text = Buffer.alloc(size - from)
    const read = readSync(fd, text, 0, text.length, from)
    const quoted = text.subarray(0, read).toString('utf8').trim()
    return from > log.startOffset ? `…${quoted}` : quoted
  } catch {
    return ''
  } finally {
    closeSync(fd)
  }
}
