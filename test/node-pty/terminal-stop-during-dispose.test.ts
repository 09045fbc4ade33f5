// `terminal.stop()` called while `controller.dispose()` is stopping that terminal (the program
// ignores SIGHUP, so the stop takes a while): it answers what the dispose's stop proved, as the
// handle's `[Symbol.asyncDispose]` does. Before: `false` at once for a stop that succeeded moments
// later (helper-136).
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { describe, expect, it } from 'vitest'
import { expectNoChildLeftBehind } from './pty-test-support.js'

expectNoChildLeftBehind(async () => undefined)

describe('terminal.stop() during controller.dispose()', () => {
  it('answers true once the dispose verified the stop, and the exit is an operator close', async () => {
    const provider = createNodePtyProvider()
    const controller = createPtyController({ provider, stop: { forceAfterMs: 300 } })
    try {
      const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', "trap '' HUP; while :; do sleep 0.05; done"] })
      await sleep(200)
      const disposing = controller.dispose()
      await sleep(20)
      const stopped = await terminal.stop({ timeoutMs: 5_000 })
      await disposing
      const exit = await terminal.exited
      expect({ stopped, cause: exit.cause }).toEqual({ stopped: true, cause: { kind: 'operator_close' } })
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 30_000)
})
