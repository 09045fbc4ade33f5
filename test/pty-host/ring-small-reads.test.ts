/**
 * A live session's replay ring holds output of an interactive program — an echo, a spinner, a
 * progress line: reads of a few bytes — in about the memory of its bytes. Each piece the ring kept
 * cost ~500 bytes besides them (a `Buffer`, its `ArrayBuffer`, the piece), so a ring bounded at
 * 1 Mi chars held ~300 MB of 2-byte reads: per live session, whatever `historyChars` said. Small
 * reads are now copied into chunks; what the ring replays is unchanged.
 */
import fc from 'fast-check'
import { StringDecoder } from 'node:string_decoder'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import type { HeadlessScreenFactory } from '../../src/pty-host/headless-screen.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { RING_CHUNK_BYTES, RING_SMALL_READ_BYTES, SessionHistory } from '../../src/pty-host/session-history.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const noParsing: ScreenScheduler = { schedule: (cursor) => cursor.markScheduled(true), forget: (cursor) => cursor.markScheduled(false) }
const blankScreen: HeadlessScreenFactory = () => ({
  write: () => undefined,
  resize: () => undefined,
  clear: () => undefined,
  snapshot: async () => ({ data: '', cols: 1, rows: 1 }),
  heldBytes: () => 0,
  dispose: () => undefined,
})

/** Reads of text, small and large mixed (some of several chunks' worth), ASCII and not. */
const readsOf = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }) },
    { weight: 2, arbitrary: fc.string({ minLength: RING_SMALL_READ_BYTES - 8, maxLength: RING_SMALL_READ_BYTES + 8 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 200, maxLength: 2_000 }) },
  ),
  { maxLength: 60 },
)

/** Reads as a PTY gives them: UTF-8 of any text, bytes that are not UTF-8, cut anywhere (a character split across reads). */
const rawReads = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).map((text) => Buffer.from(text, 'utf8')) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 5 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 300, maxLength: 1_500 }).map((text) => Buffer.from(text, 'utf8')) },
  ),
  { maxLength: 40 },
)

describe('the replay ring and small reads', () => {
  it('replays exactly what it retains whatever the sizes of the reads (small ones copied into chunks, large ones kept)', () => {
    fc.assert(
      fc.property(readsOf, fc.integer({ min: 1, max: 3 * RING_CHUNK_BYTES }), fc.nat({ max: 40_000 }), (texts, limitChars, askedRaw) => {
        const history = new SessionHistory(blankScreen, noParsing, { cols: 20, rows: 5, limitChars, scrollbackRows: 0 })
        try {
          const all = texts.join('')
          for (const text of texts) history.appendRead(Buffer.from(text, 'utf8'))
          history.endOfOutput()
          expect(history.seq).toBe(all.length)
          expect(history.seq - history.retainedFrom).toBe(Math.min(all.length, limitChars))
          const asked = Math.min(askedRaw, all.length)
          expect(history.replay(asked).data).toBe(all.slice(Math.max(asked, history.retainedFrom)))
          // Read in pieces as the screen reads it, from every point.
          for (let from = history.retainedFrom; from < history.seq; from += 997) expect(history.read(from, 1_500)).toBe(all.slice(from, from + 1_500))
        } finally {
          history.dispose()
        }
      }),
      { numRuns: 200 },
    )
  })

  it('reads on from where it stopped as the screen does (output and reads interleaved, any split), exactly the output', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(readsOf, fc.integer({ min: 1, max: 3_000 })), { maxLength: 12 }), fc.integer({ min: 64, max: 3 * RING_CHUNK_BYTES }), (rounds, limitChars) => {
        const history = new SessionHistory(blankScreen, noParsing, { cols: 20, rows: 5, limitChars, scrollbackRows: 0 })
        try {
          let all = ''
          let cursor = 0
          for (const [texts, step] of rounds) {
            for (const text of texts) history.appendRead(Buffer.from(text, 'utf8'))
            all += texts.join('')
            // The screen's cursor: skips what the ring dropped, then reads on in steps to the end.
            cursor = Math.max(cursor, history.retainedFrom)
            while (cursor < history.seq) {
              const read = history.read(cursor, step)
              expect(read).toBe(all.slice(cursor, cursor + step))
              cursor += read.length
            }
          }
        } finally {
          history.dispose()
        }
      }),
      { numRuns: 200 },
    )
  })

  it('reads on from where it stopped through bytes that are not UTF-8 and characters split across reads, as a stream decoder reads them', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(rawReads, fc.integer({ min: 1, max: 2_000 })), { maxLength: 10 }), (rounds) => {
        const history = new SessionHistory(blankScreen, noParsing, { cols: 20, rows: 5, limitChars: 1_000_000, scrollbackRows: 0 })
        const decoder = new StringDecoder('utf8')
        try {
          let all = ''
          let cursor = 0
          for (const [reads, step] of rounds) {
            for (const read of reads) {
              history.appendRead(read)
              all += decoder.write(read)
            }
            // Bytes that may begin a character wait for the next read (a stream decoder may have
            // answered them with U+FFFD already): the ring holds a prefix of what it decoded.
            expect(history.seq).toBeLessThanOrEqual(all.length)
            while (cursor < history.seq) {
              const read = history.read(cursor, step)
              expect(read).toBe(all.slice(cursor, Math.min(cursor + step, history.seq)))
              cursor += read.length
            }
          }
          history.endOfOutput()
          all += decoder.end()
          expect(history.replay(0).data).toBe(all)
        } finally {
          history.dispose()
        }
      }),
      { numRuns: 300 },
    )
  })

  it('hands each read on as it came (the clients get the read, not the chunk)', () => {
    const history = new SessionHistory(blankScreen, noParsing, { cols: 20, rows: 5, limitChars: 1_000, scrollbackRows: 0 })
    const first = history.appendRead(Buffer.from('ab'))
    const second = history.appendRead(Buffer.from('cd'))
    expect([first?.bytes.toString(), first?.seq, second?.bytes.toString(), second?.seq]).toEqual(['ab', 2, 'cd', 4])
    history.dispose()
  })

  it('holds 1 Mi chars of 2-byte reads in a few MB, not hundreds (measured: heap and array buffers)', () => {
    gc()
    gc()
    const memory = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
    const before = memory()
    const history = new SessionHistory(blankScreen, noParsing, { cols: 80, rows: 24, limitChars: 1024 * 1024, scrollbackRows: 0 })
    // As a PTY's reads come: each its own buffer.
    for (let i = 0; i < 512 * 1024; i++) history.appendRead(Buffer.from(i % 40 === 0 ? '\r\n' : 'x.'))
    gc()
    gc()
    const held = memory() - before
    expect(history.seq - history.retainedFrom).toBe(1024 * 1024)
    // ~1 MiB of bytes in chunks (before: ~250 MB of pieces).
    expect(held).toBeLessThan(8 * 1024 * 1024)
    // What the host counts for it says so too.
    expect(history.heldBytes()).toBeLessThan(2 * 1024 * 1024)
    history.dispose()
  })
})
