/**
 * Spawns of one session id take turns, in call order, as spawns of one slot do (docs/controller.md,
 * "Slot adoption"): a hurried host that spawns an id twice at once, or restarts it twice in a row
 * (`kill`, `spawn`, `kill`, `spawn` in one turn), gets the same answers from node-pty and the fake.
 * Until 7 Dec both spawns went to the provider at once: node-pty refused the second
 * (`pty_id_in_use`, "another spawn under that id has just started its process") where the fake
 * attached it; and the second restart failed (node-pty `pty_id_in_use`, the fake
 * `exited_during_start`) while the first was stopped by the second `kill` — nothing ran under the
 * id, though the docs say a spawn begun after a `kill` runs on.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent, type PtySpawnOptions } from 'ptykit'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createFakePtyProvider, fakeScriptMetadata } from 'ptykit/testing'
import { isDead } from '../node-pty/pty-test-support.js'

const kinds = ['node-pty', 'fake'] as const

function setup(kind: (typeof kinds)[number]) {
  const provider = kind === 'node-pty' ? createNodePtyProvider() : createFakePtyProvider()
  const agent: PtySpawnOptions =
    kind === 'node-pty' ? { file: '/bin/sh', args: ['-c', 'exec sleep 300'] } : { metadata: fakeScriptMetadata({}) }
  const controller = createPtyController({ provider })
  const exits: PtyControllerExitEvent[] = []
  const errors: string[] = []
  controller.on('exit', (event) => exits.push(event))
  controller.on('error', (error) => errors.push(error.code))
  const finish = async () => {
    await controller.dispose()
    await provider.dispose()
  }
  return { provider, controller, agent, exits, errors, finish }
}

describe.each(kinds)('spawns of one session id over %s', (kind) => {
  it('two at once: the first starts the agent, the second attaches to it', async () => {
    const { controller, agent, errors, finish } = setup(kind)
    const [first, second] = await Promise.all([controller.spawn({ sessionId: 'twin', ...agent }), controller.spawn({ sessionId: 'twin', ...agent })])
    expect([first.isReattach, second.isReattach]).toEqual([false, true])
    expect(second.incarnationId).toBe(first.incarnationId)
    expect(controller.hasPty('twin')).toBe(true)
    expect(errors).toEqual([])
    await finish()
  })

  it('restarted twice in one turn: the first restart is stopped by the second kill, the second runs on', async () => {
    const { controller, agent, exits, errors, finish } = setup(kind)
    const original = await controller.spawn({ sessionId: 'job', ...agent })
    const firstKill = controller.kill('job')
    const firstRestart = controller.spawn({ sessionId: 'job', ...agent })
    const secondKill = controller.kill('job')
    const secondRestart = controller.spawn({ sessionId: 'job', ...agent })
    expect([firstKill, secondKill]).toEqual([true, true])
    const [one, two] = await Promise.all([firstRestart, secondRestart])
    expect(new Set([original.incarnationId, one.incarnationId, two.incarnationId]).size).toBe(3)
    expect([one.isReattach, two.isReattach]).toEqual([false, false])
    const exitOf = async (incarnationId: unknown) => {
      for (let i = 0; i < 500 && !exits.some((exit) => exit.incarnationId === incarnationId); i++) await new Promise((resolve) => setTimeout(resolve, 10))
      return exits.find((exit) => exit.incarnationId === incarnationId)?.cause
    }
    expect(await exitOf(original.incarnationId)).toEqual({ kind: 'operator_close' })
    expect(await exitOf(one.incarnationId)).toEqual({ kind: 'operator_close' })
    expect(controller.hasPty('job')).toBe(true)
    expect(controller.terminal('job')?.incarnationId).toBe(two.incarnationId)
    if (kind === 'node-pty') expect([isDead(original.pid!), isDead(one.pid!), isDead(two.pid!)]).toEqual([true, true, false])
    expect(errors).toEqual([])
    await finish()
  })
})

describe('a spawn waiting for its turn behind an earlier spawn of its id', () => {
  it('gives up at its signal (nothing started) and at dispose; the earlier one lands as before', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const first = controller.spawn({ sessionId: 'slow', metadata: fakeScriptMetadata({ hang: true }) })
    const abort = new AbortController()
    const second = controller.spawn({ sessionId: 'slow', signal: abort.signal })
    const third = controller.spawn({ sessionId: 'slow' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(provider.pendingSpawnCount()).toBe(1)
    abort.abort()
    await expect(second).rejects.toMatchObject({ name: 'PtySpawnError' })
    expect(provider.pendingSpawnCount()).toBe(1)
    provider.releaseSpawn('slow')
    expect((await first).isReattach).toBe(false)
    // The third took its turn after the first: it attaches to the agent the first started.
    expect(await third).toMatchObject({ isReattach: true, incarnationId: (await first).incarnationId })
    const fourth = controller.spawn({ sessionId: 'later', metadata: fakeScriptMetadata({ hang: true }) })
    const fifth = controller.spawn({ sessionId: 'later' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const disposed = controller.dispose()
    await expect(fifth).rejects.toMatchObject({ code: 'controller_disposed' })
    provider.releaseSpawn('later')
    await expect(fourth).rejects.toMatchObject({ code: 'controller_disposed' })
    await disposed
    await provider.dispose()
    expect(provider.livePtyIds()).toEqual([])
  })
})
