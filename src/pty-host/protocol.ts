/**
 * The pty host protocol: the messages client and host exchange, and their validation. Every
 * JSON message carries `v`, the protocol version; a peer speaking another version is refused with
 * an error naming both. Control messages are JSON; the host's output events are binary frames
 * (see `frame-codec.ts`), which carry no `v`: the hello already settled the version.
 */
import type { OutputFrame } from './frame-codec.js'
import { describeValue } from '../contracts/describe-value.js'
import { assertIntegerOption, invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { defaultPtyHostSocketPath } from './socket-security.js'

/**
 * The protocol version this copy of ptykit speaks. Bump it on any incompatible change. 2: output
 * as binary frames, `ack` requests (flow control by acknowledged chars).
 */
export const PTY_HOST_PROTOCOL_VERSION = 2

/**
 * The calls a client may make: a `request` frame answered by one `reply` frame, or a one-way
 * `notify` (no reply) for `ack`, `pause`, `resume` and `resize`. `writeBytes` (`{ ptyId, bytes,
 * expectedIncarnationId? }`, the bytes as base64) writes raw bytes, as `write` writes text; a host
 * before it does not list it in its welcome, and the app then sends it no bytes at all (a host
 * that does not know a method drops the connection; its `write` would have written nothing).
 * `forgetExits` (`{ exits: [{ ptyId, incarnationId? }] }`, answered with the number forgotten)
 * forgets remembered exits an app has dealt with, in the host and its journal; likewise sent
 * only to a host that lists it.
 */
export const PTY_HOST_METHODS = [
  'spawn',
  'attach',
  'write',
  'writeBytes',
  'resize',
  'shutdown',
  'pause',
  'resume',
  'ack',
  'list',
  'exits',
  'forgetExits',
  'probe',
  'cwd',
  'foreground',
  'children',
  'snapshot',
  'clear',
] as const

/** The launch fields a spawn request may carry (functions never cross the wire). */
export const SPAWN_LAUNCH_KEYS = ['file', 'args', 'command', 'cols', 'rows', 'cwd', 'env', 'envToDelete', 'scopeId', 'slotKey', 'claimKey', 'metadata'] as const

/**
 * What a spawn request carries of the app beside its launch fields: `inheritedEnv`, the app's
 * environment (`process.env` at the spawn), which the host's PTY inherits in place of the host's
 * own (the host-terminal variables removed, then the spawn's `env` and `envToDelete` applied); and
 * `defaultCwd`, the app's working directory (`process.cwd()`), where a spawn without `cwd` starts.
 * A host whose welcome says `appEnvironment` reads them; an older one ignores them.
 */
export const SPAWN_INHERITANCE_KEYS = ['inheritedEnv', 'defaultCwd'] as const

/** One of {@link PTY_HOST_METHODS}. */
export type PtyHostMethod = (typeof PTY_HOST_METHODS)[number]

/**
 * The methods a client may send as a one-way `notify`: the ones whose answer nobody waits for.
 * Every other method answers (a result, or an error the caller must see), so it is a `request` only.
 */
export const PTY_HOST_NOTIFY_METHODS: ReadonlySet<PtyHostMethod> = new Set<PtyHostMethod>(['ack', 'pause', 'resume', 'resize'])

/** The first frame a client sends: the protocol version and the host's secret. */
export type PtyHostHello = { v: number; type: 'hello'; secret: string }

/**
 * A call. `id` is unique per connection; `params` are the method's arguments. A `notify` (one-way:
 * acks, pause, resume, resize) has `id: null` and gets no reply.
 */
export type PtyHostRequest = { v: number; type: 'request' | 'notify'; id: number | null; method: PtyHostMethod; params: Record<string, unknown> }

/**
 * An error crossing the wire: a stable code, a message, and the original error's name; for an
 * option refusal also the option's name and, when it is a plain JSON scalar, the refused value.
 */
export type PtyHostWireError = { code: string; message: string; name?: string; option?: string; value?: string | number | boolean | null }

/** What a host sends. */
export type PtyHostMessage =
  | {
      v: number
      type: 'welcome'
      hostInstanceId: string
      hostPid: number
      scrollbackRows?: number
      methods?: readonly string[]
      maxFrameBytes?: number
      /** The deadline (ms) the host gives a `shutdown` that names no budget (an app waits for its answer that long, plus its request timeout). */
      shutdownDeadlineMs?: number
      /**
       * Something a predecessor host left (it died holding the lock, or closed leaving processes it
       * could not account for as ended) may still run unaccounted for: this host's listings do not
       * speak for it.
       */
      succeedsDeadHost?: boolean
      /**
       * The host read its predecessor's session journal: it answers `probe` (with
       * `expectedIncarnationId`) and `shutdown` of that host's PTYs.
       */
      predecessorJournal?: boolean
      /**
       * The host answers a `probe` that carries `expectedIncarnationId` about that incarnation (a
       * host without it answers by id, whatever process holds the id now).
       */
      probeFencesIncarnation?: boolean
      /**
       * The host starts a spawn from the app's environment and working directory when its request
       * carries them ({@link SPAWN_INHERITANCE_KEYS}); a host without it ignores them.
       */
      appEnvironment?: boolean
      /**
       * The host reads a `cwd` request's `of` (`'leader'`: the PTY's leader's directory, not the
       * foreground process's); a host without it ignores the field and answers the foreground's.
       */
      cwdOf?: boolean
    }
  | { v: number; type: 'refused'; code: string; message: string }
  | { v: number; type: 'reply'; id: number; ok: true; result: unknown }
  | { v: number; type: 'reply'; id: number; ok: false; error: PtyHostWireError }
  | OutputFrame
  | { v: number; type: 'exit'; ptyId: string; code: number; cause?: unknown; incarnationId?: string; diedBeforeStopRequest?: boolean; stopRequestedBeforeDeath?: boolean }
  | { v: number; type: 'loss'; ptyId: string; fromSeq: number; toSeq: number }
  /**
   * The host holds the bytes of the `write` / `writeBytes` request `id` (a program that does not
   * read, or a launch command not yet sent): its reply comes when their fate is known, maybe much
   * later. The app then stops holding its event loop open for that reply (it still settles the
   * write if it arrives while the app runs). A host of an older ptykit sends none; an app of an
   * older ptykit ignores it, as any message it does not know.
   */
  | { v: number; type: 'held'; id: number }

/**
 * What a user does about a running host that an app cannot use (another protocol version, or a
 * host of an older ptykit without a method): stop it — its sessions end with it — so that the next
 * spawn starts a host of the app's own version; or, on the default socket, where the host may be
 * another application's, give the app a host of its own.
 */
export function stopMismatchedHostAdvice(socketPath: string): string {
  const advice =
    `stop that host with stopPtyHost({ socketPath: ${JSON.stringify(socketPath)} }) from ptykit/pty-host — the sessions it runs end with it — ` +
    'and restart the apps of the other ptykit version: the next spawn starts a host of the version of the app that makes it'
  // The default socket is every app's that does not name one: the host may be another product's.
  if (socketPath !== defaultPtyHostSocketPath()) return advice
  return (
    `${advice}. Every app that uses the default socket path shares this host: if it is another application's, do not stop it ` +
    "(its users' sessions would end); give this app a host of its own instead, with socketPath: defaultPtyHostSocketPath('<your app>')"
  )
}

/**
 * The error text for a version mismatch, naming both versions and, given the host's socket, what to
 * do ({@link stopMismatchedHostAdvice}).
 */
export function protocolMismatchMessage(clientVersion: unknown, hostVersion: number, socketPath?: string): string {
  const advice = socketPath === undefined ? 'run a host from the same ptykit version as the app' : `run a host from the same ptykit version as the app: ${stopMismatchedHostAdvice(socketPath)}`
  return `pty host protocol mismatch: the client speaks version ${JSON.stringify(clientVersion)}, the host speaks version ${hostVersion}; ${advice}`
}

const METHODS: ReadonlySet<string> = new Set(PTY_HOST_METHODS)

/** Validate a client frame after the hello: a request, or a description of what is wrong. */
export function parseRequest(message: Record<string, unknown>): PtyHostRequest | string {
  if (message.v !== PTY_HOST_PROTOCOL_VERSION) return protocolMismatchMessage(message.v, PTY_HOST_PROTOCOL_VERSION)
  const { type, method, params } = message
  if (type !== 'request' && type !== 'notify') return `expected a request or notify frame, got type ${JSON.stringify(type)}`
  const id = type === 'notify' ? null : message.id
  if (id !== null && (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)) return `a request needs a non-negative integer id, got ${JSON.stringify(id)}`
  if (typeof method !== 'string' || !METHODS.has(method)) return `unknown method ${JSON.stringify(method)}`
  if (type === 'notify' && !PTY_HOST_NOTIFY_METHODS.has(method as PtyHostMethod)) return `${method} answers, so it must be sent as a request, not a notify`
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return `${type} ${method} needs a params object`
  return { v: PTY_HOST_PROTOCOL_VERSION, type, id, method: method as PtyHostMethod, params: params as Record<string, unknown> }
}

/**
 * The longest PTY (session) id the host carries, in UTF-8 bytes: an output frame gives its PTY's
 * id a 16-bit length. A longer id was accepted by a spawn, and every flush of output to its
 * connection then threw in the host: that app's other sessions got no output, exit or reply again.
 */
export const PTY_HOST_MAX_SESSION_ID_BYTES = 0xffff

/**
 * Why `value` cannot be a session id, as the expectation of an option refusal; `undefined` when it
 * can. A session id is a non-empty string of at most {@link PTY_HOST_MAX_SESSION_ID_BYTES} UTF-8
 * bytes, of well-formed Unicode: an output frame carries the id as UTF-8, which turns a lone
 * surrogate into U+FFFD — the app read the output as another id's and dropped it (its exit, in
 * JSON, still arrived).
 */
export function sessionIdProblem(value: unknown): string | undefined {
  const expected = `a non-empty string of at most ${PTY_HOST_MAX_SESSION_ID_BYTES} UTF-8 bytes`
  if (typeof value !== 'string' || value.length === 0) return expected
  // Cheap first: a string's UTF-8 never takes more than 3 bytes per UTF-16 code unit.
  if (value.length * 3 > PTY_HOST_MAX_SESSION_ID_BYTES && Buffer.byteLength(value, 'utf8') > PTY_HOST_MAX_SESSION_ID_BYTES) return expected
  if (LONE_SURROGATE.test(value)) return `${expected}, of well-formed Unicode (no lone surrogate: the output frames carry it as UTF-8)`
  return undefined
}

/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * A required string parameter, or throws `invalid_option` naming it and the value — which cross the
 * wire with the refusal (see {@link toWireError}).
 */
export function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name]
  if (typeof value !== 'string' || value.length === 0) throw invalidPtyHostOption(name, 'a non-empty string', value)
  return value
}

/** The most exits one `forgetExits` request names: more than any host remembers by default, and a bounded refusal. */
export const PTY_HOST_MAX_FORGET_EXITS = 65_536

/**
 * The exits a `forgetExits` request names (`exits`: an array of `{ ptyId, incarnationId? }`), or
 * throws `invalid_option` naming the first malformed part (`exits`, `exits[2].ptyId`…) and its value.
 */
export function forgetExitsParam(params: Record<string, unknown>): { ptyId: string; incarnationId: string | undefined }[] {
  const exits = params.exits
  if (!Array.isArray(exits) || exits.length > PTY_HOST_MAX_FORGET_EXITS) {
    throw invalidPtyHostOption('exits', `an array of at most ${PTY_HOST_MAX_FORGET_EXITS} exits`, Array.isArray(exits) ? `an array of ${exits.length}` : exits)
  }
  return exits.map((exit: unknown, index) => {
    if (exit === null || typeof exit !== 'object' || Array.isArray(exit)) throw invalidPtyHostOption(`exits[${index}]`, 'an object', exit)
    const { ptyId, incarnationId } = exit as Record<string, unknown>
    if (typeof ptyId !== 'string' || ptyId.length === 0) throw invalidPtyHostOption(`exits[${index}].ptyId`, 'a non-empty string', ptyId)
    if (incarnationId !== undefined && typeof incarnationId !== 'string') throw invalidPtyHostOption(`exits[${index}].incarnationId`, 'a string, or absent', incarnationId)
    return { ptyId, incarnationId }
  })
}

/**
 * A required parameter of bytes, sent as base64 text (JSON carries no bytes), decoded; or throws
 * `invalid_option` naming it. Strict: text that is not canonical base64 (a `Buffer` decoding skips
 * what it cannot read) is refused, never written as something else. The value is not kept on the
 * error: it may be megabytes long, and would cross the wire back whole.
 */
export function bytesParam(params: Record<string, unknown>, name: string): Buffer {
  const value = params[name]
  if (typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value)) return Buffer.from(value, 'base64')
  const shown = typeof value === 'string' ? `a string of ${value.length} characters that is not base64` : describeValue(value)
  throw new PtyHostError('invalid_option', `Expected the \`${name}\` option to be bytes as base64 text, got ${shown}`, { option: name })
}

/** Canonical base64: groups of four characters of the alphabet, `=` padding only at the end. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** An optional non-negative integer parameter, or throws `invalid_option` naming it and the value. */
export function countParam(params: Record<string, unknown>, name: string): number | undefined {
  const value = params[name]
  if (value === undefined || value === null) return undefined
  assertIntegerOption(name, value, 0)
  return value as number
}

/** An error as it crosses the wire: its `code` (or `host_error`), message and name. */
export function toWireError(error: unknown): PtyHostWireError {
  if (error instanceof Error) {
    const { code, option, value } = error as { code?: unknown; option?: unknown; value?: unknown }
    const wire: PtyHostWireError = {
      code: typeof code === 'string' ? code : error instanceof TypeError ? 'invalid_option' : 'host_error',
      message: error.message,
      name: error.name,
    }
    if (typeof option === 'string') {
      wire.option = option
      if (value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) wire.value = value
    }
    return wire
  }
  return { code: 'host_error', message: String(error) }
}
