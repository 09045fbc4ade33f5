import { describeValue } from './describe-value.js'
import { providerArgumentError } from './provider-arguments.js'
/**
 * Why a write was refused: it is proven that no byte reached the transport.
 *
 * - `pty_not_found`: no PTY with that id is known;
 * - `pty_exited`: the PTY's process has exited — also a write whose bytes the provider held (the
 *   program did not read them yet), none of which reached the PTY before it exited;
 * - `stale_incarnation`: the write was aimed at an older process behind a reused id;
 * - `provider_unavailable`: no provider is registered for the PTY's host;
 * - `provider_cannot_settle`: the provider cannot settle writes, so none was attempted;
 * - `provider_refused_write`: the provider refused the bytes before handing them on (also a
 *   provider that refused the write because it was disposed: `provider_disposed`);
 * - `controller_disposed`: the controller was disposed;
 * - `provider_cannot_write_bytes`: the write was of bytes (a `Uint8Array`), and the provider cannot
 *   write bytes — it has no `PtyProvider.writeBytes` (written before providers could take bytes:
 *   its `write` takes text only), or the host behind it does not know the request (a pty host of
 *   an older ptykit) — so none was attempted. A string write to the same PTY still goes through;
 * - `input_backlog_full`: the provider holds input the PTY's program has not read yet (its kernel
 *   input buffer is full: the program is busy, stopped, or reads slowly), and this write would take
 *   what it holds past its bound on held input — the node-pty and SSH providers' (and the pty
 *   host's) `maxPendingInputBytes`, default {@link DEFAULT_MAX_PENDING_INPUT_BYTES} — or is itself
 *   larger than that bound. None of its bytes was written (earlier writes keep their place); the
 *   same write may go through once the program has read some: wait, or split a write larger than
 *   the bound.
 */
export type WriteRefusalReason =
  | 'pty_not_found'
  | 'pty_exited'
  | 'stale_incarnation'
  | 'provider_unavailable'
  | 'provider_cannot_settle'
  | 'provider_refused_write'
  | 'controller_disposed'
  | 'provider_cannot_write_bytes'
  | 'input_backlog_full'

/**
 * The default bound on the input a provider holds for one PTY whose program does not read it yet
 * (64 MiB, the `maxPendingInputBytes` option of the node-pty and SSH providers and of the pty
 * host): a write past it is refused `input_backlog_full`. Why this much: a 10 MB paste into a
 * program that reads it later (an editor that is still starting) must go through whole, several
 * times over; why a bound at all: without one, a writer faster than the program (a file piped in,
 * a loop) grows the app's memory for as long as it writes — 100 MB written to `sleep` held 100 MB.
 */
export const DEFAULT_MAX_PENDING_INPUT_BYTES = 64 * 1024 * 1024

/**
 * Internal (not exported from `ptykit/contracts`): whether `value` is a valid `maxPendingInputBytes`
 * option of a provider — a positive integer of bytes, or `Number.POSITIVE_INFINITY` (no bound) —
 * and how a refusal words what was expected; each provider throws its own option error.
 */
export function isMaxPendingInputBytes(value: unknown): boolean {
  return value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && (value as number) > 0)
}

/** Internal: what a refusal of `maxPendingInputBytes` says was expected (see {@link isMaxPendingInputBytes}). */
export const MAX_PENDING_INPUT_BYTES_EXPECTED = 'a positive integer (bytes) or Number.POSITIVE_INFINITY'

/**
 * Why a write's fate is unknown.
 *
 * - `provider_threw_after_handoff`: the provider threw after it may have handed bytes on;
 * - `partial_write`: some bytes were handed on, then the transport failed — or the PTY exited while
 *   the provider still held the rest (dropped with it);
 * - `transport_lost`: the connection to the host dropped before it answered;
 * - `settlement_timeout`: the host did not answer in time.
 */
export type WriteUnverifiableReason =
  | 'provider_threw_after_handoff'
  | 'partial_write'
  | 'transport_lost'
  | 'settlement_timeout'

/**
 * The three-valued outcome of a write. Ambiguity is a value, never a rejected promise or a bare
 * `false`: a boolean once let a lost settlement look like a refusal, and the same bytes were sent
 * twice.
 *
 * - `accepted`: every byte reached the PTY (its terminal's input, or its transport) — never proof
 *   the program consumed them. A provider that holds bytes for later (the terminal's input buffer
 *   is full: the program does not read yet) settles such a write when their fate is known, as a
 *   promise: `accepted` once the last of them went on, `refused('pty_exited')` or
 *   `unverifiable('partial_write', true)` when the PTY exits first and they are dropped with it;
 * - `refused`: proven that no byte could reach the transport; safe to retry or release;
 * - `unverifiable`: nobody can tell; `bytesHandedToTransport` says whether any may have left.
 */
export type WriteSettlement =
  | {
      /** Every byte reached the PTY or its transport. */
      kind: 'accepted'
    }
  | {
      /** Proven that no byte reached the transport. */
      kind: 'refused'
      /** Why. */
      reason: WriteRefusalReason
    }
  | {
      /** Nobody can tell whether the bytes arrived. */
      kind: 'unverifiable'
      /** Why. */
      reason: WriteUnverifiableReason
      /** Whether any byte may have left for the transport (a retry could duplicate it). */
      bytesHandedToTransport: boolean
    }

/** The `accepted` settlement. */
export const WRITE_ACCEPTED: WriteSettlement = Object.freeze({ kind: 'accepted' })

/** Build a `refused` settlement. */
export function refusedWrite(reason: WriteRefusalReason): WriteSettlement {
  return { kind: 'refused', reason }
}

/** Build an `unverifiable` settlement. */
export function unverifiableWrite(
  reason: WriteUnverifiableReason,
  bytesHandedToTransport: boolean,
): WriteSettlement {
  return { kind: 'unverifiable', reason, bytesHandedToTransport }
}

/**
 * True only for `accepted`: the flattening a boolean `write` uses.
 *
 * @throws TypeError when `settlement` is not a {@link WriteSettlement}. Why not `false`: the likely
 * mix-ups would read as a refusal that never happened — `writeWithSettlement`'s answer still a
 * promise (await it first), or `write`'s boolean — and `null` was a raw "Cannot read properties".
 */
export function isWriteAccepted(settlement: WriteSettlement): boolean {
  const value: unknown = settlement
  if (!isWriteSettlement(value)) {
    const hint =
      value instanceof Promise ? ' — a promise: await it (writeWithSettlement answers a promise while the write is in flight)' : typeof value === 'boolean' ? ' — write() already answers whether it was accepted' : ''
    throw new TypeError(`Expected a WriteSettlement ({ kind: 'accepted' | 'refused' | 'unverifiable', … }), got ${describeValue(value)}${hint}`)
  }
  return value.kind === 'accepted'
}

/** Internal (not exported from the index): every refusal reason, for the guard and the test arbitraries. */
export const WRITE_REFUSAL_REASONS: readonly WriteRefusalReason[] = [
  'pty_not_found',
  'pty_exited',
  'stale_incarnation',
  'provider_unavailable',
  'provider_cannot_settle',
  'provider_refused_write',
  'controller_disposed',
  'provider_cannot_write_bytes',
  'input_backlog_full',
]

/** Internal (not exported from the index): every unverifiable reason, for the guard and the test arbitraries. */
export const WRITE_UNVERIFIABLE_REASONS: readonly WriteUnverifiableReason[] = [
  'provider_threw_after_handoff',
  'partial_write',
  'transport_lost',
  'settlement_timeout',
]

const REFUSAL_REASONS: ReadonlySet<string> = new Set(WRITE_REFUSAL_REASONS)
const UNVERIFIABLE_REASONS: ReadonlySet<string> = new Set(WRITE_UNVERIFIABLE_REASONS)

/**
 * True for a well-formed {@link WriteSettlement}: a known `kind`, a known `reason`, and a boolean
 * `bytesHandedToTransport` for `unverifiable`.
 *
 * @param value - anything a provider's `write` returned.
 */
export function isWriteSettlement(value: unknown): value is WriteSettlement {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as { kind?: unknown; reason?: unknown; bytesHandedToTransport?: unknown }
  switch (candidate.kind) {
    case 'accepted':
      return true
    case 'refused':
      return typeof candidate.reason === 'string' && REFUSAL_REASONS.has(candidate.reason)
    case 'unverifiable':
      return (
        typeof candidate.reason === 'string' &&
        UNVERIFIABLE_REASONS.has(candidate.reason) &&
        typeof candidate.bytesHandedToTransport === 'boolean'
      )
    default:
      return false
  }
}

/**
 * Read whatever a provider's `write` answered as a {@link WriteSettlement}, the way the seed origin
 * reads an older provider's boolean: a well-formed settlement is kept; `false` is
 * `refused('provider_refused_write')`; `true` is `accepted`; anything else (`undefined`, a
 * malformed object) is `unverifiable('provider_threw_after_handoff', true)` — the write was
 * dispatched and nobody can say what became of it. Never throws.
 *
 * @param value - the provider's answer (already awaited when it was a promise).
 */
export function settlementFromProviderWrite(value: unknown): WriteSettlement {
  if (isWriteSettlement(value)) return value
  if (value === false) return refusedWrite('provider_refused_write')
  if (value === true) return WRITE_ACCEPTED
  return unverifiableWrite('provider_threw_after_handoff', true)
}

/**
 * Internal (not exported from `ptykit/contracts`): a provider's `write` refuses `data` that is not
 * a string with a `TypeError` naming it (`code: 'invalid_option'`, `option: 'data'`, `value`),
 * before anything is handed to a transport (see `PtyProvider.write`).
 */
export function assertWriteData(data: unknown): asserts data is string {
  if (typeof data !== 'string') throw providerArgumentError('data', 'a string', data)
}

/**
 * Internal (not exported from `ptykit/contracts`): whether `value` is a `Uint8Array` (a `Buffer`
 * is one), also one made in another realm (a `vm` context, a worker's transfer), where
 * `instanceof` would say no. Not an `ArrayBuffer`, a `DataView`, nor another typed array: their
 * elements are not bytes one for one.
 */
export function isUint8Array(value: unknown): value is Uint8Array {
  return ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === '[object Uint8Array]'
}

/**
 * Internal (not exported from `ptykit/contracts`): a provider's `writeBytes` refuses `bytes` that
 * is not a `Uint8Array` with a `TypeError` naming it (`code: 'invalid_option'`, `option:
 * 'bytes'`, `value`), before anything is handed to a transport (see `PtyProvider.writeBytes`).
 */
export function assertWriteBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!isUint8Array(bytes)) throw providerArgumentError('bytes', 'a Uint8Array (a Buffer is one)', bytes)
}
