/**
 * Durations longer than a Node timer holds (2^31 − 1 ms, ~24.8 days) — `Number.MAX_SAFE_INTEGER`
 * written for "never" — must wait that long, not overflow to 1 ms.
 */
import { describe, expect, it } from 'vitest'
import { inProcessHost, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: "never" durations', () => {
  it('an idle host with idleExitMs MAX_SAFE_INTEGER stays up; a provider whose request and connect timeouts are as long still spawns', async () => {
    const { socketPath } = await inProcessHost(cleanups, { idleExitMs: Number.MAX_SAFE_INTEGER, ackMaxHoldMs: Number.MAX_SAFE_INTEGER })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const client = await rawClient(socketPath)
    client.close()
    const app = providerOn(socketPath, { autoStart: false, requestTimeoutMs: Number.MAX_SAFE_INTEGER, connectTimeoutMs: Number.MAX_SAFE_INTEGER })
    cleanups.push(() => app.dispose())
    const spawned = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3'] })
    expect(await app.probeLiveness(spawned.id)).toBe(true)
  })
})
