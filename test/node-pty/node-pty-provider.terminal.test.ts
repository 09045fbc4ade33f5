import { setTimeout as sleep } from 'node:timers/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { FLOW_CONTROL_HIGH_WATERMARK_CHARS } from '../../src/controller/flow-control.js'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, liveChildrenOf, procRow, waitFor } from './pty-test-support.js'

let provider: NodePtyProvider
let controller: PtyController

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  controller = createPtyController({ provider })
})

/**
 * How long the stalled consumer waits before it checks that the producer made no progress: without
 * the pause, the whole flood below would have arrived many times over by then.
 */
const STALL_MS = 300

describe('terminal handles over real PTYs (node-pty)', () => {
  it('a stalled for-await pauses the real process; pulling again resumes it with nothing lost', async () => {
    const total = 2_000_000
    // Only 'x' and no newline: the line discipline passes the bytes through unchanged.
    const terminal = await controller.spawnTerminal({
      file: '/bin/sh',
      args: ['-c', `head -c ${total} /dev/zero | tr '\\0' x; printf END`],
    })
    let delivered = 0
    terminal.onData(({ data }) => {
      delivered += data.length
    })
    const output = terminal.output()
    const received: string[] = []
    // Two pulls, then the loop body is slow.
    for (let i = 0; i < 2; i += 1) {
      const next = await output.next()
      if (next.done === true) throw new Error('the output ended early')
      received.push(next.value)
    }
    // The loop body is now "busy": no pull, so nothing more is acknowledged.
    await waitFor(() => (controller.getFlowControlState(terminal.id)?.paused === true ? true : undefined), 'the pause')
    await sleep(STALL_MS)
    expect(delivered).toBeGreaterThan(FLOW_CONTROL_HIGH_WATERMARK_CHARS)
    expect(delivered).toBeLessThan(total / 2) // the producer is held back by the kernel…
    expect(isDead(terminal.pid!)).toBe(false) // …alive, not finished
    expect(procRow(terminal.pid!)).not.toBeNull()

    for await (const chunk of output) received.push(chunk)
    expect(received.join('')).toBe(`${'x'.repeat(total)}END`)
    await expect(terminal.exited).resolves.toMatchObject({ cause: { kind: 'exited', exitCode: 0 } })
    expect(controller.getFlowControlState(terminal.id)?.paused).toBe(false)
  })

  it('an iterator opened and forgotten under a real flood is bounded: it overruns, and the program runs on', async () => {
    const forgiving = createPtyController({ provider, flowControl: { pauseMaxHoldMs: 200 } })
    const faults: string[] = []
    forgiving.on('error', (error) => faults.push(error.code))
    try {
      const terminal = await forgiving.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exec yes'] })
      let delivered = 0
      terminal.onData(({ data }) => {
        delivered += data.length
      })
      const forgotten = terminal.output({ maxQueuedChars: 1_000_000 })
      // Held paused for the maximum hold, then forgiven; from there the flood fills its queue.
      await waitFor(() => (faults.includes('output_overrun') ? true : undefined), 'the overrun', 10_000)
      expect(faults.slice(0, 2)).toEqual(['consumer_not_acknowledging', 'output_overrun'])
      const atOverrun = delivered
      await waitFor(() => (delivered > atOverrun + 2_000_000 ? true : undefined), 'output after the overrun')
      await expect(forgotten.next()).rejects.toMatchObject({ code: 'output_overrun', ptyId: terminal.id })
      await expect(terminal.stop()).resolves.toBe(true)
    } finally {
      await forgiving.dispose()
    }
  })

  it('await using leaves no process behind (checked in /proc)', async () => {
    let pid = 0
    let child = 0
    {
      await using terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'echo READY; sleep 30'] })
      pid = terminal.pid!
      let screen = ''
      terminal.onData(({ data }) => {
        screen += data
      })
      await waitFor(() => (screen.includes('READY') ? true : undefined), 'READY')
      child = await waitFor(() => liveChildrenOf(pid)[0], 'the sleep child')
      expect(isDead(pid)).toBe(false)
    }
    expect(isDead(pid)).toBe(true) // verified before the scope was left
    // The hang-up reaches the whole process group; the child's own death may trail the shell's by
    // a scheduler tick, so wait for it rather than sample it.
    await waitFor(() => (isDead(child) ? true : undefined), 'the sleep child to die')
    expect(liveChildrenOf(pid)).toEqual([])
  })

  it("an output() loop over a bytes-mode terminal (which it cannot read) does not hold the process back", async () => {
    const bytesProvider = createNodePtyProvider({ output: 'bytes' })
    const own = createPtyController({ provider: bytesProvider })
    const errors: string[] = []
    own.on('error', (error) => errors.push(error.code))
    let delivered = 0
    own.on('bytes', ({ bytes }) => {
      delivered += bytes.length
    })
    try {
      const total = 1_000_000
      const terminal = await own.spawnTerminal({ file: '/bin/sh', args: ['-c', `head -c ${total} /dev/zero | tr '\\0' x`] })
      const chunks: string[] = []
      for await (const chunk of terminal.output()) chunks.push(chunk)
      expect(chunks).toEqual([]) // handles carry text only
      await expect(terminal.exited).resolves.toMatchObject({ cause: { kind: 'exited', exitCode: 0 } })
      expect(delivered).toBe(total)
      // Not paused for an iterator that can never acknowledge (it was, until the cap forgave it: reported).
      expect(errors).toEqual([])
    } finally {
      await own.dispose()
      await bytesProvider.dispose()
    }
  })

  it('await using left while the controller is being disposed returns once the process is gone', async () => {
    const own = createPtyController({ provider })
    let pid = 0
    let disposing: Promise<void> | undefined
    {
      // Ignores the hang-up: the dispose has to escalate to a kill, which takes a while.
      await using terminal = await own.spawnTerminal({ file: '/bin/sh', args: ['-c', 'trap "" HUP; echo READY; while :; do sleep 1; done'] })
      pid = terminal.pid!
      let screen = ''
      terminal.onData(({ data }) => {
        screen += data
      })
      await waitFor(() => (screen.includes('READY') ? true : undefined), 'READY')
      disposing = own.dispose() // the extension's deactivate, as the scope ends
    }
    expect(isDead(pid)).toBe(true)
    await disposing
  })
})
