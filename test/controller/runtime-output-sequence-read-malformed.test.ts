// When the runtime's rebase gives no sequence (it refused the provider's numbers: `null`), the
// controller starts a PTY's record at the runtime's own `getPtyOutputSequence`, and every data
// event's `seq` counts on from there. An answer that is not a sequence ('x', NaN, -1) was
// trusted: the PTY's data events carried `seq: "x5"` or NaN, for its whole life. The controller now
// starts at 0 and reports the answer (`bookkeeping_failed`, naming getPtyOutputSequence and the
// value) — after a spawn the pipeline committed, and after an attach.
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

const MALFORMED: readonly unknown[] = ['x', Number.NaN, -1, { sequence: 3 }]

/**
 * A runtime that counts no output itself (no notePtyOutput), refuses every rebase, and answers
 * `answer` for its sequence once the PTY is committed or attached — its first read, before the
 * provider is asked (the pipeline's or the attach's stage 5), answers 0: a malformed answer there
 * refuses the spawn or the attach (test/spawn/runtime-sequence-*.test.ts).
 */
function runtimeReading(answer: unknown) {
  const { notePtyOutput: _uncounted, ...inner } = createInMemoryPtyRuntime()
  let reads = 0
  return { ...inner, synchronizePtyOutputSequenceFromProvider: () => null, getPtyOutputSequence: () => (reads++ === 0 ? 0 : (answer as number)) }
}

describe('a runtime whose getPtyOutputSequence answers no sequence', () => {
  for (const answer of MALFORMED) {
    for (const how of ['spawn', 'attach'] as const) {
      it(`${String(typeof answer === 'object' ? JSON.stringify(answer) : answer)}, after ${how}: data events count from 0, and the answer is reported`, async () => {
        const fake = createFakePtyProvider()
        const controller = createPtyController({ provider: fake, runtime: runtimeReading(answer) })
        const errors: PtyControllerError[] = []
        controller.on('error', (error) => errors.push(error))
        const seqs: unknown[] = []
        controller.on('data', (event) => seqs.push(event.seq))
        if (how === 'spawn') {
          await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
        } else {
          await fake.spawn({ sessionId: 'p', file: '/bin/sh' })
          await expect(controller.attach('p')).resolves.toBe(true)
        }
        fake.emitData('p', 'hello')
        fake.emitData('p', 'abc')
        await new Promise((resolve) => setTimeout(resolve, 10))
        expect(seqs).toEqual([5, 8])
        expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', 'p']])
        expect(errors[0]!.message).toMatch(/^The runtime's getPtyOutputSequence answered .+ for PTY "p": expected an output sequence \(a finite number ≥ 0\)$/)
        await controller.dispose()
      })
    }
  }

  it('undefined and null are read as 0, unreported (the seed reads the hook `?? 0`)', async () => {
    for (const answer of [undefined, null]) {
      const fake = createFakePtyProvider()
      const controller = createPtyController({ provider: fake, runtime: runtimeReading(answer) })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const seqs: unknown[] = []
      controller.on('data', (event) => seqs.push(event.seq))
      await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
      fake.emitData('p', 'hello')
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(seqs).toEqual([5])
      expect(errors).toEqual([])
      await controller.dispose()
    }
  })

  it('a sequence is kept (unchanged)', async () => {
    const fake = createFakePtyProvider()
    const controller = createPtyController({ provider: fake, runtime: runtimeReading(40) })
    const seqs: unknown[] = []
    controller.on('data', (event) => seqs.push(event.seq))
    await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
    fake.emitData('p', 'hello')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seqs).toEqual([45])
    await controller.dispose()
  })
})
