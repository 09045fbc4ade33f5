/**
 * PTYs of a dropped connection are looked up again once a connection to the same machine and
 * boot is open: a program that ended on the hang-up is reported gone (its status went down with
 * the link: `unknown/cause_unreported`), one that outlived it answers alive and can be stopped.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const HUP_PROOF = ['-c', "trap '' HUP; while :; do sleep 0.2; done"]

describe('SSH provider: PTYs of a dropped connection, after a reconnect', () => {
  it('reports the programs the hang-up ended as gone, answers alive for the one that outlived it, and stops that one for real', async () => {
    const provider: SshProvider = createSshProvider(sshOptions(sshd()))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    cleanups.push(() => provider.dispose(), () => controller.dispose())
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const ended = await Promise.all([1, 2].map(() => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['60'] })))
    const survivor = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: HUP_PROOF })
    for (const { pid } of [...ended, survivor]) cleanups.push(async () => void (isAlive(pid!) && process.kill(pid!, 'SIGKILL')))
    await waitFor(async () => ((await controller.probePtyLiveness(survivor.id)) === true ? true : undefined), 'the survivor to run')

    sshd().killNewestConnection()
    await waitFor(() => (ended.every(({ pid }) => !isAlive(pid!)) ? true : undefined), 'the hang-up to end the sleeps')
    // The provider reconnects by itself and looks again: the ended ones are proven gone.
    const endedExits = await waitFor(
      () => (ended.every(({ id }) => exits.some((exit) => exit.ptyId === id)) ? exits.filter((exit) => ended.some(({ id }) => id === exit.ptyId)) : undefined),
      'the exits of the programs the hang-up ended',
      15_000,
    )
    expect(endedExits.map((exit) => exit.cause)).toEqual([
      { kind: 'unknown', reason: 'cause_unreported' },
      { kind: 'unknown', reason: 'cause_unreported' },
    ])
    expect(endedExits.map((exit) => exit.incarnationId).sort()).toEqual(ended.map((reply) => reply.incarnationId).sort())
    for (const { id } of ended) expect(provider.hasPty(id)).toBe(false)

    // The survivor lives on without its terminal: alive, not writable, no exit.
    expect(isAlive(survivor.pid!)).toBe(true)
    expect(exits.some((exit) => exit.ptyId === survivor.id)).toBe(false)
    expect(await controller.probePtyLiveness(survivor.id)).toBe(true)
    expect(controller.writeWithSettlement(survivor.id, 'x', 'driving')).toMatchObject({ kind: 'unverifiable', reason: 'transport_lost' })
    // A stop reaches it through the new connection, and is verified.
    expect(await controller.stopAndWait(survivor.id)).toBe(true)
    expect(isAlive(survivor.pid!)).toBe(false)
    expect(exits.filter((exit) => exit.ptyId === survivor.id).map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
  }, 60_000)

  it('dispose stops a program that outlived its dropped connection, from the new one: nothing is left running', async () => {
    const provider: SshProvider = createSshProvider(sshOptions(sshd()))
    cleanups.push(() => provider.dispose())
    const survivor = await provider.spawn({ file: '/bin/sh', args: HUP_PROOF })
    cleanups.push(async () => void (isAlive(survivor.pid!) && process.kill(survivor.pid!, 'SIGKILL')))
    await waitFor(async () => ((await provider.probeLiveness(survivor.id)) === true ? true : undefined), 'the program to run')
    sshd().killNewestConnection()
    await waitFor(() => (provider.hasPty(survivor.id) === null ? true : undefined), 'the PTY to be lost')
    await waitFor(async () => ((await provider.probeLiveness(survivor.id)) === true ? true : undefined), 'a new connection to find it alive', 15_000)
    await provider.dispose()
    expect(isAlive(survivor.pid!)).toBe(false)
  }, 60_000)
})
