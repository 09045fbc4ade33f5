/**
 * PTYs of a dropped connection are looked up again once a connection to the same machine and
 * boot is open: a program that ended on the hang-up is reported gone (its status went down with
 * the link: `unknown/cause_unreported`), one that outlived it answers alive and can be stopped.
 * A program whose end the server reported before the drop exits with that status; either way the
 * exit comes after every byte the channel received, a paused reader's too.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyDataEvent, PtyExitEvent } from 'ptykit/contracts'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { killIfStill, processIdentity, waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const HUP_PROOF = ['-c', "trap '' HUP; while :; do sleep 0.2; done"]
/** What `seq 1 3000` prints on a terminal. */
const SEQ_3000 = Array.from({ length: 3000 }, (_, i) => String(i + 1)).join('\r\n') + '\r\n'
/** The output among a provider's events, in order. */
const textOf = (events: (PtyDataEvent | PtyExitEvent)[]): string => events.map((event) => ('data' in event ? event.data : '')).join('')

/** A controller over an SSH provider to the fixture (both disposed after the test), and the exits it publishes. */
function controllerOverSsh(): { provider: SshProvider; controller: ReturnType<typeof createPtyController>; exits: PtyControllerExitEvent[] } {
  const provider: SshProvider = createSshProvider(sshOptions(sshd()))
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  cleanups.push(() => provider.dispose(), () => controller.dispose())
  const exits: PtyControllerExitEvent[] = []
  controller.on('exit', (event) => exits.push(event))
  return { provider, controller, exits }
}

describe('SSH provider: PTYs of a dropped connection, after a reconnect', () => {
  it('reports the programs the hang-up ended as gone, answers alive for the one that outlived it, and stops that one for real', async () => {
    const { provider, controller, exits } = controllerOverSsh()
    const ended = await Promise.all([1, 2].map(() => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['60'] })))
    const survivor = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: HUP_PROOF })
    for (const { pid } of [...ended, survivor]) {
      const started = processIdentity(pid!)
      cleanups.push(async () => killIfStill(started))
    }
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
    expect(controller.writeWithSettlement(survivor.id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    // A stop reaches it through the new connection, and is verified.
    expect(await controller.stopAndWait(survivor.id)).toBe(true)
    expect(isAlive(survivor.pid!)).toBe(false)
    expect(exits.filter((exit) => exit.ptyId === survivor.id).map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
  }, 60_000)

  // Found by audit (helper-120): a lost PTY's stop signalled only its leader's process group and
  // ended with the leader — a background job in a group of its own (the PTY's session) ran on after
  // stopAndWait said true. A stop on a live connection sweeps the whole session (stop-sweep.test.ts).
  it('a stop of a lost PTY sweeps its whole session: a background job in a group of its own is gone when it says true', async () => {
    const { controller, exits } = controllerOverSsh()
    const tag = `${process.pid}-lost-session`
    cleanups.push(async () => killTagged(tag))
    // Ignores the hang-up; its background job (job control on: a group of its own) too, as `sleep`
    // inherits the ignored HUP.
    const { id } = await controller.spawn({
      hostId: 'ssh:loopback',
      file: '/bin/sh',
      env: { PTYKIT_SWEEP_TAG: tag },
      args: ['-c', "trap '' HUP; set -m; sleep 1000 & set +m; while :; do sleep 0.2; done"],
    })
    const job = await waitFor(() => taggedProcesses(tag).find((p) => p.comm === 'sleep' && p.pgrp !== p.session), 'the background job', 20_000)
    sshd().killNewestConnection()
    await waitFor(() => (controller.hasPty(id) === null ? true : undefined), 'the PTY to be lost')
    await waitFor(async () => ((await controller.probePtyLiveness(id)) === true ? true : undefined), 'a new connection to find it alive', 15_000)
    expect(taggedProcesses(tag).some((p) => p.pid === job.pid)).toBe(true)

    expect(await controller.stopAndWait(id)).toBe(true)
    expect(taggedProcesses(tag)).toEqual([])
    expect(exits.filter((exit) => exit.ptyId === id).map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
  }, 60_000)

  it('stops 60 programs that outlived their dropped connections at once, each verified, nothing left running', async () => {
    const { provider, controller, exits } = controllerOverSsh()
    const survivors = await Promise.all(Array.from({ length: 60 }, () => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: HUP_PROOF })))
    for (const { pid } of survivors) {
      const started = processIdentity(pid!)
      cleanups.push(async () => killIfStill(started))
    }
    for (let count = sshd().connections(); count > 0; count--) sshd().killNewestConnection()
    await waitFor(() => (survivors.every(({ id }) => provider.hasPty(id) !== true) ? true : undefined), 'every PTY to be lost')
    const alive = async (): Promise<boolean[]> => Promise.all(survivors.map(({ id }) => provider.probeLiveness(id).then((answer) => answer === true)))
    await waitFor(async () => ((await alive()).every(Boolean) ? true : undefined), 'a new connection to find them all alive', 15_000)

    // Before: each stop ran its probes and signals one script at a time through the connection's
    // side shell (~33 ms each, ~14 per stop): 60 stops missed a 15 s deadline and left them running.
    const verdicts = await Promise.all(survivors.map(({ id }) => controller.stopAndWait(id, { timeoutMs: 15_000 })))
    expect(verdicts.filter((verdict) => !verdict)).toEqual([])
    expect(survivors.filter(({ pid }) => isAlive(pid!))).toEqual([])
    // Each ends as an operator close. (Idle, all 60 within ~1.5 s; with the whole suite on two
    // cores a stop can outlast the controller's 10 s stop window, which publishes the honest
    // `stop_unverified` first and the real end after it — so the last exit of each is asserted.)
    const lastCause = (id: string): unknown => exits.filter((exit) => exit.ptyId === id).at(-1)?.cause
    expect(survivors.map(({ id }) => lastCause(id))).toEqual(survivors.map(() => ({ kind: 'operator_close' })))
  }, 90_000)

  it('dispose stops a program that outlived its dropped connection, from the new one: nothing is left running', async () => {
    const provider: SshProvider = createSshProvider(sshOptions(sshd()))
    cleanups.push(() => provider.dispose())
    const survivor = await provider.spawn({ file: '/bin/sh', args: HUP_PROOF })
    const survivorStarted = processIdentity(survivor.pid!)
    cleanups.push(async () => killIfStill(survivorStarted))
    await waitFor(async () => ((await provider.probeLiveness(survivor.id)) === true ? true : undefined), 'the program to run')
    sshd().killNewestConnection()
    await waitFor(() => (provider.hasPty(survivor.id) === null ? true : undefined), 'the PTY to be lost')
    await waitFor(async () => ((await provider.probeLiveness(survivor.id)) === true ? true : undefined), 'a new connection to find it alive', 15_000)
    await provider.dispose()
    expect(isAlive(survivor.pid!)).toBe(false)
  }, 60_000)

  it('a paused PTY of a dropped connection proven gone after a reconnect: its held output, then its exit', async () => {
    const provider: SshProvider = createSshProvider(sshOptions(sshd()))
    cleanups.push(() => provider.dispose())
    const events: (PtyDataEvent | PtyExitEvent)[] = []
    provider.onData((event) => events.push(event))
    provider.onExit((event) => events.push(event))
    const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3; seq 1 3000; exec sleep 60'] })
    const replyStarted = processIdentity(reply.pid!)
    cleanups.push(async () => killIfStill(replyStarted))
    provider.pauseProducer(reply.id)
    // The lines reached ssh2's buffer: the server's window shrank by them (no exit: the program sleeps).
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(events).toEqual([])

    sshd().killNewestConnection()
    // The hang-up ends the sleep; a reconnect proves it gone, and the channel reads on by itself
    // (the consumer never resumes): its held lines come first, then the exit.
    await waitFor(() => (isAlive(reply.pid!) ? undefined : true), 'the hang-up to end the program')
    await waitFor(async () => ((await provider.probeLiveness(reply.id)) === false ? true : undefined), 'a new connection to prove it gone', 15_000)
    // Proven gone, its exit on its way (or published): dead to every question, not unverifiable.
    expect(provider.hasPty(reply.id)).toBe(false)
    expect(await provider.spawn({ sessionId: reply.id, attachOnly: true }).catch((error: { code?: string }) => error.code)).toBe('pty_absent')
    const exit = await waitFor(() => events.find((event): event is PtyExitEvent => !('data' in event)), 'the exit', 15_000)
    expect(exit.cause).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    // Before: the exit came at the proof, and the lines after it — output after the exit.
    expect(events.at(-1)).toBe(exit)
    expect(textOf(events).endsWith(SEQ_3000)).toBe(true)
  }, 60_000)
})
