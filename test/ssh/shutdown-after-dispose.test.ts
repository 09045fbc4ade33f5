// A stop asked after `provider.dispose()` of a PTY lost with the link (its server down, so the
// disposal could not reach it): found by an audit (helper-204), it rejected `transport_lost` — as
// if the link were down for now, a retry to come — where every other call after the disposal
// answers `provider_disposed` (nothing is reached any more, whatever the server does).
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { isAlive } from './ssh-test-support.js'

const TAG = `shutdown-after-dispose-${process.pid}`

describe('SSH: shutdown after dispose', () => {
  it('of a lost PTY rejects provider_disposed, as every call after the disposal does (of an unknown one too)', async () => {
    const loopback = await loopbackProvider(TAG, { provider: { reconnectMaxAttempts: 0 } })
    const { server, provider } = loopback
    try {
      const reply = await loopback.spawnTagged("trap '' HUP; exec sleep 600")
      await loopback.waitForSleeps(1, 'the program to run past its trap')
      await server.killAll()
      await waitFor(() => (provider.hasPty(reply.id) === null ? true : undefined), 'the PTY to be lost')
      await provider.dispose()
      expect(isAlive(reply.pid!)).toBe(true)

      await expect(provider.shutdown(reply.id)).rejects.toMatchObject({ code: 'provider_disposed', ptyId: reply.id })
      await expect(provider.shutdown(reply.id, { immediate: true })).rejects.toMatchObject({ code: 'provider_disposed' })
      await expect(provider.listProcesses()).rejects.toMatchObject({ code: 'provider_disposed' })
      // Of an id it never held too: the rule of `PtyProvider.dispose` (every call after it is refused).
      await expect(provider.shutdown('never-spawned')).rejects.toMatchObject({ code: 'provider_disposed' })
    } finally {
      await loopback.close()
    }
  }, 60_000)
})
