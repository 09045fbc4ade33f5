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
import { isDead, killIfStill, processIdentity, runsIgnoring, waitFor } from '../node-pty/pty-test-support.js'
import { controllerOnOwnHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const JOB_SURVIVES_HANGUP = { file: '/bin/sh', args: ['-c', "(trap '' HUP TERM; exec sleep 30) & echo BG=$!; sleep 30"] }

async function spawnWithJob(controller: PtyController): Promise<{ id: string; job: number; leaderExited: Promise<void> }> {
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const { id } = await controller.spawn(JOB_SURVIVES_HANGUP)
  const leaderExited = new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
  const job = await waitFor(() => {
    const match = /BG=(\d+)/.exec(output)
    return match === null ? undefined : Number(match[1])
  }, 'the job pid')
  const identity = processIdentity(job)
  cleanups.push(async () => killIfStill(identity))
  await waitFor(() => (runsIgnoring(job, 'sleep', ['SIGHUP', 'SIGTERM']) ? true : undefined), 'the job to ignore HUP and TERM')
  return { id, job, leaderExited }
}

/** `true` only once the job is dead (the provider's stop may have killed it meanwhile: then either answer is right). */
function expectNotTrueWhileAlive({ verdict, jobDead }: { verdict: boolean; jobDead: boolean }): void {
  expect({ verdict, jobDead }, 'stopAndWait answered true while the job lived').not.toEqual({ verdict: true, jobDead: false })
}

async function verdictOf(stop: Promise<boolean>, job: number): Promise<{ verdict: boolean; jobDead: boolean }> {
  const verdict = await stop
  return { verdict, jobDead: isDead(job) }
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
