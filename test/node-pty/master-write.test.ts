/**
 * `writeToMaster`, the node-pty session's write path, over real node-pty terminals: input written
 * on the calling turn (no pass through libuv's thread pool), a write the kernel cannot take at once
 * held and finished later with every byte in order, and nothing written once node-pty has
 * closed the master — even where the fd number has since been given to another file.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { dropQueuedInput, MASTER_WRITE_ENCODE_PIECE_CHARS, pendingInputBytes, writeToMaster, type HeldWriteFate } from '../../src/node-pty/master-write.js'
import { loadNodePtyModule, type NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { PtyEventLog, killTerminalsAfterAll, waitFor } from './pty-test-support.js'

if (process.platform !== 'linux') throw new Error('These tests use node-pty on Linux; run them on Linux')

const dir = mkdtempSync(join(tmpdir(), 'ptykit-master-write-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const started = killTerminalsAfterAll()

/** node-pty 1.1's write queue, read the way `writeToMaster` reads it. */
function queuedWrites(terminal: NodePtyTerminal): number {
  const queue = (terminal as unknown as { _writeStream: { _writeQueue: unknown[] } })._writeStream._writeQueue
  expect(Array.isArray(queue), 'node-pty 1.1 keeps its pending writes in _writeStream._writeQueue').toBe(true)
  return queue.length
}

/** 2 000 distinct lines with multi-byte characters, ~110 KB: more than a PTY's input buffer holds. */
function burst(): string[] {
  const pieces: string[] = []
  for (let i = 0; i < 2_000; i += 1) pieces.push(`${String(i).padStart(5, '0')}:é🙂${'x'.repeat(i % 97)}\n`)
  return pieces
}

async function waitForSize(path: string, bytes: number): Promise<void> {
  await waitFor(() => {
    try {
      return statSync(path).size >= bytes ? true : undefined
    } catch {
      return undefined
    }
  }, `${path} to reach ${bytes} bytes`, 15_000)
}

/** `sh -c script` on a real PTY, with its output collected as text. */
async function spawnShell(script: string): Promise<{ terminal: NodePtyTerminal; output: () => string; exited: Promise<void> }> {
  const nodePty = await loadNodePtyModule()
  const terminal = nodePty.spawn('/bin/sh', ['-c', script], { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env, encoding: 'utf8' })
  started.push(terminal)
  let text = ''
  terminal.onData((chunk) => {
    text += chunk
  })
  const exited = new Promise<void>((resolve) => terminal.onExit(() => resolve()))
  await waitFor(() => (text.includes('READY') ? true : undefined), 'the shell to print READY')
  return { terminal, output: () => text, exited }
}

describe('the node-pty provider\'s write to a program that let go of its terminal', () => {
  it('is accepted while the program lives on (the master stays open; nothing hangs it up), and its exit comes with its status', async () => {
    const provider = createNodePtyProvider()
    const log = new PtyEventLog(provider)
    // The shell lets go of the terminal (no fd on it any more) and keeps running: the master's
    // read answers EIO, and node-pty's stream ends with no exit yet. The provider keeps the
    // master open (its close would hang the program up), so a write still lands in the
    // terminal's input, which nobody reads.
    // It exits once the test lets it (a file appears), not after a fixed time.
    const go = join(dir, 'let-go-exit')
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', `echo READY; exec </dev/null >/dev/null 2>&1; while [ ! -e '${go}' ]; do sleep 0.02; done; exit 4`] })
    await waitFor(() => (log.output(id).includes('READY') ? true : undefined), 'READY')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await provider.write(id, 'x')).toEqual({ kind: 'accepted' })
    expect(log.exits(id)).toEqual([])
    writeFileSync(go, '')
    expect((await log.exitOf(id)).cause).toEqual({ kind: 'exited', exitCode: 4 })
    await provider.dispose()
  })
})

describe('writeToMaster', () => {
  it('writes on the calling turn: node-pty queues nothing, and the program receives the bytes', async () => {
    const { terminal, output } = await spawnShell('stty raw -echo; echo READY; exec cat')
    expect(writeToMaster(terminal, 'ping-é-🙂\n')).toBe('accepted')
    // node-pty's own write would hold the chunk in its queue until the pool thread's callback.
    expect(queuedWrites(terminal)).toBe(0)
    expect(pendingInputBytes(terminal)).toBe(0)
    await waitFor(() => (output().includes('ping-é-🙂') ? true : undefined), 'the echo of the write')
  })

  it('holds what the kernel cannot take at once (not in node-pty\'s queue), and every byte arrives in order', async () => {
    const sink = join(dir, 'sink')
    const go = join(dir, 'go')
    // The reader starts only when the test says so, so the burst below meets a full kernel buffer.
    const { terminal } = await spawnShell(`stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.01; done; exec cat > '${sink}'`)
    const pieces = burst()
    let queuedAtMost = 0
    for (const piece of pieces) {
      expect(writeToMaster(terminal, piece)).toBe('accepted')
      queuedAtMost = Math.max(queuedAtMost, pendingInputBytes(terminal))
      expect(queuedWrites(terminal)).toBe(0)
    }
    expect(queuedAtMost, 'the burst outgrew the kernel buffer (else this test proves nothing about the held input)').toBeGreaterThan(0)
    writeFileSync(go, '')
    const expected = Buffer.from(pieces.join(''), 'utf8')
    await waitForSize(sink, expected.length)
    expect(readFileSync(sink).equals(expected)).toBe(true)
  })

  it('encodes a long string a piece at a time, as the kernel takes it (not whole on the call), and every byte arrives in order', async () => {
    const sink = join(dir, 'sink-long')
    const go = join(dir, 'go-long')
    const { terminal } = await spawnShell(`stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.01; done; exec cat > '${sink}'`)
    // 4 pieces and a bit; a surrogate pair straddles each piece boundary (its halves must stay together).
    const unit = 'x'.repeat(MASTER_WRITE_ENCODE_PIECE_CHARS - 1) + '🙂'
    const text = `${unit.repeat(4)}é-end`
    const encoded: number[] = []
    const from = Buffer.from.bind(Buffer)
    const spy = vi.spyOn(Buffer, 'from').mockImplementation(((value: unknown, ...rest: unknown[]) => {
      if (typeof value === 'string') encoded.push(value.length)
      return (from as (...args: unknown[]) => Buffer)(value, ...rest)
    }) as typeof Buffer.from)
    try {
      expect(writeToMaster(terminal, text)).toBe('accepted')
    } finally {
      spy.mockRestore()
    }
    // Before: the whole string was encoded on the call (its UTF-8 held at once).
    expect(Math.max(0, ...encoded), 'the longest text encoded on the call').toBeLessThanOrEqual(MASTER_WRITE_ENCODE_PIECE_CHARS)
    // Counted whole towards the bound all the same.
    expect(pendingInputBytes(terminal)).toBeGreaterThan(Buffer.byteLength(text) - 64 * 1024)
    writeFileSync(go, '')
    const expected = Buffer.from(text, 'utf8')
    await waitForSize(sink, expected.length)
    expect(readFileSync(sink).equals(expected)).toBe(true)
    expect(pendingInputBytes(terminal)).toBe(0)
  })

  it('dropQueuedInput drops the held input and stops its retries: only what the kernel took arrives', async () => {
    const sink = join(dir, 'sink-dropped')
    const go = join(dir, 'go-dropped')
    const { terminal } = await spawnShell(`stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.01; done; exec cat > '${sink}'`)
    const pieces = burst()
    for (const piece of pieces) writeToMaster(terminal, piece)
    expect(pendingInputBytes(terminal)).toBeGreaterThan(0)
    dropQueuedInput(terminal)
    expect(pendingInputBytes(terminal)).toBe(0)
    writeFileSync(go, '')
    // Until cat has copied what the kernel holds, and the retry (at most MASTER_WRITE_RETRY_MAX_MS
    // away), had it survived, has had several chances to write the rest: the size stays put.
    let size = -1
    await waitFor(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const now = existsSync(sink) ? statSync(sink).size : -1
      const settled = now > 0 && now === size
      size = now
      return settled ? true : undefined
    }, 'cat to copy what the kernel held')
    const expected = Buffer.from(pieces.join(''), 'utf8')
    const got = readFileSync(sink)
    expect(got.length).toBeGreaterThan(0)
    expect(got.length).toBeLessThan(expected.length)
    expect(got.equals(expected.subarray(0, got.length))).toBe(true)
  })

  it.each(['exit', 'failure'] as const)('tells each held write its fate when the held input is dropped (%s): the write the kernel took part of partly, the ones behind it wholly; a write taken whole is not asked', async (why) => {
    const { terminal } = await spawnShell('stty raw -echo; echo READY; exec sleep 30')
    const fates: Promise<HeldWriteFate>[] = []
    const onHeld = (fate: Promise<HeldWriteFate>) => void fates.push(fate)
    // Taken whole by the kernel: nobody is told anything later.
    expect(writeToMaster(terminal, 'ab', Number.POSITIVE_INFINITY, onHeld)).toBe('accepted')
    expect(fates).toHaveLength(0)
    // More than the kernel's input buffer: part of it goes in, the rest (and all of the next two) is held.
    expect(writeToMaster(terminal, 'p'.repeat(256 * 1024), Number.POSITIVE_INFINITY, onHeld)).toBe('accepted')
    expect(writeToMaster(terminal, Buffer.from('behind'), Number.POSITIVE_INFINITY, onHeld)).toBe('accepted')
    expect(writeToMaster(terminal, 'x'.repeat(MASTER_WRITE_ENCODE_PIECE_CHARS + 10), Number.POSITIVE_INFINITY, onHeld)).toBe('accepted')
    expect(fates).toHaveLength(3)
    await new Promise((resolve) => setTimeout(resolve, 50))
    dropQueuedInput(terminal, why)
    const [some, none] = why === 'exit' ? ['partly-dropped', 'dropped'] : ['partly-failed', 'failed']
    expect(await Promise.all(fates)).toEqual([some, none, none])
  })

  it('tells a held write `written` once the kernel took its last byte, in order', async () => {
    const sink = join(dir, 'sink-written')
    const go = join(dir, 'go-written')
    const { terminal } = await spawnShell(`stty raw -echo; echo READY; while [ ! -e '${go}' ]; do sleep 0.01; done; exec cat > '${sink}'`)
    const told: string[] = []
    const pieces = ['q'.repeat(64 * 1024), 'r'.repeat(64 * 1024), 'tail']
    for (const [index, piece] of pieces.entries()) writeToMaster(terminal, piece, Number.POSITIVE_INFINITY, (fate) => void fate.then((value) => told.push(`${index}:${value}`)))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(told).toEqual([])
    writeFileSync(go, '')
    await waitFor(() => (told.length === 3 ? true : undefined), 'every held write told')
    expect(told).toEqual(['0:written', '1:written', '2:written'])
    await waitForSize(sink, 2 * 64 * 1024 + 4)
  })

  it('writes nothing once node-pty has closed the master, even where its fd number now names another file', async () => {
    const { terminal, exited } = await spawnShell('echo READY; exit 0')
    await exited
    const internals = terminal as unknown as { _fd: number; _socket: { destroyed: boolean } }
    expect(internals._socket.destroyed).toBe(true)
    // The lowest free number is the next fd: open files until one gets the master's old number.
    const opened: number[] = []
    try {
      let victim: string | null = null
      for (let i = 0; i < 64 && victim === null; i += 1) {
        const path = join(dir, `victim-${i}`)
        const fd = openSync(path, 'w')
        opened.push(fd)
        if (fd === internals._fd) victim = path
      }
      expect(victim, `no file got the master's old fd number ${internals._fd}`).not.toBeNull()
      expect(writeToMaster(terminal, 'keystrokes for a dead PTY')).toBe('master-closed')
      // Long enough for node-pty's asynchronous fs.write, had the data been queued there.
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(readFileSync(victim as string, 'utf8')).toBe('')
    } finally {
      for (const fd of opened) closeSync(fd)
    }
  })

  it('an error other than EAGAIN is a failed write: nothing queued, nothing handed to node-pty', () => {
    const readOnly = openSync(join(dir, 'read-only'), 'w+')
    closeSync(readOnly)
    const fd = openSync(join(dir, 'read-only'), 'r') // writing it fails with EBADF
    try {
      const handed: string[] = []
      const queue: unknown[] = []
      const terminal = {
        _fd: fd,
        _socket: { destroyed: false },
        _writeStream: { write: (data: Buffer) => queue.push(data), _writeQueue: queue },
        write: (data: string) => handed.push(data),
      } as unknown as NodePtyTerminal
      expect(writeToMaster(terminal, 'abc')).toBe('write-failed')
      expect(queue).toEqual([])
      expect(handed).toEqual([])
    } finally {
      closeSync(fd)
    }
  })

  it('leaves a terminal that interprets flow-control strings itself to its own write', () => {
    const handed: string[] = []
    const terminal = {
      _fd: 1,
      _socket: { destroyed: false },
      _writeStream: { write: () => {}, _writeQueue: [] },
      handleFlowControl: true,
      write: (data: string) => handed.push(data),
    } as unknown as NodePtyTerminal
    expect(writeToMaster(terminal, '\x13')).toBe('accepted')
    expect(handed).toEqual(['\x13'])
  })

  it('leaves a terminal it does not know (a stand-in without node-pty\'s internals) to its own write', () => {
    const written: string[] = []
    const standIn = { write: (data: string) => written.push(data) } as unknown as NodePtyTerminal
    expect(writeToMaster(standIn, 'abc')).toBe('accepted')
    expect(written).toEqual(['abc'])
  })
})
