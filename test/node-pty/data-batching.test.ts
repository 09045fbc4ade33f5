/**
 * `dataBatchMs` against real processes (issue 18.4): a flood's chunks are merged into far fewer
 * `data` (and `bytes`) events, nothing is lost or reordered, and every event precedes the exit —
 * including the window still open when the child exits.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind } from './pty-test-support.js'

const opened: { controller: PtyController; provider: NodePtyProvider }[] = []
expectNoChildLeftBehind(async () => {
  for (const { controller, provider } of opened.splice(0)) {
    await controller.dispose()
    await provider.dispose()
  }
})

const BYTES = 2_000_000

/** A controller with `dataBatchMs` over a fresh provider; counts the provider's own chunks too. */
function open(output: 'string' | 'bytes', dataBatchMs: number) {
  const provider = createNodePtyProvider({ output })
  const controller = createPtyController({ provider, dataBatchMs })
  opened.push({ controller, provider })
  const counts = { providerChunks: 0 }
  provider.onData(() => (counts.providerChunks += 1))
  provider.onBytes(() => (counts.providerChunks += 1))
  return { controller, counts }
}

async function flood(controller: PtyController, kind: 'data' | 'bytes') {
  const order: string[] = []
  let received = 0
  controller.on(kind, (event: { ptyId: string; data?: string; bytes?: Uint8Array }) => {
    const size = event.data?.length ?? event.bytes?.length ?? 0
    received += size
    order.push(kind)
    controller.acknowledgeData(event.ptyId, size)
  })
  const exited = new Promise<void>((resolve) => controller.on('exit', () => resolve()))
  controller.on('exit', () => order.push('exit'))
  await controller.spawn({ file: '/bin/sh', args: ['-c', `head -c ${BYTES} /dev/zero | tr '\\0' a`] })
  await exited
  return { received, events: order.filter((entry) => entry === kind).length, order }
}

describe('dataBatchMs with the node-pty provider', () => {
  it('merges a 2 MB flood into fewer data events, losing nothing, all before the exit', async () => {
    const { controller, counts } = open('string', 5)
    const result = await flood(controller, 'data')
    expect(result.received).toBe(BYTES)
    expect(result.order.at(-1)).toBe('exit')
    expect(result.order.filter((entry) => entry === 'exit')).toHaveLength(1)
    // Coalescing happened: fewer events than the provider's chunks (how many fewer depends on the
    // machine's speed; the bench reports the ratio per MB).
    expect(result.events).toBeLessThan(counts.providerChunks)
  })

  it('merges bytes-mode chunks the same way, as whole bytes', async () => {
    const { controller, counts } = open('bytes', 5)
    const result = await flood(controller, 'bytes')
    expect(result.received).toBe(BYTES)
    expect(result.order.at(-1)).toBe('exit')
    expect(result.events).toBeLessThan(counts.providerChunks)
  })

  it('without dataBatchMs every provider chunk is its own event', async () => {
    const { controller, counts } = open('string', 0)
    const result = await flood(controller, 'data')
    expect(result.received).toBe(BYTES)
    expect(result.events).toBe(counts.providerChunks)
  })
})
