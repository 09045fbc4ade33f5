import type { TerminalExitCause, TerminalExitUnknownReason } from './terminal-exit-cause.js'

const UNKNOWN_REASONS: ReadonlySet<string> = new Set<TerminalExitUnknownReason>([
  'stop_unverified',
  'host_status_unavailable',
  'cause_unreported',
])

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function hasExactKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value)
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key))
}

/**
 * A strict guard for causes from untrusted input (a wire message, a stored record).
 *
 * Accepts exactly the shapes the resolvers produce and rejects everything else: an unknown
 * `kind`, a missing or extra field, an unknown `reason`, a `signal` that is not a positive
 * integer, an `exitCode` that is not a non-negative integer (negative codes are stop sentinels,
 * never exit statuses).
 */
export function isTerminalExitCause(value: unknown): value is TerminalExitCause {
  if (!isPlainRecord(value)) return false
  switch (value['kind']) {
    case 'operator_close':
      return hasExactKeys(value, ['kind'])
    case 'signaled': {
      const signal = value['signal']
      return (
        hasExactKeys(value, ['kind', 'signal']) &&
        typeof signal === 'number' &&
        Number.isSafeInteger(signal) &&
        signal > 0
      )
    }
    case 'exited': {
      const exitCode = value['exitCode']
      return (
        hasExactKeys(value, ['kind', 'exitCode']) &&
        typeof exitCode === 'number' &&
        Number.isSafeInteger(exitCode) &&
        exitCode >= 0
      )
    }
    case 'unknown': {
      const reason = value['reason']
      return hasExactKeys(value, ['kind', 'reason']) && typeof reason === 'string' && UNKNOWN_REASONS.has(reason)
    }
    default:
      return false
  }
}
