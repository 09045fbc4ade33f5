/**
 * The background reconnects after a drop are bounded (`reconnectMaxAttempts`). A server that comes
 * back after they gave up is still asked — on demand — when the host asks about a lost PTY or stops
 * it: found by audit (helper-157), a probe answered `null` and `stopAndWait` said false within
 * milliseconds, without trying to connect, while the HUP-proof programs ran on the reachable
 * server after `controller.dispose()` and `provider.dispose()`; `provider.dispose()` opens one too.
 * Each test has its own sshd, restarted mid-test (same port and keys), and kills it after.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killTagged, sshOptions, taggedProcesses } from './ssh-test-support.js'
import { startSshd, type SshdFixture } from './sshd-fixture.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const HUP_PROOF = ['-c', "trap '' HUP; while :; do sleep 0.2; done"]

/**
 * An sshd, a controller over a provider that tries one background reconnect, and `count` HUP-proof
 * PTYs tagged `tag`; then the server is killed, its one reconnect fails, and it listens again.
 */
async function lostAfterRetriesGaveUp(tag: string, count: number) {
  const sshd: SshdFixture = await startSshd()
  cleanups.push(() => sshd.stop())
  cleanups.push(() => killTagged(tag))
  const provider = createSshProvider(sshOptions(sshd, undefined, { reconnectMaxAttempts: 1 }))
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  controller.on('error', () => undefined)
  cleanups.push(async () => {
    await controller.dispose()
    await provider.dispose()
  })
  const exits: PtyControllerExitEvent[] = []
  controller.on('exit', (event) => exits.push(event))
  const replies: Array<Awaited<ReturnType<typeof controller.spawn>>> = []
  for (let i = 0; i < count; i++) replies.push(await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: HUP_PROOF, env: { PTYKIT_SWEEP_TAG: tag } }))
  await waitFor(() => (taggedProcesses(tag).filter((p) => p.comm === 'sh').length === count ? true : undefined), 'every PTY to run')

  await sshd.killAll()
  await waitFor(() => (replies.every(({ id }) => controller.hasPty(id) === null) ? true : undefined), 'the PTYs to turn unverifiable')
  // The one background reconnect (after 250 ms) finds no server and gives up.
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  await sshd.restart()
  expect(sshd.connections()).toBe(0)
  // The programs outlived the drop on the server, which is back.
  expect(taggedProcesses(tag).filter((p) => p.comm === 'sh')).toHaveLength(count)
  return { sshd, provider, controller, exits, replies }
}

describe('SSH provider: lost PTYs once the background reconnects gave up and the server is back', () => {
  it('a liveness probe connects and finds each program alive', async () => {
    const tag = `${process.pid}-probe-after-retries`
    const { sshd, controller, replies } = await lostAfterRetriesGaveUp(tag, 3)
    expect(await Promise.all(replies.map(({ id }) => controller.probePtyLiveness(id)))).toEqual([true, true, true])
    expect(sshd.connections()).toBe(1)
  }, 60_000)

  it('stopAndWait connects and stops each program for real: true, operator close, nothing left on the remote', async () => {
    const tag = `${process.pid}-stop-after-retries`
    const { controller, exits, replies } = await lostAfterRetriesGaveUp(tag, 3)
    expect(await Promise.all(replies.map(({ id }) => controller.stopAndWait(id, { deadlineMs: Date.now() + 15_000 })))).toEqual([true, true, true])
    expect(exits.map((exit) => exit.cause)).toEqual(Array(3).fill({ kind: 'operator_close' }))
    expect(taggedProcesses(tag)).toEqual([])
  }, 60_000)

  it('provider.dispose() alone connects and stops each program: nothing left on the remote', async () => {
    const tag = `${process.pid}-dispose-after-retries`
    const { sshd, provider } = await lostAfterRetriesGaveUp(tag, 3)
    await provider.dispose()
    expect(taggedProcesses(tag)).toEqual([])
    // Its connection is closed again.
    await waitFor(() => (sshd.connections() === 0 ? true : undefined), 'the disposal\'s connection to close')
  }, 60_000)
})
