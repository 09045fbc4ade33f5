// The web terminal's frame validation: a well-formed frame comes back as the message it encodes;
// anything else — any JSON, any string — is a WebTerminalProtocolError and never another exception
// (which would escape the socket handler instead of closing that one socket).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_CLIENT_MESSAGE_BYTES,
  MAX_COMMAND_LENGTH,
  MAX_TERMINAL_COLS,
  MAX_INPUT_FRAME_CHARS,
  MAX_TERMINAL_ROWS,
  PAGE_INPUT_KINDS,
  parseClientMessage,
  splitInput,
  WebTerminalProtocolError,
  type ClientMessage,
} from './protocol.js'

const id = fc.string({ minLength: 1, maxLength: 128 })
const cols = fc.integer({ min: 1, max: MAX_TERMINAL_COLS })
const rows = fc.integer({ min: 1, max: MAX_TERMINAL_ROWS })

const validMessage: fc.Arbitrary<ClientMessage> = fc.oneof(
  fc.constant({ type: 'attach' as const }),
  fc.record({ type: fc.constant('open' as const), cols, rows }),
  fc.record({ type: fc.constant('open' as const), cols, rows, command: fc.string({ minLength: 1, maxLength: 200 }) }),
  fc.record({ type: fc.constant('input' as const), id, data: fc.string(), kind: fc.constantFrom(...PAGE_INPUT_KINDS) }),
  fc.record({ type: fc.constant('binary' as const), id, data: fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((byte) => String.fromCharCode(byte)) }) }),
  fc.record({ type: fc.constant('resize' as const), id, cols, rows }),
  fc.record({ type: fc.constant('ack' as const), id, chars: fc.nat(), generation: fc.nat() }),
  fc.record({ type: fc.constant('close' as const), id }),
)

/** The frame itself when it is JSON, else `null` as JSON. */
function safeJson(frame: string): string {
  try {
    JSON.parse(frame)
    return frame
  } catch {
    return 'null'
  }
}

/** Either the message parses, or the error is the protocol's own. */
function parseOrProtocolError(frame: string): ClientMessage | WebTerminalProtocolError {
  try {
    return parseClientMessage(frame)
  } catch (error) {
    if (error instanceof WebTerminalProtocolError) return error
    throw error
  }
}

/**
 * Whether `value` is a well-formed client message, decided without the parser: the exact fields of
 * its type, each of its kind and within its bounds.
 */
function isWellFormed(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const m = value as Record<string, unknown>
  const keys = Object.keys(m).sort().join(',')
  const isId = (v: unknown): boolean => typeof v === 'string' && v.length >= 1 && v.length <= 128
  const isDim = (v: unknown, max: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max
  const isSize = isDim(m['cols'], MAX_TERMINAL_COLS) && isDim(m['rows'], MAX_TERMINAL_ROWS)
  switch (m['type']) {
    case 'attach':
      return keys === 'type'
    case 'open':
      if (keys === 'cols,rows,type') return isSize
      return keys === 'cols,command,rows,type' && isSize && typeof m['command'] === 'string' && m['command'].length >= 1 && m['command'].length <= MAX_COMMAND_LENGTH
    case 'input':
      return keys === 'data,id,kind,type' && isId(m['id']) && typeof m['data'] === 'string' && (PAGE_INPUT_KINDS as readonly unknown[]).includes(m['kind'])
    case 'binary':
      return keys === 'data,id,type' && isId(m['id']) && typeof m['data'] === 'string' && [...m['data']].every((c) => c.charCodeAt(0) <= 0xff && c.length === 1)
    case 'resize':
      return keys === 'cols,id,rows,type' && isId(m['id']) && isSize
    case 'ack':
      return (
        keys === 'chars,generation,id,type' &&
        isId(m['id']) &&
        [m['chars'], m['generation']].every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
      )
    case 'close':
      return keys === 'id,type' && isId(m['id'])
    default:
      return false
  }
}

/**
 * Objects that look like messages: a known type (or not), with any of the fields messages have,
 * holding a valid value or any JSON. Random JSON alone is never accepted, so it checks no acceptance.
 */
const nearMessage: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.constantFrom('attach', 'open', 'input', 'binary', 'resize', 'ack', 'close', 'other'),
    fc.dictionary(
      fc.constantFrom('id', 'cols', 'rows', 'data', 'kind', 'chars', 'command', 'extra'),
      fc.oneof(id, cols, rows, fc.constantFrom(...PAGE_INPUT_KINDS), fc.nat(), fc.constantFrom(0, -1, 1.5, ''), fc.jsonValue()),
    ),
  )
  .map(([type, fields]) => ({ ...fields, type }))

describe('parseClientMessage', () => {
  it('returns every well-formed message unchanged', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        expect(parseClientMessage(JSON.stringify(message))).toEqual(message)
      }),
    )
  })

  it('refuses any other JSON value or string with a WebTerminalProtocolError only', () => {
    // Well-formed messages among them, so that some are accepted on every run (near-misses alone
    // are accepted by chance only: none in 1 000 once).
    const asJson = (value: unknown): string => JSON.stringify(value)
    const frames = fc.oneof(fc.jsonValue().map(asJson), fc.string(), nearMessage.map(asJson), validMessage.map(asJson))
    let accepted = 0
    fc.assert(
      fc.property(frames, (frame) => {
        const result = parseOrProtocolError(frame)
        // Accepted exactly when well-formed (decided without the parser: re-parsing the parser's own
        // answer could not fail), and then it is the frame's message unchanged.
        const parsed: unknown = JSON.parse(frame.length > MAX_CLIENT_MESSAGE_BYTES ? 'null' : safeJson(frame))
        expect(result instanceof WebTerminalProtocolError ? 'refused' : 'accepted').toBe(isWellFormed(parsed) ? 'accepted' : 'refused')
        if (!(result instanceof WebTerminalProtocolError)) {
          accepted += 1
          expect(result).toEqual(parsed)
        }
      }),
      { numRuns: 1_000 },
    )
    // Some frames were accepted, so the checks of what is accepted ran.
    expect(accepted).toBeGreaterThan(0)
  })

  it('refuses a valid message with one field broken', () => {
    const broken = fc.oneof(
      validMessage.filter((m) => m.type !== 'attach').map((m) => ({ ...m, extra: true })),
      validMessage.filter((m) => 'id' in m).map((m) => ({ ...m, id: '' })),
      validMessage.filter((m) => 'cols' in m).map((m) => ({ ...m, cols: MAX_TERMINAL_COLS + 1 })),
      validMessage.filter((m) => 'rows' in m).map((m) => ({ ...m, rows: 0 })),
      validMessage.filter((m) => m.type === 'input').map((m) => ({ ...m, kind: 'launch' })),
      validMessage.filter((m) => m.type === 'ack').map((m) => ({ ...m, chars: -1 })),
      validMessage.filter((m) => m.type === 'ack').map((m) => ({ ...m, chars: 1.5 })),
      validMessage.filter((m) => m.type === 'ack').map((m) => ({ ...m, generation: -1 })),
      validMessage.filter((m) => m.type === 'ack').map(({ generation: _, ...m }) => m),
      // A lone surrogate has no UTF-8: the controller refuses to write it (a TypeError, which would
      // escape the socket handler and take the server down).
      validMessage.filter((m) => m.type === 'input').map((m) => ({ ...m, data: `${m.data}\uD800` })),
      validMessage.filter((m) => m.type === 'open').map((m) => ({ ...m, command: '\uDC00echo' })),
      // A character past U+00FF is no byte: read as latin1 it would be cut to its low 8 bits.
      validMessage.filter((m) => m.type === 'binary').map((m) => ({ ...m, data: `${m.data}\u0100` })),
      validMessage.filter((m) => m.type === 'binary').map((m) => ({ ...m, data: `\u20ac${m.data}` })),
      validMessage.filter((m) => m.type === 'binary').map((m) => ({ ...m, kind: 'driving' })),
      validMessage.filter((m) => m.type === 'binary').map(({ data: _, ...m }) => m),
    )
    fc.assert(
      fc.property(broken, (message) => {
        expect(() => parseClientMessage(JSON.stringify(message))).toThrow(WebTerminalProtocolError)
      }),
    )
  })

  it('refuses an oversized frame before parsing it', () => {
    const frame = JSON.stringify({ type: 'input', id: 'a', data: 'x'.repeat(MAX_CLIENT_MESSAGE_BYTES), kind: 'driving' })
    expect(() => parseClientMessage(frame)).toThrow(/exceeds/)
  })
})

describe('splitInput: a paste longer than a frame, as consecutive input frames', () => {
  it('cuts any text into pieces of at most the given length that join back to it, never inside a surrogate pair; each piece a frame the server reads', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.integer({ min: 2, max: 50 }), (data, maxChars) => {
        const pieces = splitInput(data, maxChars)
        expect(pieces.join('')).toBe(data)
        let offset = 0
        for (const piece of pieces) {
          expect(piece.length).toBeGreaterThan(0)
          expect(piece.length).toBeLessThanOrEqual(maxChars)
          // No cut between a pair's first half (ending one piece) and its second (starting the next).
          const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff
          const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff
          if (offset > 0) expect(isHigh(data.charCodeAt(offset - 1)) && isLow(data.charCodeAt(offset))).toBe(false)
          offset += piece.length
        }
      }),
    )
    // The worst case for the frame's size — control characters, each escaped to six bytes — still fits.
    const piece = splitInput('\u0001'.repeat(3 * MAX_INPUT_FRAME_CHARS))[0]!
    const frame = JSON.stringify({ type: 'input', id: 'x'.repeat(128), data: piece, kind: 'driving' })
    expect(Buffer.byteLength(frame, 'utf8')).toBeLessThanOrEqual(MAX_CLIENT_MESSAGE_BYTES)
    expect(parseClientMessage(frame)).toMatchObject({ type: 'input', data: piece })
  })
})
