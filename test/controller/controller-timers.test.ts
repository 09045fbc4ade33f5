import { describe, expect, it } from 'vitest'
import { ControllerTimers } from '../../src/controller/controller-timers.js'
import { createManualClock } from '../../src/testing/manual-clock.js'

describe('ControllerTimers.orAtDispose', () => {
  it('answers what the provider answers, keeps nothing once it did, and gives up only the waits still pending at dispose', async () => {
    const timers = new ControllerTimers(createManualClock(), () => undefined)
    // Why count: a long-lived controller asks many questions; each must leave nothing behind
    // (a race against one shared "disposed" promise kept a reaction per question until dispose).
    for (let i = 0; i < 1_000; i++) expect(await timers.orAtDispose(Promise.resolve(i), null)).toBe(i)
    await expect(timers.orAtDispose(Promise.reject(new Error('threw')), null)).rejects.toThrow('threw')
    expect(timers.pendingDisposeWaits).toBe(0)
    const hung = timers.orAtDispose(new Promise<string>(() => undefined), 'given up')
    expect(timers.pendingDisposeWaits).toBe(1)
    timers.clearAll()
    await expect(hung).resolves.toBe('given up')
    expect(timers.pendingDisposeWaits).toBe(0)
    // After dispose, a wait gives up at once.
    await expect(timers.orAtDispose(new Promise<string>(() => undefined), 'at once')).resolves.toBe('at once')
  })
})

describe('ControllerTimers.after', () => {
  it('once every timer was cleared (dispose), resolves at once and starts no timer', async () => {
    const clock = createManualClock()
    const timers = new ControllerTimers(clock, () => undefined)
    const before = timers.after(1_000)
    timers.clearAll()
    await expect(before.promise).resolves.toBe('timer')
    // A late caller (a stop's rejection arriving after dispose): no timer nobody would clear.
    const late = timers.after(60_000)
    expect(clock.pendingTimerCount()).toBe(0)
    await expect(late.promise).resolves.toBe('timer')
    late.cancel()
  })
})
