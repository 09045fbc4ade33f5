import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import {
  OPERATOR_CLOSE_EXIT_CAUSE,
  exitCauseFromWire,
  isProvenExitCause,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  type TerminalExitCause,
  type WireExit,
} from '../../src/exit-cause/index.js'
import { REASONS, anyCode, integerCode, malformedCode, positiveSignal } from './exit-cause-arbitraries.js'



const unknownCause: fc.Arbitrary<TerminalExitCause> = fc
  .constantFrom(...REASONS)
  .map((reason): TerminalExitCause => ({ kind: 'unknown', reason }))

/** Every valid cause a sender may put on the wire. */
const anyCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  fc.constant(null).map((): TerminalExitCause => ({ kind: 'operator_close' })),
  fc.constant(OPERATOR_CLOSE_EXIT_CAUSE),
  positiveSignal.map((signal): TerminalExitCause => ({ kind: 'signaled', signal })),
  integerCode.map((code): TerminalExitCause => ({ kind: 'exited', exitCode: Math.abs(code) })),
  unknownCause,
  fc
    .record({ exitCode: anyCode, signal: fc.option(fc.integer({ min: -5, max: 64 })), host: fc.boolean() })
    .map(({ exitCode, signal, host }) =>
      resolveProcessExitCause({ exitCode, signal, hostReportsChildExitStatus: host }),
    ),
)

/**
 * Causes that are not valid: wrong kinds, extra keys, unknown reasons, bad numbers, non-objects.
 * Each is invalid by construction, independently of the guard under test.
 */
const invalidCause: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    0,
    137,
    'exited',
    'operator_close',
    true,
    [],
    [{ kind: 'operator_close' }],
    {},
    { kind: 'Exited', exitCode: 0 },
    { kind: 'killed', signal: 9 },
    { kind: 'signaled', signal: 0 },
    { kind: 'signaled', signal: -9 },
    { kind: 'signaled', signal: 9.5 },
    { kind: 'signaled', signal: '9' },
    { kind: 'signaled', signal: Number.NaN },
    { kind: 'signaled' },
    { kind: 'exited', exitCode: -1 },
    { kind: 'exited', exitCode: 0.5 },
    { kind: 'exited', exitCode: Number.POSITIVE_INFINITY },
    { kind: 'exited', exitCode: '0' },
    { kind: 'exited' },
    { kind: 'exited', exitCode: 0, signal: 9 },
    { kind: 'operator_close', reason: 'stop_unverified' },
    { kind: 'unknown' },
    { kind: 'unknown', reason: 'lost' },
    { kind: 'unknown', reason: 'toString' },
    { kind: 'unknown', reason: 'stop_unverified', detail: 'x' },
  ),
  // A sender newer than this receiver: an `unknown` with a reason it has never heard of.
  fc
    .string()
    .filter((reason) => !(REASONS as readonly string[]).includes(reason))
    .map((reason) => ({ kind: 'unknown', reason })),
)

describe('exitCauseFromWire', () => {
  it('W1: keeps every valid cause unchanged, whatever code travels with it', () => {
    fc.assert(
      fc.property(anyCause, anyCode, (cause, code) => {
        const snapshot = JSON.stringify(cause)
        const received = exitCauseFromWire({ code, cause })
        expect(received).toEqual(cause)
        expect(JSON.stringify(cause)).toBe(snapshot)
      }),
    )
  })

  it('W2: an absent or invalid cause gives resolveUnreportedExitCause(code) (an unrecognized unknown stays unknown)', () => {
    fc.assert(
      fc.property(anyCode, (code) => {
        expect(exitCauseFromWire({ code })).toEqual(resolveUnreportedExitCause(code))
        expect(exitCauseFromWire({ code, cause: undefined })).toEqual(resolveUnreportedExitCause(code))
      }),
    )
    fc.assert(
      fc.property(anyCode, invalidCause, (code, cause) => {
        const saysUnknown = typeof cause === 'object' && cause !== null && (cause as { kind?: unknown }).kind === 'unknown'
        expect(exitCauseFromWire({ code, cause })).toEqual(
          saysUnknown ? { kind: 'unknown', reason: 'cause_unreported' } : resolveUnreportedExitCause(code),
        )
      }),
    )
  })

  it('W3: a cause never crosses the wire narrower than it left — an unknown stays unknown, with its reason', () => {
    fc.assert(
      fc.property(anyCause, anyCode, (cause, code) => {
        // Through an actual serialization, as a relay would carry it.
        const message = JSON.parse(JSON.stringify({ code, cause })) as WireExit
        const received = exitCauseFromWire(message)
        if (!isProvenExitCause(cause)) {
          expect(isProvenExitCause(received)).toBe(false)
          expect(received).toEqual(cause)
        }
        expect(isProvenExitCause(received)).toBe(isProvenExitCause(cause))
      }),
    )
    fc.assert(
      fc.property(unknownCause, anyCode, (cause, code) => {
        expect(exitCauseFromWire({ code, cause }).kind).toBe('unknown')
      }),
    )
    // A newer sender's unknown, with a reason this receiver has never heard of, stays unknown too.
    fc.assert(
      fc.property(fc.string().filter((r) => !(REASONS as readonly string[]).includes(r)), fc.integer(), (reason, code) => {
        expect(exitCauseFromWire({ code, cause: { kind: 'unknown', reason } })).toEqual({
          kind: 'unknown',
          reason: 'cause_unreported',
        })
      }),
    )
  })

  it('malformed evidence: a malformed code with no cause is unknown/cause_unreported, never exited', () => {
    fc.assert(
      fc.property(malformedCode, (code) => {
        expect(exitCauseFromWire({ code })).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
      }),
    )
  })

  it('a bare 0 ⇒ unknown/cause_unreported; a bare 137 ⇒ exited(137)', () => {
    expect(exitCauseFromWire({ code: 0 })).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    expect(exitCauseFromWire({ code: 137 })).toEqual({ kind: 'exited', exitCode: 137 })
    expect(exitCauseFromWire({ code: -1 })).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
  })

  it('a sent cause wins over the code: (0, signaled(9)) ⇒ signaled(9)', () => {
    expect(exitCauseFromWire({ code: 0, cause: { kind: 'signaled', signal: 9 } })).toEqual({
      kind: 'signaled',
      signal: 9,
    })
    expect(
      exitCauseFromWire({ code: 0, cause: { kind: 'unknown', reason: 'host_status_unavailable' } }),
    ).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
  })
})

describe('exitCauseFromWire: no wire exit at all', () => {
  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [0, 'number'],
  ])('%s is a TypeError naming what it wanted', (exit, got) => {
    expect(() => exitCauseFromWire(exit as never)).toThrow(new TypeError(`Expected the wire exit to be an object ({ code, cause? }), got ${got}`))
  })
})
