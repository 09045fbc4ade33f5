// A PTY whose channel the server closed without an exit status while the connection stayed open
// (sshd's `ChannelTimeout`, which hangs up the pty): its program, an ordinary one, dies of that
// hang-up. Before 7 Dec nothing looked at such a PTY unless a stop of it was owed or someone probed
// it — no exit was ever reported, and a controller kept it listed as running. Now the provider
// looks at it as it looks at the PTYs of a dropped connection, and reports its end.
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { taggedProcesses } from './ssh-test-support.js'

const TAG = `chan-closed-gone-${process.pid}`

describe('SSH: a PTY whose channel the server closed, its connection open, and whose program died of it', () => {
  it('is reported ended (unknown: cause_unreported) without a probe or a stop', async () => {
    const loopback = await loopbackProvider(TAG, { sshd: { channelTimeout: 'session:*=2' } })
    const { provider, exits } = loopback
    try {
      const reply = await loopback.spawnTagged('exec sleep 600')
      await loopback.waitForSleeps(1)
      // The server closes the idle channel after 2 s; the hang-up ends `sleep`. Nobody asks.
      await waitFor(() => (exits.length === 1 ? true : undefined), 'its exit, reported by the provider on its own', 20_000)
      expect(exits[0]).toMatchObject({ id: reply.id, cause: { kind: 'unknown', reason: 'cause_unreported' } })
      expect(provider.hasPty(reply.id)).toBe(false)
      expect(provider.isConnected()).toBe(true)
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await loopback.close()
    }
  }, 60_000)
})
