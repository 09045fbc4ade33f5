/**
 * Whether this realm lets `Error.stackTraceLimit` be set (a frozen realm, such as one locked down by
 * SES, does not; then errors keep their stack traces).
 */
const STACK_TRACE_LIMIT_SETTABLE = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')?.writable === true

/**
 * Run a synchronous system call whose failure is an expected answer rather than a fault — a PTY
 * master's `EAGAIN` ("nothing now") or `EIO` ("hung up"), a `kill(pid, 0)`'s `ESRCH` ("no such
 * process") — with no stack trace captured for the error Node throws for it. The caller still
 * catches the error and reads its `code`; only its `stack` is empty.
 *
 * Why: most of such a throw is the stack trace (a throwing `readSync` 6.1–6.5 µs, 1.8–1.9 µs
 * without, measured on Node 20), and the exit path pays it for every PTY (the read-out ends in
 * `EAGAIN` or `EIO`; a death check of a reaped leader in `ESRCH`).
 *
 * Keep `call` to the system call itself: no listener or other code of the host may run inside it
 * (its own errors would lose their stacks too). The limit is restored before this returns or throws.
 */
export function withoutStackTraces<T>(call: () => T): T {
  if (!STACK_TRACE_LIMIT_SETTABLE) return call()
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return call()
  } finally {
    Error.stackTraceLimit = limit
  }
}
