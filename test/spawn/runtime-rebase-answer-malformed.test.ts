// A host's runtime answers stage 11 (`synchronizePtyOutputSequenceFromProvider`) with the
// reconciled sequence, or `null` when it refuses the provider's numbers. An answer that is neither
// was trusted: it became the PTY's output sequence, and the controller's data events carried
// `seq: "seventeen5"`. It now fails the spawn with `commit_failed`, naming the hook and showing
// the answer; the started PTY is stopped and the runtime left as it was.
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime, isPtySpawnError, type PtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createHarness, rejectionOf } from './harness.js'

const MALFORMED: readonly unknown[] = ['seventeen', Number.NaN, -1, Number.POSITIVE_INFINITY, { value: 3 }, true]

describe('a runtime whose sequence rebase answers neither a sequence nor null', () => {
  for (const answer of MALFORMED) {
    it(`${String(typeof answer === 'object' ? JSON.stringify(answer) : answer)}: commit_failed naming the hook, the PTY stopped, the rebase undone`, async () => {
      let undone = 0
      const h = createHarness({
        runtimeOverrides: (runtime) => ({
          synchronizePtyOutputSequenceFromProvider: (...args) => {
            runtime.synchronizePtyOutputSequenceFromProvider(...args)
            return answer as number
          },
          undoPtyOutputSequenceSync: (id) => {
            undone++
            runtime.undoPtyOutputSequenceSync(id)
          },
        }),
      })
      const error = (await rejectionOf(h.spawn({ sessionId: 'p', file: '/bin/sh' }))) as PtySpawnError
      expect(isPtySpawnError(error)).toBe(true)
      expect(error.code).toBe('commit_failed')
      expect(error.outcome).toBe('rolled_back')
      expect(error.ptyId).toBe('p')
      expect(error.message).toMatch(/^The runtime's synchronizePtyOutputSequenceFromProvider answered .+ for PTY "p": expected the reconciled sequence \(a finite number ≥ 0\) or null$/)
      expect(undone).toBe(1)
      expect(h.provider.livePtyIds()).toEqual([])
      expect(h.runtime.inspect().pendingRegistrations).toEqual([])
      expect(h.runtime.inspect().registeredPtys).toEqual([])
    })
  }

  it('null (the runtime refused the numbers) and a sequence are accepted', async () => {
    for (const answer of [null, 0, 42]) {
      const h = createHarness({ runtimeOverrides: () => ({ synchronizePtyOutputSequenceFromProvider: () => answer }) })
      const outcome = await h.spawn({ sessionId: 'p', file: '/bin/sh' })
      expect(outcome.reconciledSequence).toBe(answer)
    }
  })

  it('under the controller, the output the PTY wrote while its spawn was in flight is never published (no seq built on the answer)', async () => {
    const fake = createFakePtyProvider()
    const { notePtyOutput: _counted, ...rest } = createInMemoryPtyRuntime()
    const runtime = {
      ...rest,
      // The PTY writes while its spawn is in flight (the provider answered, the pipeline runs on):
      // trusted, the answer became its sequence and this output was published as seq "seventeen3".
      synchronizePtyOutputSequenceFromProvider: (ptyId: string) => {
        fake.emitData(ptyId, 'abc')
        return 'seventeen' as unknown as number
      },
    }
    const controller = createPtyController({ provider: fake, runtime })
    const seqs: unknown[] = []
    controller.on('data', (event) => seqs.push(event.seq))
    await expect(controller.spawn({ sessionId: 'p', file: '/bin/sh' })).rejects.toMatchObject({ code: 'commit_failed' })
    await fake.settle()
    expect(fake.livePtyIds()).toEqual([])
    expect(controller.hasPty('p')).not.toBe(true)
    expect(seqs).toEqual([])
    await controller.dispose()
  })
})
