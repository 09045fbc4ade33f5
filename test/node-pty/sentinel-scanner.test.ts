import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SentinelScanner } from '../../src/node-pty/sentinel-scanner.js'

const MARKER = 'PTYKITDRAINABC123'

/** Split `text` at the given cut points (any order, duplicates allowed). */
function chunk(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: string[] = []
  let last = 0
  for (const point of points) {
    chunks.push(text.slice(last, point))
    last = point
  }
  chunks.push(text.slice(last))
  return chunks
}

// Text drawn from the marker's own alphabet, so near-misses and partial markers are common.
const streamText = fc.string({ unit: fc.constantFrom('P', 'T', 'Y', 'K', 'I', 'D', 'R', 'A', 'N', 'B', 'C', '1', '2', '3', 'x', '\n') })
const noMarker = streamText.filter((text) => !text.includes(MARKER))

describe('SentinelScanner', () => {
  it('P-scan-1: however the stream is split, text before the marker is released exactly and the marker is cut out', () => {
    fc.assert(
      fc.property(noMarker, streamText, fc.array(fc.nat(), { maxLength: 8 }), (before, after, cuts) => {
        // The marker must be the *first* occurrence: `before` + a prefix of the marker must not create one.
        fc.pre(!(before + MARKER).slice(0, -1).includes(MARKER))
        const scanner = new SentinelScanner(MARKER)
        let released = ''
        let afterText = ''
        let foundAt = -1
        chunk(before + MARKER + after, cuts).forEach((piece, index) => {
          const scan = scanner.push(piece)
          if (foundAt < 0) released += scan.before
          else afterText += scan.before
          if (scan.found) {
            foundAt = index
            afterText += scan.after
          }
        })
        expect(foundAt).toBeGreaterThanOrEqual(0)
        expect(released).toBe(before)
        expect(afterText).toBe(after)
        expect(scanner.spent).toBe(true)
      }),
    )
  })

  it('P-scan-2: without the marker, every char is released in order (the held rest by flush), and only a marker prefix is ever held', () => {
    fc.assert(
      fc.property(noMarker, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
        const scanner = new SentinelScanner(MARKER)
        let released = ''
        for (const piece of chunk(text, cuts)) {
          const scan = scanner.push(piece)
          expect(scan.found).toBe(false)
          released += scan.before
          expect(MARKER.startsWith(scanner.held)).toBe(true)
          expect(scanner.held.length).toBeLessThan(MARKER.length)
        }
        released += scanner.flush()
        expect(released).toBe(text)
      }),
    )
  })

  it('passes chunks through whole once spent', () => {
    const scanner = new SentinelScanner(MARKER)
    expect(scanner.push(`a${MARKER}b`)).toEqual({ before: 'a', found: true, after: 'b' })
    expect(scanner.push(MARKER)).toEqual({ before: MARKER, found: false, after: '' })
  })

  it('holds a split marker until the next chunk decides', () => {
    const scanner = new SentinelScanner(MARKER)
    expect(scanner.push('outPTYKIT')).toEqual({ before: 'out', found: false, after: '' })
    expect(scanner.held).toBe('PTYKIT')
    expect(scanner.push('X')).toEqual({ before: 'PTYKITX', found: false, after: '' })
  })

  it('refuses an empty marker', () => {
    expect(() => new SentinelScanner('')).toThrow(TypeError)
  })
})
