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
    let accepted = 0
    let refusal: unknown
    for (let i = 0; i < 32; i += 1) {
      const settlement = await controller.writeWithSettlement(id, chunk, 'driving')
      if (settlement.kind !== 'accepted') {
        refusal = settlement
        break
      }
      accepted += chunk.length
    }
    expect(refusal).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
    expect(accepted).toBeGreaterThanOrEqual(256 * KiB)
    expect(accepted).toBeLessThanOrEqual(512 * KiB)
  }, 30_000)
})
