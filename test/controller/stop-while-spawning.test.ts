/**
 * An orchestrator stops a job whose spawn (`sessionId`) is still in flight: `stopAndWait(id)` in
 * the same turn as `spawn()`. Before, the controller tracked no record yet, asked the hosts, heard
 * "absent" (the provider had not started the process yet) and answered `true` — then the spawn
 * landed and the process ran on, live, with no exit ever coming (a scale run over node-pty: every
 * such job left running after a "verified" stop). `true` must mean no process runs under the id.
 * `hasPty` / `probePtyLiveness` answered `false` in that window likewise, though a process may be
 * about to hold the id: "absent" is not proven while a spawn of the id is in flight.
 */
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './controller-harness.js'

/**
 * The provider starts its process only once the returned gate opens, as the node-pty provider does
 * after its asynchronous preparation (module load, cwd check): until then no host knows the id.
 */
function gateSpawns(h: Harness): () => void {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const spawn = h.provider.spawn.bind(h.provider)
  h.provider.spawn = async (...args) => {
    await gate
    return spawn(...args)
  }
  return open
}

describe('stopAndWait of an id whose spawn is in flight', () => {
  it('waits for the spawn to land, then stops what it published: true means nothing runs', async () => {
    const h = createHarness()
    const open = gateSpawns(h)
    const spawned = h.controller.spawn({ sessionId: 'job-1' })
    let stopResult: boolean | undefined
    const stop = h.controller.stopAndWait('job-1', { timeoutMs: 5_000 }).then((result) => (stopResult = result))
    await h.settle()
    expect(stopResult).toBeUndefined() // no verdict while a process may be coming
    open()
    const reply = await h.run(spawned)
    await h.run(stop)
    expect(stopResult).toBe(true)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits().map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([
      ['job-1', reply.incarnationId, { kind: 'operator_close' }],
    ])
    expect(h.controller.hasPty('job-1')).toBe(false)
  })

  it('the same for a respawn under the id of an ended PTY', async () => {
    const h = createHarness()
    const first = await h.run(h.controller.spawn({ sessionId: 'job-2' }))
    h.provider.emitExit(first.id, { exitCode: 3 })
    await h.settle()
    const spawned = h.controller.spawn({ sessionId: 'job-2' })
    const stop = h.controller.stopAndWait('job-2', { timeoutMs: 5_000 })
    const second = await h.run(spawned)
    expect(await h.run(stop)).toBe(true)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([
      [first.incarnationId, { kind: 'exited', exitCode: 3 }],
      [second.incarnationId, { kind: 'operator_close' }],
    ])
  })

  it('a spawn that fails meanwhile leaves nothing to stop: true', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ fail: new Error('ENOENT') })
    const spawned = h.controller.spawn({ sessionId: 'job-3' }).catch((error: unknown) => error)
    const stop = h.controller.stopAndWait('job-3', { timeoutMs: 5_000 })
    expect(await h.run(spawned)).toBeInstanceOf(Error)
    expect(await h.run(stop)).toBe(true)
    expect(h.provider.livePtyIds()).toEqual([])
  })

  it('a spawn still in flight at the deadline: false (not proven), and what it publishes is stopped as it lands', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-4', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-4' })
    const stop = h.controller.stopAndWait('job-4', { timeoutMs: 1_000 })
    expect(await h.run(stop)).toBe(false)
    h.provider.releaseSpawn('job-4')
    const reply = await h.run(spawned)
    await h.settle()
    // Before, the spawn was "left alone" after the `false`: its process ran on, though a stop was asked for.
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits().map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['job-4', reply.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.hasPty(reply.id)).toBe(false)
  })

  it('a spawn still in flight when the signal aborts: false at once, and what it publishes is stopped as it lands', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-6', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job-6' })
    const abort = new AbortController()
    const stop = h.controller.stopAndWait('job-6', { timeoutMs: 60_000, signal: abort.signal })
    await h.settle()
    abort.abort()
    expect(await h.run(stop)).toBe(false)
    h.provider.releaseSpawn('job-6')
    const reply = await h.run(spawned)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[reply.incarnationId, { kind: 'operator_close' }]])
  })

  it('a spawn of the id begun after the given-up stopAndWait is not stopped by it', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job-7', hang: true })
    const first = h.controller.spawn({ sessionId: 'job-7' })
    expect(await h.run(h.controller.stopAndWait('job-7', { timeoutMs: 1_000 }))).toBe(false)
    h.provider.releaseSpawn('job-7')
    const a = await h.run(first)
    await h.settle()
    const b = await h.run(h.controller.spawn({ sessionId: 'job-7' }))
    await h.settle()
    expect(b.incarnationId).not.toBe(a.incarnationId)
    expect(h.provider.getPty('job-7')).toMatchObject({ live: true, incarnationId: b.incarnationId })
    expect(h.exits().map((exit) => exit.incarnationId)).toEqual([a.incarnationId])
  })

  it('hasPty and probePtyLiveness of an id whose first spawn is in flight: null, not false', async () => {
    const h = createHarness()
    const open = gateSpawns(h)
    const spawned = h.controller.spawn({ sessionId: 'job-5' })
    await h.settle()
    expect(h.controller.hasPty('job-5')).toBeNull()
    expect(await h.controller.probePtyLiveness('job-5')).toBeNull()
    open()
    await h.run(spawned)
    expect(h.controller.hasPty('job-5')).toBe(true)
  })
})
