import type { ExecutionHostId, PtyIncarnationId, PtyProvider } from '../contracts/index.js'
import { PtySpawnError } from './pty-spawn-error.js'

/** The identity of an owner to re-prove: a PTY id on a host, and its incarnation when attested. */
export type OwnerIdentity = {
  /** The owner's PTY id. */
  ptyId: string
  /** The host it runs on. */
  hostId: ExecutionHostId
  /** Its incarnation, when attested. */
  incarnationId?: PtyIncarnationId
}

function unavailable(owner: OwnerIdentity, why: string, cause?: unknown): PtySpawnError {
  return new PtySpawnError(
    'execution_owner_unavailable',
    `Cannot prove whether PTY ${JSON.stringify(owner.ptyId)} on host ${JSON.stringify(owner.hostId)} is live: ${why}`,
    cause === undefined ? { ptyId: owner.ptyId } : { ptyId: owner.ptyId, cause },
  )
}

/**
 * Re-prove that an owner is live through **its own** host's provider. The evidence, in order:
 *
 * 1. `probeLiveness`: `false` is proof of absence; `null` or a missing probe proves nothing;
 * 2. `listProcesses`: a row with the owner's id and a *different* attested incarnation proves the
 *    owner gone (the id now runs a later process); a matching row proves it live; a missing row
 *    proves absence only when the provider's listings are authoritative;
 * 3. a probe `true` without a contradicting row proves it live.
 *
 * Why it throws instead of answering `false` when nothing is proven: an owner on a host that cannot
 * be reached is unknown, never absent — treating it as absent would spawn a second owner.
 *
 * @throws PtySpawnError `execution_owner_unavailable` when no provider is registered for the
 * owner's host, or when the evidence is inconclusive.
 */
export async function proveOwnerLive(
  resolveProvider: (hostId: ExecutionHostId) => PtyProvider | undefined,
  owner: OwnerIdentity,
): Promise<boolean> {
  const provider = resolveProvider(owner.hostId)
  if (provider === undefined) {
    throw unavailable(owner, 'no provider is registered for its host')
  }
  let probe: boolean | null = null
  if (provider.probeLiveness !== undefined) {
    try {
      probe = await provider.probeLiveness(owner.ptyId)
    } catch (error) {
      throw unavailable(owner, 'the liveness probe failed', error)
    }
    if (probe === false) {
      return false
    }
  }
  let rows
  try {
    rows = await provider.listProcesses()
  } catch (error) {
    if (probe === true && owner.incarnationId === undefined) {
      return true
    }
    throw unavailable(owner, 'the process listing failed', error)
  }
  const row = rows.find((candidate) => candidate.id === owner.ptyId)
  if (row !== undefined) {
    if (owner.incarnationId !== undefined && row.incarnationId !== undefined) {
      return row.incarnationId === owner.incarnationId
    }
    return true
  }
  if (provider.authoritativeListings === true) {
    return false
  }
  if (probe === true) {
    return true
  }
  throw unavailable(owner, 'its host neither lists it nor vouches for it, and its listings are not authoritative')
}
