// The wire protocol between the JSON-lines provider (examples/custom-provider.ts, in the host
// application) and its PTY host child (examples/json-lines-host/host.ts).
//
// One JSON object per line, in both directions, over the child's stdin and stdout:
//
//   provider → host   { type: 'request', id, method, params }
//   host → provider   { type: 'reply', id, ok: true, result } | { type: 'reply', id, ok: false, error }
//                     { type: 'committed', requestId }      a spawn's process now exists
//                     { type: 'data', ptyId, data, incarnationId? }
//                     { type: 'exit', ptyId, code, incarnationId? }   ← only a code, no cause
//
// Why only a code on exits: this host plays an old daemon or a relay that forwards the exit status
// and nothing else. The provider must not invent a cause it never received, so it sends none, and
// the controller resolves the bare code with `exitCauseFromWire` — a bare 0 becomes
// `unknown/cause_unreported`, never a "clean exit".
//
// Everything that crosses this wire is plain data, and everything that arrives is checked before
// it is used: a line that does not parse, or does not have the right shape, is ignored.

/** The methods the host serves. Each is a request with an id; the host answers each exactly once. */
export const HOST_METHODS = [
  'spawn',
  'write',
  'resize',
  'shutdown',
  'pause',
  'resume',
  'list',
  'probe',
  'getCwd',
  'getForegroundProcess',
  'dispose',
] as const

/** One of {@link HOST_METHODS}. */
export type HostMethod = (typeof HOST_METHODS)[number]

/** A request from the provider to the host. `params` is the method's arguments, as plain data. */
export type HostRequest = {
  /** Always `'request'`. */
  type: 'request'
  /** Correlates the reply; unique per provider. */
  id: number
  /** What to do. */
  method: HostMethod
  /** The arguments, as plain data. */
  params: Record<string, unknown>
}

/** An error as it crosses the wire: the `code` is what the receiver matches on (e.g. `pty_absent`). */
export type WireError = {
  /** The error's class name on the host (`TypeError` marks a programmer error). */
  name: string
  /** The error's message. */
  message: string
  /** The error's stable code, when it had one. */
  code?: string
}

/** Everything the host sends to the provider. */
export type HostMessage =
  | {
      /** The answer to a request. */
      type: 'reply'
      /** The request's id. */
      id: number
      /** Succeeded. */
      ok: true
      /** The method's result, as plain data. */
      result: unknown
    }
  | {
      /** The answer to a request. */
      type: 'reply'
      /** The request's id. */
      id: number
      /** Failed. */
      ok: false
      /** Why. */
      error: WireError
    }
  | {
      /** A spawn's process physically exists (sent before the spawn's reply). */
      type: 'committed'
      /** The spawn request's id. */
      requestId: number
    }
  | {
      /** Output of a PTY. */
      type: 'data'
      /** The PTY id. */
      ptyId: string
      /** The output. */
      data: string
      /** The incarnation that produced it, when attested. */
      incarnationId?: string
    }
  | {
      /** A PTY's process ended. Carries only a code: this host does not forward causes. */
      type: 'exit'
      /** The PTY id. */
      ptyId: string
      /** The forwarded exit code (`null` when the sender's number was not JSON-representable). */
      code: number | null
      /** The incarnation that exited, when attested. */
      incarnationId?: string
    }

/** Serialize one message as one line. */
export function encodeLine(message: HostRequest | HostMessage): string {
  return `${JSON.stringify(message)}\n`
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string'

/** Parse a line from the host; `null` when it is not a well-formed {@link HostMessage}. */
export function decodeHostMessage(line: string): HostMessage | null {
  const value = parseJson(line)
  if (!isRecord(value)) return null
  switch (value['type']) {
    case 'reply': {
      if (!Number.isInteger(value['id'])) return null
      if (value['ok'] === true) return { type: 'reply', id: value['id'] as number, ok: true, result: value['result'] }
      const error = value['error']
      if (value['ok'] !== false || !isRecord(error) || typeof error['message'] !== 'string') return null
      const wire: WireError = { name: typeof error['name'] === 'string' ? error['name'] : 'Error', message: error['message'] }
      if (typeof error['code'] === 'string') wire.code = error['code']
      return { type: 'reply', id: value['id'] as number, ok: false, error: wire }
    }
    case 'committed':
      return Number.isInteger(value['requestId']) ? { type: 'committed', requestId: value['requestId'] as number } : null
    case 'data': {
      const { ptyId, data, incarnationId } = value
      if (typeof ptyId !== 'string' || typeof data !== 'string' || !optionalString(incarnationId)) return null
      return incarnationId === undefined
        ? { type: 'data', ptyId, data }
        : { type: 'data', ptyId, data, incarnationId: incarnationId as string }
    }
    case 'exit': {
      const { ptyId, code, incarnationId } = value
      if (typeof ptyId !== 'string' || !(typeof code === 'number' || code === null) || !optionalString(incarnationId)) {
        return null
      }
      return incarnationId === undefined
        ? { type: 'exit', ptyId, code }
        : { type: 'exit', ptyId, code, incarnationId: incarnationId as string }
    }
    default:
      return null
  }
}

/** Parse a line from the provider; `null` when it is not a well-formed {@link HostRequest}. */
export function decodeHostRequest(line: string): HostRequest | null {
  const value = parseJson(line)
  if (!isRecord(value) || value['type'] !== 'request' || !Number.isInteger(value['id'])) return null
  const method = value['method']
  if (typeof method !== 'string' || !(HOST_METHODS as readonly string[]).includes(method)) return null
  const params = isRecord(value['params']) ? value['params'] : {}
  return { type: 'request', id: value['id'] as number, method: method as HostMethod, params }
}

/** Turn any thrown value into a {@link WireError}, keeping its `code` so typed absences survive the trip. */
export function toWireError(error: unknown): WireError {
  if (error instanceof Error) {
    const wire: WireError = { name: error.name, message: error.message }
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string') wire.code = code
    return wire
  }
  return { name: 'Error', message: String(error) }
}
