// From the user's side, at scale: 100 PTYs on one SSH provider, and the server's process for their
// connection killed (the sshd child, not the listener). A dropped link is no exit; the programs die
// of the hang-up, and once the provider has reconnected it proves them gone: each PTY ends with
// `unknown/cause_unreported` — never `exited(0)`, never left running in the provider's books.
// Nothing of them is left (no timer, no socket once disposed), and a later spawn on the same
// provider works (it reconnected). With the server down for good (its listener killed too, no
// reconnects), a later spawn is refused with a typed error that names the host.
import { describe, expect, it } from 'vitest'
import type { SshProvider, SshProviderError } from 'ptykit/ssh'
import { outcome } from '../support/bad-input.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { taggedProcesses } from './ssh-test-support.js'

/** PTYs on the one provider: the scale users run. */
const PTYS = 100

const TAG = `conn-killed-scale-${process.pid}`

/** How many timers and sockets this process holds now. */
function timersAndSockets(): { timers: number; sockets: number } {
  const active = process.getActiveResourcesInfo()
  return { timers: active.filter((name) => name === 'Timeout').length, sockets: active.filter((name) => name === 'TCPSocketWrap').length }
}

/**
 * Nothing of the provider is left that holds the process: no socket, no (ref'd) timer — Node lists
 * no unref'd timer, and the provider's own are unref'd. A socket destroyed by the disposal stays
 * listed until its handle's close callback ran (a turn of the event loop later), so the sockets are
 * awaited a bounded time, not read at once.
 */
async function expectNothingLeft(): Promise<void> {
  await waitFor(() => (timersAndSockets().sockets === 0 ? true : undefined), 'every socket of the provider to be closed', 2_000)
  expect(timersAndSockets().timers).toBe(0)
}

/** Every call a host app may still make about the PTY `id`, each answered or refused (never thrown untyped). */
async function lateCalls(provider: SshProvider, id: string): Promise<Record<string, unknown>> {
  const calls: Record<string, () => unknown> = {
    write: () => provider.write(id, 'x'),
    writeBytes: () => provider.writeBytes(id, new Uint8Array([120])),
    resize: () => provider.resize(id, 50, 10),
    hasPty: () => provider.hasPty(id),
    shutdown: () => provider.shutdown(id),
    attach: () => provider.spawn({ sessionId: id, attachOnly: true }),
  }
  const answers: Record<string, unknown> = {}
  for (const [name, call] of Object.entries(calls)) {
    const answer = await outcome(call)
    // A refusal: thrown by a synchronous call, a rejection of an asynchronous one; typed, naming the PTY.
    answers[name] = answer.how === 'returned' ? answer.value : { [answer.how]: (answer.value as SshProviderError).code, ptyId: (answer.value as SshProviderError).ptyId }
  }
  return answers
}

describe(`SSH: ${PTYS} PTYs whose server-side connection process was killed`, () => {
  it('each ends unknown/cause_unreported once the provider reconnected, nothing is left, and a later spawn runs', async () => {
    const loopback = await loopbackProvider(TAG)
    const { server, provider, exits } = loopback
    try {
      const replies = await Promise.all(Array.from({ length: PTYS }, () => loopback.spawnTagged('exec sleep 600')))
      await loopback.waitForSleeps(PTYS, 'every program to run')
      const connections = server.connections()
      expect(connections).toBeGreaterThanOrEqual(1)
      // Drop every connection the PTYs ride on (one, unless the provider spread them).
      for (let count = connections; count > 0; count--) server.killNewestConnection()

      await waitFor(() => (exits.length >= PTYS ? true : undefined), `the ${PTYS} exits`, 40_000)
      expect(exits.length).toBe(PTYS)
      expect(new Set(exits.map((exit) => exit.id))).toEqual(new Set(replies.map((reply) => reply.id)))
      // A true verdict: the death proven, its cause not known (the status went down with the link).
      expect(exits.map((exit) => exit.cause)).toEqual(Array(PTYS).fill({ kind: 'unknown', reason: 'cause_unreported' }))
      expect(replies.map(({ id }) => provider.hasPty(id)).filter((answer) => answer !== false)).toEqual([])
      expect(taggedProcesses(TAG)).toEqual([])
      expect(provider.isConnected()).toBe(true)

      // Calls arriving late, about PTYs proven ended: what is true of an ended PTY, never a claim it runs.
      for (const { id } of replies) {
        expect(await lateCalls(provider, id)).toEqual({
          write: { kind: 'refused', reason: 'pty_exited' },
          writeBytes: { kind: 'refused', reason: 'pty_exited' },
          resize: false,
          hasPty: false,
          shutdown: undefined,
          attach: { rejected: 'pty_absent', ptyId: id },
        })
      }

      // A later spawn on the same provider: it reconnected, so it runs.
      const later = await loopback.spawnTagged('exec sleep 600')
      await loopback.waitForSleeps(1, 'the later program to run')
      expect(provider.hasPty(later.id)).toBe(true)

      await provider.dispose()
      await expectNothingLeft()
    } finally {
      await loopback.close()
    }
  }, 120_000)

  it('with the server down for good, a later spawn is refused with a typed error naming the host; nothing is left once disposed', async () => {
    const loopback = await loopbackProvider(TAG, { provider: { reconnectMaxAttempts: 0 } })
    const { server, provider, exits } = loopback
    try {
      const replies = await Promise.all(Array.from({ length: PTYS }, () => loopback.spawnTagged('exec sleep 600')))
      await loopback.waitForSleeps(PTYS, 'every program to run')
      await server.killAll()
      await waitFor(() => (replies.every(({ id }) => provider.hasPty(id) === null) ? true : undefined), 'every PTY to become unverifiable')
      // A dropped link is no exit: nothing can be proven while the server is down.
      expect(exits).toEqual([])

      const refusal = await loopback.spawnTagged('exec sleep 600').then(
        () => null,
        (error: SshProviderError) => error,
      )
      expect(refusal?.name).toBe('SshProviderError')
      expect(refusal?.code).toBe('connection_failed')
      // Named by the provider, not only inside the system's ECONNREFUSED text.
      expect(refusal?.message.startsWith(`Cannot connect to 127.0.0.1:${server.port}: `)).toBe(true)

      // Calls arriving late, about the lost PTYs: nothing is sent, nothing known, a stop is refused
      // as not carried out (transport_lost: the link is down) — never a made-up end.
      for (const { id } of replies) {
        expect(await lateCalls(provider, id)).toEqual({
          write: { kind: 'refused', reason: 'provider_refused_write' },
          writeBytes: { kind: 'refused', reason: 'provider_refused_write' },
          resize: false,
          hasPty: null,
          shutdown: { rejected: 'transport_lost', ptyId: id },
          attach: { rejected: 'transport_lost', ptyId: id },
        })
      }
      expect(exits).toEqual([])

      await provider.dispose()
      // After the disposal: every call about them is refused provider_disposed, naming the PTY.
      for (const { id } of replies) {
        expect(await lateCalls(provider, id)).toEqual({
          write: { threw: 'provider_disposed', ptyId: id },
          writeBytes: { threw: 'provider_disposed', ptyId: id },
          resize: { threw: 'provider_disposed', ptyId: id },
          hasPty: { threw: 'provider_disposed', ptyId: id },
          shutdown: { rejected: 'provider_disposed', ptyId: id },
          // A spawn's options name no PTY yet (an attach's `sessionId` included).
          attach: { rejected: 'provider_disposed', ptyId: undefined },
        })
      }
      await expectNothingLeft()
    } finally {
      await loopback.close()
    }
  }, 120_000)
})
