/**
 * Raw bytes into a real PTY: all 256 byte values reach a program reading its terminal in raw mode
 * exactly as written, in order with the string writes around them — through the controller, a
 * terminal handle and the provider — also when the kernel's input buffer is full and the input is
 * held for later, and when the writes wait behind a spawn's launch `command`. Each program copies
 * what it reads to a file, which the test compares byte for byte.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { pendingInputBytes, writeToMaster } from '../../src/node-pty/master-write.js'
import { loadNodePtyModule, type NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { expectNoChildLeftBehind, killTerminalsAfterAll, waitFor } from './pty-test-support.js'

if (process.platform !== 'linux') throw new Error('These tests use node-pty on Linux; run them on Linux')

const provider = createNodePtyProvider()
const controller = createPtyController({ provider })
const dir = mkdtempSync(join(tmpdir(), 'ptykit-write-bytes-'))

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})
const started = killTerminalsAfterAll()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Every byte value, 0x00 to 0xFF. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i)

/**
 * A terminal in raw mode — no line editing, no signals from ^C, no flow control from ^S, no
 * literal-next from ^V, no CR→NL, no echo — that copies every byte it reads to `sink`, once
 * `go` exists (at once when none is given).
 */
function rawCopyScript(sink: string, go?: string): string {
  const wait = go === undefined ? '' : `while [ ! -e '${go}' ]; do sleep 0.01; done; `
  return `stty raw -echo -iexten; echo READY; ${wait}exec cat > '${sink}'`
}

async function waitForSize(path: string, bytes: number, timeoutMs = 15_000): Promise<void> {
  await waitFor(() => {
    try {
      return statSync(path).size >= bytes ? true : undefined
    } catch {
      return undefined
    }
  }, `${path} to reach ${bytes} bytes`, timeoutMs)
}

/** The program's copy, once it holds `expected.length` bytes (and a moment for anything extra to show). */
async function sinkAfter(sink: string, expected: Uint8Array): Promise<Buffer> {
  await waitForSize(sink, expected.length)
  await new Promise((resolve) => setTimeout(resolve, 100))
  return readFileSync(sink)
}

describe('bytes into a real PTY', () => {
  it('all 256 byte values arrive exactly, in order with strings (controller write, writeWithSettlement, a handle)', async () => {
    const sink = join(dir, 'all-bytes')
    const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', rawCopyScript(sink)] })
    let output = ''
    terminal.onData(({ data }) => {
      output += data
    })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    const reversed = Uint8Array.from(ALL_BYTES).reverse()
    const expected = Buffer.concat([Buffer.from('<é🙂|', 'utf8'), ALL_BYTES, Buffer.from('|\r\n|'), reversed, Buffer.from('|ü>', 'utf8'), Buffer.from([0xff, 0xfe, 0x80])])
    expect(controller.write(terminal.id, '<é🙂|', 'driving')).toBe(true)
    expect(controller.write(terminal.id, ALL_BYTES, 'driving')).toBe(true)
    expect(controller.writeWithSettlement(terminal.id, '|\r\n|', 'driving')).toEqual({ kind: 'accepted' })
    expect(controller.writeWithSettlement(terminal.id, Buffer.from(reversed), 'driving')).toEqual({ kind: 'accepted' })
    expect(terminal.write('|ü>')).toBe(true)
    expect(terminal.write(new Uint8Array([0xff, 0xfe, 0x80]))).toBe(true)
    const got = await sinkAfter(sink, expected)
    expect(got.toString('hex')).toBe(expected.toString('hex'))
    expect(await terminal.stop({ timeoutMs: 5_000 })).toBe(true)
  })

  it('a 1 MiB paste of bytes into a program that reads only later: held, accepted once the program read it, and every byte arrives in order with the strings after it', async () => {
    const sink = join(dir, 'held-bytes')
    const go = join(dir, 'held-go')
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', rawCopyScript(sink, go)] })
    let output = ''
    controller.on('data', ({ ptyId, data }) => {
      if (ptyId === id) output += data
    })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    // Far more than the kernel's input buffer holds: most of it waits in the provider.
    const paste = Buffer.alloc(1024 * 1024)
    for (let i = 0; i < paste.length; i += 1) paste[i] = (i * 7 + (i >> 8)) & 0xff
    const pieces: (string | Buffer)[] = ['[start é]', paste, '[middle 🙂]', Buffer.from(ALL_BYTES), '[end]']
    const settlements = pieces.map((piece) => controller.writeWithSettlement(id, piece, 'driving'))
    // The caller reuses its buffers once the writes returned: what was held must not change with them.
    paste.fill(0x41)
    // The paste waits in the provider (and the writes behind it): settled once the kernel took it.
    expect(settlements[1]).toBeInstanceOf(Promise)
    writeFileSync(go, '')
    expect(await Promise.all(settlements)).toEqual(pieces.map(() => ({ kind: 'accepted' })))
    const expected = Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece === paste ? Buffer.from(heldPattern(paste.length)) : piece)))
    const got = await sinkAfter(sink, expected)
    expect(got.length).toBe(expected.length)
    expect(got.equals(expected), 'the bytes the program read, in order').toBe(true)
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  })

  it('bytes written before the launch command was sent wait behind it, as a copy of what the caller wrote', async () => {
    const sink = join(dir, 'behind-command')
    // The shell reads the command line (cooked mode) and only then puts the terminal in raw mode:
    // the bytes, queued behind the command, wait in the terminal's line buffer until cat reads them.
    // (High bytes only: before `stty raw` runs, a control byte would edit the line.)
    const high = Uint8Array.from({ length: 128 }, (_, i) => 0x80 + i)
    const { id } = await controller.spawn({ file: '/bin/sh', command: `stty raw -echo -iexten; exec cat > '${sink}'` })
    const buffer = Buffer.from(high)
    expect(controller.write(id, buffer, 'driving')).toBe(true)
    buffer.fill(0x41)
    expect(controller.write(id, 'ok', 'driving')).toBe(true)
    const expected = Buffer.concat([high, Buffer.from('ok')])
    const got = await sinkAfter(sink, expected)
    expect(got.toString('hex')).toBe(expected.toString('hex'))
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  })

  it('the provider writes bytes itself (writeBytes), refuses them for an unknown or exited PTY, and throws a TypeError naming `bytes` for what is no Uint8Array', async () => {
    const sink = join(dir, 'provider-bytes')
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', `${rawCopyScript(sink)}`] })
    await waitForSize(sink, 0)
    for (const bytes of ['text', [1, 2], 42, new ArrayBuffer(1)]) {
      expect(() => provider.writeBytes(id, bytes as never)).toThrow(/^Expected the `bytes` argument to be a Uint8Array \(a Buffer is one\), got /)
    }
    expect(provider.writeBytes('ptykit-no-such-pty', ALL_BYTES)).toEqual({ kind: 'refused', reason: 'pty_not_found' })
    expect(provider.writeBytes(id, ALL_BYTES)).toEqual({ kind: 'accepted' })
    const got = await sinkAfter(sink, ALL_BYTES)
    expect(got.toString('hex')).toBe(Buffer.from(ALL_BYTES).toString('hex'))
    await provider.shutdown(id, { immediate: true })
    await waitFor(() => (provider.hasPty(id) === false ? true : undefined), 'the exit')
    expect(provider.writeBytes(id, ALL_BYTES)).toEqual({ kind: 'refused', reason: 'pty_exited' })
  })
})

/** The paste's pattern, computed again (the test overwrote its buffer after writing it). */
function heldPattern(length: number): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i += 1) bytes[i] = (i * 7 + (i >> 8)) & 0xff
  return bytes
}

describe('writeToMaster with bytes', () => {
  it('holds strings and bytes the kernel cannot take at once in one queue, copies the caller\'s bytes, and every byte arrives in order', async () => {
    const sink = join(dir, 'master-mixed')
    const go = join(dir, 'master-mixed-go')
    const nodePty = await loadNodePtyModule()
    const terminal: NodePtyTerminal = nodePty.spawn('/bin/sh', ['-c', rawCopyScript(sink, go)], { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env, encoding: 'utf8' })
    started.push(terminal)
    let text = ''
    terminal.onData((chunk) => {
      text += chunk
    })
    await waitFor(() => (text.includes('READY') ? true : undefined), 'READY')
    const expected: Buffer[] = []
    let heldAtMost = 0
    // 4 000 writes alternating text and bytes (all 256 values, rotated), ~600 KB: the kernel's buffer fills early.
    for (let i = 0; i < 2_000; i += 1) {
      const line = `${String(i).padStart(5, '0')}:é🙂\n`
      const bytes = Buffer.alloc(256 + (i % 50))
      for (let j = 0; j < bytes.length; j += 1) bytes[j] = (i + j) & 0xff
      expect(writeToMaster(terminal, line)).toBe('accepted')
      expect(writeToMaster(terminal, bytes)).toBe('accepted')
      expected.push(Buffer.from(line, 'utf8'), Buffer.from(bytes))
      // Reused by the caller at once: a held chunk that kept a view of it would change.
      bytes.fill(0)
      heldAtMost = Math.max(heldAtMost, pendingInputBytes(terminal))
    }
    expect(heldAtMost, 'the writes outgrew the kernel buffer (else this test proves nothing about held input)').toBeGreaterThan(0)
    writeFileSync(go, '')
    const all = Buffer.concat(expected)
    const got = await sinkAfter(sink, all)
    expect(got.length).toBe(all.length)
    expect(got.equals(all)).toBe(true)
  })

  it('hands bytes to a terminal it does not know as a Buffer of their own (a stand-in without node-pty\'s internals)', () => {
    const written: unknown[] = []
    const standIn = { write: (data: unknown) => written.push(data) } as unknown as NodePtyTerminal
    const bytes = new Uint8Array([0x80, 0xff])
    expect(writeToMaster(standIn, bytes)).toBe('accepted')
    bytes.fill(0)
    expect(written).toHaveLength(1)
    expect(Buffer.isBuffer(written[0])).toBe(true)
    expect([...(written[0] as Buffer)]).toEqual([0x80, 0xff])
  })
})
