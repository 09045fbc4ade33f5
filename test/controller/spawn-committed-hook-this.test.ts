import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import type { PtySpawnOptions } from '../../src/contracts/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/**
 * `onPtySpawnCommitted` is called as a method of the spawn options (`args.onPtySpawnCommitted()`,
 * as `executeRuntimePtySpawn` calls it): a hook written as a method may use `this`. The
 * controller's wrapper that observes an `async` hook's rejection must keep that.
 */
describe('onPtySpawnCommitted through the controller', () => {
  it('is called with the caller\'s options as `this`, as executeRuntimePtySpawn calls it', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const options = {
      committed: 0,
      onPtySpawnCommitted(this: { committed: number }) {
        this.committed += 1
      },
    }
    await controller.spawn(options as PtySpawnOptions)
    expect(options.committed).toBe(1)
    await controller.dispose()
  })
})
