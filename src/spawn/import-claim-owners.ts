import { describeValue } from '../contracts/describe-value.js'
import type { ExecutionHostId, PtyProcessInfo } from '../contracts/index.js'
import { PtySpawnError } from './pty-spawn-error.js'
import { OWNER_LISTING_DEADLINE_MS, listWithin } from './prove-owner-live.js'
import type { ClaimedOwner, PtySpawnDeps } from './types.js'

type ListedOwner = Omit<ClaimedOwner, 'generation'>

function unknownOwnership(message: string, cause?: unknown): PtySpawnError {
  return new PtySpawnError('claim_ownership_unknown', message, cause === undefined ? {} : { cause })
}

/**
 * Before a claim decides its key is free, import every owner the hosts' listings advertise (the
 * seed's `reconcileAgentSessionOwnerListings`): a row with a `claimKey` names a live owner — maybe
 * one another controller (or an earlier run of this app) started over the same provider. The
 * ensure then re-proves and adopts it instead of starting a second one.
 *
 * Fails closed, as the seed does: a listing that fails or times out, a row advertising a claim
 * without an incarnation, or two rows advertising one key make ownership unknown, and the spawn
 * fails with `claim_ownership_unknown` rather than guess. Hosts with no provider are skipped (an
 * owner there is re-proven — and found unreachable — by the ensure).
 *
 * @throws PtySpawnError `claim_ownership_unknown`.
 */
export async function importClaimOwnersFromListings(deps: PtySpawnDeps, spawnHostId: ExecutionHostId): Promise<void> {
  const claims = deps.claims
  if (claims?.importOwner === undefined) return
  const hostIds = [...new Set(deps.listHostIds?.() ?? [spawnHostId])]
  const listings = await Promise.all(
    hostIds.map(async (hostId) => {
      const provider = deps.resolveProvider(hostId)
      if (provider === undefined) return { hostId, rows: [] as unknown[] }
      try {
        const rows = await listWithin(provider, OWNER_LISTING_DEADLINE_MS)
        if (!Array.isArray(rows)) throw new TypeError('The listing is not an array')
        return { hostId, rows: rows as unknown[] }
      } catch (error) {
        // The reason in the message too: a row the listing cannot be read by shows its value there.
        throw unknownOwnership(`Host ${JSON.stringify(hostId)} could not list its claim owners, so no claim can be decided: ${error instanceof Error ? error.message : describeValue(error)}`, error)
      }
    }),
  )
  const owners = new Map<string, ListedOwner>()
  for (const { hostId, rows } of listings) {
    for (const row of rows as Partial<PtyProcessInfo>[]) {
      const claimKey = row?.claimKey
      if (typeof claimKey !== 'string' || typeof row.id !== 'string') continue
      if (row.incarnationId === undefined) {
        throw unknownOwnership(`Host ${JSON.stringify(hostId)} advertises PTY ${JSON.stringify(row.id)} as owner of claim ${JSON.stringify(claimKey)} without an incarnation`)
      }
      const seen = owners.get(claimKey)
      if (seen !== undefined && (seen.ptyId !== row.id || seen.hostId !== hostId)) {
        throw unknownOwnership(`Claim ${JSON.stringify(claimKey)} is advertised by two PTYs: ${JSON.stringify(seen.ptyId)} and ${JSON.stringify(row.id)}`)
      }
      owners.set(claimKey, {
        claimKey,
        ...(typeof row.scopeId === 'string' ? { scopeId: row.scopeId } : {}),
        ptyId: row.id,
        hostId,
        incarnationId: row.incarnationId,
      })
    }
  }
  for (const owner of owners.values()) claims.importOwner(owner)
}
