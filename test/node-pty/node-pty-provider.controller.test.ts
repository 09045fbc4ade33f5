import { beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { isDead, liveChildrenOf, waitFor, expectNoChildLeftBehind } from './pty-test-support.js'

let provider: NodePtyProvider
let controller: PtyController
const exits: PtyControllerExitEvent[] = []
const output = new Map<string, string>()
/** Each PTY's output as it stood when its exit was emitted. */
const outputAtExit = new Map<string, string>()

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  controller = createPtyController({ provider })
  controller.on('exit', (event) => {
    outputAtExit.set(event.ptyId, output.get(event.ptyId) ?? '')
    exits.push(event)
  })
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
})


describe('node-pty provider under the controller', () => {
  it('stopAndWait stops a HUP-ignoring process within its deadline, as an operator close, with its child', async () => {
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; echo READY; sleep 30"] })
    await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    const sleeper = await waitFor(() => liveChildrenOf(reply.pid!)[0], 'the sleep child')
    expect(await controller.stopAndWait(reply.id, { timeoutMs: 3_000 })).toBe(true)
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'operator_close' })
    expect(exit.incarnationId).toBe(reply.incarnationId)
    expect(isDead(reply.pid!)).toBe(true)
    expect(isDead(sleeper)).toBe(true)
  })

  it('passes a self-inflicted SIGKILL through as signaled(9), after all the output', async () => {
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', `head -c 50000 /dev/zero | tr '\\0' b; kill -9 $$`] })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(outputAtExit.get(reply.id)).toBe('b'.repeat(50_000))
  })
})
