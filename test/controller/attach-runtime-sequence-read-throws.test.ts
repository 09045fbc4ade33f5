// `attach(ptyId)` reads the runtime's output sequence before it asks the provider (the pipeline's
// stage 5). A host's runtime that throws there must make the attach answer `false` (its contract:
// `false` on any failure), and leave nothing of the attach behind: the id is not "coming" (a `kill`
// of it answers `false`, nothing to stop), and a later attach of the live PTY works.
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

describe('attach with a runtime whose getPtyOutputSequence throws', () => {
  it('answers false and leaves no attach in flight', async () => {
    const fake = createFakePtyProvider()
    await fake.spawn({ sessionId: 'elsewhere', file: '/bin/sh' })
    const inner = createInMemoryPtyRuntime()
    let failing = true
    const runtime = {
      ...inner,
      getPtyOutputSequence: (ptyId: string) => {
        if (failing) throw new Error('runtime getPtyOutputSequence is down')
        return inner.getPtyOutputSequence(ptyId)
      },
    }
    const controller = createPtyController({ provider: fake, runtime })
    await expect(controller.attach('elsewhere')).resolves.toBe(false)
    // Nothing is coming under the id: a kill has nothing to stop.
    expect(controller.kill('elsewhere')).toBe(false)
    failing = false
    await expect(controller.attach('elsewhere')).resolves.toBe(true)
    expect(controller.hasPty('elsewhere')).toBe(true)
    await controller.dispose()
  })
})
