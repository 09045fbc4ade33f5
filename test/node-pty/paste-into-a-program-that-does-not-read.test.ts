/**
 * A paste into a program that does not read yet (raw mode, busy or stopped), or reads it slowly:
 * the write's settlement waits (a promise) and costs the app next to nothing meanwhile — no retry
 * loop against the full kernel buffer — and every byte arrives, in order, once the program reads:
 * `accepted` then.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, expect, it } from 'vitest'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { PtyEventLog, waitFor } from './pty-test-support.js'

if (process.platform !== 'linux') throw new Error('These tests read /proc/self/io; run them on Linux')

const dir = mkdtempSync(join(tmpdir(), 'ptykit-unread-paste-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The write system calls this process (every thread of it, libuv's pool included) has made. */
function writeSyscalls(): number {
  const match = /^syscw: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))
  if (match === null) throw new Error('/proc/self/io has no syscw line: this kernel lacks task I/O accounting (CONFIG_TASK_IO_ACCOUNTING)')
  return Number(match[1])
}

it('a 1 MiB paste into a program that reads only later: held, few write attempts while it waits, every byte in order after, accepted then', async () => {
  const provider = createNodePtyProvider()
  const log = new PtyEventLog(provider)
  const sink = join(dir, 'sink')
  const go = join(dir, 'go')
  try {
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.05; done; exec cat > '${sink}'`] })
    await waitFor(() => (log.output(id).includes('READY') ? true : undefined), 'READY')
    const paste = Array.from({ length: 8_192 }, (_, i) => `${String(i).padStart(6, '0')}:é🙂${'x'.repeat(112)}\n`).join('')
    const settlement = provider.write(id, paste)
    expect(settlement).toBeInstanceOf(Promise)
    // The kernel's input buffer is full and nobody reads it for a second.
    await sleep(100)
    const before = writeSyscalls()
    await sleep(1_000)
    const attempts = writeSyscalls() - before
    // Retrying at every turn of the event loop made tens of thousands a second (a core busy); the
    // backing-off retry makes about 20. The bound leaves room for the worker's own writes (its RPC).
    expect(attempts, 'write system calls in 1 s against a full PTY input buffer').toBeLessThan(1_000)
    writeFileSync(go, '')
    const expected = Buffer.from(paste, 'utf8')
    await waitFor(() => {
      try {
        return statSync(sink).size >= expected.length ? true : undefined
      } catch {
        return undefined
      }
    }, 'the whole paste in the sink', 20_000)
    expect(readFileSync(sink).equals(expected)).toBe(true)
    expect(await settlement).toEqual({ kind: 'accepted' })
  } finally {
    await provider.dispose()
  }
})

it('a paste into a program that reads 4 KiB every 50 ms: no retry loop between its reads, every byte in order', async () => {
  const provider = createNodePtyProvider()
  const log = new PtyEventLog(provider)
  const sink = join(dir, 'slow-sink')
  try {
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; while :; do head -c 4096 >> '${sink}'; sleep 0.05; done`] })
    await waitFor(() => (log.output(id).includes('READY') ? true : undefined), 'READY')
    const paste = Array.from({ length: 4_096 }, (_, i) => `${String(i).padStart(6, '0')}:${'y'.repeat(120)}\n`).join('')
    const settlement = provider.write(id, paste)
    await sleep(100)
    const before = writeSyscalls()
    await sleep(1_000)
    const attempts = writeSyscalls() - before
    // Retrying at every turn between the reads made tens of thousands a second.
    expect(attempts, 'write system calls in 1 s to a program reading 4 KiB every 50 ms').toBeLessThan(5_000)
    await provider.shutdown(id, { immediate: true })
    // Stopped while the provider still held some of it: the write says only part reached the PTY.
    expect(await settlement).toEqual({ kind: 'unverifiable', reason: 'partial_write', bytesHandedToTransport: true })
    const got = readFileSync(sink)
    expect(got.length).toBeGreaterThan(0)
    expect(got.equals(Buffer.from(paste, 'utf8').subarray(0, got.length))).toBe(true)
  } finally {
    await provider.dispose()
  }
})
