// The web terminal's wire protocol: JSON text frames over one WebSocket per page.
//
// Shared by the server (which validates every client frame with `parseClientMessage`) and the page
// (which imports only the types). A frame that is too large, not JSON, not an object of a known
// `type`, or carries a field of the wrong shape is a protocol violation: the server closes that
// socket — and only that socket — with `PROTOCOL_VIOLATION_CLOSE_CODE`.

/** The largest client frame the server reads, in bytes. Keys and pastes fit; anything bigger is not a terminal's input. */
export const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024

/** The largest terminal the page may ask for; a bigger size is a bug or an attack, not a window. */
export const MAX_TERMINAL_COLS = 1_000

/** See {@link MAX_TERMINAL_COLS}. */
export const MAX_TERMINAL_ROWS = 500

/** The longest command the page may ask the server to run in a new terminal. */
export const MAX_COMMAND_LENGTH = 4_096

/**
 * The most UTF-16 code units of input one `input` frame carries. A paste can be far longer than a
 * frame may be ({@link MAX_CLIENT_MESSAGE_BYTES}): the page sends it as consecutive frames of at
 * most this many units. Each unit is at most 6 bytes of JSON (a control character's `\u001b`), so a
 * frame stays under the limit whatever the text.
 */
export const MAX_INPUT_FRAME_CHARS = 8_192

/**
 * `data` cut into pieces of at most `maxChars` code units, never between the two halves of a
 * surrogate pair (a lone half is refused as malformed). The pieces joined are `data`.
 */
export function splitInput(data: string, maxChars: number = MAX_INPUT_FRAME_CHARS): string[] {
  const pieces: string[] = []
  for (let start = 0; start < data.length; ) {
    let end = Math.min(start + maxChars, data.length)
    const last = data.charCodeAt(end - 1)
    // Ends on a pair's first half with its second half next: end one unit earlier.
    if (end < data.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end -= 1
    pieces.push(data.slice(start, end))
    start = end
  }
  return pieces
}

/** WebSocket close code the server uses for a malformed frame (1008: policy violation). */
export const PROTOCOL_VIOLATION_CLOSE_CODE = 1008

/**
 * The input kinds a page may claim. `driving` is a person typing; `query-reply` is xterm.js
 * answering a terminal query. `launch` is the server's own startup input and is refused from a page.
 */
export const PAGE_INPUT_KINDS = ['driving', 'query-reply'] as const

/** An input kind a page may send. */
export type PageInputKind = (typeof PAGE_INPUT_KINDS)[number]

/** What the page sends. */
export type ClientMessage =
  /** Show this page every terminal, taking each from any page that showed it (sent once, on connect). */
  | { type: 'attach' }
  /** Open a terminal: the user's shell, or `sh -c command` when a command is given. */
  | { type: 'open'; cols: number; rows: number; command?: string }
  /** Keys (or a query reply) for a terminal. */
  | { type: 'input'; id: string; data: string; kind: PageInputKind }
  /**
   * Raw bytes for a terminal, from xterm.js's `onBinary` (a mouse report in the default X10
   * encoding past column or row 95 carries bytes 0x80–0xFF, which `input`'s text, written as
   * UTF-8, cannot): `data` holds one character per byte, U+0000–U+00FF, as xterm.js gives them.
   * The server writes them as bytes (`Buffer.from(data, 'latin1')`), with input kind `driving`.
   */
  | { type: 'binary'; id: string; data: string }
  /** The terminal's container changed size. */
  | { type: 'resize'; id: string; cols: number; rows: number }
  /**
   * xterm.js finished parsing `chars` more characters of this terminal's output, as shown since the
   * `attached` with this `generation` (an ack of output shown before a repaint is not counted).
   */
  | { type: 'ack'; id: string; chars: number; generation: number }
  /** The user closed the tab: stop the process and forget the terminal. */
  | { type: 'close'; id: string }

/** How a terminal stands, as the page shows it. */
export type TerminalStatus =
  | { state: 'live' }
  /**
   * The process ended: `kind` is its cause's, `description` what ended and why (`exit-words.ts`:
   * `/bin/bash exited with code 3`, `… killed by signal 9`, `… closed`, `… ended (cause unknown: …)`).
   */
  | { state: 'ended'; kind: string; description: string }

/** What the server sends. */
export type ServerMessage =
  /**
   * A terminal is now shown by this page: a new one (`opened: true`) or, after a reload, one that
   * was already running. `snapshot` repaints its current screen; output continues right after it.
   */
  | {
      type: 'attached'
      id: string
      title: string
      cols: number
      rows: number
      snapshot: string
      status: TerminalStatus
      opened: boolean
      /** Counts this terminal's `attached` messages: the page's acks name the one they follow. */
      generation: number
    }
  /** Output, in order; the page acknowledges it once xterm.js has parsed it. */
  | { type: 'output'; id: string; data: string }
  /** The process ended. Sent after every byte of its output. */
  | { type: 'exit'; id: string; status: TerminalStatus & { state: 'ended' } }
  /**
   * The tab's terminal was stopped (`verified`: the stop was proven) and forgotten: at this page's
   * `close`, or at another page's while this page showed it.
   */
  | { type: 'closed'; id: string; verified: boolean }
  /** Another page took this terminal over; this page no longer receives its output. */
  | { type: 'detached'; id: string }
  /** A request failed (for example a spawn); the socket stays open. */
  | { type: 'error'; message: string }

/** A client frame the server refuses; the message says what was wrong, never echoing the frame. */
export class WebTerminalProtocolError extends Error {
  override readonly name = 'WebTerminalProtocolError'
}

/**
 * Validate one client frame. Throws {@link WebTerminalProtocolError} naming the field and what was
 * expected; the caller closes the socket. Unknown extra fields are refused too: a page built from
 * this protocol never sends them.
 */
export function parseClientMessage(frame: string): ClientMessage {
  if (frame.length > MAX_CLIENT_MESSAGE_BYTES) {
    throw new WebTerminalProtocolError(`frame of ${frame.length} chars exceeds ${MAX_CLIENT_MESSAGE_BYTES}`)
  }
  let value: unknown
  try {
    value = JSON.parse(frame)
  } catch {
    throw new WebTerminalProtocolError('frame is not JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WebTerminalProtocolError('frame is not a JSON object')
  }
  const message = value as Record<string, unknown>
  switch (message['type']) {
    case 'attach':
      expectKeys(message, ['type'])
      return { type: 'attach' }
    case 'open': {
      expectKeys(message, ['type', 'cols', 'rows'], ['command'])
      const command = message['command']
      if (
        command !== undefined &&
        (typeof command !== 'string' || command.length === 0 || command.length > MAX_COMMAND_LENGTH || !isWellFormed(command))
      ) {
        throw new WebTerminalProtocolError(`open.command must be a well-formed, non-empty string of at most ${MAX_COMMAND_LENGTH} chars`)
      }
      const size = { cols: dimension(message, 'cols', MAX_TERMINAL_COLS), rows: dimension(message, 'rows', MAX_TERMINAL_ROWS) }
      return command === undefined ? { type: 'open', ...size } : { type: 'open', ...size, command }
    }
    case 'input': {
      expectKeys(message, ['type', 'id', 'data', 'kind'])
      const kind = message['kind']
      if (!PAGE_INPUT_KINDS.includes(kind as PageInputKind)) {
        throw new WebTerminalProtocolError(`input.kind must be one of ${PAGE_INPUT_KINDS.join(', ')}`)
      }
      const data = message['data']
      // Why well-formed: a lone surrogate has no UTF-8, so the controller refuses to write it with a
      // TypeError — thrown from this socket's message handler, it would take the whole server down.
      if (typeof data !== 'string' || !isWellFormed(data)) throw new WebTerminalProtocolError('input.data must be a well-formed string')
      return { type: 'input', id: terminalId(message), data, kind: kind as PageInputKind }
    }
    case 'binary': {
      expectKeys(message, ['type', 'id', 'data'])
      const data = message['data']
      // Why one byte per character: a character past U+00FF is no byte — read as latin1 it would
      // be cut to its low 8 bits, and the program would get a byte nobody sent.
      if (typeof data !== 'string' || !BYTES_AS_TEXT.test(data)) throw new WebTerminalProtocolError('binary.data must be a string of characters U+0000 to U+00FF (one per byte)')
      return { type: 'binary', id: terminalId(message), data }
    }
    case 'resize':
      expectKeys(message, ['type', 'id', 'cols', 'rows'])
      return {
        type: 'resize',
        id: terminalId(message),
        cols: dimension(message, 'cols', MAX_TERMINAL_COLS),
        rows: dimension(message, 'rows', MAX_TERMINAL_ROWS),
      }
    case 'ack': {
      expectKeys(message, ['type', 'id', 'chars', 'generation'])
      const chars = message['chars']
      if (typeof chars !== 'number' || !Number.isSafeInteger(chars) || chars < 0) {
        throw new WebTerminalProtocolError('ack.chars must be a non-negative integer')
      }
      const generation = message['generation']
      if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
        throw new WebTerminalProtocolError('ack.generation must be a non-negative integer')
      }
      return { type: 'ack', id: terminalId(message), chars, generation }
    }
    case 'close':
      expectKeys(message, ['type', 'id'])
      return { type: 'close', id: terminalId(message) }
    default:
      throw new WebTerminalProtocolError('frame has no known type')
  }
}

/** Text that is bytes, one per character (xterm.js's `onBinary`): U+0000 to U+00FF only. */
const BYTES_AS_TEXT = /^[\u0000-\u00ff]*$/

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Whether `text` is well-formed UTF-16 (has a UTF-8 encoding): no lone surrogate. */
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text)
}

function expectKeys(message: Record<string, unknown>, required: string[], optional: string[] = []): void {
  for (const key of required) {
    if (!(key in message)) throw new WebTerminalProtocolError(`${String(message['type'])} frame lacks ${key}`)
  }
  for (const key of Object.keys(message)) {
    if (!required.includes(key) && !optional.includes(key)) {
      throw new WebTerminalProtocolError(`${String(message['type'])} frame has an unknown field`)
    }
  }
}

function terminalId(message: Record<string, unknown>): string {
  const id = message['id']
  // Ids are the controller's (UUIDs); a bound keeps a hostile frame from smuggling a huge key.
  if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
    throw new WebTerminalProtocolError(`${String(message['type'])}.id must be a non-empty string of at most 128 chars`)
  }
  return id
}

function dimension(message: Record<string, unknown>, key: 'cols' | 'rows', max: number): number {
  const value = message[key]
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new WebTerminalProtocolError(`${String(message['type'])}.${key} must be an integer from 1 to ${max}`)
  }
  return value
}
