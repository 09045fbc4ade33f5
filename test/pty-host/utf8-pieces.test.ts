import fc from 'fast-check'
import { StringDecoder } from 'node:string_decoder'
import { describe, expect, it } from 'vitest'
import { encodeOutputFrame, FrameDecoder, OUTPUT_STRING_MAX_BYTES, type OutputFrame } from '../../src/pty-host/frame-codec.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { SessionHistory } from '../../src/pty-host/session-history.js'
import { Utf8PieceCutter, unfinishedUtf8Tail } from '../../src/pty-host/utf8-pieces.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerOn, useCleanups } from './pty-host-test-support.js'

/** Output bytes: UTF-8 of any characters (1 to 4 bytes each), with stray bytes (invalid UTF-8) mixed in. */
const outputBytes = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map((text) => [...Buffer.from(text, 'utf8')]) },
      { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 3 }) },
    ),
    { maxLength: 40 },
  )
  .map((units) => Buffer.from(units.flat()))

/** `bytes` cut into reads at the given points (as a PTY's reads cut its output anywhere). */
function reads(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  const out: Buffer[] = []
  let start = 0
  for (const point of [...points, bytes.length]) {
    out.push(bytes.subarray(start, point))
    start = point
  }
  return out
}

/** What the host's node-pty provider delivered before it read bytes: one stream decoder over the reads. */
function decodedAsAStream(parts: Buffer[]): string {
  const decoder = new StringDecoder('utf8')
  return parts.map((part) => decoder.write(part)).join('') + decoder.end()
}

const noParsing: ScreenScheduler = { schedule: (cursor) => cursor.markScheduled(true), forget: (cursor) => cursor.markScheduled(false) }
const blankScreen = () => ({ write: () => undefined, resize: () => undefined, clear: () => undefined, snapshot: async () => ({ data: '', cols: 1, rows: 1 }), heldBytes: () => 0, dispose: () => undefined })

describe('UTF-8 pieces (the host forwards bytes, the app counts chars)', () => {
  it('cuts reads into pieces of whole characters: each piece decoded alone gives exactly the stream decoder’s text and its char count', () => {
    fc.assert(
      fc.property(outputBytes, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const cutter = new Utf8PieceCutter()
        const pieces = [...reads(bytes, cuts).map((read) => cutter.cut(read)), cutter.end()].filter((piece) => piece !== null)
        for (const piece of pieces) {
          expect(piece.bytes.length).toBeGreaterThan(0)
          expect(piece.chars).toBe(piece.bytes.toString('utf8').length)
        }
        expect(Buffer.concat(pieces.map((piece) => piece.bytes))).toEqual(bytes)
        const text = pieces.map((piece) => piece.bytes.toString('utf8')).join('')
        expect(text).toBe(decodedAsAStream(reads(bytes, cuts)))
        expect(text).toBe(bytes.toString('utf8'))
      }),
      { numRuns: 400 },
    )
  })

  it('holds back exactly the unfinished character at the end of a read', () => {
    expect(unfinishedUtf8Tail(Buffer.from('abc'))).toBe(0)
    const euro = Buffer.from('€') // 3 bytes
    expect(unfinishedUtf8Tail(euro.subarray(0, 1))).toBe(1)
    expect(unfinishedUtf8Tail(euro.subarray(0, 2))).toBe(2)
    expect(unfinishedUtf8Tail(euro)).toBe(0)
    const emoji = Buffer.from('😀') // 4 bytes, 2 chars
    expect(unfinishedUtf8Tail(emoji.subarray(0, 3))).toBe(3)
    const cutter = new Utf8PieceCutter()
    expect(cutter.cut(emoji.subarray(0, 1))).toBeNull()
    expect(cutter.cut(emoji.subarray(1, 3))).toBeNull()
    const whole = cutter.cut(Buffer.concat([emoji.subarray(3), Buffer.from('a')]))
    expect(whole?.bytes.toString('utf8')).toBe('😀a')
    expect(whole?.chars).toBe(3)
  })

  it('the replay ring counts and replays chars from bytes split anywhere: every sequence replays the decoded suffix, within the limit', () => {
    fc.assert(
      fc.property(outputBytes, fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 60 }), fc.nat({ max: 200 }), (bytes, cuts, limitChars, askedRaw) => {
        const history = new SessionHistory(blankScreen, noParsing, { cols: 10, rows: 2, limitChars, scrollbackRows: 0 })
        try {
          for (const read of reads(bytes, cuts)) history.appendRead(read)
          history.endOfOutput()
          const all = bytes.toString('utf8')
          expect(history.seq).toBe(all.length)
          expect(history.seq - history.retainedFrom).toBe(Math.min(all.length, limitChars))
          const asked = Math.min(askedRaw, all.length)
          const replay = history.replay(asked)
          expect(replay.replayFrom).toBe(Math.max(asked, history.retainedFrom))
          expect(replay.data).toBe(all.slice(replay.replayFrom))
          expect(history.read(asked, 7)).toBe(all.slice(Math.max(asked, history.retainedFrom), Math.max(asked, history.retainedFrom) + 7))
        } finally {
          history.dispose()
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('output frames decoded in parts (the app never makes one huge string)', () => {
  it('decodes a frame longer than a part as consecutive parts that rebuild the text exactly, each with the sequence at its end', () => {
    fc.assert(
      fc.property(outputBytes.filter((bytes) => bytes.length > 0), fc.integer({ min: OUTPUT_STRING_MAX_BYTES - 8, max: 3 * OUTPUT_STRING_MAX_BYTES }), fc.nat({ max: 1e9 }), (unit, size, seqBase) => {
          const data = Buffer.concat(Array.from({ length: Math.ceil(size / unit.length) }, () => unit)).subarray(0, size)
          const text = data.toString('utf8')
          const seq = seqBase + text.length
          const parts = new FrameDecoder(4 * OUTPUT_STRING_MAX_BYTES).push(encodeOutputFrame('pty-1', seq, [data], 'inc-1')) as OutputFrame[]
          // Parts of at most OUTPUT_STRING_MAX_BYTES bytes, each cut at most 3 bytes short.
          expect(parts.length).toBeGreaterThanOrEqual(Math.ceil(data.length / OUTPUT_STRING_MAX_BYTES))
          expect(parts.length).toBeLessThanOrEqual(Math.ceil(data.length / (OUTPUT_STRING_MAX_BYTES - 3)))
          expect(parts.map((part) => part.data).join('')).toBe(text)
          let end = seqBase
          for (const part of parts) {
            // A byte decodes to at most one char: a part's text is never longer than its bytes.
            expect(part.data.length).toBeLessThanOrEqual(OUTPUT_STRING_MAX_BYTES)
            end += part.data.length
            expect(part).toMatchObject({ type: 'data', ptyId: 'pty-1', seq: end, incarnationId: 'inc-1' })
          }
          expect(end).toBe(seq)
        },
      ),
      { numRuns: 40 },
    )
  })
})

const cleanups = useCleanups()

describe('pty host: multi-byte output through real reads', () => {
  it('a flood of multi-byte characters (split across PTY reads and frames) arrives whole, with chars counted as the app decodes them', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    // 1, 2, 3 and 4 bytes per character: reads of a few KiB end inside characters many times.
    const unit = 'a€é😀'
    const count = 40_000
    let received = ''
    // Prints, then stays alive (so its screen and sequence can be asked for).
    const script = `i=0; s=''; while [ $i -lt 100 ]; do s="\${s}${unit}"; i=$((i+1)); done; j=0; while [ $j -lt ${count / 100} ]; do printf '%s' "$s"; j=$((j+1)); done; exec sleep 30`
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', script] })
    app.onData((event) => {
      if (event.id === id) received += event.data
    })
    await waitFor(() => (received.length >= unit.length * count ? true : undefined), 'the whole output', 30_000)
    expect(received).toBe(unit.repeat(count))
    // The host's sequence (chars) is the count the app decoded.
    const snapshot = await app.getBufferSnapshot(id)
    expect(snapshot?.seq).toBe(received.length)
  }, 60_000)
})
