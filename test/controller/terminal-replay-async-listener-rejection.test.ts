import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'

/**
 * A terminal handle replays the output delivered while its spawn was in flight (a shell's first
 * prompt) to an `onData` listener that subscribes right after `spawnTerminal` resolves. An `async`
 * listener whose promise rejects on that replayed chunk is reported `listener_threw` on `error`, as
 * on every later chunk — never an unhandled rejection, which ends a Node process by default.
 */
describe('a terminal handle replaying held output to an async onData listener', () => {
  const unhandled = recordUnhandledRejections()

  it('reports its rejection as listener_threw, with the cause, and keeps it subscribed', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    provider.scriptNextSpawn({ hang: true, id: 'held' })
    const spawning = controller.spawnTerminal({})
    await provider.settle()
    provider.emitData('held', 'prompt$ ')
    provider.releaseSpawn('held')
    const terminal = await spawning

    const failure = new Error('renderer gone')
    const seen: string[] = []
    terminal.onData(async ({ data }) => {
      seen.push(data)
      throw failure
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled).toEqual([])
    expect(errors.map((error) => [error.code, error.ptyId, error.cause])).toEqual([['listener_threw', 'held', failure]])
    expect(errors[0]?.message).toMatch(/^A `data` listener's promise rejected with Error: renderer gone/)

    provider.emitData('held', 'ls\r\n')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual(['prompt$ ', 'ls\r\n'])
    expect(errors.map((error) => error.code)).toEqual(['listener_threw', 'listener_threw'])
    expect(unhandled).toEqual([])
    await controller.dispose()
  })
})
