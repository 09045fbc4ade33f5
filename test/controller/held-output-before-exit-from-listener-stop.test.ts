import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from '../../src/controller/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'

/**
 * Output that arrived while a spawn was in flight is delivered right after its `spawn` event. A
 * listener of that delivery — a `spawn` listener, or a `data` listener of a held chunk — that stops
 * the PTY (`kill`, `dispose`) on a provider that reports the exit from inside `shutdown` (the fake
 * does; the controller's docs allow it) must still see every held chunk before the `exit`: the
 * process printed them first. Before, the exit was published in the middle, and the rest of the
 * held output was dropped silently (no `outputLoss`).
 */
describe('held output of a spawn is delivered before an exit a listener of its delivery caused', () => {
  async function spawnWithHeldOutput(setup: (controller: PtyController, provider: FakePtyProvider, events: string[]) => void) {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const events: string[] = []
    controller.on('error', (error) => events.push(`error:${error.code}`))
    setup(controller, provider, events)
    controller.on('data', ({ data }) => events.push(`data:${data}`))
    controller.on('outputLoss', () => events.push('outputLoss'))
    controller.on('exit', ({ cause }) => events.push(`exit:${cause.kind}`))
    provider.scriptNextSpawn({ hang: true, id: 'pty' })
    const spawning = controller.spawn({})
    await provider.settle()
    provider.emitData('pty', 'a')
    provider.emitData('pty', 'b')
    provider.emitData('pty', 'c')
    provider.releaseSpawn('pty')
    await spawning
    await provider.settle()
    return { controller, provider, events }
  }

  it('a spawn listener that kills the PTY', async () => {
    const { controller, events } = await spawnWithHeldOutput((controller, _provider, events) => {
      controller.on('spawn', ({ ptyId }) => {
        events.push('spawn')
        controller.kill(ptyId)
      })
    })
    expect(events).toEqual(['spawn', 'data:a', 'data:b', 'data:c', 'exit:operator_close'])
    await controller.dispose()
  })

  it('a data listener that kills the PTY on the first held chunk', async () => {
    const { controller, events } = await spawnWithHeldOutput((controller) => {
      controller.on('data', ({ ptyId, data }) => {
        if (data === 'a') controller.kill(ptyId)
      })
    })
    expect(events).toEqual(['data:a', 'data:b', 'data:c', 'exit:operator_close'])
    await controller.dispose()
  })

  it('a spawn listener that disposes the controller', async () => {
    let disposing: Promise<void> | undefined
    const { events } = await spawnWithHeldOutput((controller, _provider, events) => {
      controller.on('spawn', () => {
        events.push('spawn')
        disposing = controller.dispose()
      })
    })
    await disposing
    expect(events).toEqual(['spawn', 'data:a', 'data:b', 'data:c', 'exit:operator_close'])
  })
})
