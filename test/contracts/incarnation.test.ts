import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { PTY_INCARNATION_ID_MAX_LENGTH, isPtyIncarnationId, toPtyIncarnationId } from 'ptykit/contracts'

describe('isPtyIncarnationId', () => {
  it.each([
    [0, false],
    [1, true],
    [PTY_INCARNATION_ID_MAX_LENGTH, true],
    [PTY_INCARNATION_ID_MAX_LENGTH + 1, false],
  ])('should answer %s characters with %s', (length, expected) => {
    expect(PTY_INCARNATION_ID_MAX_LENGTH).toBe(128)
    expect(isPtyIncarnationId('x'.repeat(length))).toBe(expected)
  })

  it('should reject every non-string', () => {
    fc.assert(
      fc.property(
        fc.anything().filter((value) => typeof value !== 'string'),
        (value) => {
          expect(isPtyIncarnationId(value)).toBe(false)
        },
      ),
    )
  })

  it('should accept exactly the strings of 1 to 128 characters', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (value) => {
        expect(isPtyIncarnationId(value)).toBe(value.length >= 1 && value.length <= 128)
      }),
    )
  })
})

describe('toPtyIncarnationId', () => {
  it('should return the same string, branded', () => {
    expect(toPtyIncarnationId('inc-7')).toBe('inc-7')
    expect(toPtyIncarnationId('y'.repeat(128))).toHaveLength(128)
  })

  it('should throw a TypeError naming the value and its type', () => {
    expect(() => toPtyIncarnationId('')).toThrow(
      new TypeError('Expected an incarnation id to be a string of 1 to 128 characters, got "" (string)'),
    )
    expect(() => toPtyIncarnationId('z'.repeat(129))).toThrow(TypeError)
    expect(() => toPtyIncarnationId(42 as unknown as string)).toThrow(
      'Expected an incarnation id to be a string of 1 to 128 characters, got 42 (number)',
    )
  })
})
