import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createFakePtyProvider } from 'ptykit/testing'

// The controller's default clock: a caller's deadline is read against `Date.now()` once; the wait
// it leaves must then be counted on the timers' (monotonic) clock. The wall clock jumps — a laptop
// resumed from sleep, NTP stepping it, a test's mocked `Date` — while timers do not follow.

const realNow = Date.now.bind(Date)

afterEach(() => {
  vi.restoreAllMocks()
})

async function neverConfirmed() {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  provider.scriptNextSpawn({ shutdown: 'never_confirm' })
  const { id } = await controller.spawn({})
  return { provider, controller, id }
}

describe('controller stopAndWait under wall-clock jumps (default clock)', () => {
  it('a frozen Date (a test mocking Date only): a stop that never confirms still answers false at its timeout', async () => {
    const { controller, id } = await neverConfirmed()
    vi.spyOn(Date, 'now').mockReturnValue(realNow())
    const started = performance.now()
    await expect(controller.stopAndWait(id, { timeoutMs: 300 })).resolves.toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
    vi.restoreAllMocks()
    await controller.dispose({ stopPtys: false })
  }, 5_000)

  it('the clock stepped back an hour mid-stop: the stop answers false at its timeout, not an hour later', async () => {
    const { controller, id } = await neverConfirmed()
    const stopping = controller.stopAndWait(id, { deadlineMs: Date.now() + 300 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
    const started = performance.now()
    await expect(stopping).resolves.toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
    vi.restoreAllMocks()
    await controller.dispose({ stopPtys: false })
  }, 5_000)

  it('a frozen Date with keepHistory: the settle polls of a still-listed PTY end at the timeout', async () => {
    const { controller, id } = await neverConfirmed()
    vi.spyOn(Date, 'now').mockReturnValue(realNow())
    const started = performance.now()
    await expect(controller.stopAndWait(id, { timeoutMs: 300, keepHistory: true })).resolves.toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
    vi.restoreAllMocks()
    await controller.dispose({ stopPtys: false })
  }, 5_000)

  it('the clock stepped back an hour while the provider’s stop hangs: false at the timeout, not an hour later', async () => {
    const fake = createFakePtyProvider()
    // A provider whose stop never answers (a host stuck on it): only the deadline ends the wait.
    const provider = new Proxy(fake, {
      get(target, key, receiver) {
        if (key === 'shutdown') return () => new Promise(() => {})
        const value = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    const stopping = controller.stopAndWait(id, { timeoutMs: 300 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
    const started = performance.now()
    await expect(stopping).resolves.toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
    vi.restoreAllMocks()
    await controller.dispose({ stopPtys: false })
  }, 5_000)
})
