// A PTY whose channel the server closed without an exit status while the connection stayed open
// (sshd's `ChannelTimeout`, which hangs up the pty): its program, an ordinary one, dies of that
// hang-up. Before 7 Dec nothing looked at such a PTY unless a stop of it was owed or someone probed
// it — no exit was ever reported, and a controller kept it listed as running. Now the provider
// looks at it as it looks at the PTYs of a dropped connection, and reports its end.
import { describe, expect, it } from 'vitest'
import { createSshProvider } from 'ptykit/ssh'
import type { PtyExitEvent } from 'ptykit'
import { waitFor } from '../node-pty/pty-test-support.js'
import { startSshd } from './sshd-fixture.js'
import { killTagged, sshOptions, taggedProcesses } from './ssh-test-support.js'

const TAG = `chan-closed-gone-${process.pid}`

describe('SSH: a PTY whose channel the server closed, its connection open, and whose program died of it', () => {
  it('is reported ended (unknown: cause_unreported) without a probe or a stop', async () => {
    const server = await startSshd({ channelTimeout: 'session:*=2' })
    const provider = createSshProvider(sshOptions(server))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    try {
      const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 600'], env: { PTYKIT_SWEEP_TAG: TAG } })
      await waitFor(() => (taggedProcesses(TAG).filter(({ comm }) => comm === 'sleep').length === 1 ? true : undefined), 'the program to run')
      // The server closes the idle channel after 2 s; the hang-up ends `sleep`. Nobody asks.
      await waitFor(() => (exits.length === 1 ? true : undefined), 'its exit, reported by the provider on its own', 20_000)
      expect(exits[0]).toMatchObject({ id: reply.id, cause: { kind: 'unknown', reason: 'cause_unreported' } })
      expect(provider.hasPty(reply.id)).toBe(false)
      expect(provider.isConnected()).toBe(true)
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await provider.dispose()
      killTagged(TAG)
      await server.stop()
    }
  }, 60_000)
})
