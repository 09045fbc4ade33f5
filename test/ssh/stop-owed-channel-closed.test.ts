// A stop owed to a PTY whose channel the server closed without an exit report while the connection
// stayed open (here: sshd's `ChannelTimeout`, which hangs up the pty; the program ignores that).
// Found by an audit (helper-204): a stop of such a PTY that could not reach its program (a deadline
// too short for the look) was owed, but an owed stop was carried out only after a look at the lost
// PTYs, and a look was scheduled only when a connection dropped or opened — with the connection
// staying open, the program ran on until the app stopped it again or disposed. The refusals of such
// a PTY said its connection dropped (helper-208): they now say the server closed its channel.
import { describe, expect, it } from 'vitest'
import type { SshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { isAlive, taggedProcesses } from './ssh-test-support.js'

const TAG = `stop-owed-chan-${process.pid}`

describe('SSH: a stop owed to a PTY whose channel closed without an exit report, its connection open', () => {
  it('is carried out without waiting for a connection to drop or open', async () => {
    const loopback = await loopbackProvider(TAG, { sshd: { channelTimeout: 'session:*=2' } })
    const { provider, exits } = loopback
    try {
      const reply = await loopback.spawnTagged("trap '' HUP TERM; exec sleep 600")
      await loopback.waitForSleeps(1, 'the program to run past its trap')
      await waitFor(() => (provider.hasPty(reply.id) === null ? true : undefined), 'the server to close the idle channel', 15_000)
      expect(provider.isConnected()).toBe(true)
      expect(isAlive(reply.pid!)).toBe(true)

      // A deadline too short for the look at the program: the stop cannot reach it, and is owed.
      const refusal = await provider.shutdown(reply.id, { deadlineMs: Date.now() + 1 }).then(
        () => null,
        (error: SshProviderError) => error,
      )
      expect(refusal?.code).toBe('transport_lost')
      // Said as it happened: the channel closed, the connection did not drop (until 7 Dec the
      // message said "its SSH connection dropped").
      expect(refusal?.message).toContain('the server closed its channel without an exit status (its SSH connection is still open)')
      expect(refusal?.message).not.toContain('connection dropped')
      const attach = await provider.spawn({ sessionId: reply.id, attachOnly: true }).then(
        () => null,
        (error: SshProviderError) => error,
      )
      expect(attach?.code).toBe('transport_lost')
      expect(attach?.message).toContain('the server closed its channel without an exit status')

      await waitFor(() => (!isAlive(reply.pid!) ? true : undefined), 'the owed stop to be carried out', 20_000)
      await waitFor(() => (exits.length === 1 ? true : undefined), 'its exit')
      expect(exits[0]).toMatchObject({ id: reply.id, cause: { kind: 'unknown', reason: 'cause_unreported' } })
      expect(provider.isConnected()).toBe(true)
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await loopback.close()
    }
  }, 60_000)
})
