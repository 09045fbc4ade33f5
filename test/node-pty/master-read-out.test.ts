/**
 * `readOutMaster`, the exit drain's synchronous read-out, on file descriptors whose answers are
 * known in advance: a regular file (every read returns data until its end), and a non-blocking
 * pipe (`EAGAIN` once empty). The PTY answers themselves are covered in exit-read-out.test.ts.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, constants } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { StringDecoder } from 'node:string_decoder'
import { makeFifo } from './pty-test-support.js'
import { NODE_PTY_READ_OUT_BUDGET_BYTES, readOutMaster, streamDeliverer } from '../../src/node-pty/master-read-out.js'

const dir = mkdtempSync(join(tmpdir(), 'ptykit-read-out-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function fileOf(bytes: Buffer): number {
  const path = join(dir, `f-${Math.random().toString(16).slice(2)}`)
  writeFileSync(path, bytes)
  return openSync(path, constants.O_RDONLY)
}

describe('readOutMaster', () => {
  it('stops after its byte budget when the source keeps giving (a live writer), having delivered every byte read, in order', () => {
    const source = Buffer.alloc(4 * NODE_PTY_READ_OUT_BUDGET_BYTES)
    for (let i = 0; i < source.length; i += 1) source[i] = i % 251
    const fd = fileOf(source)
    try {
      const chunks: Buffer[] = []
      const end = readOutMaster(fd, (chunk) => chunks.push(Buffer.from(chunk)), () => true)
      expect(end).toBe('stopped')
      const read = Buffer.concat(chunks)
      expect(read.length).toBeGreaterThanOrEqual(NODE_PTY_READ_OUT_BUDGET_BYTES)
      expect(read.length).toBeLessThan(source.length)
      expect(read.equals(source.subarray(0, read.length))).toBe(true)
    } finally {
      closeSync(fd)
    }
  })

  it('stops between reads when asked to (the consumer paused), never before the first chunk', () => {
    const fd = fileOf(Buffer.alloc(200_000, 1))
    try {
      let asked = 0
      const chunks: Buffer[] = []
      const end = readOutMaster(fd, (chunk) => chunks.push(Buffer.from(chunk)), () => {
        asked += 1
        return false
      })
      expect(end).toBe('stopped')
      expect(chunks).toHaveLength(1)
      expect(asked).toBe(1)
    } finally {
      closeSync(fd)
    }
  })

  it('an end of file is not a proof: `failed`', () => {
    const fd = fileOf(Buffer.from('abc'))
    try {
      const chunks: string[] = []
      expect(readOutMaster(fd, (chunk) => chunks.push(chunk.toString()), () => true)).toBe('failed')
      expect(chunks).toEqual(['abc'])
    } finally {
      closeSync(fd)
    }
  })

  it('an empty non-blocking source answers EAGAIN: `drained`', () => {
    // A FIFO opened read-only and non-blocking, with a writer holding it open and nothing written.
    const fifo = join(dir, 'fifo')
    makeFifo(fifo)
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    try {
      expect(readOutMaster(reader, () => undefined, () => true)).toBe('drained')
    } finally {
      closeSync(writer)
      closeSync(reader)
    }
  })
})

describe('streamDeliverer', () => {
  const flowing = (decoder: StringDecoder | null) => ({ _readableState: { flowing: true, length: 0, decoder } })

  it('text: decodes through the stream’s own decoder, so a character the stream’s last read split comes out whole', () => {
    const euro = Buffer.from('€')
    const decoder = new StringDecoder('utf8')
    // The stream's last read ended inside the character: its decoder holds the first byte.
    expect(decoder.write(euro.subarray(0, 1))).toBe('')
    const out: string[] = []
    const deliver = streamDeliverer<string>(flowing(decoder), false, { emit: (chunk) => out.push(chunk) })
    expect(deliver).not.toBeNull()
    deliver!(euro.subarray(1))
    deliver!(Buffer.from('ab'))
    expect(out).toEqual(['€', 'ab'])
  })

  it('bytes: hands on copies, never the caller’s (shared) buffer', () => {
    const out: Buffer[] = []
    const deliver = streamDeliverer<Buffer>(flowing(null), true, { emit: (chunk) => out.push(chunk) })
    const scratch = Buffer.from([1, 2, 3])
    deliver!(scratch)
    scratch.fill(0)
    expect([...out[0]!]).toEqual([1, 2, 3])
  })

  it('refuses a stream it cannot follow: data held back, not flowing, destroyed, or decoding not as expected', () => {
    const sink = { emit: () => undefined }
    const decoder = new StringDecoder('utf8')
    expect(streamDeliverer({ _readableState: { flowing: true, length: 10, decoder } }, false, sink)).toBeNull()
    expect(streamDeliverer({ _readableState: { flowing: false, length: 0, decoder } }, false, sink)).toBeNull()
    expect(streamDeliverer({ _readableState: { flowing: null, length: 0, decoder } }, false, sink)).toBeNull()
    expect(streamDeliverer({ destroyed: true, _readableState: { flowing: true, length: 0, decoder } }, false, sink)).toBeNull()
    expect(streamDeliverer({}, false, sink)).toBeNull()
    expect(streamDeliverer(flowing(null), false, sink)).toBeNull()
    expect(streamDeliverer(flowing(decoder), true, sink)).toBeNull()
  })
})
