import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { PTY_INCARNATION_ID_MAX_LENGTH, isPtyIncarnationId } from 'ptykit/contracts'
import {
  exitCauseFromWire,
  isTerminalExitCause,
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  type TerminalExitCause,
} from 'ptykit/exit-cause'
import {
  arbitraryFakeExit,
  arbitraryProcessExitObservation,
  arbitraryPtyIncarnationId,
  arbitraryPtySpawnResult,
  arbitraryTerminalExitCause,
  arbitraryWireExit,
  arbitraryWriteSettlement,
} from 'ptykit/testing'

// Collect a sample big enough that every branch of an arbitrary shows up.
const sample = <T>(arbitrary: fc.Arbitrary<T>, numRuns = 500): T[] => fc.sample(arbitrary, { numRuns, seed: 42 })

const leafOf = (cause: TerminalExitCause): string => (cause.kind === 'unknown' ? `unknown/${cause.reason}` : cause.kind)

describe('arbitraryTerminalExitCause', () => {
  it('should only generate causes that isTerminalExitCause accepts and that survive a JSON round-trip', () => {
    fc.assert(
      fc.property(arbitraryTerminalExitCause(), (cause) => {
        expect(isTerminalExitCause(cause)).toBe(true)
        expect(JSON.parse(JSON.stringify(cause))).toEqual(cause)
      }),
    )
  })

  it('should cover all six leaves', () => {
    expect(new Set(sample(arbitraryTerminalExitCause()).map(leafOf))).toEqual(
      new Set(['operator_close', 'signaled', 'exited', 'unknown/stop_unverified', 'unknown/host_status_unavailable', 'unknown/cause_unreported']),
    )
  })
})

describe('arbitraryProcessExitObservation', () => {
  it('should generate observations the resolver maps to valid causes, never operator_close or cause_unreported', () => {
    fc.assert(
      fc.property(arbitraryProcessExitObservation(), (observation) => {
        expect(Number.isInteger(observation.exitCode)).toBe(true)
        const cause = resolveProcessExitCause(observation)
        expect(isTerminalExitCause(cause)).toBe(true)
        expect(leafOf(cause)).not.toBe('operator_close')
        expect(leafOf(cause)).not.toBe('unknown/cause_unreported')
      }),
    )
  })

  it('should reach every cause the resolver can produce, including a signal next to code 0 and a wrapper host', () => {
    const observations = sample(arbitraryProcessExitObservation(), 1000)
    expect(new Set(observations.map((o) => leafOf(resolveProcessExitCause(o))))).toEqual(
      new Set(['signaled', 'exited', 'unknown/stop_unverified', 'unknown/host_status_unavailable']),
    )
    expect(observations.some((o) => o.exitCode === 0 && typeof o.signal === 'number' && o.signal > 0)).toBe(true)
    expect(observations.some((o) => !('signal' in o))).toBe(true)
    expect(observations.some((o) => o.signal === null)).toBe(true)
    expect(observations.some((o) => !('hostReportsChildExitStatus' in o))).toBe(true)
  })
})

describe('arbitraryWireExit', () => {
  it('should always decode through exitCauseFromWire to a valid cause: the sent one when valid, never narrower than the code alone otherwise', () => {
    fc.assert(
      fc.property(arbitraryWireExit({ malformedCodes: true }), (wire) => {
        const cause = exitCauseFromWire(wire)
        expect(isTerminalExitCause(cause)).toBe(true)
        if (isTerminalExitCause(wire.cause)) {
          expect(cause).toBe(wire.cause)
        } else if (cause.kind !== 'unknown') {
          expect(cause).toEqual(resolveUnreportedExitCause(wire.code))
        }
      }),
    )
  })

  it('should mix absent, valid and garbage causes by default', () => {
    const wires = sample(arbitraryWireExit())
    expect(wires.some((wire) => !('cause' in wire))).toBe(true)
    expect(wires.some((wire) => isTerminalExitCause(wire.cause))).toBe(true)
    expect(wires.some((wire) => 'cause' in wire && !isTerminalExitCause(wire.cause))).toBe(true)
    expect(wires.every((wire) => Number.isInteger(wire.code))).toBe(true)
  })

  it('should generate only valid or absent causes without garbage, and malformed codes only when asked', () => {
    const clean = sample(arbitraryWireExit({ garbageCauses: false }))
    expect(clean.every((wire) => !('cause' in wire) || isTerminalExitCause(wire.cause))).toBe(true)
    const malformed = sample(arbitraryWireExit({ malformedCodes: true }), 1000)
    expect(malformed.some((wire) => !Number.isInteger(wire.code))).toBe(true)
  })
})

describe('arbitraryWriteSettlement', () => {
  it('should generate well-formed settlements of all three kinds', () => {
    const settlements = sample(arbitraryWriteSettlement())
    for (const settlement of settlements) {
      switch (settlement.kind) {
        case 'accepted':
          expect(Object.keys(settlement)).toEqual(['kind'])
          break
        case 'refused':
          expect(typeof settlement.reason).toBe('string')
          break
        case 'unverifiable':
          expect(typeof settlement.bytesHandedToTransport).toBe('boolean')
          break
      }
    }
    expect(new Set(settlements.map((s) => s.kind))).toEqual(new Set(['accepted', 'refused', 'unverifiable']))
    const reasons = new Set(settlements.flatMap((s) => (s.kind === 'accepted' ? [] : [s.reason])))
    expect(reasons.size).toBe(9 + 4)
  })
})

describe('arbitraryPtySpawnResult and arbitraryPtyIncarnationId', () => {
  it('should generate spawn results whose present fields are valid', () => {
    fc.assert(
      fc.property(arbitraryPtySpawnResult(), (result) => {
        expect(result.id.length).toBeGreaterThan(0)
        if (result.incarnationId !== undefined) expect(isPtyIncarnationId(result.incarnationId)).toBe(true)
        if (result.pid !== undefined && result.pid !== null) expect(Number.isInteger(result.pid)).toBe(true)
        if (result.providerSequence !== undefined) {
          expect(result.providerSequence.value).toBeGreaterThanOrEqual(0)
          expect(['continued', 'reset']).toContain(result.providerSequence.generation)
        }
        for (const size of [result.cols, result.rows]) {
          if (size !== undefined) expect(Number.isInteger(size) && size > 0).toBe(true)
        }
      }),
    )
  })

  it('should leave every optional field sometimes absent', () => {
    const results = sample(arbitraryPtySpawnResult())
    for (const key of ['pid', 'incarnationId', 'isReattach', 'exitedBeforeSpawnReply', 'providerSequence', 'hostReportsChildExitStatus']) {
      expect(results.some((result) => !(key in result))).toBe(true)
      expect(results.some((result) => key in result)).toBe(true)
    }
    expect(results.some((result) => result.pid === null)).toBe(true)
  })

  it('should generate incarnation ids up to the maximum length', () => {
    const ids = sample(arbitraryPtyIncarnationId())
    expect(ids.every((id) => isPtyIncarnationId(id))).toBe(true)
    expect(ids.some((id) => id.length === PTY_INCARNATION_ID_MAX_LENGTH)).toBe(true)
  })
})

describe('arbitraryFakeExit', () => {
  it('should generate exits with integer codes, no incarnation override, and sometimes no cause', () => {
    const exits = sample(arbitraryFakeExit())
    expect(exits.every((exit) => Number.isInteger(exit.exitCode) && !('incarnationId' in exit))).toBe(true)
    expect(exits.some((exit) => exit.withoutCause === true)).toBe(true)
    expect(exits.some((exit) => exit.hostReportsChildExitStatus === false)).toBe(true)
    expect(exits.some((exit) => typeof exit.signal === 'number' && exit.signal > 0)).toBe(true)
  })
})
