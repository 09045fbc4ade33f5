// The node-pty provider in a worker thread (an app that keeps its main loop free). A worker's
// provider cannot kill its PTYs as the worker ends, and a worker that ends while one of its PTYs
// runs never finishes ending (node-pty 1.1 joins the thread that waits for the child): so the
// default `killOnProcessExit` is refused at creation there, with a typed error, and a provider
// that says `killOnProcessExit: false` works — and, disposed, lets the worker end.
import { Worker } from 'node:worker_threads'
import { resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bundleNodeEntry } from '../support/node-entry-bundle.js'
import { isDead, killIfStill, processIdentity, waitFor, type ProcessIdentity } from './pty-test-support.js'

const FIXTURE = resolve(import.meta.dirname, 'fixtures', 'provider-in-worker.ts')

const leftovers: (ProcessIdentity | null)[] = []
const workers: Worker[] = []
afterEach(async () => {
  // Processes first: a worker whose PTY still runs would not end.
  for (const identity of leftovers.splice(0)) killIfStill(identity)
  await Promise.all(workers.splice(0).map((worker) => worker.terminate()))
})

/** Start the fixture in a worker with these provider options; answers the worker and its first message. */
async function startWorker(options: object): Promise<{ worker: Worker; first: Record<string, unknown> }> {
  const worker = new Worker(bundleNodeEntry(FIXTURE), { workerData: { options } })
  workers.push(worker)
  const first = await new Promise<Record<string, unknown>>((resolveFirst, reject) => {
    worker.once('message', resolveFirst)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the worker ended (${code}) before it reported`)))
  })
  // Whatever the worker ran is killed after the test, also when it should not have run anything.
  const ran = first.ran as { pids?: number[] } | undefined
  leftovers.push(...(ran?.pids ?? []).map(processIdentity))
  return { worker, first }
}

describe('the node-pty provider in a worker thread', () => {
  it.each([
    ['no options (killOnProcessExit defaults to true)', {}],
    ['killOnProcessExit: true', { killOnProcessExit: true }],
  ])('is refused at creation with %s: a NodePtyOptionError naming killOnProcessExit and what to do, and nothing registered', async (_, options) => {
    const { first } = await startWorker(options)
    const refused = first.refused as Record<string, unknown> | undefined
    expect(refused).toMatchObject({ name: 'NodePtyOptionError', code: 'invalid_spawn_option', option: 'killOnProcessExit', branded: true })
    expect(refused?.message).toMatch(/worker thread/)
    expect(refused?.message).toMatch(/killOnProcessExit: false/)
    expect(refused?.message).toMatch(/pty-host/)
  })

  it('with killOnProcessExit: false it runs PTYs (output, exit cause), registers no exit guard, and once disposed lets the worker end', async () => {
    const { worker, first } = await startWorker({ killOnProcessExit: false })
    const ran = first.ran as { output: string; cause: unknown; pids: number[]; exitListenersAdded: number; guardRegistrations: number } | undefined
    expect(ran, JSON.stringify(first)).toBeDefined()
    expect(ran!.output).toContain('got hello')
    expect(ran!.cause).toEqual({ kind: 'exited', exitCode: 3 })
    expect([ran!.exitListenersAdded, ran!.guardRegistrations]).toEqual([0, 0])
    const [, running] = ran!.pids
    expect(isDead(running!)).toBe(false)
    worker.postMessage('dispose')
    await new Promise((disposed) => worker.once('message', disposed))
    expect(isDead(running!)).toBe(true)
    // Nothing of the worker's PTYs is left to wait for: its end completes.
    const ended = await Promise.race([worker.terminate().then(() => 'ended'), new Promise((late) => setTimeout(late, 10_000, 'still ending'))])
    expect(ended).toBe('ended')
    await waitFor(() => (ran!.pids.every(isDead) ? true : undefined), 'both PTY processes dead')
  })

  it('with a deadline that passes at once (shutdownDeadlineMs: 0) its dispose resolves once its own SIGKILL was reaped, and the worker ended at once ends', async () => {
    const { worker, first } = await startWorker({ killOnProcessExit: false, shutdownDeadlineMs: 0 })
    const ran = first.ran as { pids: number[] } | undefined
    expect(ran, JSON.stringify(first)).toBeDefined()
    const [, running] = ran!.pids
    worker.postMessage('dispose')
    await new Promise((disposed) => worker.once('message', disposed))
    // Reaped, not only signalled: a PTY that died while the worker is torn down would abort this
    // very process (node-pty 1.1) — the test's own run would end here.
    expect(isDead(running!)).toBe(true)
    const ended = await Promise.race([worker.terminate().then(() => 'ended'), new Promise((late) => setTimeout(late, 10_000, 'still ending'))])
    expect(ended).toBe('ended')
  })
})
