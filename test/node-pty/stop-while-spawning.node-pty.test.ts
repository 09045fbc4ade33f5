/**
 * An orchestrator stops a job whose spawn is still in flight (`stopAndWait(id)` in the same turn
 * as `spawn({ sessionId: id })`), over real PTYs. The node-pty provider starts the process only
 * after its asynchronous preparation, so at the call no host knows the id. Before the fix the
 * stop answered `true` at once and the spawn then published a live PTY that ran on, no exit ever
 * coming (a scale run: every such job of 40 left running). See test/controller/stop-while-spawning.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import type { PtyControllerExitEvent } from 'ptykit/controller'
import type { PtySpawnReply } from 'ptykit/contracts'
import { createInMemorySlotStore } from 'ptykit/spawn'
import { expectNoChildLeftBehind, isDead } from './pty-test-support.js'

const started: { provider: NodePtyProvider; controller: PtyController }[] = []
expectNoChildLeftBehind(async () => {
  for (const { provider, controller } of started) {
    await controller.dispose()
    await provider.dispose()
  }
})

function start(): { provider: NodePtyProvider; controller: PtyController } {
  const provider = createNodePtyProvider()
  const pair = { provider, controller: createPtyController({ provider }) }
  started.push(pair)
  return pair
}

/** Every exit `controller` publishes from now on, and a promise of the first one. */
function recordExits(controller: PtyController): { exits: PtyControllerExitEvent[]; exited: Promise<void> } {
  const exits: PtyControllerExitEvent[] = []
  const exited = new Promise<void>((resolve) =>
    controller.on('exit', (event) => {
      exits.push(event)
      resolve()
    }),
  )
  return { exits, exited }
}

describe('node-pty: stopAndWait of a job whose spawn is in flight', () => {
  it('answers true only once the process it started is gone, and its exit is an operator close', async () => {
    const { controller } = start()
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const spawned = controller.spawn({ sessionId: 'job', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    const stopped = controller.stopAndWait('job', { timeoutMs: 10_000 })
    const { pid, incarnationId } = await spawned
    expect(await stopped).toBe(true)
    expect(isDead(pid!)).toBe(true)
    expect(exits.map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['job', incarnationId, { kind: 'operator_close' }]])
    expect(controller.hasPty('job')).toBe(false)
  })
})

describe('node-pty: kill of a job whose spawn is in flight', () => {
  it('answers true, and stops the process once the spawn lands: gone, its exit an operator close of that incarnation', async () => {
    const { controller } = start()
    const { exits, exited } = recordExits(controller)
    // A tab closed (or a job's timeout fired) while its terminal is still starting.
    const spawned = controller.spawn({ sessionId: 'job-killed', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    expect(controller.kill('job-killed')).toBe(true)
    const { pid, incarnationId } = await spawned
    await exited
    expect(isDead(pid!)).toBe(true)
    expect(exits.map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['job-killed', incarnationId, { kind: 'operator_close' }]])
    expect(controller.hasPty('job-killed')).toBe(false)
    expect(await controller.listProcesses('local')).toEqual([])
  })

  it('a spawn of the same id after it lands is not stopped by that kill', async () => {
    const { controller } = start()
    const exited = new Promise<PtyControllerExitEvent>((resolve) => controller.once('exit', resolve))
    const first = controller.spawn({ sessionId: 'job-again', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    expect(controller.kill('job-again')).toBe(true)
    const a = await first
    expect(await exited).toMatchObject({ incarnationId: a.incarnationId, cause: { kind: 'operator_close' } })
    const b = await controller.spawn({ sessionId: 'job-again', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    expect(b.incarnationId).not.toBe(a.incarnationId)
    expect(isDead(b.pid!)).toBe(false)
    expect(controller.hasPty('job-again')).toBe(true)
    expect(await controller.stopAndWait('job-again', { timeoutMs: 10_000 })).toBe(true)
  })
})

describe('node-pty: kill of a job whose spawn is queued, or whose attach is in flight', () => {
  it("a spawn queued behind its slot's turn: kill answers true, and once it lands its process is gone", async () => {
    const { controller } = start()
    const { exits, exited } = recordExits(controller)
    // Another caller holds the pane's turn (it is deciding whether to re-attach); the tab closes meanwhile.
    const release = controller.claimSlotCreate({ key: 'pane' })
    const spawned = controller.spawn({ sessionId: 'tab', slot: { key: 'pane' }, file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    expect(controller.kill('tab')).toBe(true)
    release()
    const { pid, incarnationId } = await spawned
    await exited
    expect(isDead(pid!)).toBe(true)
    expect(exits.map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['tab', incarnationId, { kind: 'operator_close' }]])
    expect(await controller.listProcesses('local')).toEqual([])
  })

  it('a restart queued behind the stop of the previous process: a kill then stops the new process too', async () => {
    const { controller } = start()
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    // A shell that takes its time to die on the hang-up, so the restart waits for it.
    const old = await controller.spawn({ sessionId: 'job-restarted', file: '/bin/sh', args: ['-c', "trap 'sleep 0.3; exit 0' HUP; while :; do sleep 1; done"] })
    expect(controller.kill('job-restarted')).toBe(true)
    const restarted = controller.spawn({ sessionId: 'job-restarted', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    // The job is cancelled while its restart waits.
    expect(controller.kill('job-restarted')).toBe(true)
    const { pid, incarnationId } = await restarted
    // Its stop comes by itself (no later call asks for it): before, the new process ran on.
    const deadline = Date.now() + 10_000
    while (exits.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(isDead(old.pid!)).toBe(true)
    expect(isDead(pid!)).toBe(true)
    expect(exits.map((exit) => exit.incarnationId)).toEqual([old.incarnationId, incarnationId])
    expect(exits.every((exit) => exit.cause.kind === 'operator_close')).toBe(true)
    expect(await controller.listProcesses('local')).toEqual([])
  })
})

/** PTYs at once in the scale tests below: a burst of cancelled jobs, not one. */
const PTYS_AT_SCALE = 100

/** A scale test's own time limit: 100 forks on a 2-core machine shared with other runs. Counts are asserted, never time. */
const SCALE_TEST_TIMEOUT_MS = 120_000

/** Wait (up to `timeoutMs`) until `exits` holds `count` exits; whatever came is then asserted. */
async function untilExits(exits: readonly PtyControllerExitEvent[], count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (exits.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe('node-pty: stopAndWait that gives up while the spawn is still queued, at scale', () => {
  it(
    `${PTYS_AT_SCALE} jobs queued behind their slots' turns, each stopAndWait past its deadline: false, and every process is stopped as it lands`,
    async () => {
      const { controller } = start()
      const exits: PtyControllerExitEvent[] = []
      controller.on('exit', (event) => exits.push(event))
      const ids = Array.from({ length: PTYS_AT_SCALE }, (_, index) => `queued-${index}`)
      // Each pane's turn is held (another caller deciding whether to re-attach) while its job is cancelled.
      const claims = ids.map((id) => controller.claimSlotCreate({ key: id }))
      const spawns = ids.map((id) => controller.spawn({ sessionId: id, slot: { key: id }, file: '/bin/sh', args: ['-c', 'exec sleep 600'] }))
      const answers = await Promise.all(ids.map((id) => controller.stopAndWait(id, { timeoutMs: 50 })))
      expect(answers.filter((answer) => answer)).toEqual([]) // none landed in time: not verified
      // The turns come, ten at a time (a fork blocks the event loop).
      const replies: Awaited<(typeof spawns)[number]>[] = []
      for (let start = 0; start < ids.length; start += 10) {
        for (const release of claims.slice(start, start + 10)) release()
        replies.push(...(await Promise.all(spawns.slice(start, start + 10))))
      }
      await untilExits(exits, PTYS_AT_SCALE, 60_000)
      // Before, every one of them ran on after its `false`: no exit, all alive.
      expect(replies.filter((reply) => !isDead(reply.pid!)).map((reply) => reply.id)).toEqual([])
      expect(exits.length).toBe(PTYS_AT_SCALE)
      expect(new Set(exits.map((exit) => exit.incarnationId))).toEqual(new Set(replies.map((reply) => reply.incarnationId)))
      expect(exits.filter((exit) => exit.cause.kind !== 'operator_close')).toEqual([])
      expect(await controller.listProcesses('local')).toEqual([])
    },
    SCALE_TEST_TIMEOUT_MS,
  )
})

describe('node-pty: kill of slot owners whose adoptions wait for their turns, at scale', () => {
  it(
    `${PTYS_AT_SCALE} panes owned by an earlier window: each kill answers true, and every owner the adoptions attach is stopped`,
    async () => {
      const { provider } = start()
      const store = createInMemorySlotStore()
      // The panes' owners, created by an earlier window of the app over the same host and store.
      const creator = createPtyController({ provider, store })
      const owners: PtySpawnReply[] = []
      for (let start = 0; start < PTYS_AT_SCALE; start += 10) {
        const batch = Array.from({ length: Math.min(10, PTYS_AT_SCALE - start) }, (_, offset) =>
          creator.spawn({ slot: { key: `pane-${start + offset}` }, file: '/bin/sh', args: ['-c', 'exec sleep 600'] }),
        )
        owners.push(...(await Promise.all(batch)))
      }
      await creator.dispose({ stopPtys: false })
      const controller = createPtyController({ provider, store })
      started.push({ provider, controller })
      const exits: PtyControllerExitEvent[] = []
      controller.on('exit', (event) => exits.push(event))
      // Each pane's turn is held (another caller is restoring it) while its tab is closed.
      const claims = owners.map((_, index) => controller.claimSlotCreate({ key: `pane-${index}` }))
      const adoptions = owners.map((_, index) => controller.adoptSlot({ slot: { key: `pane-${index}` } }))
      // Before: false for every one (not tracked, nothing coming), and the adoptions then attached them, running on.
      expect(owners.filter((owner) => !controller.kill(owner.id)).map((owner) => owner.id)).toEqual([])
      for (const release of claims) release()
      await Promise.all(adoptions)
      await untilExits(exits, PTYS_AT_SCALE, 60_000)
      expect(owners.filter((owner) => !isDead(owner.pid!)).map((owner) => owner.id)).toEqual([])
      expect(exits.length).toBe(PTYS_AT_SCALE)
      expect(exits.filter((exit) => exit.cause.kind !== 'operator_close')).toEqual([])
      expect(await controller.listProcesses('local')).toEqual([])
    },
    SCALE_TEST_TIMEOUT_MS,
  )
})
