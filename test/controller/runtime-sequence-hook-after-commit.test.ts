// A host's own runtime, under a provider whose spawn reply carries no `providerSequence` (the field
// is optional): once the pipeline committed the PTY, the controller tells the runtime the new
// process streams from its first byte (`synchronizePtyOutputSequenceFromProvider`, a `reset`). A
// runtime that throws there must not turn a committed, running PTY into a failed spawn nobody
// tracks: the spawn resolves, the PTY is tracked and stoppable, and the failure is reported.
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { providerWithoutSequence } from '../support/without-provider-sequence.js'


describe('a runtime hook that throws after the pipeline committed', () => {
  for (const hook of ['synchronizePtyOutputSequenceFromProvider', 'getPtyOutputSequence'] as const) {
    it(`${hook} throwing after the commit leaves the spawned PTY tracked, not orphaned`, async () => {
      const { fake, provider } = providerWithoutSequence()
      const inner = createInMemoryPtyRuntime()
      let calls = 0
      const runtime = {
        ...inner,
        [hook]: (...args: never[]) => {
          // The pipeline's own call (stage 5 reads the sequence) passes; the controller's after the commit throws.
          if (hook === 'getPtyOutputSequence' && calls++ === 0) return (inner[hook] as (...a: never[]) => number)(...args)
          throw new Error(`runtime ${hook} is down`)
        },
      }
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const reply = await controller.spawn({ sessionId: 'pane-1', file: '/bin/sh' })
      expect(reply.id).toBe('pane-1')
      expect(controller.hasPty('pane-1')).toBe(true)
      expect(controller.inventory().allLivePtyIds.has('pane-1')).toBe(true)
      // Reported (once per failed call), naming the hook.
      expect(errors.length).toBeGreaterThan(0)
      for (const error of errors) expect([error.code, error.message, error.ptyId]).toEqual(['bookkeeping_failed', `The runtime threw from ${hook}`, 'pane-1'])
      expect(await controller.stopAndWait('pane-1', { timeoutMs: 1_000 })).toBe(true)
      expect(fake.getPty('pane-1')?.live ?? false).toBe(false)
      await controller.dispose()
    })
  }

  it('getPtyOutputSequence throwing after the commit, under a provider that sends a sequence the runtime refuses (null)', async () => {
    const fake = createFakePtyProvider()
    const inner = createInMemoryPtyRuntime()
    let reads = 0
    const runtime = {
      ...inner,
      synchronizePtyOutputSequenceFromProvider: () => null,
      getPtyOutputSequence: (ptyId: string) => {
        if (reads++ === 0) return inner.getPtyOutputSequence(ptyId)
        throw new Error('runtime getPtyOutputSequence is down')
      },
    }
    const controller = createPtyController({ provider: fake, runtime })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    const reply = await controller.spawn({ sessionId: 'pane-2', file: '/bin/sh' })
    expect(reply.id).toBe('pane-2')
    expect(controller.hasPty('pane-2')).toBe(true)
    expect(errors.map((e) => [e.code, e.message])).toEqual([['bookkeeping_failed', 'The runtime threw from getPtyOutputSequence']])
    expect(await controller.stopAndWait('pane-2', { timeoutMs: 1_000 })).toBe(true)
    await controller.dispose()
  })
})
