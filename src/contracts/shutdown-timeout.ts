import { carriesErrorCode } from './error-code.js'

/**
 * Whether a rejected `shutdown` says the stop **ran out of time** — it was sent, and the PTY was
 * not proven gone by the stop's deadline — rather than that it could not be sent. Such a stop may
 * still land a moment later (a hang-up or kill that reached the process), and the provider then
 * reports the exit through `onExit`. How the providers say it (see `PtyProvider.shutdown`):
 * `code: 'shutdown_timeout'` (node-pty, SSH, and any provider that follows the contract), or the
 * pty host's `code: 'host_error'` carrying the host's node-pty code `hostCode: 'shutdown_timeout'`.
 * Internal: the controller holds such a rejection's report until the stop's fate is known.
 */
export function isShutdownTimeout(error: unknown): boolean {
  if (carriesErrorCode(error, 'shutdown_timeout')) return true
  return carriesErrorCode(error, 'host_error') && (error as { hostCode?: unknown }).hostCode === 'shutdown_timeout'
}
