/**
 * "Restart the terminal": `kill()` then `spawn()` under the same session id, slot or claim. The
 * spawn waits for the stop to settle and starts a new process; before, it re-attached to (or
 * adopted) the process being stopped, which then died under the caller as its "new" terminal.
 */
import { describe, expect, it } from 'vitest'
import type { PtySpawnOptions, PtySpawnReply } from '../../src/contracts/index.js'
import { STOP_UNCONFIRMED_AFTER_MS } from '../../src/controller/index.js'
import { createHarness } from './controller-harness.js'

const identities: Array<[string, PtySpawnOptions]> = [
  ['session id', { sessionId: 'tab-1' }],
  ['slot', { slot: { key: 'pane-1' } }],
  ['claim', { claim: { key: 'agent-1' } }],
]

/** A PTY spawned for `identity` whose stop (`kill`) is under way: it ends only when the test says. */
async function stopping(identity: PtySpawnOptions): Promise<{ h: ReturnType<typeof createHarness>; old: PtySpawnReply }> {
  const h = createHarness()
  h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
  const old = await h.controller.spawn(identity)
  h.controller.kill(old.id)
  return { h, old }
}

describe('a spawn for the session id, slot or claim of a PTY being stopped', () => {
  it.each(identities)('(%s) waits for the stop and starts a new process', async (_name, identity) => {
    const { h, old } = await stopping(identity)
    let settled = false
    const fresh = h.controller.spawn(identity).finally(() => (settled = true))
    await h.settle()
    expect(settled).toBe(false)
    // The old process ends of its stop.
    h.provider.emitExit(old.id, { exitCode: 0 })
    const reply = await h.run(fresh)
    expect(reply.incarnationId).not.toBe(old.incarnationId)
    expect(reply.isReattach).not.toBe(true)
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[old.incarnationId, { kind: 'operator_close' }]])
    expect(h.controller.hasPty(reply.id)).toBe(true)
  })

  it('waits no longer than the stop window: a process that outlives its stop is re-attached to, and live again', async () => {
    const { h, old } = await stopping({ sessionId: 'tab-1' })
    const started = h.clock.now()
    const reply = await h.run(h.controller.spawn({ sessionId: 'tab-1' }))
    expect(h.clock.now() - started).toBe(STOP_UNCONFIRMED_AFTER_MS)
    // The stop went unverified; the host still holds the process, so the spawn re-attaches to it.
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(reply).toMatchObject({ id: old.id, incarnationId: old.incarnationId, isReattach: true })
    expect(h.controller.hasPty(old.id)).toBe(true)
  })

  it('a spawn for another session id does not wait', async () => {
    const { h } = await stopping({ sessionId: 'tab-1' })
    const other = await h.controller.spawn({ sessionId: 'tab-2' })
    expect(other.id).toBe('tab-2')
    expect(h.clock.now()).toBe(0)
  })

  it('an abort ends the wait, and the spawn is refused as aborted, starting nothing', async () => {
    const { h } = await stopping({ sessionId: 'tab-1' })
    const abort = new AbortController()
    const fresh = h.controller.spawn({ sessionId: 'tab-1', signal: abort.signal })
    await h.settle()
    abort.abort()
    await expect(fresh).rejects.toMatchObject({ code: 'client_disconnected' })
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
  })

  it('dispose ends the wait: the spawn is refused as controller_disposed', async () => {
    const { h } = await stopping({ sessionId: 'tab-1' })
    const fresh = h.controller.spawn({ sessionId: 'tab-1' })
    await h.settle()
    const disposed = h.controller.dispose()
    await expect(h.run(fresh)).rejects.toMatchObject({ code: 'controller_disposed' })
    await h.run(disposed)
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
  })
})
