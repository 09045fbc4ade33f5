// A host's claim registry answers `ensure` with the owner a claimed spawn adopts, and the pipeline
// publishes that owner's `pid` as the PTY's (`outcome.result.pid`; under a controller, the reply,
// the `spawn` event, the handle). A pid of -1, 0, NaN or 1.5 was published as is: a host that
// signals it would signal every process it may (-1) or its own process group (0). Such an answer
// is now refused like any other the pipeline cannot read: `claim_ownership_unknown`, naming
// `ensure` and showing the answer; the live owner is left running, its claim held.
import { describe, expect, it } from 'vitest'
import { createRuntimePtySpawnState, executeRuntimePtySpawn, isPtySpawnError, type ClaimedOwnerRegistry, type EnsureClaimResult, type PtySpawnError } from '../../src/spawn/index.js'
import { createHarness, rejectionOf } from './harness.js'

describe('a claim registry whose adopted owner has a pid that is not one', () => {
  for (const pid of [-1, 0, Number.NaN, 1.5, '42']) {
    it(`${String(pid)} (${typeof pid}): claim_ownership_unknown naming ensure and the answer; the owner runs on`, async () => {
      const h = createHarness({ provider: { scheduling: 'macrotask' } })
      const owner = await h.spawn({ claim: { key: 'agent' } })
      let answer: unknown
      const claims: ClaimedOwnerRegistry = {
        ...h.claims,
        ensure: async (args) => {
          const real = await h.claims.ensure(args)
          answer = { ...real, owner: { ...real.owner, pid } }
          return answer as EnsureClaimResult
        },
      }
      const error = (await rejectionOf(executeRuntimePtySpawn(createRuntimePtySpawnState({ ...h.deps, claims }, { claim: { key: 'agent' } })))) as PtySpawnError
      expect(isPtySpawnError(error)).toBe(true)
      expect([error.code, error.outcome]).toEqual(['claim_ownership_unknown', 'not_started'])
      expect(error.message).toContain(`its owner's \`pid\` is neither absent nor a positive integer, got `)
      expect(answer).toMatchObject({ disposition: 'adopted' })
      expect(h.provider.getPty(owner.result.id)?.live).toBe(true)
      expect(h.claims.owners()).toMatchObject([{ claimKey: 'agent', ptyId: owner.result.id }])
      expect(h.runtime.inspect().pendingRegistrations).toEqual([])
    })
  }

  it('a positive integer pid is published (unchanged)', async () => {
    const h = createHarness({ provider: { scheduling: 'macrotask' } })
    const owner = await h.spawn({ claim: { key: 'agent' } })
    const claims: ClaimedOwnerRegistry = {
      ...h.claims,
      ensure: async (args) => {
        const real = await h.claims.ensure(args)
        return { ...real, owner: { ...real.owner, pid: 4242 } }
      },
    }
    const adopted = await executeRuntimePtySpawn(createRuntimePtySpawnState({ ...h.deps, claims }, { claim: { key: 'agent' } }))
    expect(adopted.result).toMatchObject({ id: owner.result.id, pid: 4242, isReattach: true })
  })
})
