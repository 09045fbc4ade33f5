import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { carriesErrorCode } from '../../src/contracts/error-code.js'
import { settleWithin } from '../../src/contracts/settle-within.js'

describe('settleWithin (internal: the providers\' bounded waits)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("answers the work's value when it settles first, and leaves no timer behind", async () => {
    vi.useFakeTimers()
    let finish!: (value: string) => void
    const work = new Promise<string>((resolve) => (finish = resolve))
    const answer = settleWithin(work, 1_000, 'fallback')
    expect(vi.getTimerCount()).toBe(1)
    finish('done')
    await expect(answer).resolves.toBe('done')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('answers the fallback once the wait passes, whatever the work does later', async () => {
    vi.useFakeTimers()
    let finish!: (value: string) => void
    const work = new Promise<string>((resolve) => (finish = resolve))
    const answer = settleWithin(work, 1_000, 'fallback')
    await vi.advanceTimersByTimeAsync(999)
    let settled = false
    void answer.then(() => (settled = true))
    await Promise.resolve()
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    await expect(answer).resolves.toBe('fallback')
    finish('late')
    await expect(answer).resolves.toBe('fallback')
  })

  it("passes the work's rejection through and clears the timer", async () => {
    vi.useFakeTimers()
    const failure = new Error('remote refused')
    const answer = settleWithin(Promise.reject(failure), 1_000, null)
    await expect(answer).rejects.toBe(failure)
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('carriesErrorCode', () => {
  it('is true exactly for an object whose code is the one asked for', () => {
    fc.assert(
      fc.property(fc.string(), (code) => {
        expect(carriesErrorCode(Object.assign(new Error('x'), { code }), code)).toBe(true)
        expect(carriesErrorCode({ code }, code)).toBe(true)
        expect(carriesErrorCode({ code: `${code}!` }, code)).toBe(false)
        expect(carriesErrorCode(new Error(code), code)).toBe(false)
      }),
    )
  })

  it('is false for primitives and null, even when they look like the code', () => {
    for (const value of [null, undefined, 'pty_absent', 0, true]) {
      expect(carriesErrorCode(value, 'pty_absent')).toBe(false)
    }
  })
})
