import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'

/**
 * `onPtySpawnCommitted` is a host callback the controller calls as soon as the process exists. An
 * `async` one (a host that records the commit in its database) whose promise rejects was an
 * unhandled rejection, which ends a Node process by default. It is reported on `error`
 * (`listener_threw`) instead; the spawn, which does not wait for the hook, goes on.
 */
describe('an async onPtySpawnCommitted hook whose promise rejects', () => {
  const unhandled = recordUnhandledRejections()

  it('is reported listener_threw, not an unhandled rejection', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    const failure = new Error('database down')
    const reply = await controller.spawn({
      onPtySpawnCommitted: async () => {
        throw failure
      },
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled).toEqual([])
    expect(errors.map((error) => [error.code, error.cause])).toEqual([['listener_threw', failure]])
    expect(errors[0]?.message).toMatch(/onPtySpawnCommitted/)
    expect(controller.hasPty(reply.id)).toBe(true)
    await controller.dispose()
  })

  it('a hook that throws still fails the spawn with commit_failed, and nothing is left running', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    await expect(
      controller.spawn({
        onPtySpawnCommitted: () => {
          throw new Error('sync failure')
        },
      }),
    ).rejects.toMatchObject({ code: 'commit_failed' })
    await provider.settle()
    expect(provider.livePtyIds()).toEqual([])
    await controller.dispose()
  })
})
