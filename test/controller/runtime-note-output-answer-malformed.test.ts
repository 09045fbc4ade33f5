// A host's runtime counts the output (`notePtyOutput`) and answers the PTY's new sequence, which
// every `data` event carries as `seq`. An answer that is not a sequence ("x", NaN, -1, nothing) was
// trusted: the next events carried `seq: "x5"` or NaN. The controller now counts on from its own
// sequence and reports the answer (`bookkeeping_failed`, naming notePtyOutput and the value) — once
// per PTY, not per chunk (a runtime that always fails reported every chunk, a throw too).
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
      fake.emitData('p', 'de')
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(seqs).toEqual([5, 8, 10])
      expect(errors.length).toBe(1)
      expect(errors[0]!.code).toBe('bookkeeping_failed')
      expect(errors[0]!.ptyId).toBe('p')
      expect(errors[0]!.message).toMatch(/^The runtime's notePtyOutput answered .+: expected an output sequence \(a finite number ≥ 0\) \(reported once for this PTY/)
      await controller.dispose()
    })
  }

  it('a runtime that throws from notePtyOutput is reported once per PTY, its output counted by the controller', async () => {
    const fake = createFakePtyProvider()
    const runtime = {
      ...createInMemoryPtyRuntime(),
      notePtyOutput: (): number => {
        throw new Error('counter down')
      },
    }
    const controller = createPtyController({ provider: fake, runtime })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    const seqs: unknown[] = []
    controller.on('data', (event) => seqs.push(`${event.ptyId}:${event.seq}`))
    await controller.spawn({ sessionId: 'p', file: '/bin/sh' })
    await controller.spawn({ sessionId: 'q', file: '/bin/sh' })
    for (let i = 0; i < 5; i++) {
      fake.emitData('p', 'ab')
      fake.emitData('q', 'c')
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seqs.filter((s) => String(s).startsWith('p:'))).toEqual(['p:2', 'p:4', 'p:6', 'p:8', 'p:10'])
    expect(errors.map((error) => `${error.code} ${error.ptyId} ${(error.cause as Error).message}`)).toEqual(['bookkeeping_failed p counter down', 'bookkeeping_failed q counter down'])
    expect(errors[0]!.message).toMatch(/^The runtime threw from notePtyOutput \(reported once for this PTY/)
    await controller.dispose()
  })
})
