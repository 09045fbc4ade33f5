/**
 * A write the pty host holds for a program that does not read settles only once its bytes' fate is
 * known — and meanwhile nothing but the held bytes themselves should stay in memory. Before, the
 * app's pending write request kept the written text (an `async` frame waiting for the answer) and
 * the host's pending reply kept the request it answers (a closure sharing its context): every held
 * write cost twice its size again, as strings, in the app and the host, until it settled.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import type { WriteSettlement } from 'ptykit/contracts'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const cleanups = useCleanups()
const MiB = 1024 * 1024

/** Full garbage collections (`gc` exposed at run time: vitest's workers run without `--expose-gc`). */
function collectGarbage(): void {
  gc()
  gc()
}

describe('pty host: memory of writes held for a program that does not read', () => {
  it('holds the held bytes and not the written text besides (app and host in one process here)', async () => {
    const { socketPath } = await inProcessHost(cleanups, {})
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    let output = ''
    app.onData((event) => {
      output += event.data
    })
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; exec sleep 60'] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    collectGarbage()
    const before = process.memoryUsage()
    // 64 writes of 128 Ki ASCII chars (8 MiB), each a string of its own that the test lets go of.
    const held: Promise<WriteSettlement>[] = []
    for (let i = 0; i < 64; i += 1) held.push(Promise.resolve(app.write(id, `${String.fromCharCode(97 + (i % 26)).repeat(128 * 1024 - 8)}${String(i).padStart(8, '0')}`)))
    // The host took them all: the PTY's input buffer holds a few KiB, the host the rest, as bytes.
    await waitFor(() => (process.memoryUsage().arrayBuffers - before.arrayBuffers > 7 * MiB ? true : undefined), 'the held bytes in the host', 10_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    collectGarbage()
    const whileHeld = process.memoryUsage()
    expect(whileHeld.arrayBuffers - before.arrayBuffers).toBeGreaterThan(7 * MiB)
    // Before: ~16 MiB more heap (the text, once in the app and once in the host).
    expect(whileHeld.heapUsed - before.heapUsed).toBeLessThan(4 * MiB)
    await app.shutdown(id, { timeoutMs: 5_000 })
    expect((await Promise.all(held)).map((settlement) => settlement.kind)).not.toContain('accepted')
  }, 60_000)
})
