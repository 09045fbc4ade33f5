/**
 * A `stopAndWait` step rejected past the caller's deadline holds its `shutdown_failed` report until
 * the PTY's exit or the unconfirmed-stop window (stop-and-wait.ts, `reportUnlessLanded`). A
 * rejection that arrives once the controller is disposed must not arm that window: every timer was
 * cleared by `dispose`, and one armed after it runs on (holding the process open for
 * `stop.unconfirmedAfterMs`) for a report that is never made.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import type { PtyClock } from '../../src/controller/clock.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

describe('a stop step rejected past its deadline after dispose', () => {
  it('arms no timer once the controller is disposed', async () => {
    const live = new Set<unknown>()
    let disposed = false
    const armedAfterDispose: number[] = []
    const clock: PtyClock = {
      now: () => performance.now(),
      setTimeout: (callback, ms) => {
        if (disposed) armedAfterDispose.push(ms)
        const handle = setTimeout(() => {
          live.delete(handle)
          callback()
        }, ms)
        live.add(handle)
        return handle
      },
      clearTimeout: (handle) => {
        live.delete(handle)
        clearTimeout(handle as ReturnType<typeof setTimeout>)
      },
    }
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, clock, stop: { unconfirmedAfterMs: 60_000 } })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(`${error.code} ${error.ptyId}`))
    const { id } = await controller.spawn({})
    // The provider's stop is still running when the caller's deadline passes; it rejects later.
    const rejects: Array<() => void> = []
    provider.shutdown = (ptyId) =>
      new Promise<void>((_resolve, reject) => {
        rejects.push(() => reject(Object.assign(new Error(`PTY ${ptyId} could not be stopped by its deadline`), { code: 'shutdown_timeout' })))
      })
    expect(await controller.stopAndWait(id, { timeoutMs: 1 })).toBe(false)
    await controller.dispose({ stopPtys: false })
    disposed = true
    for (const reject of rejects.splice(0)) reject()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(armedAfterDispose).toEqual([])
    for (const handle of live) clearTimeout(handle as ReturnType<typeof setTimeout>)
    expect(errors).toEqual([])
  })
})
