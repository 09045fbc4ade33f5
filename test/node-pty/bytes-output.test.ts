/**
 * The node-pty provider's bytes mode (`output: 'bytes'`, issue 18.3) against real processes: the
 * bytes a child writes arrive whole, in order and undecoded (invalid UTF-8 included, multi-byte
 * sequences split across reads survive), only on `onBytes`, and the exit follows the last byte —
 * through the provider alone and through the controller, whose flow control counts bytes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { PtyBytesEvent, PtyExitEvent } from 'ptykit/contracts'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, isNodePtyOptionError, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind } from './pty-test-support.js'

const dir = mkdtempSync(join(tmpdir(), 'ptykit-bytes-'))
const opened: { provider: NodePtyProvider; controller?: PtyController }[] = []
expectNoChildLeftBehind(async () => {
  for (const { provider, controller } of opened.splice(0)) {
    await controller?.dispose()
    await provider.dispose()
  }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * A payload file and the command that prints it and exits at once (the tail-loss case). No `\n`
 * in it: the PTY's ONLCR would turn it into `\r\n`; every other byte passes the PTY unchanged.
 */
function payloadCommand(name: string, payload: Buffer): { file: string; args: string[] } {
  expect(payload.includes(0x0a)).toBe(false)
  const path = join(dir, name)
  writeFileSync(path, payload)
  return { file: '/bin/cat', args: [path] }
}

/** 11 bytes: chars of 2, 3 and 4 bytes, so 4 KB reads keep landing inside a sequence. */
const UTF8_UNIT = Buffer.from('é€😀xy', 'utf8')

/** True when `chunk` starts or ends inside a multi-byte UTF-8 sequence. */
function cutsASequence(chunk: Uint8Array): boolean {
  const first = chunk[0] ?? 0
  const last = chunk[chunk.length - 1] ?? 0
  const startsInside = (first & 0xc0) === 0x80
  const endsOpen = (last & 0xc0) === 0xc0 || (last & 0xc0) === 0x80
  return startsInside || endsOpen
}

function bytesProvider(): NodePtyProvider {
  const provider = createNodePtyProvider({ output: 'bytes' })
  opened.push({ provider })
  return provider
}

describe('node-pty provider, output: bytes', () => {
  it('delivers a 256 KB tail of UTF-8 and invalid bytes exactly, as Buffers on onBytes only, then the exit', async () => {
    const provider = bytesProvider()
    const unit = Buffer.concat([UTF8_UNIT, Buffer.from([0xff, 0xfe, 0x80, 0xc3])]) // the last four: invalid UTF-8
    const payload = Buffer.concat(Array.from({ length: Math.ceil((256 * 1024) / unit.length) }, () => unit))
    const order: string[] = []
    const chunks: Uint8Array[] = []
    let textEvents = 0
    provider.onData(() => {
      textEvents += 1
    })
    provider.onBytes((event: PtyBytesEvent) => {
      order.push('bytes')
      chunks.push(event.bytes)
    })
    const exited = new Promise<PtyExitEvent>((resolve) => provider.onExit((event) => resolve(event)))
    provider.onExit(() => order.push('exit'))
    const { id } = await provider.spawn(payloadCommand('mixed.bin', payload))
    const exit = await exited
    expect(exit.id).toBe(id)
    expect(exit.code).toBe(0)
    expect(textEvents).toBe(0)
    expect(chunks.every((chunk) => Buffer.isBuffer(chunk))).toBe(true)
    const received = Buffer.concat(chunks)
    expect(received.length).toBe(payload.length)
    expect(received.equals(payload)).toBe(true)
    // The exit came after the last byte, and only once.
    expect(order.lastIndexOf('bytes')).toBeLessThan(order.indexOf('exit'))
    expect(order.filter((kind) => kind === 'exit')).toEqual(['exit'])
  })

  it('multi-byte sequences split across reads survive as bytes (and decode whole when joined)', async () => {
    const provider = bytesProvider()
    const payload = Buffer.concat(Array.from({ length: 20_000 }, () => UTF8_UNIT))
    const chunks: Uint8Array[] = []
    provider.onBytes((event) => chunks.push(event.bytes))
    const exited = new Promise<void>((resolve) => provider.onExit(() => resolve()))
    await provider.spawn(payloadCommand('utf8.bin', payload))
    await exited
    expect(chunks.length).toBeGreaterThan(1)
    // At least one read ended inside a character: a decoder per chunk would have mangled it.
    expect(chunks.some(cutsASequence)).toBe(true)
    const joined = Buffer.concat(chunks)
    expect(joined.equals(payload)).toBe(true)
    expect(new TextDecoder('utf-8', { fatal: true }).decode(joined)).toBe(payload.toString('utf8'))
  })

  it('refuses a malformed output option, naming the option and the value', () => {
    let caught: unknown
    try {
      createNodePtyProvider({ output: 'buffer' as never })
    } catch (error) {
      caught = error
    }
    expect(isNodePtyOptionError(caught)).toBe(true)
    expect(String((caught as Error).message)).toMatch(/`output` option.*'string' or 'bytes'.*buffer/)
  })
})

describe('controller over a bytes-mode provider', () => {
  it('publishes `bytes` events (never `data`) whose seq and flow control count bytes, losing nothing across a pause', async () => {
    const provider = bytesProvider()
    const controller = createPtyController({
      provider,
      flowControl: { mode: 'always', highWatermarkChars: 64 * 1024, lowWatermarkChars: 1024 },
    })
    opened.push({ provider, controller })
    const payload = Buffer.concat(Array.from({ length: 30_000 }, () => UTF8_UNIT)) // 330 KB, 150 000 chars
    const chunks: Uint8Array[] = []
    const seqs: number[] = []
    let dataEvents = 0
    let maxUnacknowledged = 0
    let paused = false
    let ptyId = ''
    controller.on('data', () => {
      dataEvents += 1
    })
    controller.on('bytes', (event) => {
      ptyId = event.ptyId
      chunks.push(event.bytes)
      seqs.push(event.seq)
      const state = controller.getFlowControlState(event.ptyId)
      maxUnacknowledged = Math.max(maxUnacknowledged, state?.unacknowledgedChars ?? 0)
    })
    const exited = new Promise<void>((resolve) => controller.on('exit', () => resolve()))
    await controller.spawn(payloadCommand('flow.bin', payload))
    // Let the producer run into the high watermark, counted in bytes, then acknowledge in bytes.
    // (Looked at between events: the pause comes after the chunk that crosses the watermark is
    // delivered, and no chunk follows while it holds.)
    for (let i = 0; i < 500 && !paused; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      paused ||= ptyId !== '' && controller.getFlowControlState(ptyId)?.paused === true
    }
    expect(paused).toBe(true)
    const received = (): number => chunks.reduce((sum, chunk) => sum + chunk.length, 0)
    expect(controller.getFlowControlState(ptyId)?.unacknowledgedChars).toBe(received())
    const acknowledger = setInterval(() => controller.acknowledgeData(ptyId, 1 << 30), 5)
    await exited
    clearInterval(acknowledger)
    expect(dataEvents).toBe(0)
    expect(Buffer.concat(chunks).equals(payload)).toBe(true)
    // seq is the running byte count.
    let running = 0
    seqs.forEach((seq, index) => {
      running += chunks[index]?.length ?? 0
      expect(seq).toBe(running)
    })
    expect(running).toBe(payload.length)
    expect(maxUnacknowledged).toBeGreaterThan(64 * 1024)
  })
})
