import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import {
  OPERATOR_CLOSE_EXIT_CAUSE,
  isTerminalExitCause,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  settleExitCause,
  type TerminalExitCause,
} from '../../src/exit-cause/index.js'
import { REASONS, integerCode, positiveSignal } from './exit-cause-arbitraries.js'



/** Every valid cause: the four kinds and three reasons, plus whatever the resolvers build. */
const anyCause: fc.Arbitrary<TerminalExitCause> = fc.oneof(
  fc.constant(null).map((): TerminalExitCause => ({ kind: 'operator_close' })),
  fc.constant(OPERATOR_CLOSE_EXIT_CAUSE),
  positiveSignal.map((signal): TerminalExitCause => ({ kind: 'signaled', signal })),
  integerCode.map((code): TerminalExitCause => ({ kind: 'exited', exitCode: Math.abs(code) })),
  fc.constantFrom(...REASONS).map((reason): TerminalExitCause => ({ kind: 'unknown', reason })),
  fc
    .record({ exitCode: integerCode, signal: fc.option(fc.integer({ min: -5, max: 64 })), host: fc.boolean() })
    .map(({ exitCode, signal, host }) =>
      resolveProcessExitCause({ exitCode, signal, hostReportsChildExitStatus: host }),
    ),
  integerCode.map((code) => resolveUnreportedExitCause(code)),
)
const stopRequested = fc.boolean()

const isStopUnverified = (cause: TerminalExitCause): boolean =>
  cause.kind === 'unknown' && cause.reason === 'stop_unverified'

describe('settleExitCause', () => {
  it('S1: with no stop requested the observed cause stands — settleExitCause(c, { stopRequested: false }) is c', () => {
    fc.assert(
      fc.property(anyCause, (cause) => {
        const snapshot = JSON.stringify(cause)
        const settled = settleExitCause(cause, { stopRequested: false })
        expect(settled).toBe(cause)
        expect(JSON.stringify(settled)).toBe(snapshot)
      }),
    )
  })

  it('S2: with a stop requested every cause except unknown/stop_unverified settles to operator_close', () => {
    fc.assert(
      fc.property(anyCause, (cause) => {
        const settled = settleExitCause(cause, { stopRequested: true })
        if (isStopUnverified(cause)) {
          expect(settled).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
        } else {
          expect(settled).toEqual({ kind: 'operator_close' })
        }
        expect(isTerminalExitCause(settled)).toBe(true)
      }),
    )
  })

  it('S3: settling is idempotent — settling a settled cause again changes nothing', () => {
    fc.assert(
      fc.property(anyCause, stopRequested, (cause, stop) => {
        const once = settleExitCause(cause, { stopRequested: stop })
        const twice = settleExitCause(once, { stopRequested: stop })
        expect(twice).toEqual(once)
      }),
    )
  })

  it('a kill during a requested stop is the stop landing: signaled(1) ⇒ operator_close', () => {
    expect(settleExitCause({ kind: 'signaled', signal: 1 }, { stopRequested: true })).toEqual({
      kind: 'operator_close',
    })
    expect(settleExitCause({ kind: 'exited', exitCode: 0 }, { stopRequested: true })).toEqual({
      kind: 'operator_close',
    })
    expect(
      settleExitCause({ kind: 'unknown', reason: 'cause_unreported' }, { stopRequested: true }),
    ).toEqual({ kind: 'operator_close' })
  })

  it('an unconfirmed stop is not a completed close: stop_unverified stays', () => {
    expect(settleExitCause({ kind: 'unknown', reason: 'stop_unverified' }, { stopRequested: true })).toEqual({
      kind: 'unknown',
      reason: 'stop_unverified',
    })
  })

  it('without a stop, a signal stays a signal', () => {
    expect(settleExitCause({ kind: 'signaled', signal: 9 }, { stopRequested: false })).toEqual({
      kind: 'signaled',
      signal: 9,
    })
  })
})

describe('settleExitCause: a context that is not { stopRequested: boolean }', () => {
  it.each([
    ['true', true, 'got boolean'],
    ['undefined', undefined, 'got undefined'],
    ["{ stopRequested: 'yes' }", { stopRequested: 'yes' }, 'got { stopRequested: string }'],
    ['{}', {}, 'got { stopRequested: undefined }'],
  ])('%s is a TypeError, never a quiet "no stop" that keeps a signal where the operator closed', (_name, context, got) => {
    expect(() => settleExitCause({ kind: 'signaled', signal: 1 }, context as never)).toThrow(
      new TypeError(`Expected the settlement context to be { stopRequested: boolean }, got ${got.replace(/^got /, '')}`),
    )
  })
})
