/**
 * `readIntoSharedBuffer` over real node-pty terminals: the master's reads land in one shared
 * buffer and reach the caller whole (text through the stream's own decoder, bytes as copies), a
 * consumer's pause holds them, and a terminal it does not know is left to node-pty.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadNodePtyModule, type NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { readIntoSharedBuffer } from '../../src/node-pty/shared-read-buffer.js'
import { stopDecodingOutput } from '../../src/node-pty/undecoded-output.js'
import { killTerminalsAfterAll, waitFor } from './pty-test-support.js'

if (process.platform !== 'linux') throw new Error('These tests use node-pty on Linux; run them on Linux')

const dir = mkdtempSync(join(tmpdir(), 'ptykit-shared-read-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const started = killTerminalsAfterAll()

/**
 * `sh -c script` on a real PTY in raw mode (no newline translation), its reads going to
 * `readIntoSharedBuffer`. No exit drain is wired here, so scripts pause before they exit (node-pty
 * alone can lose the tail of a child that writes and exits at once).
 */
async function spawnReading(script: string, bytes: boolean) {
  const nodePty = await loadNodePtyModule()
  const terminal = nodePty.spawn('/bin/sh', ['-c', `stty raw -echo; ${script}`], { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env, encoding: 'utf8' })
  started.push(terminal)
  if (bytes) stopDecodingOutput(terminal)
  const viaNodePty: Array<string | Buffer> = []
  const viaShared: Array<string | Buffer> = []
  terminal.onData((chunk) => viaNodePty.push(chunk))
  const engaged = readIntoSharedBuffer(terminal, bytes, (chunk) => viaShared.push(chunk))
  const exited = new Promise<void>((resolve) => terminal.onExit(() => resolve()))
  return { terminal, engaged, viaNodePty, viaShared, exited }
}

/** 300 000 bytes of text whose multi-byte characters straddle many 4 KiB read boundaries. */
function mixedText(): string {
  let text = ''
  for (let i = 0; text.length < 150_000; i += 1) text += `${i}:é🙂ж${'x'.repeat(i % 13)}`
  return text
}

describe('readIntoSharedBuffer', () => {
  it('text: every read reaches the caller through the stream’s decoder, characters split between reads whole; node-pty’s onData sees none', async () => {
    const text = mixedText()
    const file = join(dir, 'text')
    writeFileSync(file, text)
    const run = await spawnReading(`cat '${file}'; sleep 0.3`, false)
    expect(run.engaged).toBe(true)
    await run.exited
    expect(run.viaShared.length).toBeGreaterThan(10)
    expect(run.viaNodePty).toEqual([])
    expect(run.viaShared.join('')).toBe(text)
  })

  it('bytes: every byte as read, invalid UTF-8 included, in copies that later reads do not overwrite', async () => {
    const data = Buffer.alloc(200_000)
    for (let i = 0; i < data.length; i += 1) data[i] = (i * 7 + (i >> 9)) % 256
    const file = join(dir, 'bytes')
    writeFileSync(file, data)
    const run = await spawnReading(`cat '${file}'; sleep 0.3`, true)
    expect(run.engaged).toBe(true)
    await run.exited
    expect(run.viaNodePty).toEqual([])
    const chunks = run.viaShared as Buffer[]
    expect(chunks.every((chunk) => Buffer.isBuffer(chunk))).toBe(true)
    expect(Buffer.concat(chunks).equals(data)).toBe(true)
  })

  it('a pause before the first read holds the output (the stream keeps it), and resume delivers all of it in order', async () => {
    const text = mixedText()
    const file = join(dir, 'paused')
    writeFileSync(file, text)
    const run = await spawnReading(`cat '${file}'; sleep 0.3`, false)
    run.terminal.pause()
    await new Promise((resolve) => setTimeout(resolve, 300))
    // At most one read got in before the pause took hold of the handle: held by the stream.
    expect(run.viaShared).toEqual([])
    expect(run.viaNodePty).toEqual([])
    run.terminal.resume()
    await run.exited
    await waitFor(() => ([...run.viaNodePty, ...run.viaShared].join('').length >= text.length ? true : undefined), 'the whole output')
    // The chunk held while paused comes out first (through node-pty's data event), then the rest.
    expect([...run.viaNodePty.slice(0, 1), ...run.viaShared, ...run.viaNodePty.slice(1)].join('')).toBe(text)
  })

  it('leaves a stand-in, a second call, and a text stream without a decoder to node-pty', async () => {
    const standIn = { write() {} } as unknown as NodePtyTerminal
    expect(readIntoSharedBuffer(standIn, false, () => {})).toBe(false)
    const run = await spawnReading('echo READY', false)
    expect(run.engaged).toBe(true)
    expect(readIntoSharedBuffer(run.terminal, false, () => {})).toBe(false)
    const undecoded = await spawnReading('echo READY', true)
    expect(undecoded.engaged).toBe(true)
    // The same terminal read as text: it has no decoder (bytes mode stopped it), so no.
    const nodePty = await loadNodePtyModule()
    const raw = nodePty.spawn('/bin/sh', ['-c', 'echo READY'], { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env, encoding: null })
    started.push(raw)
    expect(readIntoSharedBuffer(raw, false, () => {})).toBe(false)
  })
})
