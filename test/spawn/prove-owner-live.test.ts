import { describe, expect, it, vi } from 'vitest'
import { toPtyIncarnationId, type PtyProvider } from '../../src/contracts/index.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { OWNER_LISTING_DEADLINE_MS, proveOwnerLive } from '../../src/spawn/prove-owner-live.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { rejectionOf } from './harness.js'

const resolveTo = (provider: PtyProvider | undefined) => () => provider

describe('proveOwnerLive', () => {
  it('no provider for the owner host is execution_owner_unavailable, never absent', async () => {
    const error = await rejectionOf(proveOwnerLive(resolveTo(undefined), { ptyId: 'p', hostId: 'ssh:gone' }))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
  })

  it('a live PTY of the exact incarnation is live; another incarnation behind the id is not', async () => {
    const provider = createFakePtyProvider()
    const first = await provider.spawn({ sessionId: 'p' })
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: 'p', hostId: 'local', ...(first.incarnationId ? { incarnationId: first.incarnationId } : {}) })).toBe(true)
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: 'p', hostId: 'local', incarnationId: toPtyIncarnationId('older') })).toBe(false)
  })

  it('a missing row is false for every provider, never an error (seed rule 11.13)', async () => {
    expect(await proveOwnerLive(resolveTo(createFakePtyProvider()), { ptyId: 'missing', hostId: 'local' })).toBe(false)
    const loose = createFakePtyProvider({ authoritativeListings: false })
    expect(await proveOwnerLive(resolveTo(loose), { ptyId: 'missing', hostId: 'local' })).toBe(false)
  })

  it('a non-authoritative provider proves an owner live only on an exact incarnation match (seed rule 11.13)', async () => {
    const loose = createFakePtyProvider({ authoritativeListings: false })
    const { id, incarnationId } = await loose.spawn({})
    expect(incarnationId).toBeDefined()
    expect(await proveOwnerLive(resolveTo(loose), { ptyId: id, hostId: 'local', ...(incarnationId ? { incarnationId } : {}) })).toBe(true)
    // Without an incarnation to match, the row could be any process behind the id.
    expect(await proveOwnerLive(resolveTo(loose), { ptyId: id, hostId: 'local' })).toBe(false)
  })

  it('a row holding another claim key is not the owner', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({ claimKey: 'other' })
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local', claimKey: 'mine' })).toBe(false)
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local', claimKey: 'other' })).toBe(true)
  })

  it.each(['claimKey', 'scopeId', 'slotKey'])('a listing whose row has a %s of null (a JSON relay) is execution_owner_unavailable, never "not live"', async (field) => {
    const provider = createFakePtyProvider()
    const { id, incarnationId } = await provider.spawn({ claimKey: 'agent:1' })
    const real = provider.listProcesses.bind(provider)
    provider.listProcesses = async (options) => (await real(options)).map((row) => ({ ...row, [field]: null }) as never)
    // Before: a claimKey of null passed as "another claim", so the running owner was not live and
    // a second one could start.
    const error = await rejectionOf(proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local', claimKey: 'agent:1', ...(incarnationId ? { incarnationId } : {}) }))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
    expect(String((error as Error & { cause?: Error }).cause?.message)).toContain(`its ${field} is not a non-empty string, got null`)
  })

  it('a listed row whose process the host proves dead (its exit still on the way) is not live; an unknown probe leaves the row its say', async () => {
    const provider = createFakePtyProvider()
    const { id, incarnationId } = await provider.spawn({ claimKey: 'k' })
    const owner = { ptyId: id, hostId: 'local', claimKey: 'k', ...(incarnationId ? { incarnationId } : {}) }
    provider.setLiveness(id, false)
    expect(provider.livePtyIds()).toContain(id)
    expect(await proveOwnerLive(resolveTo(provider), owner)).toBe(false)
    provider.setLiveness(id, null)
    expect(await proveOwnerLive(resolveTo(provider), owner)).toBe(true)
    // A probe that never answers is not proof of death either, and does not hang the proof.
    const hanging: PtyProvider = { ...provider, listProcesses: provider.listProcesses, probeLiveness: () => new Promise(() => undefined) }
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const proof = proveOwnerLive(resolveTo(hanging), owner)
      await vi.advanceTimersByTimeAsync(OWNER_LISTING_DEADLINE_MS)
      expect(await proof).toBe(true)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a failing listing is execution_owner_unavailable: unknown, never absent', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.setListingFailure(new Error('listing timed out'))
    const error = await rejectionOf(proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local' }))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
  })
})
