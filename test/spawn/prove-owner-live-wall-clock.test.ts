// The owner proof's one budget (listing, then liveness probe) is counted on the timers' clock: the
// wall clock stepped back (NTP) while the listing was on its way does not make a hanging probe
// hold a claim spawn for the hour stepped back.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import { OWNER_LISTING_DEADLINE_MS, proveOwnerLive } from '../../src/spawn/prove-owner-live.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('proveOwnerLive under a wall clock stepped back', () => {
  it('a hanging probe still gives up within the proof’s budget', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const realNow = Date.now.bind(Date)
    const provider = {
      authoritativeListings: true,
      listProcesses: async () => {
        // NTP steps the clock back an hour while the listing is read.
        vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
        return [{ id: 'pty-1', pid: 1, cwd: null, title: null }]
      },
      probeLiveness: () => new Promise<boolean | null>(() => undefined),
    } as unknown as PtyProvider
    let settled: boolean | undefined
    void proveOwnerLive(() => provider, { ptyId: 'pty-1', hostId: 'local' }).then((live) => (settled = live))
    await vi.advanceTimersByTimeAsync(OWNER_LISTING_DEADLINE_MS + 100)
    expect(settled).toBe(true)
  })
})
