import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import {
  OPERATOR_CLOSE_EXIT_CAUSE,
  exitCauseFromWire,
  isTerminalExitCause,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  settleExitCause,
  type TerminalExitCause,
} from '../../src/exit-cause/index.js'
import { REASONS, anyCode, builtCause, integerCode, positiveSignal } from './exit-cause-arbitraries.js'

const KINDS: readonly string[] = ['operator_close', 'signaled', 'exited', 'unknown']
/** The keys a valid cause of each kind has, exactly. */
const KEYS: Record<TerminalExitCause['kind'], readonly string[]> = {
  operator_close: ['kind'],
  signaled: ['kind', 'signal'],
  exited: ['kind', 'exitCode'],
  unknown: ['kind', 'reason'],
}

const anySignal = fc.oneof(
  positiveSignal,
  fc.constantFrom<number | null>(null, 0, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY),
  fc.integer({ max: 0 }),
  // Fractions and non-finite values only: see the report on unsafe integers (2 ** 53 and up).
  fc.double({ noInteger: true }),
)

/** Every value the algebra's functions produce, from any input (well-formed or not). */
const producedCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  fc
    .record(
      { exitCode: anyCode, signal: anySignal, hostReportsChildExitStatus: fc.boolean() },
      { requiredKeys: ['exitCode'] },
    )
    .map((observation) => resolveProcessExitCause(observation)),
  anyCode.map((code) => resolveUnreportedExitCause(code)),
  anyCode.map((code) => exitCauseFromWire({ code })),
  fc.constant(OPERATOR_CLOSE_EXIT_CAUSE),
)


/** What the resolvers build from well-formed evidence: mostly `exited` and `signaled`. */
const producedFromEvidence: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  fc
    .record({ exitCode: integerCode, signal: fc.option(fc.integer({ min: -3, max: 64 })) })
    .map((observation) => resolveProcessExitCause(observation)),
  integerCode.map((code) => resolveUnreportedExitCause(code)),
)

const anyCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  producedCause,
  producedFromEvidence,
  builtCause,
  fc.tuple(builtCause, fc.boolean()).map(([cause, stopRequested]) => settleExitCause(cause, { stopRequested })),
)

/** Numbers that are never a valid signal. */
const badSignal: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(0, -0, -1, -9, 0.5, 9.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.constantFrom<unknown>('9', null, undefined, true, [9], { signal: 9 }, BigInt(9)),
  fc.integer({ max: 0 }),
  fc.double({ noInteger: true }),
)
/** Numbers that are never a valid exit code. */
const badExitCode: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(-1, -137, 0.5, 136.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.constantFrom<unknown>('0', null, undefined, false, [0], BigInt(0)),
  fc.integer({ max: -1 }),
  fc.double({ noInteger: true }),
)
const badReason: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    '',
    'unknown',
    'Stop_Unverified',
    'stop-unverified',
    ' stop_unverified',
    'toString',
    'constructor',
    '__proto__',
    null,
    1,
    ['stop_unverified'],
  ),
  fc.string().filter((reason) => !(REASONS as readonly string[]).includes(reason)),
)
const wrongKind: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>('Exited', 'signalled', 'killed', '', 'OPERATOR_CLOSE', null, undefined, 0, ['exited']),
  fc.string().filter((kind) => !KINDS.includes(kind)),
)

/**
 * Mutations of a valid cause, each of which must be rejected. `KINDS` swaps keep the payload of
 * the original kind, so the keys no longer match: a wrong kind even when the new kind exists.
 */
function mutationsOf(cause: TerminalExitCause): fc.Arbitrary<unknown> {
  const payloadKeys = KEYS[cause.kind].filter((key) => key !== 'kind')
  const mutations: fc.Arbitrary<unknown>[] = [
    // Wrong kind: an invalid one, or another valid kind with this kind's payload.
    wrongKind.map((kind) => ({ ...cause, kind })),
    fc.constantFrom(...KINDS.filter((kind) => kind !== cause.kind)).map((kind) => ({ ...cause, kind })),
    // An extra key, including one that belongs to another kind.
    fc
      .tuple(
        fc.oneof(fc.constantFrom('signal', 'exitCode', 'reason', 'code', 'cause', '__proto__'), fc.string()),
        fc.anything(),
      )
      .filter(([key]) => !KEYS[cause.kind].includes(key))
      .map(([key, value]) => ({ ...cause, [key]: value })),
    // A reason the algebra does not know.
    badReason.map((reason) => ({ kind: 'unknown', reason })),
    // Bad numbers.
    badSignal.map((signal) => ({ kind: 'signaled', signal })),
    badExitCode.map((exitCode) => ({ kind: 'exited', exitCode })),
    // A missing field.
    fc.constant({}),
    // Not a plain object: arrays, null, strings, boxed in something else, inherited fields.
    fc.constantFrom<unknown>(
      null,
      undefined,
      [cause],
      Object.assign([], cause),
      Object.entries(cause),
      JSON.stringify(cause),
      cause.kind,
      new Map(Object.entries(cause)),
      () => cause,
    ),
    // The right own fields on something that is not a plain record, or the fields only inherited.
    fc.constantFrom<unknown>(
      Object.create(cause) as unknown,
      Object.assign(Object.create({ inherited: true }) as object, cause),
      Object.assign(new (class Cause {})(), cause),
    ),
  ]
  if (cause.kind !== 'unknown') {
    // An extra reason on a proven cause.
    mutations.push(fc.constantFrom(...REASONS).map((reason) => ({ ...cause, reason })))
  }
  if (payloadKeys.length > 0) {
    mutations.push(
      fc.constant(null).map(() => {
        const copy: Record<string, unknown> = { ...cause }
        for (const key of payloadKeys) delete copy[key]
        return copy
      }),
    )
  }
  return fc.oneof(...mutations)
}

describe('isTerminalExitCause', () => {
  it('G1: accepts every value the resolvers produce and rejects every mutation of one (wrong kind, extra key or reason, bad number, not a plain object)', () => {
    fc.assert(
      fc.property(anyCause, (cause) => {
        expect(isTerminalExitCause(cause)).toBe(true)
      }),
    )
    fc.assert(
      fc.property(
        anyCause.chain((cause) => mutationsOf(cause)),
        (mutation) => {
          expect(isTerminalExitCause(mutation)).toBe(false)
        },
      ),
    )
  })

  it('J1: a JSON round-trip keeps every cause valid and equal', () => {
    fc.assert(
      fc.property(anyCause, (cause) => {
        const parsed: unknown = JSON.parse(JSON.stringify(cause))
        expect(isTerminalExitCause(parsed)).toBe(true)
        // Strict: an `undefined` field or a -0 would not survive the trip.
        expect(parsed).toStrictEqual(cause)
        expect(JSON.stringify(parsed)).toBe(JSON.stringify(cause))
      }),
    )
  })

  it('accepts the six leaves, including a null-prototype record', () => {
    expect(isTerminalExitCause({ kind: 'operator_close' })).toBe(true)
    expect(isTerminalExitCause(OPERATOR_CLOSE_EXIT_CAUSE)).toBe(true)
    expect(isTerminalExitCause({ kind: 'signaled', signal: 9 })).toBe(true)
    expect(isTerminalExitCause({ kind: 'exited', exitCode: 0 })).toBe(true)
    for (const reason of REASONS) expect(isTerminalExitCause({ kind: 'unknown', reason })).toBe(true)
    expect(isTerminalExitCause(Object.assign(Object.create(null) as object, { kind: 'exited', exitCode: 1 }))).toBe(
      true,
    )
  })

  it('rejects the classic malformed shapes', () => {
    for (const value of [
      undefined,
      null,
      'operator_close',
      0,
      [],
      [{ kind: 'operator_close' }],
      {},
      { kind: 'signaled', signal: 0 },
      { kind: 'signaled', signal: -9 },
      { kind: 'signaled', signal: 1.5 },
      { kind: 'exited', exitCode: Number.NaN },
      { kind: 'exited', exitCode: 0.5 },
      { kind: 'exited', exitCode: -1 },
      { kind: 'exited', exitCode: 0, extra: true },
      { kind: 'unknown', reason: 'lost' },
      { kind: 'operator_close', reason: 'stop_unverified' },
    ]) {
      expect(isTerminalExitCause(value), JSON.stringify(value)).toBe(false)
    }
  })
})
