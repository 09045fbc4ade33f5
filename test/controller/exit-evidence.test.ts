import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { certifiesDeath, combineAnswers, isUnverifiedCause, observedExitCause, stopRequestedBeforeExit } from '../../src/controller/exit-evidence.js'
import { isProvenProcessExit, resolveProcessExitCause, resolveUnreportedExitCause } from '../../src/exit-cause/index.js'
import { arbitraryTerminalExitCause } from '../../src/testing/index.js'

const codeArb = fc.oneof(fc.integer({ min: -2, max: 255 }), fc.constantFrom(Number.NaN, 0.5))
const signalArb = fc.option(fc.integer({ min: -1, max: 64 }), { nil: undefined })

describe('observedExitCause', () => {
  it('keeps a valid cause and resolves a missing one from the code, when the host reports child status', () => {
    fc.assert(
      fc.property(codeArb, signalArb, fc.boolean(), (code, signal, withCause) => {
        const cause = resolveProcessExitCause({ exitCode: code, signal: signal ?? null })
        const event = withCause ? { id: 'p', code, cause } : { id: 'p', code }
        expect(observedExitCause(event, true)).toEqual(withCause ? cause : resolveUnreportedExitCause(code))
      }),
    )
  })

  it('never lets a code or a signal through when a wrapper owns the status', () => {
    fc.assert(
      fc.property(codeArb, signalArb, fc.boolean(), fc.boolean(), (code, signal, withCause, claimsStatus) => {
        const cause = resolveProcessExitCause({
          exitCode: code,
          signal: signal ?? null,
          hostReportsChildExitStatus: claimsStatus,
        })
        const observed = observedExitCause(withCause ? { id: 'p', code, cause } : { id: 'p', code }, false)
        expect(observed.kind).toBe('unknown')
        // Only the "could not vouch" sentinel survives; everything else is host_status_unavailable.
        const unverifiedBefore = withCause ? isUnverifiedCause(cause) : isUnverifiedCause(resolveUnreportedExitCause(code))
        expect(observed).toEqual(
          unverifiedBefore ? { kind: 'unknown', reason: 'stop_unverified' } : { kind: 'unknown', reason: 'host_status_unavailable' },
        )
      }),
    )
  })

  it('treats a malformed cause as absent', () => {
    expect(observedExitCause({ id: 'p', code: 0, cause: { kind: 'signaled', signal: -3 } as never }, true)).toEqual({
      kind: 'unknown',
      reason: 'cause_unreported',
    })
  })
})

describe('stopRequestedBeforeExit', () => {
  const flag = fc.option(fc.boolean(), { nil: undefined })

  it("is the controller's own stop or the provider's attested one, unless the provider knew the process dead before the stop request", () => {
    fc.assert(
      fc.property(fc.boolean(), flag, flag, fc.boolean(), (own, attested, diedBefore, withEvent) => {
        const event = { id: 'p', code: 0, ...(attested !== undefined && { stopRequestedBeforeDeath: attested }), ...(diedBefore !== undefined && { diedBeforeStopRequest: diedBefore }) }
        const settled = stopRequestedBeforeExit(own, withEvent ? event : undefined)
        if (!withEvent) expect(settled).toBe(own)
        else expect(settled).toBe(diedBefore !== true && (own || attested === true))
      }),
    )
  })

  it('reads only an exact true as evidence', () => {
    expect(stopRequestedBeforeExit(false, { id: 'p', code: 0, stopRequestedBeforeDeath: 'yes' as never })).toBe(false)
    expect(stopRequestedBeforeExit(true, { id: 'p', code: 0, diedBeforeStopRequest: 1 as never })).toBe(true)
  })
})

describe('combineAnswers', () => {
  it('is true when any answer is true, false only when all are false, and null otherwise', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(true, false, null)), (answers) => {
        const combined = combineAnswers(answers)
        if (answers.includes(true)) expect(combined).toBe(true)
        else if (answers.length > 0 && !answers.includes(null)) expect(combined).toBe(false)
        else expect(combined).toBeNull()
      }),
    )
  })
})

describe('certifiesDeath', () => {
  const anyCode = fc.oneof(fc.integer({ min: -3, max: 300 }), fc.constantFrom(Number.NaN, 0.5, -1.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY))
  const anyCause = fc.option(arbitraryTerminalExitCause(), { nil: undefined })

  it('an exit the provider observed certifies the death whatever its code and cause', () => {
    fc.assert(
      fc.property(anyCode, anyCause, fc.constantFrom(undefined, 'provider' as const), fc.boolean(), (code, cause, observed, hostReports) => {
        expect(certifiesDeath({ id: 'p', code, ...(cause === undefined ? {} : { cause }), ...(observed === undefined ? {} : { observed }) }, hostReports)).toBe(true)
      }),
    )
  })

  it("a synthetic exit certifies it only with a code that proves an exit (an integer >= 0, the origin's exitCode >= 0) and no stop_unverified cause", () => {
    fc.assert(
      fc.property(anyCode, anyCause, fc.boolean(), (code, cause, hostReports) => {
        const event = { id: 'p', code, observed: 'synthetic' as const, ...(cause === undefined ? {} : { cause }) }
        const provesAnExit = Number.isSafeInteger(code) && code >= 0
        const saysUnverified = cause !== undefined && isUnverifiedCause(cause)
        expect(certifiesDeath(event, hostReports)).toBe(provesAnExit && !saysUnverified)
        expect(isProvenProcessExit(code)).toBe(provesAnExit)
      }),
    )
  })
})
