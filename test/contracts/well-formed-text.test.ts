import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loneSurrogateIndex } from '../../src/contracts/well-formed-text.js'

/** The definition: the first code unit that is a high surrogate without a low one after it, or a low one without a high one before it. */
function firstLoneSurrogate(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    const isHigh = unit >= 0xd800 && unit <= 0xdbff
    const isLow = unit >= 0xdc00 && unit <= 0xdfff
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : -1
    const previous = i > 0 ? text.charCodeAt(i - 1) : -1
    if (isHigh && !(next >= 0xdc00 && next <= 0xdfff)) return i
    if (isLow && !(previous >= 0xd800 && previous <= 0xdbff)) return i
  }
  return -1
}

/** Any UTF-16 code units, surrogates weighted in so lone and paired ones both come up often. */
const codeUnits = fc
  .array(fc.oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0x41, 0xd83d, 0xde00)), { maxLength: 24 })
  .map((units) => String.fromCharCode(...units))

describe('loneSurrogateIndex', () => {
  it('is the index of the first lone surrogate, -1 for well-formed text (the native fast path agrees with the definition)', () => {
    fc.assert(
      fc.property(codeUnits, (text) => {
        expect(loneSurrogateIndex(text)).toBe(firstLoneSurrogate(text))
      }),
      { numRuns: 2000 },
    )
  })

  it('treats a pair as one character, and each half alone as lone', () => {
    expect(loneSurrogateIndex('a\uD83D\uDE00b')).toBe(-1)
    expect(loneSurrogateIndex('a\uDE00\uD83Db')).toBe(1)
    expect(loneSurrogateIndex('ab\uD83D')).toBe(2)
    expect(loneSurrogateIndex('')).toBe(-1)
  })
})
