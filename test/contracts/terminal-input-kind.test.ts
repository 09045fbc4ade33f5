import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { isTerminalInputKind } from 'ptykit/contracts'

describe('isTerminalInputKind', () => {
  it.each(['driving', 'launch', 'query-reply'])('should accept %s', (kind) => {
    expect(isTerminalInputKind(kind)).toBe(true)
  })

  it.each(['', 'Driving', 'query_reply', 'typing', ' launch'])('should reject %j', (kind) => {
    expect(isTerminalInputKind(kind)).toBe(false)
  })

  it('should reject everything that is not one of the three strings', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(isTerminalInputKind(value)).toBe(value === 'driving' || value === 'launch' || value === 'query-reply')
      }),
    )
  })
})
