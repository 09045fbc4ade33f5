/**
 * A `stopAndWait` over SSH of a PTY whose leader's exit is proven but whose stop still runs (h245):
 * DESIGN.md §4, "`stopAndWait(id, { deadlineMs })` … returns true only when the stop was verified";
 * docs/ssh-provider.md, Stopping: the stop covers the leader's group and session. The leader dies
 * of the hang-up; a member of its group ignores HUP and TERM and dies of the stop's KILL, seconds
 * later. A `stopAndWait` asked then (after one that answered `false`) must not answer `true` while
 * the member lives: the provider's `shutdown` of the ended PTY joins its stop still running.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { SSH_TEST_USER } from './sshd-fixture.js'
import { killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()

describe('stopAndWait over SSH of a PTY whose leader exited while its stop still runs', () => {
  it('is not true while a member of the leader\'s group lives; true once the stop killed it', async () => {
    const tag = `${process.pid}-unproven-stop`
    // Long graces: the member dies of the KILL about 4 s into the stop, unless a stop forces.
    const provider = createSshProvider(sshOptions(sshd(), SSH_TEST_USER, { launchTimeoutMs: 60_000, hangupGraceMs: 2_000, terminateGraceMs: 2_000 }))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider }, stop: { forceAfterMs: 60_000 } })
    controller.on('error', () => undefined)
    try {
      const { id } = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', `sh -c "trap '' HUP TERM; exec sleep 300" & wait`], env: { PTYKIT_SWEEP_TAG: tag } })
      const leaderExited = new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
      await waitFor(() => (taggedProcesses(tag).some((p) => p.comm === 'sleep') ? true : undefined), 'the member', 30_000)
      const abort = new AbortController()
      const first = controller.stopAndWait(id, { timeoutMs: 30_000, signal: abort.signal })
      await leaderExited
      abort.abort()
      const memberAlive = () => taggedProcesses(tag).some((p) => p.comm === 'sleep')
      expect(await first).toBe(false)
      // "Check once, do not wait": `true` only if the stop killed the member meanwhile.
      const again = await controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 })
      expect({ again, memberAlive: memberAlive() }, 'stopAndWait answered true while the member lived').not.toEqual({ again: true, memberAlive: true })
      const verdict = await controller.stopAndWait(id, { timeoutMs: 20_000 })
      expect({ verdict, memberAlive: memberAlive() }).toEqual({ verdict: true, memberAlive: false })
    } finally {
      await controller.dispose().catch(() => undefined)
      await provider.dispose().catch(() => undefined)
      killTagged(tag)
    }
  }, 90_000)
})
