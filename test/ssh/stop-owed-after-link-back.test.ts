// A stop asked for while a PTY's link is down cannot reach its program: it says so (`kill` then
// publishes `unknown/stop_unverified`, `stopAndWait` answers false). Found by an audit (helper-200):
// once the server was back and the provider had reconnected, such a program — one that ignores
// the hang-up, so it outlived its terminal — ran on until the app stopped it again or disposed,
// though it had asked for its end once. The provider now carries the stop out once a connection to
// the same machine is open again, and the controller publishes the confirmed death.
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { SshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { isAlive, taggedProcesses } from './ssh-test-support.js'

const TAG = `stop-owed-${process.pid}`

/** A loopback sshd, the SSH provider on it, a controller over it (errors heard), the exits it publishes, and how to close it all. */
async function controllerOverLoopback() {
  const loopback = await loopbackProvider(TAG)
  const { server, provider } = loopback
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  controller.on('error', () => undefined)
  const exits: PtyControllerExitEvent[] = []
  controller.on('exit', (event) => exits.push(event))
  /** Dispose both, kill what the test's programs left, stop the server. */
  const close = async (): Promise<void> => {
    await controller.dispose()
    await loopback.close()
  }
  return { server, provider, controller, exits, close }
}

describe('SSH: a stop asked for while the link is down', () => {
  it('is carried out once the server is back: the program ends; one nobody asked to stop runs on', async () => {
    const { server, provider, controller, exits, close } = await controllerOverLoopback()
    try {
      const spawn = () => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "trap '' HUP; exec sleep 600"], env: { PTYKIT_SWEEP_TAG: TAG } })
      const [killed, stopped, untouched] = await Promise.all([spawn(), spawn(), spawn()])
      await waitFor(() => (taggedProcesses(TAG).filter(({ comm }) => comm === 'sleep').length === 3 ? true : undefined), 'the programs to run (past its trap: sleep by now)')

      await server.killAll()
      await waitFor(() => ([killed, stopped, untouched].every(({ id }) => provider.hasPty(id) === null) ? true : undefined), 'the PTYs to become unverifiable')
      expect(controller.kill(killed.id)).toBe(true)
      expect(await controller.stopAndWait(stopped.id)).toBe(false)
      await waitFor(() => (exits.length === 2 ? true : undefined), 'the unverified stops to be published')
      expect(exits.map((exit) => exit.cause)).toEqual([
        { kind: 'unknown', reason: 'stop_unverified' },
        { kind: 'unknown', reason: 'stop_unverified' },
      ])
      // They outlived the link (they ignore the hang-up).
      expect([killed, stopped, untouched].map(({ pid }) => isAlive(pid!))).toEqual([true, true, true])

      await server.restart()
      await waitFor(() => (!isAlive(killed.pid!) && !isAlive(stopped.pid!) ? true : undefined), 'the stops asked for while the link was down to be carried out', 20_000)
      // The death confirmed: a second exit, after the unverified one.
      await waitFor(() => (exits.length === 4 ? true : undefined), 'the confirmed deaths')
      expect(exits.slice(2).map((exit) => [exit.ptyId, exit.cause])).toEqual(
        expect.arrayContaining([
          [killed.id, { kind: 'operator_close' }],
          [stopped.id, { kind: 'operator_close' }],
        ]),
      )
      expect(isAlive(untouched.pid!)).toBe(true)
      expect(await controller.probePtyLiveness(untouched.id)).toBe(true)
      expect(await controller.stopAndWait(untouched.id)).toBe(true)
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await close()
    }
  }, 60_000)

  it('one whose link dropped while it ran is carried out once the server is back', async () => {
    const { server, controller, exits, close } = await controllerOverLoopback()
    try {
      // It ignores the stop's HUP and TERM: only its KILL, a second after the HUP, would end it.
      const reply = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "trap '' HUP TERM; exec sleep 600"], env: { PTYKIT_SWEEP_TAG: TAG } })
      await waitFor(() => (taggedProcesses(TAG).filter(({ comm }) => comm === 'sleep').length === 1 ? true : undefined), 'the program to run (past its trap: sleep by now)')
      const verdict = controller.stopAndWait(reply.id)
      await new Promise((resolve) => setTimeout(resolve, 200))
      await server.killAll()
      expect(await verdict).toBe(false)
      expect(isAlive(reply.pid!)).toBe(true)

      await server.restart()
      await waitFor(() => (!isAlive(reply.pid!) ? true : undefined), 'the stop to be carried out', 20_000)
      await waitFor(() => (exits.length === 2 ? true : undefined), 'the confirmed death')
      expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }, { kind: 'operator_close' }])
    } finally {
      await close()
    }
  }, 60_000)

  // Found by helper-208: the controller published operator_close for such a stop, but the
  // provider's own exit event said nothing of it — a provider user (no controller) could not tell
  // its stop from a death on its own. The node-pty provider says `stopRequestedBeforeDeath`.
  it('the exit of a program the owed stop ended says stopRequestedBeforeDeath; one that died of the hang-up claims neither flag', async () => {
    const loopback = await loopbackProvider(TAG)
    const { server, provider, exits } = loopback
    try {
      // One ignores the hang-up (only the owed stop ends it); one dies of the server's hang-up.
      const [stopped, hungUp] = await Promise.all([loopback.spawnTagged("trap '' HUP; exec sleep 600"), loopback.spawnTagged('exec sleep 600')])
      await loopback.waitForSleeps(2, 'the programs to run past the trap')

      await server.killAll()
      await waitFor(() => ([stopped, hungUp].every(({ id }) => provider.hasPty(id) === null) ? true : undefined), 'the PTYs to become unverifiable')
      for (const { id } of [stopped, hungUp]) {
        const refusal = await provider.shutdown(id).then(
          () => null,
          (error: SshProviderError) => error,
        )
        expect(refusal?.code).toBe('transport_lost')
      }
      expect(isAlive(stopped.pid!)).toBe(true)

      await server.restart()
      await waitFor(() => (exits.length === 2 ? true : undefined), 'both exits', 20_000)
      const exitOf = (id: string) => exits.find((exit) => exit.id === id)
      expect(exitOf(stopped.id)).toMatchObject({ cause: { kind: 'unknown', reason: 'cause_unreported' }, stopRequestedBeforeDeath: true })
      expect(exitOf(stopped.id)?.diedBeforeStopRequest).toBeUndefined()
      // Nobody saw it alive after the stop was asked for: the stop is not attested to have come
      // first — nor was it known dead before the request (until 7 Dec: diedBeforeStopRequest).
      expect(exitOf(hungUp.id)?.stopRequestedBeforeDeath).toBeUndefined()
      expect(exitOf(hungUp.id)?.diedBeforeStopRequest).toBeUndefined()
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await loopback.close()
    }
  }, 60_000)
})
