/**
 * A consumer's late calls after `dispose()`, with real processes: an ack from a renderer's write
 * callback (as VS Code does) and the other per-PTY calls are harmless answers, never a throw.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, waitFor } from './pty-test-support.js'

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined

expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
})

describe('after dispose (node-pty)', () => {
  it('late acks, writes, resizes, kills and queries from async callbacks answer harmlessly', async () => {
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const live = controller
    let output = ''
    // The renderer acks when its (async) write callback fires: after dispose, for the last chunks.
    const lateCalls: Promise<unknown>[] = []
    live.on('data', ({ ptyId, data }) => {
      output += data
      lateCalls.push(
        new Promise((resolve, reject) =>
          setTimeout(() => {
            try {
              live.acknowledgeData(ptyId, data.length)
              resolve(undefined)
            } catch (error) {
              reject(error)
            }
          }, 50),
        ),
      )
    })
    const { id, pid } = await live.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; sleep 30'] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    await live.dispose()
    expect(isDead(pid!)).toBe(true)
    await Promise.all(lateCalls)
    expect(lateCalls.length).toBeGreaterThan(0)
    expect(() => live.acknowledgeData(id, 5)).not.toThrow()
    expect(live.write(id, 'echo late\r', 'driving')).toBe(false)
    expect(live.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'controller_disposed' })
    expect(live.resize(id, 100, 30)).toBe(false)
    expect(live.kill(id)).toBe(false)
    await expect(live.stopAndWait(id)).resolves.toBe(false)
    expect(live.hasPty(id)).toBeNull()
    await expect(live.getCwd(id)).resolves.toBeNull()
    await expect(live.getForegroundProcess(id)).resolves.toBeNull()
    await expect(live.probePtyLiveness(id)).resolves.toBeNull()
    await expect(live.spawn({})).rejects.toMatchObject({ code: 'controller_disposed' })
  })
})
