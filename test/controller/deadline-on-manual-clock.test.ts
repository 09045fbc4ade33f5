import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'

afterEach(() => {
  vi.useRealTimers()
})

// LONG_PAST_DEADLINE_MS's TSDoc said "a test's fake clock that starts near 0 is not affected (the
// limit is counted back from its `now`)" (the CHANGELOG: "counts back from the clock's now"). The
// controller's `clock` (createManualClock, starts at 0) is not that `now`: the controller counts
// back from Date.now(), so a deadline taken from the manual clock is refused (before 20cf789 it
// was read as 1970: answered false, no grace). The TSDoc now says so; this pins the behaviour.
describe('LONG_PAST_DEADLINE_MS on a controller with a manual clock', () => {
  it('deadlineMs: clock.now() + 5000 is refused, nothing stopped; Date.now() + 5000 stops', async () => {
    const clock = createManualClock()
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, clock })
    const { id } = await controller.spawn({ file: 'sh' })
    await expect(controller.stopAndWait(id, { deadlineMs: clock.now() + 5_000 })).rejects.toThrow(/`deadlineMs`.*got 5000/)
    expect(provider.livePtyIds()).toEqual([id])
    await expect(controller.stopAndWait(id, { deadlineMs: Date.now() + 5_000 })).resolves.toBe(true)
    await controller.dispose()
  })

  it('vitest fake timers: Date set near 0 refuses nothing; Date at a real time refuses only a duration', async () => {
    vi.useFakeTimers()
    vi.setSystemTime(0)
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const a = await controller.spawn({ file: 'sh' })
    await expect(controller.stopAndWait(a.id, { deadlineMs: Date.now() + 5_000 })).resolves.toBe(true)
    vi.setSystemTime(new Date('2024-01-01T00:00:00Z'))
    const b = await controller.spawn({ file: 'sh' })
    await expect(controller.listProcesses(null, { deadlineMs: Date.now() + 5_000 })).resolves.toHaveLength(1)
    await expect(controller.stopAndWait(b.id, { deadlineMs: 5_000 })).rejects.toThrow(TypeError)
    await expect(controller.stopAndWait(b.id, { deadlineMs: Date.now() + 5_000 })).resolves.toBe(true)
    await controller.dispose()
  })
})
