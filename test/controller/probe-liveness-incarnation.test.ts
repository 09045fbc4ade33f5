/**
 * `probePtyLiveness` asks about the incarnation the controller holds, not about the id: a provider
 * may hold another incarnation under the id by now (two apps sharing a pty host: app B spawned a
 * new `term-1` after app A's died while A's connection was down). Asked by id, the provider
 * answered `true` about B's process, and A's controller called its dead PTY live.
 */
import { describe, expect, it } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS } from '../../src/controller/index.js'
import { createHarness, type Harness } from './controller-harness.js'

/** A PTY whose stop went unverified: the controller published `stop_unverified`, liveness `unverifiable`. */
async function unverifiedPty(h: Harness, shutdown: 'exit_unreported' | 'never_confirm'): Promise<{ id: string; incarnationId: string | undefined }> {
  h.provider.scriptNextSpawn({ shutdown })
  const { id, incarnationId } = await h.controller.spawn({ sessionId: 'term-1', isNewSession: true })
  expect(h.controller.kill(id)).toBe(true)
  await h.settle()
  h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
  expect(h.liveness().at(-1)?.verdict.kind).toBe('unverifiable')
  expect(h.controller.hasPty(id)).toBeNull()
  return { id, incarnationId }
}

describe('probePtyLiveness of an unverified PTY whose id now holds another incarnation', () => {
  it('never answers true nor marks it live; an authoritative provider proves it gone', async () => {
    const h = createHarness()
    // The stop ended the process, but its exit report was lost (a dropped connection).
    const { id, incarnationId } = await unverifiedPty(h, 'exit_unreported')
    // Another app takes the id: a new process, a new incarnation, live in the provider.
    const other = await h.provider.spawn({ sessionId: id, isNewSession: true })
    expect(other.incarnationId).not.toBe(incarnationId)
    expect(h.provider.livePtyIds()).toContain(id)
    const answer = await h.controller.probePtyLiveness(id)
    expect(answer).toBe(false)
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'exited'])
    expect(h.controller.hasPty(id)).toBe(false)
    // The provider was asked about the controller's incarnation, not about whatever holds the id.
    expect(h.provider.calls.filter((call) => call.method === 'probeLiveness').map((call) => call.args)).toEqual([[id, { incarnationId }]])
  })

  it('stays unverifiable (null) when the provider cannot prove the asked incarnation gone', async () => {
    const h = createHarness({ provider: { authoritativeListings: false } })
    const { id } = await unverifiedPty(h, 'exit_unreported')
    await h.provider.spawn({ sessionId: id, isNewSession: true })
    await expect(h.controller.probePtyLiveness(id)).resolves.toBeNull()
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable'])
    expect(h.controller.hasPty(id)).toBeNull()
  })

  it('stays unverifiable (null) when the id was taken while the old process ran (its fate is unknown)', async () => {
    const h = createHarness()
    const { id } = await unverifiedPty(h, 'never_confirm')
    // A daemon that lost track of the old process and started another under the id.
    h.provider.scriptNextSpawn({ id })
    await h.provider.spawn({})
    await expect(h.controller.probePtyLiveness(id)).resolves.toBeNull()
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable'])
    expect(h.controller.hasPty(id)).toBeNull()
  })

  it('still marks it live when the process the id holds is its own incarnation', async () => {
    const h = createHarness()
    const { id } = await unverifiedPty(h, 'never_confirm')
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(true)
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'live' })
  })
})

describe('stopAndWait verifies the stopped incarnation', () => {
  it('asks the probe about the stopped incarnation, also once a replacement holds the id (non-authoritative provider)', async () => {
    const h = createHarness({ provider: { authoritativeListings: false } })
    h.provider.scriptNextSpawn({ shutdown: 'exit_unreported' })
    const { id, incarnationId } = await h.controller.spawn({ sessionId: 'term-1', isNewSession: true })
    const probes: unknown[][] = []
    const probe = h.provider.probeLiveness.bind(h.provider)
    h.provider.probeLiveness = async (ptyId, options) => {
      probes.push(options === undefined ? [ptyId] : [ptyId, options])
      // Another app's process took the id between the stop and its verification.
      if (h.provider.livePtyIds().length === 0) await h.provider.spawn({ sessionId: id, isNewSession: true })
      return probe(ptyId, options)
    }
    await h.run(h.controller.stopAndWait(id, { timeoutMs: 5_000 }))
    // Asked about the stopped incarnation, the replacement's `true` never counts as its presence.
    expect(probes.length).toBeGreaterThan(0)
    for (const args of probes) expect(args).toEqual([id, { incarnationId }])
  })
})
