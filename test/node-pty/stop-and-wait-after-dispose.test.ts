/**
 * A host's late `stopAndWait(id)` — from timer and promise callbacks, as tabs close while the app
 * quits — during and after `dispose()`, over real processes. Before, it answered `false` at once,
 * even for a PTY disposal was about to verify stopped (and a terminal handle's `stop()` waited for
 * disposal instead). Now both wait for disposal's verdict of the PTY: `true` exactly when its stop
 * was verified — and then the process is gone. Over the fake: test/controller/stop-and-wait-after-dispose.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyTerminal } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, waitFor } from './pty-test-support.js'

const made: { provider: NodePtyProvider; controller: PtyController }[] = []

expectNoChildLeftBehind(async () => {
  for (const { provider, controller } of made) {
    await controller.dispose()
    await provider.dispose()
  }
})

/** PTYs at once: a window closing with a hundred terminals, each view's teardown calling `stopAndWait` late. */
const PTYS_AT_SCALE = 100

type LateAnswer = { answer: boolean; deadWhenAnswered: boolean }

describe('stopAndWait from async callbacks during and after dispose (node-pty, at scale)', () => {
  it(
    `${PTYS_AT_SCALE} PTYs: true once disposal verified each stop (the process is gone by then), from the controller and from each handle; none left running`,
    async () => {
      const provider = createNodePtyProvider()
      // Programs that ignore the hang-up: disposal's stop of each lasts until its force (1 s), so
      // the late calls come while it is still under way.
      const controller = createPtyController({ provider, stop: { forceAfterMs: 1_000 } })
      made.push({ provider, controller })
      const exits: string[] = []
      controller.on('exit', (event) => exits.push(event.cause.kind))
      const terminals: PtyTerminal[] = []
      for (let start = 0; start < PTYS_AT_SCALE; start += 10) {
        const batch = Array.from({ length: Math.min(10, PTYS_AT_SCALE - start) }, () =>
          controller.spawnTerminal({ file: '/bin/sh', args: ['-c', "trap '' HUP; exec sleep 600"] }),
        )
        terminals.push(...(await Promise.all(batch)))
      }
      const late = (call: () => Promise<boolean>, pid: number): Promise<LateAnswer> =>
        call().then((answer) => ({ answer, deadWhenAnswered: isDead(pid) }))
      const disposing = controller.dispose()
      const during = await Promise.all(
        terminals.flatMap((terminal) => [
          new Promise<LateAnswer>((resolve, reject) =>
            setTimeout(() => late(() => controller.stopAndWait(terminal.id), terminal.pid!).then(resolve, reject), 0),
          ),
          Promise.resolve().then(() => late(() => controller.stopAndWait(terminal.id, { timeoutMs: 30_000 }), terminal.pid!)),
          Promise.resolve().then(() => late(() => terminal.stop(), terminal.pid!)),
        ]),
      )
      await disposing
      // Every stop was verified (before: false at once from the controller), and a true is the truth.
      expect(during).toEqual(terminals.flatMap(() => Array.from({ length: 3 }, () => ({ answer: true, deadWhenAnswered: true }))))
      const after = await Promise.all(
        terminals.map((terminal) => new Promise<boolean>((resolve, reject) => setTimeout(() => controller.stopAndWait(terminal.id).then(resolve, reject), 0))),
      )
      expect(after).toEqual(terminals.map(() => true))
      expect(await Promise.all(terminals.map((terminal) => terminal.stop()))).toEqual(terminals.map(() => true))
      expect(exits).toEqual(terminals.map(() => 'operator_close'))
      expect(await provider.listProcesses()).toEqual([])
    },
    120_000,
  )

  it('false for a PTY dispose({ stopPtys: false }) let go: it still runs', async () => {
    const provider = createNodePtyProvider()
    const controller = createPtyController({ provider })
    made.push({ provider, controller })
    const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    await controller.dispose({ stopPtys: false })
    expect(await new Promise<boolean>((resolve, reject) => setTimeout(() => controller.stopAndWait(terminal.id).then(resolve, reject), 0))).toBe(false)
    expect(await terminal.stop()).toBe(false)
    expect(isDead(terminal.pid!)).toBe(false)
  })
})

describe('kill after dispose() gave up on a stop (node-pty)', () => {
  it('a late kill of a PTY left stop_unverified still reaches the real process with a forced shutdown (before: false, it ran on)', async () => {
    const provider = createNodePtyProvider()
    // A host whose stops fail while the app quits (an overloaded machine), then recover.
    let stopsFail = true
    const flaky: typeof provider = Object.create(provider) as typeof provider
    flaky.shutdown = (id, options) => (stopsFail ? Promise.reject(new Error('host busy')) : provider.shutdown(id, options))
    const controller = createPtyController({ provider: flaky })
    made.push({ provider, controller })
    const exits: string[] = []
    controller.on('exit', (event) => exits.push(event.cause.kind === 'unknown' ? event.cause.reason : event.cause.kind))
    const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    await controller.dispose()
    expect(exits).toEqual(['stop_unverified'])
    expect(isDead(terminal.pid!)).toBe(false)
    stopsFail = false
    expect(await new Promise<boolean>((resolve) => setTimeout(() => resolve(controller.kill(terminal.id)), 0))).toBe(true)
    await waitFor(() => (isDead(terminal.pid!) ? true : undefined), 'the process to die')
  })
})
