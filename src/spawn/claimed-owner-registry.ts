import { describeValue } from '../contracts/describe-value.js'
import type { PtyClaim } from '../contracts/index.js'
import { incarnationOf } from '../contracts/incarnation.js'
import { assertOptionsBag, optionNamesOf } from '../contracts/known-options.js'
import { PtySpawnError } from './pty-spawn-error.js'
import type { ClaimedOwner, ClaimedOwnerRegistry, EnsureClaimArgs, EnsureClaimResult } from './types.js'

/** The options of the factory below: any other name is refused, not ignored. */
const CLAIMED_OWNER_REGISTRY_OPTION_NAMES = optionNamesOf<ClaimedOwnerRegistryOptions>()('mintGeneration', 'maxEntries')

/**
 * The most claims (live or reserved) one registry holds. Why: every claim pins a PTY, so a runaway
 * caller minting claim keys must hit a wall instead of exhausting the host; past the cap an ensure
 * fails with `execution_owner_unavailable`. 1024 is far above any real agent fleet on one host.
 */
export const CLAIMED_OWNER_REGISTRY_MAX_ENTRIES = 1024

type Reserved = {
  phase: 'reserved'
  claimKey: string
  scopeId: string | undefined
  generation: string
  owner: Promise<ClaimedOwner>
  /** The PTY the creator's spawn started, once it did (a release names it). */
  ptyId: string | undefined
  /**
   * Released while the creator's run was not settled (its rollback's first undo): no longer
   * joinable. A new ensure waits for the run to settle — the rollback is stopping the PTY — and
   * then starts over; a run that commits all the same is not made live.
   */
  released: boolean
}

type Live = {
  phase: 'live'
  claimKey: string
  scopeId: string | undefined
  generation: string
  owner: ClaimedOwner
}

type Entry = Reserved | Live

/** Options of {@link createClaimedOwnerRegistry}. */
export type ClaimedOwnerRegistryOptions = {
  /** Mint a fresh generation id per reservation. Default: a counter (`gen-1`, `gen-2`…), unique per registry. */
  mintGeneration?: (() => string) | undefined
  /** The entry cap; default {@link CLAIMED_OWNER_REGISTRY_MAX_ENTRIES}. */
  maxEntries?: number | undefined
}

function checkClaim(claim: unknown): asserts claim is PtyClaim {
  if (typeof claim !== 'object' || claim === null) {
    throw new TypeError(`Expected the \`claim\` option to be an object with a non-empty \`key\`, got ${describeValue(claim)}`)
  }
  const key = (claim as { key?: unknown }).key
  if (typeof key !== 'string' || key.length === 0) {
    throw new TypeError(`Expected the \`claim.key\` option to be a non-empty string, got ${describeValue(key)}`)
  }
}

function conflict(claim: PtyClaim, heldScope: string | undefined): PtySpawnError {
  return new PtySpawnError(
    'claim_conflict',
    `Claim ${JSON.stringify(claim.key)} is held in scope ${JSON.stringify(heldScope ?? null)}, not ${JSON.stringify(claim.scopeId ?? null)}`,
  )
}

/**
 * Create the default single-flight registry of claimed owners ("exactly one live PTY per key"):
 *
 * - concurrent ensures of one key spawn once: the first caller gets `created`, the joiners (their
 *   `onJoin` fires) get `adopted` with the same owner, or the creator's error — once the creator's
 *   whole run is over when it passes `runSettled` (its final error, after its rollback), else
 *   once its `spawn` settles;
 * - an existing owner is re-proven with `isLive` before it is adopted; `false` releases it and
 *   spawns fresh; a throw (an unreachable host) fails the ensure — never read as absent;
 * - a late liveness answer cannot adopt a released or replaced generation (it re-checks after the
 *   await and starts over);
 * - the same key in a different scope is `claim_conflict`; `find` never crosses scopes;
 * - past {@link CLAIMED_OWNER_REGISTRY_MAX_ENTRIES} entries a new key is `execution_owner_unavailable`;
 * - `release(ptyId, generation?)` is fenced by generation. Releasing an owner whose creator's run
 *   is still settling (its rollback) closes it to joiners: a new ensure waits for that run to
 *   settle and then starts over, so it neither takes the creator's error nor overlaps the PTY
 *   being stopped; only ensures that joined before the release share the creator's outcome;
 * - `importOwner` adds an owner a host's listing advertises, unless the key is already held.
 *
 * @throws TypeError when `options` is not an object, holds an option other than `mintGeneration`
 * and `maxEntries` (naming it), or `maxEntries` is not a positive integer.
 */
export function createClaimedOwnerRegistry(options: ClaimedOwnerRegistryOptions = {}): ClaimedOwnerRegistry {
  assertOptionsBag('claimed-owner registry', options, CLAIMED_OWNER_REGISTRY_OPTION_NAMES)
  const maxEntries = options.maxEntries ?? CLAIMED_OWNER_REGISTRY_MAX_ENTRIES
  if (!Number.isInteger(maxEntries) || maxEntries <= 0) {
    throw new TypeError(`Expected the \`maxEntries\` option to be a positive integer, got ${describeValue(maxEntries)}`)
  }
  let counter = 0
  const mintGeneration = options.mintGeneration ?? (() => `gen-${++counter}`)
  const entries = new Map<string, Entry>()

  async function create(args: EnsureClaimArgs): Promise<EnsureClaimResult> {
    const { claim } = args
    if (entries.size >= maxEntries) {
      throw new PtySpawnError(
        'execution_owner_unavailable',
        `Cannot claim ${JSON.stringify(claim.key)}: the registry already holds ${entries.size} claims (the cap is ${maxEntries})`,
      )
    }
    const generation = mintGeneration()
    let settle!: { resolve: (owner: ClaimedOwner) => void; reject: (error: unknown) => void }
    const ownerPromise = new Promise<ClaimedOwner>((resolve, reject) => {
      settle = { resolve, reject }
    })
    // Why: nobody may join; an unobserved rejection must not crash the host.
    ownerPromise.catch(() => undefined)
    const reservation: Reserved = { phase: 'reserved', claimKey: claim.key, scopeId: claim.scopeId, generation, owner: ownerPromise, ptyId: undefined, released: false }
    entries.set(claim.key, reservation)
    const dropReservation = (): void => {
      if (entries.get(claim.key) === reservation) entries.delete(claim.key)
    }
    const { runSettled } = args
    let spawned
    try {
      spawned = await args.spawn()
    } catch (error) {
      dropReservation()
      // Joiners get the creator's final error, once its rollback said what became of its process.
      if (runSettled === undefined) settle.reject(error)
      else runSettled.then(() => settle.reject(error), settle.reject)
      throw error
    }
    reservation.ptyId = spawned.ptyId
    const owner: ClaimedOwner = {
      claimKey: claim.key,
      ...(claim.scopeId === undefined ? {} : { scopeId: claim.scopeId }),
      ptyId: spawned.ptyId,
      hostId: args.hostId,
      ...incarnationOf(spawned.incarnationId),
      ...(typeof spawned.pid === 'number' ? { pid: spawned.pid } : {}),
      generation,
    }
    const promote = (): void => {
      if (entries.get(claim.key) === reservation) {
        if (reservation.released) entries.delete(claim.key)
        else entries.set(claim.key, { phase: 'live', claimKey: claim.key, scopeId: claim.scopeId, generation, owner })
      }
      settle.resolve(owner)
    }
    if (runSettled === undefined) promote()
    else {
      // Reserved (and joined) until the creator committed: its rollback would stop this very PTY.
      runSettled.then(promote, (error: unknown) => {
        dropReservation()
        settle.reject(error)
      })
    }
    return { disposition: 'created', owner }
  }

  async function ensure(args: EnsureClaimArgs): Promise<EnsureClaimResult> {
    checkClaim(args.claim)
    const { claim } = args
    for (;;) {
      const entry = entries.get(claim.key)
      if (entry === undefined) {
        return await create(args)
      }
      if (entry.scopeId !== claim.scopeId) {
        throw conflict(claim, entry.scopeId)
      }
      if (entry.phase === 'reserved' && entry.released) {
        // The creator's run is failing (or its PTY ended): never join it; start over once it settled.
        await entry.owner.then(
          () => undefined,
          () => undefined,
        )
        continue
      }
      if (entry.phase === 'reserved') {
        args.onJoin?.()
        const owner = await entry.owner
        return { disposition: 'adopted', owner }
      }
      const live = await args.isLive(entry.owner)
      if (entries.get(claim.key) !== entry) {
        // Why: the answer is about a generation that was released or replaced meanwhile.
        continue
      }
      if (live) {
        return { disposition: 'adopted', owner: entry.owner }
      }
      entries.delete(claim.key)
    }
  }

  return {
    ensure,
    find(claim: PtyClaim): ClaimedOwner | null {
      const entry = entries.get(claim.key)
      return entry?.phase === 'live' && entry.scopeId === claim.scopeId ? entry.owner : null
    },
    importOwner(owner: Omit<ClaimedOwner, 'generation'>): void {
      // Why never over an existing entry: a reservation is a spawn in flight, and a live entry is
      // re-proven by ensure anyway. Why not past the cap: an import must not evict anyone.
      if (entries.has(owner.claimKey) || entries.size >= maxEntries) return
      const generation = mintGeneration()
      entries.set(owner.claimKey, { phase: 'live', claimKey: owner.claimKey, scopeId: owner.scopeId, generation, owner: { ...owner, generation } })
    },
    release(ptyId: string, generation?: string): void {
      for (const [key, entry] of entries) {
        if (generation !== undefined && entry.generation !== generation) continue
        if (entry.phase === 'live' && entry.owner.ptyId === ptyId) entries.delete(key)
        // Why kept, marked: the creator's rollback is still stopping this PTY (see `Reserved.released`).
        else if (entry.phase === 'reserved' && entry.ptyId === ptyId) entry.released = true
      }
    },
    owners(): ClaimedOwner[] {
      const owners: ClaimedOwner[] = []
      for (const entry of entries.values()) {
        if (entry.phase === 'live') {
          owners.push(entry.owner)
        }
      }
      return owners
    },
  }
}
