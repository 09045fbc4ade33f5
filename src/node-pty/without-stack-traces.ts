/**
 * Whether `Error.stackTraceLimit` may be set now: a writable data property (as Node's own
 * `isErrorStackTraceLimitWritable` asks). A realm that froze `Error` — at start-up, or any time
 * later (SES's lockdown, `Object.freeze(Error)`) — says no, and errors then keep their stack
 * traces; an assignment there would throw in this strict module. Asked on every call: a freeze
 * can come after this module loaded.
 */
function stackTraceLimitSettable(): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')
  return descriptor === undefined ? Object.isExtensible(Error) : descriptor.writable === true
}

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
  if (!stackTraceLimitSettable()) return call()
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return call()
  } finally {
    Error.stackTraceLimit = limit
  }
}
