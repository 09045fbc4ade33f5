import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { createManualClock } from 'ptykit/testing'
import { MANUAL_CLOCK_RUN_ALL_LIMIT } from '../../src/testing/manual-clock.js'

describe('createManualClock', () => {
  it('should not move on its own and start where asked', () => {
    expect(createManualClock().now()).toBe(0)
    expect(createManualClock({ startAt: 500 }).now()).toBe(500)
    expect(() => createManualClock({ startAt: Number.NaN })).toThrow(
      'Expected the `startAt` option to be a finite number, got NaN (number)',
    )
  })

  it('should fire timers in due order (ties in set order) as time is advanced past them', () => {
    const clock = createManualClock()
    const fired: string[] = []
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20)
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10)
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 20)
    clock.advance(15)
    expect(fired).toEqual(['a@10'])
    expect(clock.now()).toBe(15)
    expect(clock.nextTimerAt()).toBe(20)
    clock.advance(5)
    expect(fired).toEqual(['a@10', 'b@20', 'c@20'])
    expect(clock.pendingTimerCount()).toBe(0)
    expect(clock.nextTimerAt()).toBeNull()
  })

  it('should fire timers set by timers when they fall inside the window', () => {
    const clock = createManualClock()
    const fired: number[] = []
    clock.setTimeout(() => {
      fired.push(clock.now())
      clock.setTimeout(() => fired.push(clock.now()), 5)
    }, 10)
    clock.advance(15)
    expect(fired).toEqual([10, 15])
  })

  it('should never fire a cleared timer, and ignore foreign handles', () => {
    const clock = createManualClock()
    let fired = false
    const handle = clock.setTimeout(() => (fired = true), 1)
    clock.clearTimeout(handle)
    clock.clearTimeout(handle)
    clock.clearTimeout({})
    clock.runAll()
    expect(fired).toBe(false)
  })

  it('should fire a negative or NaN delay as soon as possible', () => {
    const clock = createManualClock()
    const fired: number[] = []
    clock.setTimeout(() => fired.push(1), -5)
    clock.setTimeout(() => fired.push(2), Number.NaN)
    clock.advance(0)
    expect(fired).toEqual([1, 2])
  })

  it('should run every timer with runAll and give up on one that re-arms forever', () => {
    const clock = createManualClock()
    const fired: number[] = []
    clock.setTimeout(() => fired.push(clock.now()), 100)
    clock.setTimeout(() => fired.push(clock.now()), 50)
    clock.runAll()
    expect(fired).toEqual([50, 100])
    const rearm = (): void => {
      clock.setTimeout(rearm, 1)
    }
    rearm()
    expect(() => clock.runAll()).toThrow(`runAll() gave up after ${MANUAL_CLOCK_RUN_ALL_LIMIT} timers`)
  })

  it('should reject a negative advance and a non-function callback', () => {
    const clock = createManualClock()
    expect(() => clock.advance(-1)).toThrow('Expected the `ms` argument to be a non-negative number, got -1 (number)')
    expect(() => clock.setTimeout('x' as never, 1)).toThrow(TypeError)
  })

  it('should end every advance exactly at now + ms, whatever timers fire (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 100 }), { maxLength: 10 }), fc.array(fc.nat({ max: 60 }), { maxLength: 6 }), (delays, steps) => {
        const clock = createManualClock()
        const firedAt: number[] = []
        delays.forEach((delay) => clock.setTimeout(() => firedAt.push(clock.now()), delay))
        let expectedNow = 0
        for (const step of steps) {
          clock.advance(step)
          expectedNow += step
          expect(clock.now()).toBe(expectedNow)
        }
        expect(firedAt).toEqual([...firedAt].sort((a, b) => a - b))
        expect(firedAt.length + clock.pendingTimerCount()).toBe(delays.length)
        expect(firedAt.every((at) => at <= expectedNow)).toBe(true)
      }),
    )
  })
})
