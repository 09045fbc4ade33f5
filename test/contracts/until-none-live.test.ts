/**
 * The closing host's wait for the exits of the sessions it stopped (until-none-live.ts):
 * it resolves once none is live, checked at each exit the host hears.
 *
 * Found: each exit looked at every session still waited for, from the first (`some`): with `n`
 * late sessions ending in the order they were stopped, the close did ~n²/2 looks. Now each check
 * drops the ended sessions at the front of what it waits for and stops at the first live one: O(n)
 * looks in all, whatever the order — counted here (looks, not time).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { untilNoneLive } from '../../src/contracts/until-none-live.js'

/** `n` sessions (numbers) and a wait on them: `end(i)` ends session `i` and calls the watchers, as a host's exit does. */
function waitOn(n: number): { looks: () => number; end: (index: number) => void; resolved: () => boolean; watchers: Set<() => void> } {
  const live = new Set(Array.from({ length: n }, (_, index) => index))
  const watchers = new Set<() => void>()
  let looks = 0
  let resolved = false
  void untilNoneLive([...live], (session) => (looks++, live.has(session)), watchers).then(() => (resolved = true))
  return {
    looks: () => looks,
    end: (index) => {
      live.delete(index)
      for (const watcher of [...watchers]) watcher()
    },
    resolved: () => resolved,
    watchers,
  }
}

const settle = (): Promise<void> => new Promise((done) => setImmediate(done))

describe('untilNoneLive', () => {
  for (const order of ['stopped', 'reverse'] as const) {
    it(`looks at each of 2 000 sessions a bounded number of times, ending in the ${order} order`, async () => {
      const n = 2_000
      const wait = waitOn(n)
      for (let step = 0; step < n; step++) wait.end(order === 'stopped' ? step : n - 1 - step)
      await settle()
      expect(wait.resolved()).toBe(true)
      // Each session is dropped once, and each check finds at most one live: at most 2n + 1 looks.
      expect(wait.looks()).toBeLessThanOrEqual(2 * n + 1)
      expect(wait.watchers.size).toBe(0)
    })
  }

  it('resolves at once when none is live, and for none', async () => {
    const watchers = new Set<() => void>()
    let resolved = 0
    void untilNoneLive([1, 2], () => false, watchers).then(() => resolved++)
    void untilNoneLive([], () => true, watchers).then(() => resolved++)
    await settle()
    expect(resolved).toBe(2)
    expect(watchers.size).toBe(0)
  })

  it('resolves exactly once the last of its sessions ended, whatever the order (and exits of others between)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }).chain((n) => fc.tuple(fc.constant(n), fc.shuffledSubarray(Array.from({ length: n }, (_, index) => index), { minLength: n, maxLength: n }), fc.array(fc.boolean(), { minLength: n, maxLength: n }))),
        async ([n, order, spurious]) => {
          const wait = waitOn(n)
          for (const [step, index] of order.entries()) {
            // An exit heard of a session not waited for (ids n and above) calls the watchers too.
            if (spurious[step] === true) wait.end(n + step)
            await settle()
            expect(wait.resolved()).toBe(false)
            wait.end(index)
          }
          await settle()
          expect(wait.resolved()).toBe(true)
          expect(wait.looks()).toBeLessThanOrEqual(2 * n + 1 + spurious.filter(Boolean).length)
        },
      ),
      { numRuns: 100 },
    )
  })
})
