/**
 * The SSH provider disposed before (or while) the controller that uses it is still live —
 * `await provider.dispose(); await controller.dispose()`, or both at once. Once disposed, the
 * provider refuses the listing that verifies a stop with `provider_disposed`. Before, every stop
 * under way answered `false` although the provider had reported each PTY's exit (an operator
 * close), and each stop step reported `listing_failed` (45 errors for 19 PTYs). Now each answers
 * `true`, with no error. The same sequences over the fake: test/controller/provider-disposed-before-controller.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from 'ptykit/controller'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()

/** PTYs at once (the audit had 19; fewer keep the test quick, the errors were per PTY). */
const PTYS = 6

async function spawned() {
  const provider = createSshProvider(sshOptions(sshd()))
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  const errors: PtyControllerError[] = []
  const causes: string[] = []
  controller.on('error', (error) => errors.push(error))
  controller.on('exit', (event) => causes.push(event.cause.kind))
  const pids: number[] = []
  const ids: string[] = []
  for (let index = 0; index < PTYS; index++) {
    const reply = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "trap '' HUP; while :; do sleep 0.2; done"] })
    ids.push(reply.id)
    if (reply.pid !== null && reply.pid !== undefined) pids.push(reply.pid)
  }
  /** Every PTY ended as an operator close, with no error reported, and its program is gone. */
  const endedAsOperatorCloses = async (): Promise<void> => {
    expect(causes).toEqual(ids.map(() => 'operator_close'))
    expect(errors.map((error) => error.code)).toEqual([])
    await waitFor(() => (pids.every((pid) => !isAlive(pid)) ? true : undefined), 'the programs to be gone')
  }
  return { provider, controller, ids, endedAsOperatorCloses }
}

describe('the SSH provider disposed before the controller', () => {
  it('stops under way when the provider is disposed answer true, with no listing_failed per PTY', async () => {
    const { provider, controller, ids, endedAsOperatorCloses } = await spawned()
    try {
      const stops = ids.map((id) => controller.stopAndWait(id, { timeoutMs: 10_000 }))
      await provider.dispose()
      expect(await Promise.all(stops)).toEqual(ids.map(() => true))
      await controller.dispose()
      await endedAsOperatorCloses()
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 60_000)

  it('both disposed at once: no error', async () => {
    const { provider, controller, endedAsOperatorCloses } = await spawned()
    try {
      await Promise.all([provider.dispose(), controller.dispose()])
      await endedAsOperatorCloses()
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 60_000)
})
