/**
 * An orchestrator stops a job whose spawn is still in flight (`stopAndWait(id)` in the same turn
 * as `spawn({ sessionId: id })`), over real PTYs. The node-pty provider starts the process only
 * after its asynchronous preparation, so at the call no host knows the id. Before the fix the
 * stop answered `true` at once and the spawn then published a live PTY that ran on, no exit ever
 * coming (a scale run: every such job of 40 left running). See test/controller/stop-while-spawning.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import type { PtyControllerExitEvent } from 'ptykit/controller'
import { expectNoChildLeftBehind, isDead } from './pty-test-support.js'

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined
expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
})

describe('node-pty: stopAndWait of a job whose spawn is in flight', () => {
  it('answers true only once the process it started is gone, and its exit is an operator close', async () => {
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const spawned = controller.spawn({ sessionId: 'job', file: '/bin/sh', args: ['-c', 'exec sleep 600'] })
    const stopped = controller.stopAndWait('job', { timeoutMs: 10_000 })
    const { pid, incarnationId } = await spawned
    expect(await stopped).toBe(true)
    expect(isDead(pid!)).toBe(true)
    expect(exits.map((exit) => [exit.ptyId, exit.incarnationId, exit.cause])).toEqual([['job', incarnationId, { kind: 'operator_close' }]])
    expect(controller.hasPty('job')).toBe(false)
  })
})
