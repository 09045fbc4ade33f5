// `attach(ptyId)` rebases the PTY's output sequence on the provider's (the pipeline's stage 11):
// the runtime's `synchronizePtyOutputSequenceFromProvider` answers the reconciled sequence, or
// `null` when it refuses the provider's numbers. An answer that is neither ('seventeen', NaN, -1)
// was published as the PTY's sequence (data events carried `seq: "seventeen5"`), and a runtime
// that threw there had already superseded the id's previous record — whose later death was then
// never published and released nothing. Now the attach answers `false` (its contract: false on any
// doubt) with a typed report (`bookkeeping_failed`, naming the hook and the answer), the rebase is
// undone, and nothing of the attach is left behind: not the id's previous record, not a "coming"
// id, not an in-flight window.
import { describe, expect, it } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime, type PtySpawnRuntime } from '../../src/spawn/index.js'
import { createHarness, holdAttaches } from './controller-harness.js'

type Answer = { label: string; answer: () => unknown }

const MALFORMED: readonly Answer[] = [
  { label: "'seventeen'", answer: () => 'seventeen' },
  { label: 'NaN', answer: () => Number.NaN },
  { label: '-1', answer: () => -1 },
  { label: 'Infinity', answer: () => Number.POSITIVE_INFINITY },
  { label: '{ value: 3 }', answer: () => ({ value: 3 }) },
]

const THROWS: Answer = {
  label: 'a throw',
  answer: () => {
    throw new Error('runtime synchronizePtyOutputSequenceFromProvider is down')
  },
}

/** The in-memory runtime, whose rebase (applied) answers `answer` while `failing`; undos counted. */
function runtimeAnswering(answer: Answer) {
  const inner = createInMemoryPtyRuntime()
  const counts = { undone: 0, failing: true }
  const runtime: PtySpawnRuntime & typeof inner = {
    ...inner,
    synchronizePtyOutputSequenceFromProvider: (...args) => {
      const reconciled = inner.synchronizePtyOutputSequenceFromProvider(...args)
      return counts.failing ? (answer.answer() as number) : reconciled
    },
    undoPtyOutputSequenceSync: (ptyId) => {
      counts.undone++
      inner.undoPtyOutputSequenceSync(ptyId)
    },
  }
  return { runtime, counts }
}

describe('attach with a runtime whose sequence rebase answers neither a sequence nor null', () => {
  for (const answer of MALFORMED) {
    it(`${answer.label}: false, reported naming the hook and the answer, the rebase undone, nothing published`, async () => {
      const { runtime, counts } = runtimeAnswering(answer)
      const h = createHarness({ controller: { runtime } })
      await h.provider.spawn({ sessionId: 'elsewhere', isNewSession: true })
      await expect(h.run(h.controller.attach('elsewhere'))).resolves.toBe(false)
      expect(h.errors().map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', 'elsewhere']])
      expect(h.errors()[0]!.message).toMatch(
        /^The runtime's synchronizePtyOutputSequenceFromProvider answered .+ for PTY "elsewhere": expected the reconciled sequence \(a finite number ≥ 0\) or null$/,
      )
      expect(counts.undone).toBe(1)
      expect(h.events.filter((entry) => entry.type === 'spawn')).toEqual([])
      // Nothing of the attach is left: the id is not coming (a kill has nothing to stop), its output is nobody's.
      expect(h.controller.kill('elsewhere')).toBe(false)
      h.provider.emitData('elsewhere', 'hello')
      await h.settle()
      expect(h.data()).toEqual([])
      expect(h.provider.getPty('elsewhere')?.live).toBe(true)
      // A runtime that answers again: the attach publishes it, with numeric sequences.
      counts.failing = false
      await expect(h.run(h.controller.attach('elsewhere'))).resolves.toBe(true)
      h.provider.emitData('elsewhere', 'abc')
      await h.settle()
      expect(h.data().map((event) => typeof event.seq)).toEqual(['number'])
      await h.run(h.controller.dispose())
    })
  }

  for (const answer of [MALFORMED[0]!, THROWS]) {
    it(`${answer.label}: the id's previous record is not superseded (its proven death is still published and releases it)`, async () => {
      const { runtime, counts } = runtimeAnswering(answer)
      counts.failing = false
      const h = createHarness({ controller: { runtime } })
      // The controller's PTY, whose stop went unverified: the process ended, its exit report was lost.
      h.provider.scriptNextSpawn({ shutdown: 'exit_unreported' })
      const { id, incarnationId } = await h.run(h.controller.spawn({ sessionId: 'term-1', isNewSession: true }))
      expect(h.controller.kill(id)).toBe(true)
      await h.settle()
      h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
      await h.settle()
      expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable'])
      // Another app's process takes the id; this controller attaches it, and the runtime fails the rebase.
      const other = await h.provider.spawn({ sessionId: id, isNewSession: true })
      expect(other.incarnationId).not.toBe(incarnationId)
      counts.failing = true
      await expect(h.run(h.controller.attach(id))).resolves.toBe(false)
      expect(h.errors().map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', id]])
      expect(h.errors()[0]!.message).toContain('synchronizePtyOutputSequenceFromProvider')
      // The old incarnation is still the controller's: its proven death is published (before: it
      // had been superseded by an attach that published nothing, and its death went unheard).
      await expect(h.run(h.controller.probePtyLiveness(id))).resolves.toBe(false)
      expect(h.liveness().map((event) => [event.verdict.kind, event.incarnationId])).toEqual([
        ['unverifiable', incarnationId],
        ['exited', incarnationId],
      ])
      counts.failing = false
      await expect(h.run(h.controller.attach(id))).resolves.toBe(true)
      expect(h.controller.terminal(id)?.incarnationId).toBe(other.incarnationId)
      await h.run(h.controller.dispose())
    })
  }

  it('a kill that marked the attach in flight still stops what it attached', async () => {
    const { runtime, counts } = runtimeAnswering(MALFORMED[0]!)
    const h = createHarness({ controller: { runtime } })
    await h.provider.spawn({ sessionId: 'elsewhere', isNewSession: true })
    const answerAttaches = holdAttaches(h)
    const attaching = h.controller.attach('elsewhere')
    await h.settle()
    expect(h.controller.kill('elsewhere')).toBe(true)
    answerAttaches()
    await expect(h.run(attaching)).resolves.toBe(false)
    await h.settle()
    expect(counts.undone).toBe(1)
    expect(h.provider.getPty('elsewhere')?.live).toBe(false)
    expect(h.controller.kill('elsewhere')).toBe(false)
    await h.run(h.controller.dispose())
  })
})
