/**
 * A `stopAndWait` over the pty host of a PTY whose leader's exit is proven but whose stop is not
 * (h243, h245): DESIGN.md §4, "`stopAndWait(id, { deadlineMs })` … returns true only when the stop
 * was verified". The host's stop covers the PTY's whole session; the leader below dies of the
 * hang-up at once, its background job ignores HUP and TERM and dies of the host's KILL about a
 * second later. The host's listing omits an ended PTY, which a verification reads as proof of
 * absence: until 8 Dec a `stopAndWait` once the leader's exit was in answered `true` at once —
 * after one that answered `false`, and while another still escalated — with the job alive.
 */
import { describe, expect, it } from 'vitest'
import type { PtyController } from 'ptykit/controller'
import { expectNotTrueWhileAlive, hangupProofJob, jobSurvivingHangup, killIfStill, verdictOf } from '../node-pty/pty-test-support.js'
import { controllerOnOwnHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

async function spawnWithJob(controller: PtyController): Promise<{ id: string; job: number; leaderExited: Promise<void> }> {
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const { id } = await controller.spawn(jobSurvivingHangup())
  const leaderExited = new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
  const job = await hangupProofJob(() => output, (identity) => cleanups.push(async () => killIfStill(identity)))
  return { id, job, leaderExited }
}

describe('stopAndWait over the pty host of a PTY whose leader exited while its stop is unproven', () => {
  it('after a stopAndWait that answered false: not true from the exit; true once the stop killed the job', async () => {
    const { controller } = controllerOnOwnHost(cleanups)
    const { id, job, leaderExited } = await spawnWithJob(controller)
    const abort = new AbortController()
    const first = controller.stopAndWait(id, { timeoutMs: 20_000, signal: abort.signal })
    await leaderExited
    abort.abort()
    expect(await first).toBe(false)
    expectNotTrueWhileAlive(await verdictOf(controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 }), job))
    expect(await verdictOf(controller.stopAndWait(id, { timeoutMs: 5_000 }), job)).toEqual({ verdict: true, jobDead: true })
    expect(await controller.stopAndWait(id, { timeoutMs: 1 })).toBe(true)
  }, 30_000)

  it('while another stopAndWait still escalates: answers only once the job is dead', async () => {
    const { controller } = controllerOnOwnHost(cleanups)
    const { id, job, leaderExited } = await spawnWithJob(controller)
    const first = verdictOf(controller.stopAndWait(id, { timeoutMs: 10_000 }), job)
    await leaderExited
    const second = await verdictOf(controller.stopAndWait(id, { timeoutMs: 10_000 }), job)
    expect({ first: await first, second }).toEqual({ first: { verdict: true, jobDead: true }, second: { verdict: true, jobDead: true } })
  }, 30_000)
})
