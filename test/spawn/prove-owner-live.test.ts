import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId, type PtyProvider } from '../../src/contracts/index.js'
import { isPtySpawnError, proveOwnerLive } from '../../src/spawn/index.js'
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

  it('an authoritative provider proves absence; a non-authoritative one cannot, so the answer is unavailable', async () => {
    expect(await proveOwnerLive(resolveTo(createFakePtyProvider()), { ptyId: 'missing', hostId: 'local' })).toBe(false)
    const loose = createFakePtyProvider({ authoritativeListings: false })
    const error = await rejectionOf(proveOwnerLive(resolveTo(loose), { ptyId: 'missing', hostId: 'local' }))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
  })

  it('a failing listing is unavailable unless the probe vouched and no incarnation must match', async () => {
    const provider = createFakePtyProvider()
    const { id, incarnationId } = await provider.spawn({})
    provider.setListingFailure(new Error('listing timed out'))
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local' })).toBe(true)
    const error = await rejectionOf(proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local', ...(incarnationId ? { incarnationId } : {}) }))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
  })

  it('a probe that answers false is proof of absence', async () => {
    const provider = createFakePtyProvider({ authoritativeListings: false })
    const { id } = await provider.spawn({})
    provider.setLiveness(id, false)
    expect(await proveOwnerLive(resolveTo(provider), { ptyId: id, hostId: 'local' })).toBe(false)
  })
})
