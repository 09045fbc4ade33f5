import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerOnOwnHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
afterEach(() => {
  vi.restoreAllMocks()
})

// The app's Date frozen (a test mocking Date only), the pty host on the real clock: a stop through
// the host escalates on the host's graces and the controller's wait is counted on its timers.
describe('stopAndWait through a pty host with the app Date frozen', () => {
  it('a HUP-ignoring process is stopped by the SIGTERM and verified; no hang', async () => {
    const { controller } = controllerOnOwnHost(cleanups)
    const exits: unknown[] = []
    controller.on('exit', (event) => exits.push(event.cause))
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; echo ready; sleep 30"] })
    await new Promise((resolve) => setTimeout(resolve, 300))
    vi.spyOn(Date, 'now').mockReturnValue(Date.now())
    const started = performance.now()
    await expect(controller.stopAndWait(id, { timeoutMs: 4_000 })).resolves.toBe(true)
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(exits).toEqual([{ kind: 'operator_close' }])
  }, 9_000)
})
