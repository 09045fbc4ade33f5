/**
 * A consumer's late calls after `dispose()`, with real processes: an ack from a renderer's write
 * callback (as VS Code does) and the other per-PTY calls are harmless answers, never a throw.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, waitFor } from './pty-test-support.js'

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined

/** Another test's controller and provider, disposed the same way after the file. */
const others: { provider: NodePtyProvider; controller: PtyController }[] = []

expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
  for (const other of others) {
    await other.controller.dispose()
    await other.provider.dispose()
  }
})

describe('after dispose (node-pty)', () => {
  it('late acks, writes, resizes, kills and queries from async callbacks answer harmlessly', async () => {
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const live = controller
    let output = ''
    // The renderer acks when its (async) write callback fires: after dispose, for the last chunks.
    const lateCalls: Promise<unknown>[] = []
    live.on('data', ({ ptyId, data }) => {
      output += data
      lateCalls.push(
        new Promise((resolve, reject) =>
          setTimeout(() => {
            try {
              live.acknowledgeData(ptyId, data.length)
              resolve(undefined)
            } catch (error) {
              reject(error)
            }
          }, 50),
        ),
      )
    })
    const { id, pid } = await live.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; sleep 30'] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    await live.dispose()
    expect(isDead(pid!)).toBe(true)
    await Promise.all(lateCalls)
    expect(lateCalls.length).toBeGreaterThan(0)
    expect(() => live.acknowledgeData(id, 5)).not.toThrow()
    expect(live.write(id, 'echo late\r', 'driving')).toBe(false)
    expect(live.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'controller_disposed' })
    expect(live.resize(id, 100, 30)).toBe(false)
    expect(live.kill(id)).toBe(false)
    // Disposal verified its stop: the seed's "true only if the stop was verified" (before: false).
    await expect(live.stopAndWait(id)).resolves.toBe(true)
    expect(live.hasPty(id)).toBeNull()
    await expect(live.getCwd(id)).resolves.toBeNull()
    await expect(live.getForegroundProcess(id)).resolves.toBeNull()
    await expect(live.probePtyLiveness(id)).resolves.toBeNull()
    await expect(live.spawn({})).rejects.toMatchObject({ code: 'controller_disposed' })
  })
})

/** PTYs at once: a window closing with a hundred terminals, each view's teardown calling `kill` late. */
const PTYS_AT_SCALE = 100

describe('kill from async callbacks during and after dispose (node-pty, at scale)', () => {
  it(
    `${PTYS_AT_SCALE} PTYs: true while dispose is still stopping each one (it is alive), false once dispose is over; never a throw, none left running`,
    async () => {
      const provider = createNodePtyProvider()
      // Programs that ignore the hang-up: dispose's stop of each one lasts until its force (1 s).
      const live = createPtyController({ provider, stop: { forceAfterMs: 1_000 } })
      others.push({ provider, controller: live })
      const exits: string[] = []
      live.on('exit', (event) => exits.push(event.cause.kind))
      const replies = []
      for (let start = 0; start < PTYS_AT_SCALE; start += 10) {
        const batch = Array.from({ length: Math.min(10, PTYS_AT_SCALE - start) }, () =>
          live.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; exec sleep 600"] }),
        )
        replies.push(...(await Promise.all(batch)))
      }
      // Late kills, from a timer and from a promise callback, each reading first whether its process is alive.
      const lateKill = (id: string, pid: number): { alive: boolean; answer: boolean } => {
        const alive = !isDead(pid)
        return { alive, answer: live.kill(id) }
      }
      const disposing = live.dispose()
      const during = await Promise.all(
        replies.flatMap(({ id, pid }) => [
          new Promise<{ alive: boolean; answer: boolean }>((resolve) => setTimeout(() => resolve(lateKill(id, pid!)), 0)),
          Promise.resolve().then(() => lateKill(id, pid!)),
        ]),
      )
      await disposing
      // Alive, so dispose's stop of it cannot have verified it gone: a stop is committed (before: false).
      expect(during.filter(({ alive, answer }) => alive && !answer)).toEqual([])
      expect(during.filter(({ alive }) => alive).length).toBeGreaterThan(0)
      const after = await Promise.all(replies.map(({ id, pid }) => new Promise<{ alive: boolean; answer: boolean }>((resolve) => setTimeout(() => resolve(lateKill(id, pid!)), 0))))
      expect(after).toEqual(replies.map(() => ({ alive: false, answer: false })))
      expect(exits).toEqual(replies.map(() => 'operator_close'))
      expect(await provider.listProcesses()).toEqual([])
    },
    120_000,
  )
})
