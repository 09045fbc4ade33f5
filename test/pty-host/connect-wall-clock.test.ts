// A connect that polls a host refusing the secret gives up at `connectTimeoutMs` counted on the
// timers' clock: a frozen or stepped-back `Date` (a test mocking Date, NTP) does not keep it polling.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { fakeHostClosedAfter, useCleanups } from './pty-host-test-support.js'
import { createPtyHostProvider } from 'ptykit/pty-host'

const cleanups = useCleanups()
afterEach(() => {
  vi.restoreAllMocks()
})

async function refusingHost(): Promise<string> {
  const { socketPath } = await fakeHostClosedAfter(cleanups, () => undefined, {
    onHello: (_message, socket) => socket.end(encodeFrame({ type: 'refused', code: 'unauthorized', message: 'The pty host refused the secret' })),
  })
  return socketPath
}

describe('pty host connect under wall-clock jumps', () => {
  it('a frozen Date: a refused secret fails at connectTimeoutMs, not never', async () => {
    const socketPath = await refusingHost()
    const provider = createPtyHostProvider({ socketPath, autoStart: false, connectTimeoutMs: 300 })
    cleanups.push(() => provider.dispose())
    vi.spyOn(Date, 'now').mockReturnValue(Date.now())
    const started = performance.now()
    const outcome = await Promise.race([
      provider.spawn({ file: '/bin/true' }).then(
        () => 'spawned',
        (error: { code?: string }) => error.code,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still polling'), 3_000)),
    ])
    expect(outcome).toBe('unauthorized')
    expect(performance.now() - started).toBeLessThan(2_000)
  }, 6_000)
})
