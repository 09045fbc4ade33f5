// Durations past what `setTimeout` holds (2^31 − 1 ms, ~24.8 days), on the system clock: Node fires
// such a timer after 1 ms (TimeoutOverflowWarning), so a caller who asked to wait "as good as
// forever" got the answer for a timeout that had passed — found by a bug hunt.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/** Longer than any timer in the test needs to fire: the old code fired these after 1 ms. */
const WATCH_MS = 50

const AS_GOOD_AS_FOREVER_MS = 2 ** 32

describe('durations longer than a timer can hold', () => {
  it('waitForRendererSerializer waits for a renderer that registers later instead of answering false at once', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const terminal = await controller.spawnTerminal({})
    const waiting = controller.waitForRendererSerializer(terminal.id, 0, AS_GOOD_AS_FOREVER_MS)
    await sleep(WATCH_MS)
    controller.registerRendererSerializer(terminal.id, () => ({ data: '$ ', cols: 80, rows: 24 }))
    await expect(waiting).resolves.toBe(true)
    await controller.dispose()
  })

  it('stop.unconfirmedAfterMs: a kill is not published stop_unverified before that time', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, stop: { unconfirmedAfterMs: AS_GOOD_AS_FOREVER_MS, defaultDeadlineMs: 0 } })
    const terminal = await controller.spawnTerminal({})
    provider.setShutdownBehaviour(terminal.id, 'never_confirm')
    let exit: unknown = 'none'
    void terminal.exited.then(({ cause }) => (exit = cause))
    expect(terminal.kill()).toBe(true)
    await sleep(WATCH_MS)
    expect(exit).toBe('none')
    expect(controller.hasPty(terminal.id)).toBe(true)
    await controller.dispose()
  })

  it('flowControl.pauseMaxHoldMs: a pause is held until the consumer catches up, not forced off at once', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, flowControl: { pauseMaxHoldMs: AS_GOOD_AS_FOREVER_MS, pauseReassertIntervalMs: AS_GOOD_AS_FOREVER_MS } })
    const terminal = await controller.spawnTerminal({})
    terminal.acknowledgeData(0) // the consumer takes part
    for (let i = 0; i < 150; i += 1) provider.emitData(terminal.id, 'x'.repeat(1_000))
    expect(provider.getPty(terminal.id)?.paused).toBe(true)
    await sleep(WATCH_MS)
    expect(provider.getPty(terminal.id)?.paused).toBe(true)
    terminal.acknowledgeData(150_000)
    expect(provider.getPty(terminal.id)?.paused).toBe(false)
    await controller.dispose()
  })
})
