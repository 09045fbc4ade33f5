import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { rebaseOutputSequence, type OutputSequenceState } from '../../src/spawn/rebase-output-sequence.js'

const count = fc.nat({ max: 1_000_000 })
const stateArb: fc.Arbitrary<OutputSequenceState | undefined> = fc.option(
  fc.record({ sequence: count, initialized: fc.boolean() }),
  { nil: undefined },
)
const invalidNumber = fc.oneof(fc.constant(Number.NaN), fc.constant(Number.POSITIVE_INFINITY), fc.integer({ max: -1 }))

describe('rebaseOutputSequence (rule SP3, docs/architecture.md)', () => {
  it('invalid numbers change nothing', () => {
    fc.assert(
      fc.property(stateArb, invalidNumber, count, fc.boolean(), (state, bad, good, badIsValue) => {
        const value = badIsValue ? bad : good
        const before = badIsValue ? good : bad
        expect(rebaseOutputSequence(state, { value, generation: 'continued' }, before)).toBeNull()
        expect(rebaseOutputSequence(state, { value, generation: 'reset' }, before)).toBeNull()
      }),
    )
  })

  it('reset keeps the current sequence and marks the state initialized', () => {
    fc.assert(
      fc.property(stateArb, count, count, (state, value, before) => {
        expect(rebaseOutputSequence(state, { value, generation: 'reset' }, before)).toEqual({
          sequence: state?.sequence ?? 0,
          initialized: true,
        })
      }),
    )
  })

  it('the first continued is before + value + the chars that raced the reply', () => {
    fc.assert(
      fc.property(count, count, count, (before, postSpawn, value) => {
        const state = { sequence: before + postSpawn, initialized: false }
        expect(rebaseOutputSequence(state, { value, generation: 'continued' }, before)).toEqual({
          sequence: before + value + postSpawn,
          initialized: true,
        })
      }),
    )
  })

  it('a later continued keeps the current sequence', () => {
    fc.assert(
      fc.property(count, count, count, (current, value, before) => {
        expect(rebaseOutputSequence({ sequence: current, initialized: true }, { value, generation: 'continued' }, before)).toEqual({
          sequence: current,
          initialized: true,
        })
      }),
    )
  })

  it('a runtime sequence below the pre-spawn reading counts no post-spawn chars', () => {
    expect(rebaseOutputSequence({ sequence: 2, initialized: false }, { value: 10, generation: 'continued' }, 5)).toEqual({
      sequence: 15,
      initialized: true,
    })
  })
})
