/**
 * Every `RuntimePtyController` call of a controller whose provider was detached (the pty host
 * provider's `detach()`: its sessions run on, where it no longer sees them) answers as the table
 * in docs/controller.md ("After a provider's detach()") says — what is still true, "unknown"
 * where the provider is blind, a typed refusal where an answer would be a guess.
 *
 * The fake provider's `detach()` answers as the pty host provider's does (see docs/pty-host.md,
 * "After detach()"); the same table on a real pty host: calls-after-provider-detach-pty-host.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './controller-harness.js'

/** What the pty host provider rejects with after `detach()`: code `provider_detached`, the method named. */
class ProviderDetachedError extends Error {
  readonly code = 'provider_detached'
  readonly ptyId: string | undefined
  constructor(method: string, ptyId?: string) {
    super(`Cannot call \`${method}\`: the provider was detached (its sessions run on)`)
    this.ptyId = ptyId
  }
}

async function detachedWithPtys(count: number): Promise<{ h: Harness; ids: string[] }> {
  const h = createHarness()
  const ids: string[] = []
  for (let index = 0; index < count; index++) ids.push((await h.run(h.controller.spawn({}))).id)
  await h.provider.detach()
  return { h, ids }
}

const STOP_UNVERIFIED = { kind: 'unknown', reason: 'stop_unverified' }

describe('calls after the provider was detached', () => {
  it('attach(id) of a PTY tracked live answers false: its output no longer streams here — also before the controller heard of the detach', async () => {
    const { h, ids } = await detachedWithPtys(2)
    // The first call after the detach: nothing was refused yet, the provider's hasPty answers null.
    expect(await h.run(h.controller.attach(ids[0]!))).toBe(false)
    // Once the detach was reported (a listing refused), the same answer.
    await expect(h.run(h.controller.listProcesses())).rejects.toMatchObject({ code: 'listing_failed' })
    expect(await h.run(h.controller.attach(ids[1]!))).toBe(false)
    // The PTYs are still tracked live (nothing proved them gone) and nothing was published.
    expect([...h.controller.inventory().allLivePtyIds].sort()).toEqual([...ids].sort())
    expect(h.exits()).toEqual([])
    // An untracked id: the provider refuses the attach; false, nothing tracked.
    expect(await h.run(h.controller.attach('elsewhere'))).toBe(false)
    expect(h.controller.inventory().allLivePtyIds.has('elsewhere')).toBe(false)
    expect(h.errors().map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['listing_failed', 'provider_detached']])
    await h.run(h.controller.dispose({ stopPtys: false }))
  })

  it("adoptSlot of a slot whose owner is tracked live answers null, as attach answers false: the owner's output no longer streams here", async () => {
    const h = createHarness()
    const owner = await h.run(h.controller.spawn({ slot: { key: 'pane' } }))
    // Before the detach: the tracked owner is handed back.
    expect((await h.run(h.controller.adoptSlot({ slot: { key: 'pane' } })))?.result.id).toBe(owner.id)
    await h.provider.detach()
    expect(await h.run(h.controller.adoptSlot({ slot: { key: 'pane' } }))).toBeNull()
    // Still tracked live (nothing proved it gone), nothing published.
    expect(h.controller.inventory().allLivePtyIds.has(owner.id)).toBe(true)
    expect(h.exits()).toEqual([])
    await h.run(h.controller.dispose({ stopPtys: false }))
  })

  it('a provider without hasPty: attach answers from the record until the detach is known, then false', async () => {
    const { h, ids } = await detachedWithPtys(2)
    Object.assign(h.provider, { hasPty: undefined })
    expect(await h.run(h.controller.attach(ids[0]!))).toBe(true)
    expect(await h.run(h.controller.stopAndWait(ids[0]!, { timeoutMs: 60_000 }))).toBe(false)
    expect(await h.run(h.controller.attach(ids[1]!))).toBe(false)
    await h.run(h.controller.dispose({ stopPtys: false }))
  })

  it('attach and inspectProcess of a tracked PTY before any detach: attached, and inspected even when no name can be read (the provider vouches for it)', async () => {
    const h = createHarness()
    const { id } = await h.run(h.controller.spawn({}))
    expect(await h.run(h.controller.attach(id))).toBe(true)
    Object.assign(h.provider, { getForegroundProcess: async () => null })
    expect(await h.run(h.controller.inspectProcess(id))).toEqual({ foregroundProcess: null, hasChildProcesses: null })
    // …but not for another host, nor with an aborted signal.
    expect(await h.run(h.controller.attach(id, { hostId: 'elsewhere' }))).toBe(false)
    expect(await h.run(h.controller.attach(id, { signal: AbortSignal.abort() }))).toBe(false)
    await h.run(h.controller.dispose())
  })

  it('supportsForegroundProcessEvidence of a provider that refuses the question as detached answers false, as for a disposed one (it rejected with the refusal)', async () => {
    const { h } = await detachedWithPtys(1)
    Object.assign(h.provider, {
      supportsForegroundProcessEvidence: () => {
        throw new ProviderDetachedError('supportsForegroundProcessEvidence')
      },
    })
    await expect(h.run(h.controller.supportsForegroundProcessEvidence())).resolves.toBe(false)
    expect(await h.run(h.controller.listProcesses(undefined, { includeForegroundProcessEvidence: true })).catch((error: { code?: string }) => error.code)).toBe('listing_failed')
    await h.run(h.controller.dispose({ stopPtys: false }))
  })

  it('every other call answers as the table says; the detach is reported once', async () => {
    const { h, ids } = await detachedWithPtys(3)
    const [id, stopped, killed] = ids as [string, string, string]
    const c = h.controller
    // Blind, not broken: what the provider could only guess is "unknown".
    expect(c.write(id, 'x', 'driving')).toBe(false)
    expect(c.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(c.writeWithSettlement(id, new Uint8Array([0x78]), 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(c.resize(id, 100, 30)).toBe(false)
    expect(c.getSize(id)).toEqual({ cols: 80, rows: 24 })
    expect(c.acknowledgeData(id, 1)).toBeUndefined()
    expect(c.hasPty(id)).toBeNull()
    expect(await h.run(c.probePtyLiveness(id))).toBeNull()
    expect(await h.run(c.getCwd(id))).toBeNull()
    expect(await h.run(c.getForegroundProcess(id))).toBeNull()
    expect(await h.run(c.hasChildProcesses(id))).toBeNull()
    // Unavailable: the PTY's host is unreachable for this provider, not merely unable to read a name.
    expect(await h.run(c.inspectProcess(id, { scanChildProcesses: true }))).toEqual({ foregroundProcess: null, hasChildProcesses: null, unavailable: true })
    expect(await h.run(c.inspectProcess(id))).toEqual({ foregroundProcess: null, hasChildProcesses: null, unavailable: true })
    expect(await h.run(c.confirmForegroundProcess(id))).toBeNull()
    expect(await h.run(c.confirmShellForeground(id))).toBe(false)
    expect(await h.run(c.serializeProviderBuffer(id))).toBeNull()
    expect(await h.run(c.serializeBuffer(id, { timeoutMs: 0 }))).toBeNull()
    const resets: string[] = []
    c.on('inputModesReset', (event) => resets.push(event.ptyId))
    await expect(h.run(c.resetInputModes(id))).resolves.toBeUndefined()
    expect(resets).toEqual([id])
    // A mounted view still holds its screen: its snapshot answers.
    using _view = c.registerRendererSerializer(id, () => ({ data: '$ ', cols: 80, rows: 24 }))
    expect(await h.run(c.serializeBuffer(id, { timeoutMs: 1_000 }))).toMatchObject({ data: '$ ', cols: 80, rows: 24 })
    expect(h.errors()).toEqual([])
    // Still tracked live: no exit was seen, none was published.
    expect(c.inventory().allLivePtyIds.has(id)).toBe(true)
    // Refused: an answer would be a guess (an empty listing proves nothing gone, a spawn cannot be sent).
    await expect(h.run(c.listProcesses())).rejects.toMatchObject({ code: 'listing_failed', cause: { code: 'provider_detached' } })
    await expect(h.run(c.listProcessesWithHostScope())).rejects.toMatchObject({ code: 'listing_failed' })
    await expect(h.run(c.spawn({}))).rejects.toMatchObject({ code: 'provider_spawn_failed', cause: { code: 'provider_detached' } })
    // A stop: refused by the provider, so not verified — false at the refusal, stop_unverified published.
    const startedAt = h.clock.now()
    expect(await h.run(c.stopAndWait(stopped, { timeoutMs: 600_000 }))).toBe(false)
    expect(h.clock.now() - startedAt).toBeLessThan(600_000)
    // A kill: sent to the provider (true), whose refusal publishes stop_unverified.
    expect(c.kill(killed)).toBe(true)
    await h.settle()
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause])).toEqual([
      [stopped, STOP_UNVERIFIED],
      [killed, STOP_UNVERIFIED],
    ])
    // Unverified, not dead: no liveness "dead", the id still listed live and as exiting.
    expect(c.hasPty(killed)).toBeNull()
    expect(c.inventory().exitingPtyIds?.has(killed)).toBe(true)
    expect(await h.run(c.attach(killed))).toBe(false)
    expect(c.retireRejectedPty(id, false, undefined)).toBeUndefined()
    // The detach, reported once for the provider — not per call.
    expect(h.errors().map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['listing_failed', 'provider_detached']])
    // A clear: the provider refuses it (the host keeps the screen); the controller's resolves doing nothing.
    await expect(h.run(c.clearBuffer(id))).resolves.toBeUndefined()
    await h.run(c.dispose({ stopPtys: false }))
    expect(h.errors()).toHaveLength(1)
  })
})
