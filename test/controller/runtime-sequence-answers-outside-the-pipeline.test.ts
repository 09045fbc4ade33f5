// The runtime's output-sequence answers the controller reads outside the spawn pipeline's checked
// stage 11: the rebase of an `attach()` (which calls the hook itself, as a spawn's re-attach does
// through the pipeline), and the sequence read for a PTY committed without a reconciled one (no
// `providerSequence` in the reply, or the runtime refused it). A malformed answer there ("seventeen",
// NaN, -1) was trusted as the spawn path's was before its fix: it became the PTY's output sequence,
// and a controller counting on its own published `seq: "seventeen3"` or NaN.
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { providerWithoutSequence } from '../support/without-provider-sequence.js'

const MALFORMED: readonly unknown[] = ['seventeen', Number.NaN, -1, Number.POSITIVE_INFINITY]

/** The in-memory runtime without `notePtyOutput`: the controller counts each PTY's output itself. */
function countingRuntime() {
  const { notePtyOutput: _counted, ...runtime } = createInMemoryPtyRuntime()
  return runtime
}

describe("attach(): the runtime's sequence rebase answering neither a sequence nor null", () => {
  for (const answer of MALFORMED) {
    it(`${String(answer)}: the attach answers false, the rebase undone and reported; no data event carries it`, async () => {
      const fake = createFakePtyProvider()
      await fake.spawn({ sessionId: 'elsewhere', file: '/bin/sh' })
      const inner = countingRuntime()
      let undone = 0
      let malformed = true
      const runtime = {
        ...inner,
        synchronizePtyOutputSequenceFromProvider: (...args: Parameters<typeof inner.synchronizePtyOutputSequenceFromProvider>) => {
          const reconciled = inner.synchronizePtyOutputSequenceFromProvider(...args)
          return malformed ? (answer as number) : reconciled
        },
        undoPtyOutputSequenceSync: (id: string) => {
          undone++
          inner.undoPtyOutputSequenceSync(id)
        },
      }
      const controller = createPtyController({ provider: fake, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const seqs: unknown[] = []
      controller.on('data', (event) => seqs.push(event.seq))

      await expect(controller.attach('elsewhere')).resolves.toBe(false)
      expect(undone).toBe(1)
      expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', 'elsewhere']])
      expect(errors[0]!.message).toMatch(
        /^The runtime's synchronizePtyOutputSequenceFromProvider answered .+ for PTY "elsewhere": expected the reconciled sequence \(a finite number ≥ 0\) or null$/,
      )
      fake.emitData('elsewhere', 'abc')
      expect(seqs).toEqual([])
      // Left running (an attach never started it), and a later attach with a sound answer works.
      expect(fake.livePtyIds()).toEqual(['elsewhere'])
      malformed = false
      await expect(controller.attach('elsewhere')).resolves.toBe(true)
      fake.emitData('elsewhere', 'abc')
      await fake.settle()
      expect(seqs.every((seq) => typeof seq === 'number' && Number.isFinite(seq))).toBe(true)
      expect(seqs).toHaveLength(1)
      await controller.dispose({ stopPtys: false })
    })
  }
})


describe("a committed PTY's sequence read from the runtime's getPtyOutputSequence, answering no sequence", () => {
  for (const answer of MALFORMED) {
    it(`${String(answer)}: reported, and the controller counts from 0 (data events keep numeric sequences)`, async () => {
      const { fake, provider } = providerWithoutSequence()
      // A runtime without a sequence rebase: the stream start reads nothing, and the committed
      // record reads the runtime's sequence itself. Sound for the read before the PTY is committed
      // (the pipeline's stage 5, which refuses a malformed answer): malformed for the record's.
      const { synchronizePtyOutputSequenceFromProvider: _rebase, ...withoutRebase } = countingRuntime()
      let reads = 0
      const runtime = { ...withoutRebase, getPtyOutputSequence: () => (reads++ < 1 ? 0 : (answer as number)) }
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const seqs: unknown[] = []
      controller.on('data', (event) => seqs.push(event.seq))

      await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
      fake.emitData('p', 'abc')
      fake.emitData('p', 'de')
      await fake.settle()
      expect(seqs).toEqual([3, 5])
      expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', 'p']])
      expect(errors[0]!.message).toMatch(/^The runtime's getPtyOutputSequence answered .+ for PTY "p": expected an output sequence \(a finite number ≥ 0\)$/)
      await controller.dispose()
    })
  }
})
