import { isOptionsObject, optionNamesOf } from '../contracts/known-options.js'
import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { clampTimerDelay, remainingWaitMs } from '../contracts/index.js'
import { assertKnownPtyHostOptions, invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { assertSocketDirPrivate, assertSocketPathOption, defaultPtyHostSocketPath, isHolderAlive, ptyHostPaths, readLockHolder } from './socket-security.js'

/**
 * How long {@link stopPtyHost} waits, by default, for the host to exit after its `SIGTERM`. The
 * host stops every session first (node-pty's escalation: at most `NODE_PTY_SHUTDOWN_DEADLINE_MS`,
 * 5 s), then exits.
 */
export const PTY_HOST_STOP_TIMEOUT_MS = 10_000

/** How often {@link stopPtyHost} looks whether the host has exited. */
const STOP_POLL_MS = 20

/** Options of {@link stopPtyHost}. */
export type StopPtyHostOptions = {
  /** The socket of the host to stop, an absolute path. Default: {@link defaultPtyHostSocketPath}. */
  socketPath?: string | undefined
  /** How long to wait for the host to exit, in ms. Default {@link PTY_HOST_STOP_TIMEOUT_MS}. */
  timeoutMs?: number | undefined
}

/** Every option `stopPtyHost` reads (complete: checked at compile time). */
const STOP_PTY_HOST_OPTION_NAMES = optionNamesOf<StopPtyHostOptions>()('socketPath', 'timeoutMs')

/**
 * Stop the pty host serving a socket, as its `SIGTERM` does: it stops listening, stops every
 * session (each connected app receives its sessions' exits), drops its clients, and exits. For
 * an app's "restart the terminal host" command, an uninstall, or a test's teardown; a host left
 * alone exits by itself once it has no session and no client for its `idleExitMs`.
 *
 * The host is found by its lock (`<socket>.lock`) and trusted only as the process that wrote it:
 * the socket's directory must be this user's and private, and on Linux the running process must
 * have the start time the lock records (the name of its holder link) — so a pid the system reused
 * for another program is never signalled; but the lock of a host of ptykit before 4 Dec records no
 * start time, and its pid alone is trusted while it runs.
 *
 * Resolves `true` once the host has exited (a zombie awaiting its parent counts as exited), and
 * `false` when no host holds the socket (no directory, no lock, or a stale one). An in-process
 * host (`startPtyHost`) is refused: close it with `host.close()`.
 *
 * @throws PtyHostError `invalid_option` for a malformed option, or a socket whose host runs in
 *   this very process; `insecure_socket` when the socket's directory is not private to this user;
 *   `stop_timeout` when the host had not exited `timeoutMs` after its `SIGTERM`.
 */
export async function stopPtyHost(options: StopPtyHostOptions = {}): Promise<boolean> {
  if (!isOptionsObject(options)) throw invalidPtyHostOption('options', 'an object', options)
  assertKnownPtyHostOptions(options, STOP_PTY_HOST_OPTION_NAMES)
  const { socketPath = defaultPtyHostSocketPath(), timeoutMs = PTY_HOST_STOP_TIMEOUT_MS } = options
  assertSocketPathOption(socketPath)
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw invalidPtyHostOption('timeoutMs', 'a non-negative finite number', timeoutMs)
  }
  if (!existsSync(dirname(socketPath))) return false
  // Why first: a lock in a directory others can write could name any process.
  assertSocketDirPrivate(socketPath)
  const holder = readLockHolder(ptyHostPaths(socketPath))
  if (holder === null || !isHolderAlive(holder)) return false
  if (holder.pid === process.pid) {
    throw invalidPtyHostOption('socketPath', 'the socket of a host in another process (this one runs in this process: close it with host.close())', socketPath)
  }
  // On the timers' monotonic clock, not `Date.now()`: a stepped-back or frozen wall clock must not stretch the wait.
  const deadline = performance.now() + timeoutMs
  try {
    process.kill(holder.pid, 'SIGTERM')
  } catch (error) {
    // Gone since the look: it exited all the same.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true
    throw new PtyHostError('insecure_socket', `Cannot signal the pty host (pid ${holder.pid}) of ${socketPath}: ${(error as Error).message}`, { cause: error })
  }
  while (isHolderAlive(holder)) {
    const wait = remainingWaitMs(deadline, performance.now())
    if (wait <= 0) {
      throw new PtyHostError('stop_timeout', `The pty host (pid ${holder.pid}) of ${socketPath} had not exited ${timeoutMs} ms after its SIGTERM (its sessions may still be stopping)`)
    }
    await new Promise((resolve) => setTimeout(resolve, clampTimerDelay(Math.min(STOP_POLL_MS, wait))))
  }
  return true
}
