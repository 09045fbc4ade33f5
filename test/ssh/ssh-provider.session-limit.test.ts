/**
 * A stock OpenSSH server allows 10 sessions per connection (`MaxSessions`), and the provider's side
 * shell takes one of them: on one connection, the tenth PTY is refused. The provider opens another
 * connection when the server refuses a session on each open one, and closes an extra connection
 * once its last PTY has ended. Here the server allows 4 sessions per connection (3 PTYs and the side
 * shell), so a few PTYs exercise what hundreds would on a stock server.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createSshProvider, isSshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const SESSIONS_PER_CONNECTION = 4
const sshd = useSshd({ maxSessions: SESSIONS_PER_CONNECTION })

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function controllerOverSsh(): { controller: ReturnType<typeof createPtyController>; exits: PtyControllerExitEvent[]; output: Map<string, string> } {
  const provider = createSshProvider(sshOptions(sshd()))
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  cleanups.push(async () => {
    await controller.dispose()
    await provider.dispose()
  })
  const exits: PtyControllerExitEvent[] = []
  const output = new Map<string, string>()
  controller.on('data', ({ ptyId, data }) => {
    output.set(ptyId, (output.get(ptyId) ?? '') + data)
    controller.acknowledgeData(ptyId, data.length)
  })
  controller.on('exit', (event) => exits.push(event))
  return { controller, exits, output }
}

describe('SSH provider on a server that limits sessions per connection', () => {
  it('runs 16 PTYs at once over as many connections as it needs, each exact, and closes the extra connections after', async () => {
    const { controller, exits, output } = controllerOverSsh()
    const count = 16
    // Each waits for a line of input, so all of them are live at once.
    const replies = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        controller.spawn({
          hostId: 'ssh:loopback',
          file: '/bin/sh',
          args: ['-c', 'echo "pty $0 up"; read line; exit $0', String(i)],
        }),
      ),
    )
    expect(new Set(replies.map((reply) => reply.id)).size).toBe(count)
    await waitFor(() => (replies.every((reply, i) => (output.get(reply.id) ?? '').includes(`pty ${i} up`)) ? true : undefined), 'every PTY to print its line', 20_000)
    expect((await controller.listProcesses('ssh:loopback')).length).toBe(count)
    // 3 PTYs per connection (the side shell takes the fourth session): at least 6 connections.
    expect(sshd().connections()).toBeGreaterThanOrEqual(Math.ceil(count / (SESSIONS_PER_CONNECTION - 1)))

    for (const reply of replies) controller.write(reply.id, '\r', 'driving')
    await waitFor(() => (exits.length === count ? true : undefined), 'every exit', 20_000)
    for (const [i, reply] of replies.entries()) {
      expect(exits.find((exit) => exit.ptyId === reply.id)?.cause, `pty ${i}`).toEqual({ kind: 'exited', exitCode: i })
    }
    // The first connection stays (the provider's own, with its side shell); the others are closed.
    await waitFor(() => (sshd().connections() === 1 ? true : undefined), 'the extra connections to close', 10_000)
  }, 60_000)

  it('stops 10 PTYs spread over several connections, each verified as an operator close', async () => {
    const { controller, exits } = controllerOverSsh()
    const replies = await Promise.all(Array.from({ length: 10 }, () => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['600'] })))
    expect(sshd().connections()).toBeGreaterThanOrEqual(4)
    expect(await Promise.all(replies.map((reply) => controller.stopAndWait(reply.id)))).toEqual(Array(10).fill(true))
    expect(exits.map((exit) => exit.cause)).toEqual(Array(10).fill({ kind: 'operator_close' }))
  }, 60_000)

  // Found by review (helper-147): the extra connections a disposal's stops leave idle were closed
  // without being waited for, so `dispose()` resolved with their sockets still open.
  it('dispose() of PTYs spread over several connections resolves with every connection closed', async () => {
    const tcpSockets = (): number => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length
    const before = tcpSockets()
    const provider = createSshProvider(sshOptions(sshd()))
    const replies = await Promise.all(Array.from({ length: 10 }, () => provider.spawn({ file: '/bin/sleep', args: ['600'] })))
    expect(new Set(replies.map((reply) => reply.id)).size).toBe(10)
    expect(sshd().connections()).toBeGreaterThanOrEqual(4)
    await provider.dispose()
    expect(tcpSockets()).toBe(before)
  }, 60_000)

  // Found by audit (helper-120): the keeper closed an extra connection as soon as its last PTY
  // channel closed — at the leader's exit, in the middle of the stop — and the stop read the closed
  // connection as "the remote cannot show more": `stopAndWait` said true while the background job
  // ran on. On the first connection (kept open) the same stop swept it.
  it('a stop of the only PTY on an extra connection sweeps its session as on the first one before the connection closes', async () => {
    const { controller, output } = controllerOverSsh()
    const tag = `${process.pid}-extra-connection`
    cleanups.push(async () => killTagged(tag))
    // A background job in a process group of its own (job control on), in the PTY's session; the
    // shell dies of the hang-up, the job (which ignores nothing) is left to the sweep.
    const ids: string[] = []
    for (let i = 0; i < SESSIONS_PER_CONNECTION; i++) {
      const { id } = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', env: { PTYKIT_SWEEP_TAG: `${tag}-${i}` }, args: ['-c', 'set -m; sleep 1000 & echo up; read line'] })
      ids.push(id)
    }
    await waitFor(() => (ids.every((id) => (output.get(id) ?? '').includes('up')) ? true : undefined), 'every PTY to start its job', 20_000)
    // 3 PTYs on the first connection, the fourth alone on an extra one.
    expect(sshd().connections()).toBe(2)
    const jobs = (i: number): string[] => taggedProcesses(`${tag}-${i}`).map((p) => p.comm).filter((comm) => comm === 'sleep')
    for (let i = 0; i < ids.length; i++) cleanups.push(async () => killTagged(`${tag}-${i}`))
    expect(jobs(0)).toEqual(['sleep'])
    expect(jobs(3)).toEqual(['sleep'])

    expect(await controller.stopAndWait(ids[0]!)).toBe(true)
    expect(jobs(0)).toEqual([])
    expect(await controller.stopAndWait(ids[3]!)).toBe(true)
    expect(jobs(3)).toEqual([])
    // Its stop settled: the extra connection, with no PTY left, is closed.
    await waitFor(() => (sshd().connections() === 1 ? true : undefined), 'the extra connection to close', 10_000)
  }, 60_000)
})

describe('SSH provider on a server that limits sessions per connection, when one connection drops', () => {
  it('makes only that connection\'s PTYs unverifiable: the others run on, are listed, and exit exactly', async () => {
    const provider = createSshProvider(sshOptions(sshd(), undefined, { reconnectMaxAttempts: 0 }))
    cleanups.push(() => provider.dispose())
    const exits = new Map<string, unknown>()
    const output = new Map<string, string>()
    provider.onExit((event) => exits.set(event.id, event))
    provider.onData((event) => output.set(event.id, (output.get(event.id) ?? '') + event.data))
    // 3 PTYs per connection: two connections, the second holding the last three.
    const replies = []
    for (let i = 0; i < 6; i++) replies.push(await provider.spawn({ file: '/bin/sh', args: ['-c', 'echo up; read line; exit 5'] }))
    const ids = replies.map((reply) => reply.id)
    await waitFor(() => (ids.every((id) => (output.get(id) ?? '').includes('up')) ? true : undefined), 'every PTY to start', 15_000)
    expect(sshd().connections()).toBe(2)

    sshd().killNewestConnection()
    await waitFor(() => (ids.filter((id) => provider.hasPty(id) === null).length === 3 ? true : undefined), 'the dropped connection\'s PTYs to turn unverifiable', 15_000)
    const live = ids.filter((id) => provider.hasPty(id) === true)
    expect(live).toEqual(ids.slice(0, 3))
    expect((await provider.listProcesses()).map((row) => row.id).sort()).toEqual([...live].sort())
    for (const id of live) await provider.write(id, '\r')
    await waitFor(() => (live.every((id) => exits.has(id)) ? true : undefined), 'the live PTYs to exit', 15_000)
    for (const id of live) expect(exits.get(id)).toMatchObject({ code: 5, cause: { kind: 'exited' } })
    // No exit for a PTY whose fate is unknown.
    for (const id of ids.slice(3)) expect(exits.has(id)).toBe(false)
  }, 60_000)
})

describe('SSH provider on a server that allows no session at all', () => {
  const noSessions = useSshd({ maxSessions: 0 })

  it('refuses the spawn with a typed error naming the limit, and opens no connection after connection', async () => {
    const provider = createSshProvider(sshOptions(noSessions()))
    cleanups.push(() => provider.dispose())
    const error = await provider.spawn({ file: '/bin/true' }).catch((caught: unknown) => caught)
    expect(isSshProviderError(error) && error.code).toBe('spawn_failed')
    expect((error as Error).message).toMatch(/MaxSessions/)
    expect(noSessions().connections()).toBe(1)
  }, 30_000)
})
