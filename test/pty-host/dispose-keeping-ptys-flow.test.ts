// A controller that took part in flow control (an `output()` iterator pulling) is disposed without
// stops while its pty host provider stays connected (PTYs kept for a next controller): the host
// must not go on counting output nobody will acknowledge and pause the program for
// PTY_HOST_ACK_MAX_HOLD_MS. Before: ~1 Mi chars, then nothing for 10 s (helper-136).
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtyController } from 'ptykit/controller'
import { describe, expect, it } from 'vitest'
import { providerOn, hostFixture, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: controller.dispose({ stopPtys: false }) after its output() iterators pulled', () => {
  it('lets the kept program run on: output keeps coming in every half second, no stall', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    cleanups.push(() => app.dispose())
    const controller = createPtyController({ provider: app })
    const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exec yes'] })
    let pulled = 0
    const loop = (async () => {
      try {
        for await (const chunk of terminal.output()) pulled += chunk.length
      } catch {
        // Ended by the dispose.
      }
    })()
    await sleep(500)
    expect(pulled).toBeGreaterThan(0)
    await controller.dispose({ stopPtys: false })
    await loop
    let after = 0
    app.onData(({ id, data }) => {
      if (id === terminal.id) after += data.length
    })
    const perHalfSecond: number[] = []
    for (let i = 0; i < 6; i++) {
      const before = after
      await sleep(500)
      perHalfSecond.push(after - before)
    }
    expect(perHalfSecond.filter((chars) => chars === 0)).toEqual([])
  }, 30_000)
})
