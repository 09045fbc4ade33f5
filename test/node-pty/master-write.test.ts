/**
 * `writeToMaster`, the node-pty session's write path, over real node-pty terminals: input written
 * on the calling turn (no pass through libuv's thread pool), a write the kernel cannot take at once
 * finished by node-pty's queue with every byte in order, and nothing written once node-pty has
 * closed the master — even where the fd number has since been given to another file.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeToMaster } from '../../src/node-pty/master-write.js'
import { loadNodePtyModule, type NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { expectNoChildLeftBehind, waitFor } from './pty-test-support.js'

if (process.platform !== 'linux') throw new Error('These tests use node-pty on Linux; run them on Linux')

const dir = mkdtempSync(join(tmpdir(), 'ptykit-master-write-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const started: NodePtyTerminal[] = []
expectNoChildLeftBehind(async () => {
  for (const terminal of started.splice(0)) {
    try {
      terminal.kill('SIGKILL')
    } catch {
      // Already gone.
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
})

/** node-pty 1.1's write queue, read the way `writeToMaster` reads it. */
function queuedWrites(terminal: NodePtyTerminal): number {
  const queue = (terminal as unknown as { _writeStream: { _writeQueue: unknown[] } })._writeStream._writeQueue
  expect(Array.isArray(queue), 'node-pty 1.1 keeps its pending writes in _writeStream._writeQueue').toBe(true)
  return queue.length
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

describe('writeToMaster', () => {
  it('writes on the calling turn: node-pty queues nothing, and the program receives the bytes', async () => {
    const { terminal, output } = await spawnShell('stty raw -echo; echo READY; exec cat')
    expect(writeToMaster(terminal, 'ping-é-🙂\n')).toBe('accepted')
    // node-pty's own write would hold the chunk in its queue until the pool thread's callback.
    expect(queuedWrites(terminal)).toBe(0)
    await waitFor(() => (output().includes('ping-é-🙂') ? true : undefined), 'the echo of the write')
  })

  it('hands what the kernel cannot take at once to node-pty\'s queue, and every byte arrives in order', async () => {
    const sink = join(dir, 'sink')
    // The reader starts late, so the burst below meets a full kernel buffer (EAGAIN, or a partial write).
    const { terminal } = await spawnShell(`stty raw -echo; echo READY; sleep 0.3; exec cat > '${sink}'`)
    const pieces: string[] = []
    for (let i = 0; i < 2_000; i += 1) pieces.push(`${String(i).padStart(5, '0')}:é🙂${'x'.repeat(i % 97)}\n`)
    let queuedAtMost = 0
    for (const piece of pieces) {
      expect(writeToMaster(terminal, piece)).toBe('accepted')
      queuedAtMost = Math.max(queuedAtMost, queuedWrites(terminal))
    }
    expect(queuedAtMost, 'the burst outgrew the kernel buffer (else this test proves nothing about the queue)').toBeGreaterThan(0)
    const expected = Buffer.from(pieces.join(''), 'utf8')
    await waitFor(() => {
      try {
        return statSync(sink).size >= expected.length ? true : undefined
      } catch {
        return undefined
      }
    }, `cat to write all ${expected.length} bytes`, 15_000)
    expect(readFileSync(sink).equals(expected)).toBe(true)
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

  it('leaves a terminal it does not know (a stand-in without node-pty\'s internals) to its own write', () => {
    const written: string[] = []
    const standIn = { write: (data: string) => written.push(data) } as unknown as NodePtyTerminal
    expect(writeToMaster(standIn, 'abc')).toBe('accepted')
    expect(written).toEqual(['abc'])
  })
})
