import fc from 'fast-check'
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { MAX_TIMER_DELAY_MS } from '../../src/contracts/deadline.js'
import { ControllerTimers } from '../../src/controller/controller-timers.js'
import { forceDelayMs } from '../../src/controller/stop-and-wait.js'
import type { StopAndWaitRequest } from '../../src/controller/stop-and-wait-request.js'
import { openStopBudget } from '../../src/controller/stop-budget.js'
import { createManualClock } from '../../src/testing/manual-clock.js'

/** A budget on a manual clock, with a probe of whether `deadlinePassed` has resolved. */
function budgetFor(request: StopAndWaitRequest, options: { disposed?: () => boolean } = {}) {
  const clock = createManualClock()
  const timers = new ControllerTimers(clock, (error) => {
    throw error
  })
  const budget = openStopBudget({ clock, timers, disposed: options.disposed ?? (() => false) }, request)
  let passed = false
  void budget.deadlinePassed.then(() => {
    passed = true
  })
  // Two turns: the race's own, then the probe's.
  const flush = async (): Promise<void> => {
    for (let turn = 0; turn < 4; turn += 1) await Promise.resolve()
  }
  return { clock, budget, flush, passed: () => passed }
}

describe('forceDelayMs: when stopAndWait forces', () => {
  it('never later than forceAfterMs nor than half the time left, never negative, and exactly the smaller of the two in range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: -10_000, max: 2 ** 33 }), (forceAfterMs, remainingMs) => {
        const delay = forceDelayMs(forceAfterMs, remainingMs)
        expect(delay).toBeGreaterThanOrEqual(0)
        expect(delay).toBeLessThanOrEqual(forceAfterMs)
        expect(delay).toBeLessThanOrEqual(Math.max(0, remainingMs / 2))
        expect(delay).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS)
        if (remainingMs >= 0) expect(delay).toBe(Math.min(forceAfterMs, remainingMs / 2))
      }),
    )
  })
})

describe('openStopBudget: the time one stopAndWait may take', () => {
  it('passes exactly at the deadline, and counts the time left down to zero, never below', async () => {
    const { clock, budget, flush, passed } = budgetFor({ deadlineAt: 1_000 })
    expect(budget.remainingMs()).toBe(1_000)
    clock.advance(999)
    await flush()
    expect(passed()).toBe(false)
    expect(budget.remainingMs()).toBe(1)
    clock.advance(1)
    await flush()
    expect(passed()).toBe(true)
    clock.advance(500)
    expect(budget.remainingMs()).toBe(0)
  })

  it('a deadline beyond what one setTimeout holds waits (re-armed), never fires early', async () => {
    const deadlineAt = MAX_TIMER_DELAY_MS * 2 + 10
    const { clock, flush, passed } = budgetFor({ deadlineAt })
    clock.advance(MAX_TIMER_DELAY_MS)
    await flush()
    clock.advance(MAX_TIMER_DELAY_MS)
    await flush()
    expect(passed()).toBe(false)
    clock.advance(10)
    await flush()
    expect(passed()).toBe(true)
  })

  it('an aborted signal gives up like a passed deadline: at once when already aborted, else when it aborts', async () => {
    const early = budgetFor({ deadlineAt: 10_000, signal: AbortSignal.abort() })
    await early.flush()
    expect(early.passed()).toBe(true)
    const controller = new AbortController()
    const late = budgetFor({ deadlineAt: 10_000, signal: controller.signal })
    await late.flush()
    expect(late.passed()).toBe(false)
    controller.abort()
    await late.flush()
    expect(late.passed()).toBe(true)
  })

  it('a disposed controller gives up at once', async () => {
    const { flush, passed } = budgetFor({ deadlineAt: 10_000 }, { disposed: () => true })
    await flush()
    expect(passed()).toBe(true)
  })

  it('close leaves nothing behind: no timer armed, no abort listener', async () => {
    const controller = new AbortController()
    const { clock, budget, flush, passed } = budgetFor({ deadlineAt: 10_000, signal: controller.signal })
    expect(clock.pendingTimerCount()).toBe(1)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    budget.close()
    expect(clock.pendingTimerCount()).toBe(0)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    clock.advance(20_000)
    await flush()
    expect(passed()).toBe(false)
  })
})
