import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import {
  OPERATOR_CLOSE_EXIT_CAUSE,
  UNVERIFIED_PROCESS_EXIT_CODE,
  describeTerminalExitCause,
  isDeliberateTerminalExit,
  isProvenExitCause,
  isProvenProcessExit,
  isTerminalExitCause,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  type ProcessExitObservation,
  type TerminalExitCause,
  type TerminalExitUnknownReason,
} from '../../src/exit-cause/index.js'
import { REASONS, anyCode, builtCause, integerCode, malformedCode, positiveSignal } from './exit-cause-arbitraries.js'

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const nonNegativeIntegerCode = integerCode.map((code) => Math.abs(code))
const negativeIntegerCode = fc.oneof(fc.integer({ max: -1 }), fc.constantFrom(-1, UNVERIFIED_PROCESS_EXIT_CODE))
const nonZeroIntegerCode = integerCode.filter((code) => code !== 0)


/** Marks an optional field as absent (as opposed to present with the value `undefined`). */
const ABSENT: unique symbol = Symbol('absent')
type Absent = typeof ABSENT
type SignalInput = number | null | undefined | Absent
type HostInput = boolean | undefined | Absent

/** P5: `null`, `undefined` (absent or explicit), `0` and negatives are "no signal". */
const noSignal: fc.Arbitrary<SignalInput> = fc.oneof(
  fc.constantFrom<SignalInput>(null, undefined, ABSENT, 0, -0),
  fc.integer({ max: -1 }),
)
/** Malformed signals: fractions, NaN, ±Infinity — never evidence. */
const malformedSignal = fc.oneof(
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.5, 9.5, -9.5),
  fc.double({ noInteger: true }),
)
const notASignal: fc.Arbitrary<SignalInput> = fc.oneof(noSignal, malformedSignal)
const anySignal: fc.Arbitrary<SignalInput> = fc.oneof(positiveSignal, noSignal, malformedSignal)

/** Any way of saying the host does report its child's status: `true`, `undefined`, or absent. */
const hostReports = fc.constantFrom<HostInput>(true, undefined, ABSENT)
const anyHost = fc.constantFrom<HostInput>(true, false, undefined, ABSENT)

function observation(exitCode: number, signal: SignalInput = ABSENT, host: HostInput = ABSENT): ProcessExitObservation {
  // Built loosely on purpose: untyped callers pass `signal: undefined` explicitly, which the
  // declared type (under exactOptionalPropertyTypes) would not let this test express.
  const built: Record<string, unknown> = { exitCode }
  if (signal !== ABSENT) built['signal'] = signal
  if (host !== ABSENT) built['hostReportsChildExitStatus'] = host
  return built as unknown as ProcessExitObservation
}


/** Every valid cause, fresh objects each time. */
const anyCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(builtCause, fc.constant(OPERATOR_CLOSE_EXIT_CAUSE))

const isPositiveInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value > 0

const unknown = (reason: TerminalExitUnknownReason): TerminalExitCause => ({ kind: 'unknown', reason })
const exited = (exitCode: number): TerminalExitCause => ({ kind: 'exited', exitCode })
const signaled = (signal: number): TerminalExitCause => ({ kind: 'signaled', signal })

/** The leaf of the union a cause sits in: one of six. */
function leafOf(cause: TerminalExitCause): string {
  return cause.kind === 'unknown' ? `unknown/${cause.reason}` : cause.kind
}

/** The seed's sentences, word for word: host apps that port from the seed match on them, so they must not drift. */
function seedSentence(cause: TerminalExitCause): string {
  switch (cause.kind) {
    case 'operator_close':
      return 'Terminal closed by operator request'
    case 'signaled':
      return `Agent process killed by signal ${cause.signal}`
    case 'exited':
      return `Agent process exited with code ${cause.exitCode}`
    case 'unknown':
      return {
        stop_unverified: 'Agent process stop was requested but never confirmed',
        host_status_unavailable: 'Agent process ended; this host cannot report why',
        cause_unreported: 'Agent process ended; the reporting host did not say why',
      }[cause.reason]
  }
}

// ---------------------------------------------------------------------------------------------
// resolveProcessExitCause
// ---------------------------------------------------------------------------------------------

describe('resolveProcessExitCause', () => {
  it('P1: hostReportsChildExitStatus === false ⇒ unknown/host_status_unavailable, for every code and signal', () => {
    fc.assert(
      fc.property(anyCode, anySignal, (code, signal) => {
        expect(resolveProcessExitCause(observation(code, signal, false))).toEqual(unknown('host_status_unavailable'))
      }),
    )
  })

  it('P2: only an exact false means "does not report"; undefined, absent and true behave the same', () => {
    fc.assert(
      fc.property(anyCode, anySignal, (code, signal) => {
        const asTrue = resolveProcessExitCause(observation(code, signal, true))
        expect(resolveProcessExitCause(observation(code, signal, undefined))).toEqual(asTrue)
        expect(resolveProcessExitCause(observation(code, signal, ABSENT))).toEqual(asTrue)
        expect(asTrue).not.toEqual(unknown('host_status_unavailable'))
      }),
    )
  })

  it('P3: status reported and a positive integer signal ⇒ signaled(signal), whatever the code', () => {
    fc.assert(
      fc.property(anyCode, positiveSignal, hostReports, (code, signal, host) => {
        expect(resolveProcessExitCause(observation(code, signal, host))).toEqual(signaled(signal))
      }),
    )
  })

  it('P4: status reported, no positive signal, code < 0 ⇒ unknown/stop_unverified', () => {
    fc.assert(
      fc.property(negativeIntegerCode, notASignal, hostReports, (code, signal, host) => {
        expect(resolveProcessExitCause(observation(code, signal, host))).toEqual(unknown('stop_unverified'))
      }),
    )
  })

  it('P5: a null, undefined, 0 or negative signal is "no signal" (same cause as no signal field at all)', () => {
    fc.assert(
      fc.property(anyCode, noSignal, anyHost, (code, signal, host) => {
        const cause = resolveProcessExitCause(observation(code, signal, host))
        expect(cause).toEqual(resolveProcessExitCause(observation(code, ABSENT, host)))
        expect(cause.kind).not.toBe('signaled')
      }),
    )
  })

  it('P6: status reported, no positive signal, integer code ≥ 0 ⇒ exited(code), including 0', () => {
    fc.assert(
      fc.property(
        fc.oneof(nonNegativeIntegerCode, fc.constant(0)),
        notASignal,
        hostReports,
        (code, signal, host) => {
          expect(resolveProcessExitCause(observation(code, signal, host))).toEqual(exited(code))
        },
      ),
    )
  })

  it('P7: total, and never operator_close or cause_unreported for well-formed input', () => {
    fc.assert(
      fc.property(integerCode, anySignal, anyHost, (code, signal, host) => {
        const cause = resolveProcessExitCause(observation(code, signal, host))
        expect(isTerminalExitCause(cause)).toBe(true)
        expect(cause.kind).not.toBe('operator_close')
        expect(cause).not.toEqual(unknown('cause_unreported'))
      }),
    )
    // Total also over malformed input: never throws, always a valid cause.
    fc.assert(
      fc.property(anyCode, anySignal, anyHost, (code, signal, host) => {
        expect(isTerminalExitCause(resolveProcessExitCause(observation(code, signal, host)))).toBe(true)
      }),
    )
  })
})

// ---------------------------------------------------------------------------------------------
// resolveUnreportedExitCause
// ---------------------------------------------------------------------------------------------

describe('resolveUnreportedExitCause', () => {
  it('U1: code < 0 ⇒ unknown/stop_unverified', () => {
    fc.assert(
      fc.property(negativeIntegerCode, (code) => {
        expect(resolveUnreportedExitCause(code)).toEqual(unknown('stop_unverified'))
      }),
    )
  })

  it('U2: code 0 ⇒ unknown/cause_unreported, whatever the spelling of zero', () => {
    fc.assert(
      fc.property(fc.constantFrom(0, -0), (code) => {
        expect(resolveUnreportedExitCause(code)).toEqual(unknown('cause_unreported'))
      }),
    )
  })

  it('U3: code > 0 ⇒ exited(code)', () => {
    fc.assert(
      fc.property(nonNegativeIntegerCode.filter((code) => code > 0), (code) => {
        expect(resolveUnreportedExitCause(code)).toEqual(exited(code))
      }),
    )
  })

  it('U4: never signaled, host_status_unavailable or operator_close', () => {
    fc.assert(
      fc.property(anyCode, (code) => {
        const cause = resolveUnreportedExitCause(code)
        expect(isTerminalExitCause(cause)).toBe(true)
        expect(['signaled', 'operator_close']).not.toContain(cause.kind)
        expect(cause).not.toEqual(unknown('host_status_unavailable'))
      }),
    )
  })

  it('U5: for every integer code ≠ 0 the two resolvers agree; they differ only at 0', () => {
    fc.assert(
      fc.property(nonZeroIntegerCode, (code) => {
        expect(resolveUnreportedExitCause(code)).toEqual(resolveProcessExitCause({ exitCode: code }))
      }),
    )
    fc.assert(
      fc.property(integerCode, (code) => {
        const agree =
          JSON.stringify(resolveUnreportedExitCause(code)) === JSON.stringify(resolveProcessExitCause({ exitCode: code }))
        expect(agree).toBe(code !== 0)
      }),
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Malformed evidence is not evidence
// ---------------------------------------------------------------------------------------------

describe('malformed evidence', () => {
  it('malformed evidence: a non-finite or non-integer code is never exited, in either resolver', () => {
    fc.assert(
      fc.property(malformedCode, anySignal, anyHost, (code, signal, host) => {
        expect(resolveProcessExitCause(observation(code, signal, host)).kind).not.toBe('exited')
        expect(resolveUnreportedExitCause(code).kind).not.toBe('exited')
      }),
    )
  })

  it('malformed evidence: a malformed code ⇒ unknown/cause_unreported in both resolvers, unless host_status_unavailable or a positive integer signal applies', () => {
    fc.assert(
      fc.property(malformedCode, anySignal, anyHost, (code, signal, host) => {
        const expected =
          host === false
            ? unknown('host_status_unavailable')
            : isPositiveInteger(signal)
              ? signaled(signal)
              : unknown('cause_unreported')
        expect(resolveProcessExitCause(observation(code, signal, host))).toEqual(expected)
        expect(resolveUnreportedExitCause(code)).toEqual(unknown('cause_unreported'))
      }),
    )
  })

  it('malformed evidence: a fractional or non-finite signal never makes signaled; it is read as no signal', () => {
    fc.assert(
      fc.property(anyCode, malformedSignal, anyHost, (code, signal, host) => {
        const cause = resolveProcessExitCause(observation(code, signal, host))
        expect(cause.kind).not.toBe('signaled')
        expect(cause).toEqual(resolveProcessExitCause(observation(code, ABSENT, host)))
      }),
    )
  })

  it('malformed evidence: a malformed code is never a proven process exit', () => {
    fc.assert(
      fc.property(malformedCode, (code) => {
        expect(isProvenProcessExit(code)).toBe(false)
      }),
    )
  })
})

// ---------------------------------------------------------------------------------------------
// isProvenProcessExit, describeTerminalExitCause, isDeliberateTerminalExit
// ---------------------------------------------------------------------------------------------

describe('numbers that do not survive a wire', () => {
  it('an integer beyond the safe range is malformed evidence, in both resolvers and for signals', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2 ** 53, -(2 ** 53), 1e21, Number.MAX_VALUE),
        (huge) => {
          expect(resolveProcessExitCause({ exitCode: huge })).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
          expect(resolveUnreportedExitCause(huge)).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
          expect(resolveProcessExitCause({ exitCode: 3, signal: huge }).kind).not.toBe('signaled')
        },
      ),
    )
  })

  it('-0 resolves to exited(0), which survives a JSON round trip unchanged', () => {
    const cause = resolveProcessExitCause({ exitCode: -0 })
    expect(Object.is((cause as { exitCode: number }).exitCode, 0)).toBe(true)
    expect(JSON.parse(JSON.stringify(cause))).toStrictEqual(cause)
  })
})

describe('isProvenProcessExit', () => {
  it('E1: isProvenProcessExit(code) ⇔ code is an integer ≥ 0', () => {
    fc.assert(
      fc.property(anyCode, (code) => {
        expect(isProvenProcessExit(code)).toBe(Number.isInteger(code) && code >= 0)
      }),
    )
  })

  it('E2: "whether" vs "why" — isProvenProcessExit(0) is true while resolveUnreportedExitCause(0) is unknown, and 0 is the only such code', () => {
    expect(isProvenProcessExit(0)).toBe(true)
    expect(resolveUnreportedExitCause(0).kind).toBe('unknown')
    fc.assert(
      fc.property(anyCode, (code) => {
        const provenDeath = isProvenProcessExit(code)
        const provenReason = isProvenExitCause(resolveUnreportedExitCause(code))
        // A proven reason implies a proven death; the converse fails exactly at 0.
        if (provenReason) expect(provenDeath).toBe(true)
        expect(provenDeath && !provenReason).toBe(code === 0)
      }),
    )
  })
})

describe('describeTerminalExitCause', () => {
  it("D1: total, the seed's exact sentence per leaf, distinct leaves get distinct sentences, the number appears", () => {
    fc.assert(
      fc.property(anyCause, anyCause, (a, b) => {
        const sa = describeTerminalExitCause(a)
        const sb = describeTerminalExitCause(b)
        expect(sa).toBe(seedSentence(a))
        expect(sb).toBe(seedSentence(b))
        if (leafOf(a) !== leafOf(b)) expect(sa).not.toBe(sb)
        if (a.kind === 'signaled') expect(sa.endsWith(` ${a.signal}`)).toBe(true)
        if (a.kind === 'exited') expect(sa.endsWith(` ${a.exitCode}`)).toBe(true)
        // Within a leaf, a different number gives a different sentence.
        if (a.kind === 'signaled' && b.kind === 'signaled') expect(sa === sb).toBe(a.signal === b.signal)
        if (a.kind === 'exited' && b.kind === 'exited') expect(sa === sb).toBe(a.exitCode === b.exitCode)
      }),
    )
  })

  it('D2: anything that is not a cause is refused with a TypeError naming it, never described as undefined', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }), (value) => {
        let outcome: unknown
        try {
          outcome = describeTerminalExitCause(value as TerminalExitCause)
        } catch (error) {
          outcome = error
        }
        // A valid cause gets its sentence; nothing else gets one.
        if (isTerminalExitCause(value)) expect(outcome).toBe(seedSentence(value))
        else if (typeof outcome === 'string') {
          // A cause's shape with a field too many may still be described, never with a number no
          // cause may hold.
          expect(outcome).toMatch(/^(Terminal closed|Agent process)/)
          const number = /(?:signal|code) (\S+)$/.exec(outcome)?.[1]
          if (number !== undefined) expect(Number.isSafeInteger(Number(number)) && Number(number) >= 0).toBe(true)
        } else expect(outcome).toBeInstanceOf(TypeError)
      }),
    )
  })

  it('refuses an exit event passed whole, pointing at its cause', () => {
    const event = { ptyId: 'p1', exitCode: 0, cause: { kind: 'signaled', signal: 9 } }
    expect(() => describeTerminalExitCause(event as never)).toThrow(TypeError)
    expect(() => describeTerminalExitCause(event as never)).toThrow(/got \{"ptyId":"p1".*pass that.*event\.cause/)
    for (const value of [
      undefined,
      null,
      'exited',
      { kind: 'unknown', reason: 'gone' },
      { kind: 'exited' },
      // A number no cause holds (before: "killed by signal -1", "exited with code NaN").
      { kind: 'signaled', signal: -1 },
      { kind: 'signaled', signal: 0 },
      { kind: 'signaled', signal: 1.5 },
      { kind: 'exited', exitCode: -1 },
      { kind: 'exited', exitCode: Number.NaN },
    ]) {
      expect(() => describeTerminalExitCause(value as never)).toThrow(/Expected a TerminalExitCause/)
    }
  })

  it('the six sentences, word for word', () => {
    expect(describeTerminalExitCause({ kind: 'operator_close' })).toBe('Terminal closed by operator request')
    expect(describeTerminalExitCause({ kind: 'signaled', signal: 9 })).toBe('Agent process killed by signal 9')
    expect(describeTerminalExitCause({ kind: 'exited', exitCode: 0 })).toBe('Agent process exited with code 0')
    expect(describeTerminalExitCause({ kind: 'exited', exitCode: 137 })).toBe('Agent process exited with code 137')
    expect(describeTerminalExitCause(unknown('stop_unverified'))).toBe(
      'Agent process stop was requested but never confirmed',
    )
    expect(describeTerminalExitCause(unknown('host_status_unavailable'))).toBe(
      'Agent process ended; this host cannot report why',
    )
    expect(describeTerminalExitCause(unknown('cause_unreported'))).toBe(
      'Agent process ended; the reporting host did not say why',
    )
  })
})

describe('isDeliberateTerminalExit', () => {
  it('I1: true for operator_close and nothing else', () => {
    fc.assert(
      fc.property(anyCause, (cause) => {
        expect(isDeliberateTerminalExit(cause)).toBe(cause.kind === 'operator_close')
      }),
    )
    // Nothing the resolvers build from a host's evidence is deliberate.
    fc.assert(
      fc.property(anyCode, anySignal, anyHost, (code, signal, host) => {
        expect(isDeliberateTerminalExit(resolveProcessExitCause(observation(code, signal, host)))).toBe(false)
        expect(isDeliberateTerminalExit(resolveUnreportedExitCause(code))).toBe(false)
      }),
    )
  })

  it('only operator_close is deliberate: not exited(0), signaled(9) or stop_unverified', () => {
    expect(isDeliberateTerminalExit(OPERATOR_CLOSE_EXIT_CAUSE)).toBe(true)
    expect(isDeliberateTerminalExit({ kind: 'operator_close' })).toBe(true)
    expect(isDeliberateTerminalExit(exited(0))).toBe(false)
    expect(isDeliberateTerminalExit(signaled(9))).toBe(false)
    expect(isDeliberateTerminalExit(unknown('stop_unverified'))).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------
// The seed's pinned cases
// ---------------------------------------------------------------------------------------------

describe('pinned cases', () => {
  it('node-pty pairs 0 with a signal: { exitCode: 0, signal: 9 } ⇒ signaled(9)', () => {
    expect(resolveProcessExitCause({ exitCode: 0, signal: 9 })).toEqual(signaled(9))
  })

  it('a wrapper host drops its numbers: (42, 9, false) and (0, 0, false) ⇒ unknown/host_status_unavailable', () => {
    expect(resolveProcessExitCause({ exitCode: 42, signal: 9, hostReportsChildExitStatus: false })).toEqual(
      unknown('host_status_unavailable'),
    )
    expect(resolveProcessExitCause({ exitCode: 0, signal: 0, hostReportsChildExitStatus: false })).toEqual(
      unknown('host_status_unavailable'),
    )
  })

  it('the sentinel −1 is stop_unverified in both resolvers and not a proven exit', () => {
    expect(UNVERIFIED_PROCESS_EXIT_CODE).toBe(-1)
    expect(resolveProcessExitCause({ exitCode: UNVERIFIED_PROCESS_EXIT_CODE })).toEqual(unknown('stop_unverified'))
    expect(resolveUnreportedExitCause(UNVERIFIED_PROCESS_EXIT_CODE)).toEqual(unknown('stop_unverified'))
    expect(isProvenProcessExit(UNVERIFIED_PROCESS_EXIT_CODE)).toBe(false)
  })

  it('(7, null) ⇒ exited(7) and (42, 0) ⇒ exited(42); a bare 0 with status reported ⇒ exited(0)', () => {
    expect(resolveProcessExitCause({ exitCode: 7, signal: null })).toEqual(exited(7))
    expect(resolveProcessExitCause({ exitCode: 42, signal: 0 })).toEqual(exited(42))
    expect(resolveProcessExitCause({ exitCode: 0 })).toEqual(exited(0))
  })

  it('resolveUnreportedExitCause: 0 ⇒ cause_unreported, 137 ⇒ exited(137)', () => {
    expect(resolveUnreportedExitCause(0)).toEqual(unknown('cause_unreported'))
    expect(resolveUnreportedExitCause(137)).toEqual(exited(137))
  })

  it('malformed codes: NaN, Infinity and 1.5 are never exited', () => {
    for (const code of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5]) {
      expect(resolveProcessExitCause({ exitCode: code })).toEqual(unknown('cause_unreported'))
      expect(resolveUnreportedExitCause(code)).toEqual(unknown('cause_unreported'))
    }
    expect(resolveProcessExitCause({ exitCode: 0, signal: 9.5 })).toEqual(exited(0))
  })

  it('isProvenProcessExit(0) and (137) are true', () => {
    expect(isProvenProcessExit(0)).toBe(true)
    expect(isProvenProcessExit(137)).toBe(true)
  })

  it('isProvenExitCause is kind !== unknown', () => {
    expect(isProvenExitCause(OPERATOR_CLOSE_EXIT_CAUSE)).toBe(true)
    expect(isProvenExitCause(signaled(9))).toBe(true)
    expect(isProvenExitCause(exited(0))).toBe(true)
    for (const reason of REASONS) expect(isProvenExitCause(unknown(reason))).toBe(false)
  })

  it('OPERATOR_CLOSE_EXIT_CAUSE is the frozen operator_close value', () => {
    expect(OPERATOR_CLOSE_EXIT_CAUSE).toEqual({ kind: 'operator_close' })
    expect(Object.isFrozen(OPERATOR_CLOSE_EXIT_CAUSE)).toBe(true)
    expect(() => {
      ;(OPERATOR_CLOSE_EXIT_CAUSE as { kind: string }).kind = 'exited'
    }).toThrow(TypeError)
    expect(OPERATOR_CLOSE_EXIT_CAUSE.kind).toBe('operator_close')
  })
})
