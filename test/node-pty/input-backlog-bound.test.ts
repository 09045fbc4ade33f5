/**
 * A writer faster than the program reads (a program that does not read at all, here): the input
 * the provider holds for it is bounded by `maxPendingInputBytes`. A write past the bound is refused
 * `input_backlog_full` with nothing of it written; every accepted byte still arrives, in order,
 * once the program reads, and the bound frees up as it does. Before the bound, 100 MB written to
 * `sleep` in 64 KiB writes were all `accepted` and all held: 100 MB of the app's memory.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_PENDING_INPUT_BYTES, type WriteSettlement } from 'ptykit/contracts'
import { createNodePtyProvider, isNodePtyOptionError } from 'ptykit/node-pty'
import { PtyEventLog, waitFor } from './pty-test-support.js'

const dir = mkdtempSync(join(tmpdir(), 'ptykit-input-bound-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const KiB = 1024
const MiB = 1024 * KiB

/** A program that reads nothing until `go` exists, then copies its input to `sink`. */
function readsOnlyAfter(go: string, sink: string) {
  return { file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.05; done; exec cat > '${sink}'`] }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

describe('the bound on input held for a program that does not read', () => {
  it('refuses the write that would pass it (nothing of it written); every accepted byte arrives in order, and writes go through again once the program reads', async () => {
    const provider = createNodePtyProvider({ maxPendingInputBytes: 1 * MiB })
    const log = new PtyEventLog(provider)
    const go = join(dir, 'go-1')
    const sink = join(dir, 'sink-1')
    try {
      const { id } = await provider.spawn(readsOnlyAfter(go, sink))
      await waitFor(() => (log.output(id).includes('READY') ? true : undefined), 'READY')
      const accepted: Buffer[] = []
      const settlements: (WriteSettlement | Promise<WriteSettlement>)[] = []
      let refusal: unknown
      // Each chunk tells itself apart (its index in every byte), so a refused one that arrived would show.
      for (let i = 0; i < 64; i += 1) {
        const chunk = Buffer.alloc(64 * KiB, 0x41 + (i % 26))
        // Held (a promise: settled once the program read it) or taken at once; a refusal is at once.
        const settlement = provider.writeBytes(id, chunk)
        if (!(settlement instanceof Promise) && settlement.kind !== 'accepted') {
          refusal = settlement
          break
        }
        settlements.push(settlement)
        accepted.push(chunk)
      }
      expect(refusal).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
      const acceptedBytes = accepted.reduce((sum, chunk) => sum + chunk.length, 0)
      // The bound, plus what the kernel's buffers took (a pty takes some tens of KiB at most).
      expect(acceptedBytes).toBeGreaterThanOrEqual(1 * MiB)
      expect(acceptedBytes).toBeLessThanOrEqual(1 * MiB + 256 * KiB)
      // A write larger than the bound is refused whole.
      expect(await provider.write(id, 'z'.repeat(1 * MiB + 1))).toEqual({ kind: 'refused', reason: 'input_backlog_full' })

      writeFileSync(go, '')
      const expected = Buffer.concat(accepted)
      await waitFor(() => (sizeOf(sink) >= expected.length ? true : undefined), 'every accepted byte in the sink', 20_000)
      expect(await Promise.all(settlements)).toEqual(settlements.map(() => ({ kind: 'accepted' })))
      // Written again once the program has read the held input.
      expect(await provider.write(id, 'after')).toEqual({ kind: 'accepted' })
      await waitFor(() => (sizeOf(sink) >= expected.length + 5 ? true : undefined), 'the later write in the sink')
      expect(readFileSync(sink).equals(Buffer.concat([expected, Buffer.from('after')]))).toBe(true)
    } finally {
      await provider.dispose()
    }
  })

  it('by default: a 10 MiB paste into a program that does not read is held; a flood is refused past DEFAULT_MAX_PENDING_INPUT_BYTES; what is held settles, dropped, when the PTY ends', async () => {
    const provider = createNodePtyProvider()
    const log = new PtyEventLog(provider)
    try {
      const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; exec sleep 1000'] })
      await waitFor(() => (log.output(id).includes('READY') ? true : undefined), 'READY')
      const paste = provider.write(id, 'p'.repeat(10 * MiB))
      expect(paste).toBeInstanceOf(Promise)
      const chunk = Buffer.alloc(MiB, 0x61)
      let acceptedBytes = 10 * MiB
      let refusal: unknown
      const held: Promise<WriteSettlement>[] = []
      for (let i = 0; i < 100; i += 1) {
        const settlement = provider.writeBytes(id, chunk)
        if (!(settlement instanceof Promise)) {
          refusal = settlement
          break
        }
        held.push(settlement)
        acceptedBytes += chunk.length
      }
      expect(refusal).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
      expect(acceptedBytes).toBeGreaterThanOrEqual(DEFAULT_MAX_PENDING_INPUT_BYTES)
      expect(acceptedBytes).toBeLessThanOrEqual(DEFAULT_MAX_PENDING_INPUT_BYTES + MiB)
      await provider.shutdown(id, { timeoutMs: 5_000 })
      // The kernel took a few KiB of the paste; the rest, and every write behind it, went with the PTY.
      expect(await paste).toEqual({ kind: 'unverifiable', reason: 'partial_write', bytesHandedToTransport: true })
      expect(new Set((await Promise.all(held)).map((settlement) => JSON.stringify(settlement)))).toEqual(new Set([JSON.stringify({ kind: 'refused', reason: 'pty_exited' })]))
    } finally {
      await provider.dispose()
    }
  })

  it('bounds the writes queued behind a launch command too (with the command)', async () => {
    const provider = createNodePtyProvider({ maxPendingInputBytes: 64 * KiB })
    const log = new PtyEventLog(provider)
    try {
      // The shell prints nothing for a while: the command (and what is written behind it) waits.
      const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3; exec sh'], command: 'echo LAUNCHED$((40+2))' })
      const line = (letter: string) => `: ${letter.repeat(25 * KiB)}\r`
      // Queued behind the command: settled once the command went out and they were written after it.
      expect(provider.write(id, line('a'))).toBeInstanceOf(Promise)
      expect(provider.write(id, line('b'))).toBeInstanceOf(Promise)
      // The command's bytes and 50 KiB are queued: 25 KiB more would pass 64 KiB. Before: accepted.
      expect(provider.write(id, line('c'))).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
      await waitFor(() => (log.output(id).includes('LAUNCHED42') ? true : undefined), 'the launch command to run', 15_000)
    } finally {
      await provider.dispose()
    }
  })

  it.each([0, -1, 1.5, '1024', Number.NaN, null])('refuses maxPendingInputBytes %s, naming the option and the value', (value) => {
    let caught: unknown
    try {
      createNodePtyProvider({ maxPendingInputBytes: value as number })
    } catch (error) {
      caught = error
    }
    expect(isNodePtyOptionError(caught)).toBe(true)
    expect(caught).toMatchObject({ option: 'maxPendingInputBytes' })
    expect(String((caught as Error).message)).toContain('`maxPendingInputBytes`')
    expect(String((caught as Error).message)).toContain(typeof value === 'string' ? `"${value}"` : String(value))
  })

  it('takes Number.POSITIVE_INFINITY (no bound)', async () => {
    const provider = createNodePtyProvider({ maxPendingInputBytes: Number.POSITIVE_INFINITY })
    await provider.dispose()
  })
})
