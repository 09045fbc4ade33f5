/**
 * Race test of the node-pty provider's spawn window: a session is wired one microtask after its
 * fork (provider-spawn.ts), so spawns issued together fork back to back. Whatever the interleaving
 * of spawns under shared or minted ids and a `dispose()` issued after any number of microtask hops,
 * with real processes: no process is left running after the dispose, no two started spawns share a
 * caller's id, and every refused spawn is refused for a reason that is true (`pty_id_in_use`: the
 * id is taken; `provider_disposed`: it was disposed first).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, isNodePtyProviderError } from 'ptykit/node-pty'
import { liveChildrenOf, nodePtyAround, waitFor } from './pty-test-support.js'

/** A spawn under a caller's id (`A`, `B`) or a minted one (`null`). */
const spawnOp = fc.constantFrom<'A' | 'B' | null>('A', 'B', null)

/** Resolves after `hops` microtask hops. */
async function afterHops(hops: number): Promise<void> {
  for (let i = 0; i < hops; i++) await undefined
}

describe('node-pty provider: spawns and a dispose in any interleaving', () => {
  it('leaves no process running, starts one process per caller id, and refuses only truly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spawnOp, { minLength: 1, maxLength: 5 }), fc.nat(12), async (ids, disposeAfterHops) => {
        const forked: number[] = []
        const provider = createNodePtyProvider({
          loadNodePty: nodePtyAround((spawn, ...args) => {
            const terminal = spawn(...args)
            forked.push(terminal.pid)
            return terminal
          }),
        })
        // node-pty loaded before the race, as in a warm host.
        await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
        const spawns = ids.map((id) =>
          provider.spawn({ ...(id === null ? {} : { sessionId: id, isNewSession: true }), file: '/bin/sh', args: ['-c', 'sleep 60'] }),
        )
        const disposed = afterHops(disposeAfterHops).then(() => provider.dispose())
        const settled = await Promise.allSettled(spawns)
        await disposed

        const started = settled.flatMap((result, index) => (result.status === 'fulfilled' ? [{ index, id: result.value.id }] : []))
        const named = started.filter(({ index }) => ids[index] !== null).map(({ id }) => id)
        expect(new Set(named).size, `started under a caller's id: ${JSON.stringify(named)}`).toBe(named.length)
        for (const [index, result] of settled.entries()) {
          if (result.status === 'fulfilled') continue
          const error: unknown = result.reason
          const code = isNodePtyProviderError(error) ? error.code : String(error)
          // `pty_id_in_use` only for a caller's id that another spawn of this round started.
          if (code === 'pty_id_in_use') expect(named).toContain(ids[index])
          else expect(code).toBe('provider_disposed')
        }
        // Every process forked was followed, and the dispose stopped it.
        await waitFor(() => (forked.every((pid) => !liveChildrenOf(process.pid).includes(pid)) ? true : undefined), `the forked processes ${forked.join(', ')} to be gone`)
        expect(forked.length - 1).toBe(started.length)
      }),
      { numRuns: 25 },
    )
  }, 120_000)
})
