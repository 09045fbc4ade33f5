import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'

/**
 * An `error` listener that throws has nowhere left to report to, so the controller drops its
 * throw (docs/controller.md, listener isolation). An `async` one whose promise rejects — a
 * telemetry sink that is down — is the same fault: left alone it is an unhandled rejection, which
 * ends a Node process by default, over a fault the controller survived.
 */
describe('an async error listener whose promise rejects', () => {
  const unhandled = recordUnhandledRejections()

  it('is no unhandled rejection, and the other error listeners still get the fault', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const reported: string[] = []
    controller.on('error', async () => {
      throw new Error('telemetry sink down')
    })
    controller.on('error', (error) => reported.push(error.code))
    controller.on('exit', () => {
      throw new Error('a buggy exit listener')
    })
    const { id } = await controller.spawn({})
    provider.emitExit(id, { exitCode: 1 })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled).toEqual([])
    expect(reported).toEqual(['listener_threw'])
    await controller.dispose()
  })
})
