// ptykit/pty-host from a worker thread (an app that keeps its main loop free): the provider works
// there, and a worker that ends leaves its sessions to the host; a host inside a worker cannot run
// and is refused, typed, leaving nothing behind.
import { readdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { bundleNodeEntry } from '../support/node-entry-bundle.js'
import { isDead, killIfStill, processIdentity } from '../node-pty/pty-test-support.js'
import { HOST_FROM_SOURCES, hostFixture, providerOn, useCleanups } from './pty-host-test-support.js'

const FIXTURE = resolve(import.meta.dirname, 'fixtures', 'worker-app.ts')
const cleanups = useCleanups()

/** Start the fixture in a worker; answers the worker and its first message. The worker is ended after the test. */
async function startWorker(mode: 'start-host' | 'provider', socketPath: string): Promise<{ worker: Worker; first: Record<string, unknown> }> {
  const worker = new Worker(bundleNodeEntry(FIXTURE), { workerData: { mode, socketPath, hostCommand: HOST_FROM_SOURCES } })
  cleanups.push(async () => {
    await worker.terminate()
  })
  const first = await new Promise<Record<string, unknown>>((resolveFirst, reject) => {
    worker.once('message', resolveFirst)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the worker ended (${code}) before it reported`)))
  })
  return { worker, first }
}

describe('ptykit/pty-host in a worker thread', () => {
  it('startPtyHost is refused unsupported_in_worker (a PtyHostError), and leaves no lock, secret or socket', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const { first } = await startWorker('start-host', socketPath)
    expect(first.refused).toMatchObject({ name: 'PtyHostError', code: 'unsupported_in_worker', branded: true })
    expect((first.refused as { message: string }).message).toMatch(/worker thread/)
    expect(readdirSync(dir)).toEqual([])
  })

  it('the provider runs a session from a worker; terminating the worker without a dispose ends it at once and the session stays on the host', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { worker, first } = await startWorker('provider', socketPath)
    const { id, pid } = first as { id: string; pid: number }
    const identity = processIdentity(pid)
    cleanups.push(async () => killIfStill(identity))
    const ended = await Promise.race([worker.terminate().then(() => 'ended'), new Promise((late) => setTimeout(late, 10_000, 'still ending'))])
    expect(ended).toBe('ended')
    expect(isDead(pid)).toBe(false)
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    expect((await next.listProcesses()).map((row) => row.id)).toEqual([id])
  })
})
