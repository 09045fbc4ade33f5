/**
 * A host that disposes the node-pty provider before (or while) the controller that uses it is
 * still live — `await provider.dispose(); await controller.dispose()`, or the provider disposed
 * from inside an exit listener — over real processes: every controller call after it answers
 * (stops `true`, the process gone), no error is reported, nothing hangs, nothing is left running.
 * Over the fake scripted as the SSH and pty host providers (whose listing then rejects
 * `provider_disposed`): test/controller/provider-disposed-before-controller.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerError } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead } from './pty-test-support.js'

const made: { provider: NodePtyProvider; controller: PtyController }[] = []

expectNoChildLeftBehind(async () => {
  for (const { provider, controller } of made) {
    await controller.dispose()
    await provider.dispose()
  }
})

/** A program that ignores the hang-up: its stop lasts until the force. */
const IGNORES_HANGUP = ['-c', "trap '' HUP; while :; do sleep 0.2; done"]

async function spawned(count: number) {
  const provider = createNodePtyProvider()
  const controller = createPtyController({ provider, stop: { forceAfterMs: 1_000 } })
  made.push({ provider, controller })
  const errors: PtyControllerError[] = []
  const causes: string[] = []
  controller.on('error', (error) => errors.push(error))
  controller.on('exit', (event) => causes.push(event.cause.kind))
  const replies = []
  for (let index = 0; index < count; index++) replies.push(await controller.spawn({ file: '/bin/sh', args: IGNORES_HANGUP }))
  return { provider, controller, errors, causes, replies, ids: replies.map((reply) => reply.id) }
}

describe('the node-pty provider disposed before the controller', () => {
  it('stops under way when the provider is disposed answer true, and each process is gone', async () => {
    const { provider, controller, errors, causes, replies, ids } = await spawned(4)
    const stops = ids.map((id) => controller.stopAndWait(id, { timeoutMs: 10_000 }))
    await provider.dispose()
    expect(await Promise.all(stops)).toEqual(ids.map(() => true))
    expect(replies.every((reply) => isDead(reply.pid!))).toBe(true)
    await controller.dispose()
    expect(causes).toEqual(ids.map(() => 'operator_close'))
    expect(errors).toEqual([])
  }, 30_000)

  it('every call after the provider was disposed answers, with no error', async () => {
    const { provider, controller, errors, causes, replies, ids } = await spawned(3)
    await provider.dispose()
    const [first, second, third] = ids as [string, string, string]
    expect(controller.hasPty(first)).toBe(false)
    expect(await controller.probePtyLiveness(first)).toBe(false)
    expect(controller.kill(second)).toBe(false)
    expect(controller.write(second, 'x', 'driving')).toBe(false)
    expect(await controller.stopAndWait(third)).toBe(true)
    await expect(controller.spawn({})).rejects.toMatchObject({ cause: { code: 'provider_disposed' } })
    await controller.dispose()
    expect(replies.every((reply) => isDead(reply.pid!))).toBe(true)
    expect(causes).toEqual(ids.map(() => 'operator_close'))
    expect(errors).toEqual([])
  }, 30_000)

  it('the provider disposed from inside an exit listener: every stop true, nothing left running', async () => {
    const { provider, controller, errors, replies, ids } = await spawned(3)
    let disposing: Promise<void> | undefined
    controller.once('exit', () => {
      disposing = provider.dispose()
    })
    expect(await controller.stopAndWait(ids[0]!, { timeoutMs: 10_000 })).toBe(true)
    await disposing
    expect(await Promise.all(ids.map((id) => controller.stopAndWait(id)))).toEqual(ids.map(() => true))
    await controller.dispose()
    expect(replies.every((reply) => isDead(reply.pid!))).toBe(true)
    expect(errors).toEqual([])
  }, 30_000)
})
