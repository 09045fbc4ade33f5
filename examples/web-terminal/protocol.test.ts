// The web terminal's frame validation: a well-formed frame comes back as the message it encodes;
// anything else — any JSON, any string — is a WebTerminalProtocolError and never another exception
// (which would escape the socket handler instead of closing that one socket).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_CLIENT_MESSAGE_BYTES,
  MAX_TERMINAL_COLS,
  MAX_TERMINAL_ROWS,
  PAGE_INPUT_KINDS,
  parseClientMessage,
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
  fc.record({ type: fc.constant('resize' as const), id, cols, rows }),
  fc.record({ type: fc.constant('ack' as const), id, chars: fc.nat() }),
  fc.record({ type: fc.constant('close' as const), id }),
)

/** Either the message parses, or the error is the protocol's own. */
function parseOrProtocolError(frame: string): ClientMessage | WebTerminalProtocolError {
  try {
    return parseClientMessage(frame)
  } catch (error) {
    if (error instanceof WebTerminalProtocolError) return error
    throw error
  }
}

describe('parseClientMessage', () => {
  it('returns every well-formed message unchanged', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        expect(parseClientMessage(JSON.stringify(message))).toEqual(message)
      }),
    )
  })

  it('refuses any other JSON value or string with a WebTerminalProtocolError only', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue().map((value) => JSON.stringify(value)), fc.string()), (frame) => {
        const result = parseOrProtocolError(frame)
        // Whatever parsed must be a well-formed message (checked by re-validating its encoding).
        if (!(result instanceof WebTerminalProtocolError)) expect(parseClientMessage(JSON.stringify(result))).toEqual(result)
      }),
    )
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
      // A lone surrogate has no UTF-8: the controller refuses to write it (a TypeError, which would
      // escape the socket handler and take the server down).
      validMessage.filter((m) => m.type === 'input').map((m) => ({ ...m, data: `${m.data}\uD800` })),
      validMessage.filter((m) => m.type === 'open').map((m) => ({ ...m, command: '\uDC00echo' })),
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
