import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerOnOwnHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
afterEach(() => {
  vi.useRealTimers()
})

// The app's Date is mocked (`vi.setSystemTime` alone mocks only Date.*, as a snapshot test does for
// stable timestamps); the pty host is another process, on the real clock. A deadline the app took
// from its Date (`Date.now() + 5_000`, or the controller's own listing deadline) is 2024 to the host.
describe('a pty host reads an app deadline against its own clock', () => {
  it('controller.listProcesses(null) through an out-of-process pty host, with the app Date set to 2024', async () => {
    const { provider, controller } = controllerOnOwnHost(cleanups)
    const spawned = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    cleanups.push(() => provider.shutdown(spawned.id, { immediate: true }))

    vi.setSystemTime(new Date('2024-01-01T00:00:00Z'))
    // Before 20cf789: the host read it as past ("check once") and listed the PTY.
    const direct = await provider.listProcesses({ deadlineMs: Date.now() + 5_000 })
    expect(direct.map((row) => row.id)).toContain(spawned.id)
    const rows = await controller.listProcesses(null)
    expect(rows.map((row) => row.id)).toContain(spawned.id)
  })
})
