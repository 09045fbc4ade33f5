/**
 * The arbitraries the exit-cause test files share: evidence (codes and signals) and hand-built
 * causes. Built independently of the code under test, so they can serve as its oracle.
 */
import fc from 'fast-check'
import type { TerminalExitCause, TerminalExitUnknownReason } from '../../src/exit-cause/index.js'

/** The three reasons an `unknown` cause can carry. */
export const REASONS: readonly TerminalExitUnknownReason[] = ['stop_unverified', 'host_status_unavailable', 'cause_unreported']

/** Integer exit codes: small ones, the whole 32-bit range, and the codes hosts really send. */
export const integerCode = fc.oneof(
  fc.integer({ min: -300, max: 300 }),
  fc.integer(),
  fc.constantFrom(0, -1, -2, 1, 2, 126, 127, 128, 130, 137, 143, 255, 256, -(2 ** 31), 2 ** 31 - 1),
)

/** Codes that are not evidence: NaN, ±Infinity and fractions. */
export const malformedCode = fc.oneof(
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.5, -0.5, 1.5, -1.5, 136.9, 1e-9),
  fc.double({ noInteger: true }),
)

/** Any code, well-formed or not. */
export const anyCode = fc.oneof(integerCode, malformedCode)

/** Signals that are evidence: positive integers, the usual ones and the whole 32-bit range. */
export const positiveSignal = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }))

/** Every valid cause, hand-built as a fresh (mutable) object each time. */
export const builtCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  fc.constant(null).map((): TerminalExitCause => ({ kind: 'operator_close' })),
  positiveSignal.map((signal): TerminalExitCause => ({ kind: 'signaled', signal })),
  integerCode.map((code): TerminalExitCause => ({ kind: 'exited', exitCode: Math.abs(code) })),
  fc.constantFrom(...REASONS).map((reason): TerminalExitCause => ({ kind: 'unknown', reason })),
)
