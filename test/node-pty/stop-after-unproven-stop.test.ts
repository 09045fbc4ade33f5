/**
 * A `stopAndWait` of a PTY whose leader's exit is proven but whose stop is not (h243, h245):
 * DESIGN.md §4, "`stopAndWait(id, { deadlineMs })` … returns true only when the stop was
 * verified"; docs/controller.md, "stopAndWait: escalate and verify": the provider's stop covers
 * more than the leader (node-pty's covers the whole session). The leader below dies of the hang-up
 * at once; its background job ignores HUP and TERM, so only the stop's KILL ends it, seconds later.
 * Until 8 Dec a `stopAndWait` of the PTY once the leader's exit was in answered `true` at once —
 * after an earlier `stopAndWait` that answered `false`, and while another one still escalated —
 * with the job alive.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { expectNotTrueWhileAlive, hangupProofJob, jobSurvivingHangup, killIfStill, verdictOf, type ProcessIdentity } from './pty-test-support.js'

const leftovers: (ProcessIdentity | null)[] = []
const disposals: (() => Promise<void>)[] = []

afterEach(async () => {
  for (const dispose of disposals.splice(0).reverse()) await dispose().catch(() => undefined)
  for (const leftover of leftovers.splice(0)) killIfStill(leftover)
})

/**
 * A controller over a node-pty provider whose graceful stop takes its time: 2 s of hang-up grace,
 * 2 s of terminate grace, so the job outlives the leader by about 4 s unless a stop forces.
 */
function setup(forceAfterMs: number): { provider: NodePtyProvider; controller: PtyController } {
  const provider = createNodePtyProvider({ hangupGraceMs: 2_000, terminateGraceMs: 2_000 })
  const controller = createPtyController({ provider, stop: { forceAfterMs } })
  disposals.push(() => provider.dispose(), () => controller.dispose())
  return { provider, controller }
}

/** Spawn the PTY; its id, its job's pid (once the job ignores HUP and TERM), and its exit as a promise. */
async function spawnWithJob(controller: PtyController): Promise<{ id: string; job: number; leaderExited: Promise<void> }> {
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const { id } = await controller.spawn(jobSurvivingHangup())
  const leaderExited = new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
  const job = await hangupProofJob(() => output, (identity) => leftovers.push(identity))
  return { id, job, leaderExited }
}

describe('stopAndWait of a PTY whose leader exited while its stop is unproven (node-pty)', () => {
  it('after a stopAndWait that answered false: not true while the job lives; true once the stop killed it', async () => {
    const { controller } = setup(60_000)
    const { id, job, leaderExited } = await spawnWithJob(controller)
    const abort = new AbortController()
    const first = controller.stopAndWait(id, { timeoutMs: 20_000, signal: abort.signal })
    await leaderExited // the leader died of the hang-up; the provider's stop goes on for the job
    abort.abort()
    expect(await first).toBe(false)
    // "Check once, do not wait" (a deadline gone by): nothing proves the stop done.
    expectNotTrueWhileAlive(await verdictOf(controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 }), job))
    // With time: the stop runs again (its forced step kills the session) and is verified.
    expect(await verdictOf(controller.stopAndWait(id, { timeoutMs: 3_000 }), job)).toEqual({ verdict: true, jobDead: true })
    // A verified stop stays verified.
    expect(await controller.stopAndWait(id, { timeoutMs: 1 })).toBe(true)
  }, 20_000)

  it('while another stopAndWait still escalates: answers only once the stop killed the job', async () => {
    // The first stop forces 1.5 s in (its hang-up would take about 4 s); the second comes as the leader exits.
    const { controller } = setup(1_500)
    const { id, job, leaderExited } = await spawnWithJob(controller)
    const first = verdictOf(controller.stopAndWait(id, { timeoutMs: 10_000 }), job)
    await leaderExited
    const second = await verdictOf(controller.stopAndWait(id, { timeoutMs: 10_000 }), job)
    expect({ first: await first, second }).toEqual({ first: { verdict: true, jobDead: true }, second: { verdict: true, jobDead: true } })
  }, 20_000)

  it('after a kill whose stop still runs: true only once the job is dead', async () => {
    const { controller } = setup(60_000)
    const { id, job, leaderExited } = await spawnWithJob(controller)
    expect(controller.kill(id)).toBe(true)
    await leaderExited
    expectNotTrueWhileAlive(await verdictOf(controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 }), job))
    expect(await verdictOf(controller.stopAndWait(id, { timeoutMs: 3_000 }), job)).toEqual({ verdict: true, jobDead: true })
  }, 20_000)

  it('a PTY that died on its own (no stop asked) still answers true at once', async () => {
    const { controller } = setup(60_000)
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 3'] })
    await new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
    expect(await controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 })).toBe(true)
  })
})
