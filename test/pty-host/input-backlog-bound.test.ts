/**
 * The pty host holds input for a program that does not read in its node-pty provider, bounded by
 * `nodePty.maxPendingInputBytes`: the refusal crosses the wire as `input_backlog_full`, to the
 * app's provider and its controller. Before the bound, every write to a program that does not
 * read was accepted and held in the host, without end.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const KiB = 1024

describe('pty host: the bound on input held for a program that does not read', () => {
  it('refuses a write past nodePty.maxPendingInputBytes input_backlog_full, through the controller too', async () => {
    const { socketPath } = await inProcessHost(cleanups, { nodePty: { maxPendingInputBytes: 256 * KiB } })
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    let output = ''
    controller.on('data', (event) => {
      output += event.data
    })
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; exec sleep 60'] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    const chunk = 'q'.repeat(64 * KiB)
    // Every write is a request: the held ones settle only when their bytes reach the PTY (or not),
    // so none is awaited in turn; the first refusal settles at once.
    const settled: Array<{ kind: string } | undefined> = []
    const writes = Array.from({ length: 32 }, (_, i) => {
      const settlement = Promise.resolve(controller.writeWithSettlement(id, chunk, 'driving'))
      void settlement.then((value) => (settled[i] = value))
      return settlement
    })
    const first = await waitFor(() => settled.findIndex((value) => value?.kind === 'refused') + 1 || undefined, 'a refusal', 15_000)
    expect(settled[first - 1]).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
    const accepted = (first - 1) * chunk.length
    expect(accepted).toBeGreaterThanOrEqual(256 * KiB)
    expect(accepted).toBeLessThanOrEqual(512 * KiB)
    // What the host held for `sleep` went with it: the writes it held say so, none says accepted.
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
    const kinds = (await Promise.all(writes.slice(0, first - 1))).map((settlement) => settlement.kind)
    expect(kinds).not.toContain('accepted')
  }, 30_000)
})
