import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { LONG_PAST_DEADLINE_MS, MAX_TIMER_DELAY_MS, clampTimerDelay, remainingWaitMs, resolveWaitDeadline } from 'ptykit/contracts'
import { PROVIDER_ANSWER_MARGIN_MS, askedDeadline, askedTimeoutMs } from '../../src/contracts/deadline.js'
import { settleWithin } from '../../src/contracts/settle-within.js'

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

  it('refuses a duration given as deadlineMs (5000 is in 1970): a TypeError naming the option, the date and timeoutMs', () => {
    const now = Date.parse('2026-12-06T10:00:00Z')
    for (const duration of [1, 5_000, 30_000, 86_400_000, now - LONG_PAST_DEADLINE_MS - 1]) {
      expect(() => resolveWaitDeadline({ deadlineMs: duration }, 1_000, now)).toThrow(TypeError)
    }
    expect(() => resolveWaitDeadline({ deadlineMs: 5_000 }, 1_000, now)).toThrow(/`deadlineMs`.*got 5000, which is 1970-01-01T00:00:05\.000Z.*`timeoutMs`/)
  })

  it('keeps every deadline less than LONG_PAST_DEADLINE_MS in the past, and 0 or negative ones (both readings mean "do not wait")', () => {
    fc.assert(
      fc.property(fc.integer({ min: LONG_PAST_DEADLINE_MS + 1, max: 4_000_000_000_000 }), fc.integer({ min: 0, max: LONG_PAST_DEADLINE_MS }), (now, ago) => {
        expect(resolveWaitDeadline({ deadlineMs: now - ago }, 1_000, now)).toBe(now - ago)
      }),
    )
    expect(resolveWaitDeadline({ deadlineMs: 0 }, 1_000, Date.now())).toBe(0)
    expect(resolveWaitDeadline({ deadlineMs: -1 }, 1_000, Date.now())).toBe(-1)
  })

  it('refuses a point in time given as timeoutMs (Date.now() + 5000 would wait 56 years): a TypeError naming the option, the date and deadlineMs', () => {
    const now = Date.parse('2026-12-06T10:00:00Z')
    expect(() => resolveWaitDeadline({ timeoutMs: now + 5_000 }, 1_000, now)).toThrow(
      /`timeoutMs`.*got 1796551205000, which reads as the time 2026-12-06T10:00:05\.000Z.*`deadlineMs`/,
    )
    fc.assert(
      fc.property(fc.integer({ min: 2 * LONG_PAST_DEADLINE_MS + 1, max: 4_000_000_000_000 }), fc.integer({ min: -LONG_PAST_DEADLINE_MS, max: LONG_PAST_DEADLINE_MS }), (at, offset) => {
        expect(() => resolveWaitDeadline({ timeoutMs: at + offset }, 1_000, at)).toThrow(TypeError)
      }),
    )
  })

  it("keeps every other timeoutMs: up to a timer's longest wait at any time, longer ones that read as no time near now, and any on a test clock near 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 0, max: 8_000_000_000_000 }), (now, timeoutMs) => {
        const pointInTime = timeoutMs > LONG_PAST_DEADLINE_MS && Math.abs(timeoutMs - now) <= LONG_PAST_DEADLINE_MS
        fc.pre(!pointInTime)
        expect(resolveWaitDeadline({ timeoutMs }, 1_000, now)).toBe(now + timeoutMs)
      }),
    )
    expect(resolveWaitDeadline({ timeoutMs: LONG_PAST_DEADLINE_MS }, 1_000, LONG_PAST_DEADLINE_MS)).toBe(2 * LONG_PAST_DEADLINE_MS)
    const now = Date.parse('2026-12-06T10:00:00Z')
    expect(resolveWaitDeadline({ timeoutMs: Number.MAX_SAFE_INTEGER }, 1_000, now)).toBe(now + Number.MAX_SAFE_INTEGER)
  })

  it('counts back from the given now: on a test clock that starts at 0, 5000 is a deadline ahead', () => {
    expect(resolveWaitDeadline({ deadlineMs: 5_000 }, 1_000, 0)).toBe(5_000)
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

  it('a provider\'s bounded wait of a "never" duration does not give up at once (settleWithin)', async () => {
    const waited = settleWithin(new Promise<string>(() => undefined), Number.MAX_SAFE_INTEGER, 'gave up')
    const first = await Promise.race([waited, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 50))])
    expect(first).toBe('still waiting')
  })
})

describe('askedDeadline: what a caller hands a provider it waits for until a deadline', () => {
  it('is earlier by a tenth of the wait, at most PROVIDER_ANSWER_MARGIN_MS, never before now; a past deadline is left as it is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: -10_000, max: 10 ** 9 }), (now, wait) => {
        const deadline = now + wait
        const asked = askedDeadline(deadline, now)
        if (wait <= 0) return asked === deadline
        // The duration form agrees with the point-in-time form.
        return asked <= deadline && deadline - asked <= PROVIDER_ANSWER_MARGIN_MS && asked - now >= wait * 0.9 && askedTimeoutMs(wait) === asked - now
      }),
    )
  })

  it('takes the whole margin off a wait of half a second or more', () => {
    expect(askedDeadline(1_000 + 5_000, 1_000)).toBe(1_000 + 5_000 - PROVIDER_ANSWER_MARGIN_MS)
    expect(askedTimeoutMs(300)).toBe(270)
    expect(askedTimeoutMs(0)).toBe(0)
  })
})
