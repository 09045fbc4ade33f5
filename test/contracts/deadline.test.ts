import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { MAX_TIMER_DELAY_MS, clampTimerDelay, remainingWaitMs, resolveWaitDeadline } from 'ptykit/contracts'

describe('resolveWaitDeadline: deadlineMs is a point in time, timeoutMs a duration', () => {
  it('reads deadlineMs as an absolute epoch time, as the seed origin passes it (Date.now() + 5000)', () => {
    const now = 1_700_000_000_000
    expect(resolveWaitDeadline({ deadlineMs: now + 5_000 }, 1_000, now)).toBe(now + 5_000)
  })

  it('reads timeoutMs as a duration from now', () => {
    expect(resolveWaitDeadline({ timeoutMs: 250 }, 1_000, 10_000)).toBe(10_250)
  })

  it('uses the default duration when neither is given', () => {
    expect(resolveWaitDeadline(undefined, 1_000, 10_000)).toBe(11_000)
    expect(resolveWaitDeadline({}, 1_000, 10_000)).toBe(11_000)
  })

  it('keeps a deadline already past (check once, do not wait)', () => {
    expect(resolveWaitDeadline({ deadlineMs: 5 }, 1_000, 10_000)).toBe(5)
    expect(remainingWaitMs(5, 10_000)).toBe(0)
  })

  it('refuses both forms at once with a TypeError naming both', () => {
    expect(() => resolveWaitDeadline({ deadlineMs: 1, timeoutMs: 1 }, 1_000)).toThrow(TypeError)
    expect(() => resolveWaitDeadline({ deadlineMs: 1, timeoutMs: 1 }, 1_000)).toThrow(/deadlineMs.*timeoutMs/)
  })

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5000', null])(
    'refuses deadlineMs %s with a TypeError naming the option',
    (value) => {
      expect(() => resolveWaitDeadline({ deadlineMs: value as number }, 1_000)).toThrow(/`deadlineMs`/)
    },
  )

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1, '50', null])(
    'refuses timeoutMs %s with a TypeError naming the option',
    (value) => {
      expect(() => resolveWaitDeadline({ timeoutMs: value as number }, 1_000)).toThrow(/`timeoutMs`/)
    },
  )
})

describe('timer delays never overflow', () => {
  it('clamps every delay into [0, 2^31 - 1]', () => {
    fc.assert(
      fc.property(fc.double(), (delay) => {
        const clamped = clampTimerDelay(delay)
        return clamped >= 0 && clamped <= MAX_TIMER_DELAY_MS && (delay > 0 && delay <= MAX_TIMER_DELAY_MS ? clamped === delay : true)
      }),
    )
  })

  it('turns a huge deadline into the longest wait setTimeout can hold, not 1 ms', () => {
    expect(remainingWaitMs(Number.MAX_SAFE_INTEGER, 0)).toBe(MAX_TIMER_DELAY_MS)
  })
})
