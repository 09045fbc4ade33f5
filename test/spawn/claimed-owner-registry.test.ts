import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { CLAIMED_OWNER_REGISTRY_MAX_ENTRIES } from '../../src/spawn/claimed-owner-registry.js'
import {
  createClaimedOwnerRegistry,
  isPtySpawnError,
  type ClaimedOwner,
  type EnsureClaimArgs,
} from '../../src/spawn/index.js'
import { rejectionOf } from './harness.js'
import { deferred } from '../support/deferred.js'

function args(overrides: Partial<EnsureClaimArgs> & Pick<EnsureClaimArgs, 'spawn'>): EnsureClaimArgs {
  return { claim: { key: 'k' }, hostId: 'local', isLive: async () => true, ...overrides }
}

describe('createClaimedOwnerRegistry', () => {
  it('concurrent ensures of one key spawn once: one created, the joiners adopted (and told they joined)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), async (n) => {
        const registry = createClaimedOwnerRegistry()
        const spawned = deferred<{ ptyId: string }>()
        let spawns = 0
        let joins = 0
        const results = Array.from({ length: n }, () =>
          registry.ensure(
            args({
              spawn: () => {
                spawns += 1
                return spawned.promise
              },
              onJoin: () => {
                joins += 1
              },
            }),
          ),
        )
        spawned.resolve({ ptyId: 'p1' })
        const settled = await Promise.all(results)
        expect(spawns).toBe(1)
        expect(joins).toBe(n - 1)
        expect(settled.map((r) => r.disposition).sort()).toEqual(['created', ...Array<string>(n - 1).fill('adopted')].sort())
        expect(new Set(settled.map((r) => r.owner.ptyId))).toEqual(new Set(['p1']))
        expect(registry.owners()).toHaveLength(1)
      }),
      { numRuns: 20 },
    )
  })

  it("a failed spawn rejects every joiner with the creator's error and leaves no entry", async () => {
    const registry = createClaimedOwnerRegistry()
    const spawned = deferred<{ ptyId: string }>()
    const failure = new Error('spawn failed')
    const a = registry.ensure(args({ spawn: () => spawned.promise }))
    const b = registry.ensure(args({ spawn: () => Promise.resolve({ ptyId: 'never' }) }))
    spawned.reject(failure)
    expect(await rejectionOf(a)).toBe(failure)
    expect(await rejectionOf(b)).toBe(failure)
    expect(registry.owners()).toEqual([])
    expect(registry.find({ key: 'k' })).toBeNull()
  })

  it('an existing owner is re-proven: live is adopted, not live is released and spawned fresh', async () => {
    const registry = createClaimedOwnerRegistry()
    await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }) }))
    const seen: ClaimedOwner[] = []
    const adopted = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p2' }), isLive: async (o) => (seen.push(o), true) }))
    expect(adopted).toMatchObject({ disposition: 'adopted', owner: { ptyId: 'p1' } })
    expect(seen.map((o) => o.ptyId)).toEqual(['p1'])
    const replaced = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p2' }), isLive: async () => false }))
    expect(replaced).toMatchObject({ disposition: 'created', owner: { ptyId: 'p2' } })
    expect(replaced.owner.generation).not.toBe(adopted.owner.generation)
    expect(registry.owners().map((o) => o.ptyId)).toEqual(['p2'])
  })

  it('an isLive that throws (unreachable host) fails the ensure and keeps the owner: unknown is never absent', async () => {
    const registry = createClaimedOwnerRegistry()
    await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }) }))
    const unreachable = new Error('host unreachable')
    let spawned = false
    const error = await rejectionOf(
      registry.ensure(args({ spawn: async () => ((spawned = true), { ptyId: 'p2' }), isLive: () => Promise.reject(unreachable) })),
    )
    expect(error).toBe(unreachable)
    expect(spawned).toBe(false)
    expect(registry.owners().map((o) => o.ptyId)).toEqual(['p1'])
  })

  it('a late liveness answer cannot adopt a released generation', async () => {
    const registry = createClaimedOwnerRegistry()
    const first = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }) }))
    const answer = deferred<boolean>()
    const late = registry.ensure(args({ spawn: async () => ({ ptyId: 'p2' }), isLive: () => answer.promise }))
    registry.release('p1', first.owner.generation)
    answer.resolve(true)
    const result = await late
    expect(result).toMatchObject({ disposition: 'created', owner: { ptyId: 'p2' } })
  })

  it('the same key in another scope is claim_conflict; find never crosses scopes', async () => {
    const registry = createClaimedOwnerRegistry()
    await registry.ensure(args({ claim: { key: 'k', scopeId: 'a' }, spawn: async () => ({ ptyId: 'p1' }) }))
    const error = await rejectionOf(registry.ensure(args({ claim: { key: 'k', scopeId: 'b' }, spawn: async () => ({ ptyId: 'p2' }) })))
    expect(isPtySpawnError(error) && error.code).toBe('claim_conflict')
    expect(registry.find({ key: 'k', scopeId: 'b' })).toBeNull()
    expect(registry.find({ key: 'k' })).toBeNull()
    expect(registry.find({ key: 'k', scopeId: 'a' })?.ptyId).toBe('p1')
  })

  it('release is fenced by generation', async () => {
    const registry = createClaimedOwnerRegistry()
    const { owner } = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }) }))
    registry.release('p1', 'some-other-generation')
    expect(registry.owners()).toHaveLength(1)
    registry.release('p1', owner.generation)
    expect(registry.owners()).toEqual([])
  })

  it('past the cap a new key is execution_owner_unavailable; existing keys still adopt', async () => {
    expect(CLAIMED_OWNER_REGISTRY_MAX_ENTRIES).toBe(1024)
    const registry = createClaimedOwnerRegistry({ maxEntries: 2 })
    await registry.ensure(args({ claim: { key: 'a' }, spawn: async () => ({ ptyId: 'pa' }) }))
    await registry.ensure(args({ claim: { key: 'b' }, spawn: async () => ({ ptyId: 'pb' }) }))
    const error = await rejectionOf(registry.ensure(args({ claim: { key: 'c' }, spawn: async () => ({ ptyId: 'pc' }) })))
    expect(isPtySpawnError(error) && error.code).toBe('execution_owner_unavailable')
    expect((await registry.ensure(args({ claim: { key: 'a' }, spawn: async () => ({ ptyId: 'x' }) }))).owner.ptyId).toBe('pa')
  })

  it('rejects an empty claim key with a TypeError naming it', async () => {
    const registry = createClaimedOwnerRegistry()
    await expect(registry.ensure(args({ claim: { key: '' }, spawn: async () => ({ ptyId: 'p' }) }))).rejects.toThrow(
      new TypeError('Expected the `claim.key` option to be a non-empty string, got "" (string)'),
    )
    expect(() => createClaimedOwnerRegistry({ maxEntries: 0 })).toThrow(TypeError)
  })

  describe('a creator that rolls back after its spawn succeeded (a review, 3 Dec)', () => {
    // The creator's run failed after its spawn; its rollback released the claim (its first undo)
    // and is still stopping the PTY. Its reservation used to stay joinable until the rollback
    // ended: a new ensure joined it and took the creator's error (or waited on a hung shutdown).
    async function creatorRollingBack() {
      const registry = createClaimedOwnerRegistry()
      const run = deferred<void>()
      run.promise.catch(() => undefined)
      const earlyJoinerSpawn = vi.fn(async () => ({ ptyId: 'never' }))
      const created = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }), runSettled: run.promise }))
      expect(created.disposition).toBe('created')
      // Joined before the failure: this one joined the creator's run and shares its fate.
      const earlyJoiner = registry.ensure(args({ spawn: earlyJoinerSpawn }))
      earlyJoiner.catch(() => undefined)
      registry.release(created.owner.ptyId, created.owner.generation)
      return { registry, run, created, earlyJoiner, earlyJoinerSpawn }
    }

    it('a new ensure does not join the failing run: it waits for the rollback, then spawns its own owner', async () => {
      const { registry, run, earlyJoiner, earlyJoinerSpawn } = await creatorRollingBack()
      const spawn = vi.fn(async () => ({ ptyId: 'p2' }))
      let joined = false
      const late = registry.ensure(args({ spawn, onJoin: () => (joined = true) }))
      await Promise.resolve()
      // Not while the creator's process may still be running: one live PTY per key.
      expect(spawn).not.toHaveBeenCalled()
      expect(registry.find({ key: 'k' })).toBeNull()
      const failure = new Error('rolled back')
      run.reject(failure)
      await expect(earlyJoiner).rejects.toBe(failure)
      expect(earlyJoinerSpawn).not.toHaveBeenCalled()
      const result = await late
      expect(result).toMatchObject({ disposition: 'created', owner: { ptyId: 'p2' } })
      expect(joined).toBe(false)
      expect(spawn).toHaveBeenCalledTimes(1)
      expect(registry.owners().map((owner) => owner.ptyId)).toEqual(['p2'])
    })

    it('a released reservation whose run then commits (its PTY exited meanwhile) is not made live: the next ensure spawns anew', async () => {
      const { registry, run, created, earlyJoiner } = await creatorRollingBack()
      run.resolve()
      // The early joiner joined the run, which committed: it adopts that owner.
      expect((await earlyJoiner).owner).toEqual(created.owner)
      expect(registry.owners()).toEqual([])
      const next = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p3' }) }))
      expect(next).toMatchObject({ disposition: 'created', owner: { ptyId: 'p3' } })
    })

    it('release is fenced by generation for a reservation too', async () => {
      const registry = createClaimedOwnerRegistry()
      const run = deferred<void>()
      const created = await registry.ensure(args({ spawn: async () => ({ ptyId: 'p1' }), runSettled: run.promise }))
      registry.release('p1', 'another-generation')
      const joiner = registry.ensure(args({ spawn: async () => ({ ptyId: 'p2' }) }))
      run.resolve()
      expect(await joiner).toMatchObject({ disposition: 'adopted', owner: created.owner })
      expect(registry.owners()).toEqual([created.owner])
    })
  })
})
