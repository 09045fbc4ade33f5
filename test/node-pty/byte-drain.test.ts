// The exit drain in bytes mode (`output: 'bytes'`): the marker is found and cut in bytes, so
// arbitrary bytes (invalid UTF-8, multi-byte sequences split anywhere, marker look-alikes) pass
// through exactly, in order, however the master splits them.
import { EventEmitter } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { ByteSentinelScanner } from '../../src/node-pty/byte-sentinel-scanner.js'
import { ExitDrain } from '../../src/node-pty/exit-drain.js'
import type { NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'

const dir = mkdtempSync(join(tmpdir(), 'ptykit-byte-drain-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

const MARKER = 'PTYKITDRAINABC123'
const markerBytes = [...Buffer.from(MARKER, 'latin1')]

/** Bytes drawn mostly from the marker's own bytes (near-misses are common), plus any byte at all. */
const streamBytes = fc
  .array(fc.oneof(fc.constantFrom(...markerBytes), fc.integer({ min: 0, max: 255 })), { maxLength: 60 })
  .map((bytes) => Buffer.from(bytes))

/** Split `bytes` at the given cut points (any order, duplicates allowed). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const pieces: Buffer[] = []
  let last = 0
  for (const point of points) {
    pieces.push(bytes.subarray(last, point))
    last = point
  }
  pieces.push(bytes.subarray(last))
  return pieces.filter((piece) => piece.length > 0)
}

describe('ByteSentinelScanner', () => {
  it('P-bscan-1: however the stream is split, bytes before the marker are released exactly and the marker is cut out', () => {
    fc.assert(
      fc.property(streamBytes, streamBytes, fc.array(fc.nat(), { maxLength: 8 }), (before, after, cuts) => {
        // The marker must be the first occurrence.
        fc.pre(Buffer.concat([before, Buffer.from(MARKER)]).subarray(0, -1).indexOf(MARKER) < 0)
        const scanner = new ByteSentinelScanner(MARKER)
        const released: Buffer[] = []
        const rest: Buffer[] = []
        let found = false
        for (const piece of split(Buffer.concat([before, Buffer.from(MARKER), after]), cuts)) {
          const scan = scanner.push(piece)
          ;(found ? rest : released).push(scan.before)
          if (scan.found) {
            found = true
            rest.push(scan.after)
          }
        }
        expect(found).toBe(true)
        expect(Buffer.concat(released).equals(before)).toBe(true)
        expect(Buffer.concat(rest).equals(after)).toBe(true)
        expect(scanner.spent).toBe(true)
      }),
    )
  })

  it('P-bscan-2: without a marker, every byte comes out (released or flushed), in order', () => {
    fc.assert(
      fc.property(streamBytes, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        fc.pre(bytes.indexOf(MARKER) < 0)
        const scanner = new ByteSentinelScanner(MARKER)
        const out = split(bytes, cuts).map((piece) => scanner.push(piece).before)
        out.push(scanner.flush())
        expect(Buffer.concat(out).equals(bytes)).toBe(true)
      }),
    )
  })

  it('refuses an empty marker, naming it', () => {
    expect(() => new ByteSentinelScanner('')).toThrow(/`marker` option.*""/)
  })
})

describe('ExitDrain in bytes mode', () => {
  it('P-bdrain-1: tail + marker + late bytes, split anywhere: every byte but the marker is emitted as bytes, in order', () => {
    fc.assert(
      fc.property(streamBytes, streamBytes, fc.array(fc.nat(), { maxLength: 10 }), (tail, late, cuts) => {
        const ptsName = join(dir, `pts-${(files += 1)}`)
        writeFileSync(ptsName, '')
        const socket = Object.assign(new EventEmitter(), { destroy: () => {} })
        const terminal = { ptsName, _socket: socket } as unknown as NodePtyTerminal
        const emitted: Buffer[] = []
        const drain = new ExitDrain<Buffer>(terminal, { emit: (chunk) => emitted.push(chunk), onDeathHint: () => {} }, true, true)
        drain.noteChildGone()
        // What the drain wrote into the slave side is its marker, byte for byte.
        const marker = readFileSync(ptsName)
        expect(marker.toString('latin1')).toBe(drain.marker)
        for (const piece of split(Buffer.concat([tail, marker, late]), cuts)) drain.handleData(piece)
        expect(drain.state).toBe('released')
        expect(Buffer.isBuffer(drain.finish())).toBe(true)
        expect(emitted.every((chunk) => Buffer.isBuffer(chunk))).toBe(true)
        expect(Buffer.concat(emitted).equals(Buffer.concat([tail, late]))).toBe(true)
      }),
    )
  })
})
