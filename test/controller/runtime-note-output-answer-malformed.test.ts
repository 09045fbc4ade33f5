// A host's runtime counts the output (`notePtyOutput`) and answers the PTY's new sequence, which
// every `data` event carries as `seq`. An answer that is not a sequence ("x", NaN, -1, nothing) was
// trusted: the next events carried `seq: "x5"` or NaN. The controller now counts on from its own
// sequence and reports the answer (`bookkeeping_failed`, naming notePtyOutput and the value).
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

describe('a runtime whose notePtyOutput answers no sequence', () => {
  for (const answer of ['x', Number.NaN, -1, undefined]) {
    it(`${String(answer)}: data events keep numeric sequences, and the answer is reported`, async () => {
      const fake = createFakePtyProvider()
      const runtime = { ...createInMemoryPtyRuntime(), notePtyOutput: () => answer as unknown as number }
      const controller = createPtyController({ provider: fake, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const seqs: unknown[] = []
      controller.on('data', (event) => seqs.push(event.seq))
      await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
      fake.emitData('p', 'hello')
      fake.emitData('p', 'abc')
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(seqs).toEqual([5, 8])
      expect(errors.length).toBe(2)
      for (const error of errors) {
        expect(error.code).toBe('bookkeeping_failed')
        expect(error.ptyId).toBe('p')
        expect(error.message).toMatch(/^The runtime answered notePtyOutput with .+, not an output sequence \(a finite number ≥ 0\)$/)
      }
      await controller.dispose()
    })
  }
})
