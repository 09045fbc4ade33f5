/**
 * Why a write was refused: it is proven that no byte reached the transport.
 *
 * - `pty_not_found`: no PTY with that id is known;
 * - `pty_exited`: the PTY's process has exited;
 * - `stale_incarnation`: the write was aimed at an older process behind a reused id;
 * - `provider_unavailable`: no provider is registered for the PTY's host;
 * - `provider_cannot_settle`: the provider cannot settle writes, so none was attempted;
 * - `provider_refused_write`: the provider refused the bytes before handing them on;
 * - `controller_disposed`: the controller was disposed.
 */
export type WriteRefusalReason =
  | 'pty_not_found'
  | 'pty_exited'
  | 'stale_incarnation'
  | 'provider_unavailable'
  | 'provider_cannot_settle'
  | 'provider_refused_write'
  | 'controller_disposed'

/**
 * Why a write's fate is unknown.
 *
 * - `provider_threw_after_handoff`: the provider threw after it may have handed bytes on;
 * - `partial_write`: some bytes were handed on, then the transport failed;
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
 * - `accepted`: the provider or transport took the bytes — never proof the program consumed them;
 * - `refused`: proven that no byte could reach the transport; safe to retry or release;
 * - `unverifiable`: nobody can tell; `bytesHandedToTransport` says whether any may have left.
 */
export type WriteSettlement =
  | {
      /** The provider or transport took the bytes. */
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

/** True only for `accepted`: the flattening a boolean `write` uses. */
export function isWriteAccepted(settlement: WriteSettlement): boolean {
  return settlement.kind === 'accepted'
}
