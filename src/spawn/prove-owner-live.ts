import type { ExecutionHostId, PtyIncarnationId, PtyProvider } from '../contracts/index.js'
import { callProvider } from '../contracts/call-provider.js'
import { malformedListing } from '../contracts/listing-rows.js'
import { askedDeadline } from '../contracts/deadline.js'
import { settleWithin } from '../contracts/settle-within.js'
import { PtySpawnError } from './pty-spawn-error.js'

/**
 * How long an owner's host may take to answer the listing that re-proves it (the seed origin lists
 * with `deadlineMs = Date.now() + 5000`; VS Code gives a pty-host request the same 5 s).
 */
export const OWNER_LISTING_DEADLINE_MS = 5_000

/** The identity of an owner to re-prove: a PTY id on a host, and its incarnation when attested. */
export type OwnerIdentity = {
  /** The owner's PTY id. */
  ptyId: string
  /** The host it runs on. */
  hostId: ExecutionHostId
  /** Its incarnation, when attested. */
  incarnationId?: PtyIncarnationId
  /** The claim key it holds, when it is a claim's owner: a listed row naming another key is not it. */
  claimKey?: string
}

function unavailable(owner: OwnerIdentity, why: string, cause?: unknown): PtySpawnError {
  return new PtySpawnError(
    'execution_owner_unavailable',
    `Cannot prove whether PTY ${JSON.stringify(owner.ptyId)} on host ${JSON.stringify(owner.hostId)} is live: ${why}`,
    cause === undefined ? { ptyId: owner.ptyId } : { ptyId: owner.ptyId, cause },
  )
}

/**
 * Re-prove that an owner is live through **its own** host's listing, as the seed origin does
 * (`isProviderAgentSessionOwnerLive`), with a listing bounded by {@link OWNER_LISTING_DEADLINE_MS}:
 *
 * - no row with the owner's id: `false` — a missing row is an answer, not an error;
 * - a row whose attested incarnation (or claim key) differs from the owner's: `false` (the id now
 *   runs a later process);
 * - a provider with authoritative listings: the row proves it live;
 * - any other provider: live only on an **exact** incarnation match (its rows cannot bind a claim
 *   to a process, so only the incarnation can say the row is the owner);
 * - either way, not live when the host's `probeLiveness` then proves the process dead (`false`): a
 *   row is a PTY the host still holds, which may be one whose exit is still on its way.
 *
 * Why it throws instead of answering `false` when the host cannot be asked: an owner on a host that
 * cannot be reached is unknown, never absent — treating it as absent would spawn a second owner.
 *
 * @throws PtySpawnError `execution_owner_unavailable` when no provider is registered for the
 * owner's host, or its listing fails or times out.
 */
export async function proveOwnerLive(
  resolveProvider: (hostId: ExecutionHostId) => PtyProvider | undefined,
  owner: OwnerIdentity,
): Promise<boolean> {
  const provider = resolveProvider(owner.hostId)
  if (provider === undefined) {
    throw unavailable(owner, 'no provider is registered for its host')
  }
  // One deadline for the whole proof: the listing and the liveness probe after it — on the timers'
  // monotonic clock: a wall clock stepped back meanwhile (NTP) held a hanging probe for the step.
  const deadline = performance.now() + OWNER_LISTING_DEADLINE_MS
  let rows: unknown
  try {
    rows = await listWithin(provider, OWNER_LISTING_DEADLINE_MS)
  } catch (error) {
    throw unavailable(owner, 'the process listing failed', error)
  }
  if (!Array.isArray(rows)) {
    throw unavailable(owner, 'the process listing is not an array')
  }
  const row = (rows as { id?: unknown; incarnationId?: unknown; claimKey?: unknown }[]).find(
    (candidate) => candidate?.id === owner.ptyId,
  )
  if (row === undefined) {
    return false
  }
  if (owner.incarnationId !== undefined && row.incarnationId !== undefined && row.incarnationId !== owner.incarnationId) {
    return false
  }
  if (owner.claimKey !== undefined && row.claimKey !== undefined && row.claimKey !== owner.claimKey) {
    return false
  }
  const rowIsOwner = provider.authoritativeListings === true || (owner.incarnationId !== undefined && row.incarnationId === owner.incarnationId)
  return rowIsOwner && !(await provenDead(provider, owner, deadline))
}

/**
 * Whether the host proves the PTY's process dead now: its `probeLiveness` answers `false`. A listed
 * row is a PTY the host still holds — possibly one whose process died while its exit is still on
 * the way (node-pty's reap not yet handed over, its output draining) — so a row alone would adopt
 * a dead owner. Unknown (`null`), no probe, a failed probe or no answer by `deadline` (on `performance.now()`): not proven.
 */
async function provenDead(provider: PtyProvider, owner: OwnerIdentity, deadline: number): Promise<boolean> {
  if (typeof provider.probeLiveness !== 'function') return false
  // About the owner's incarnation, when attested (the probe's answer is then about it, not the id).
  const { ptyId, incarnationId } = owner
  const ask = (): Promise<boolean | null> | undefined =>
    incarnationId === undefined ? provider.probeLiveness?.(ptyId) : provider.probeLiveness?.(ptyId, { incarnationId })
  try {
    return (await settleWithin(callProvider(ask), deadline - performance.now(), null)) === false
  } catch {
    return false
  }
}

/** What {@link listWithin}'s wait settles to when the listing did not answer in time. */
const LISTING_TIMED_OUT = Symbol('listing timed out')

/**
 * A provider's listing of who owns what, with an absolute deadline `withinMs` from now, which also
 * bounds the wait (a provider that ignores the deadline must not hang the spawn). Rejects on
 * failure or timeout, and on a listing it cannot read (`malformedListing`).
 *
 * Why `membershipOnly`: an owner's proof reads only each row's identity (`id`, `incarnationId`,
 * `claimKey`, `scopeId`), never its `cwd` or title. Without it node-pty read both from `/proc` for
 * every live PTY, and a burst of claim spawns (each one lists) queued those reads behind the
 * synchronous forks of the others until listings outran their 5 s budget: ~1 % of claim spawns
 * failed `claim_ownership_unknown` with 150 in flight.
 */
export async function listWithin(provider: PtyProvider, withinMs: number): Promise<unknown> {
  const listing = callProvider(() => provider.listProcesses({ deadlineMs: askedDeadline(Date.now() + withinMs), membershipOnly: true }))
  const rows = await settleWithin<unknown>(listing, withinMs, LISTING_TIMED_OUT)
  if (rows === LISTING_TIMED_OUT) throw new Error(`The listing did not answer within ${withinMs} ms`)
  const malformed = malformedListing(rows)
  if (malformed !== undefined) throw new TypeError(`Provider ${provider.name}: ${malformed}`)
  return rows
}
