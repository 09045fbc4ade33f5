import type { PtySpawnResult } from '../contracts/index.js'
import { describeValue } from '../contracts/describe-value.js'
import { isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH } from '../contracts/incarnation.js'
import { watchExits } from './exit-watch.js'
import { spawnFresh } from './fresh-spawn-stage.js'
import { importClaimOwnersFromListings } from './import-claim-owners.js'
import { incarnationOf } from '../contracts/incarnation.js'
import { proveOwnerLive } from './prove-owner-live.js'
import { providerFor } from './provider-call.js'
import { isPtySpawnError } from './pty-spawn-error.js'
import { codeOfFailure, messageOf, ownSpawnError } from './spawn-failure.js'
import type { RuntimePtySpawnState } from './spawn-state.js'
import type { ClaimedOwner, EnsureClaimResult } from './types.js'

/** What the claim branch settled on: the PTY, whether this run created or adopted it, and the registry's owner. */
export type ClaimBranch = { result: PtySpawnResult; disposition: 'created' | 'adopted'; owner: ClaimedOwner }

/** The promise that settles when this run is over (see `RuntimePtySpawnState.runSettled`), made once. */
function settledOf(state: RuntimePtySpawnState): Promise<void> {
  if (state.runSettled === null) {
    let resolve!: () => void
    let reject!: (error: unknown) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    // Why: nobody may have joined; an unobserved rejection must not crash the host.
    promise.catch(() => undefined)
    state.runSettled = { promise, resolve, reject }
  }
  return state.runSettled.promise
}

/**
 * What is wrong with a claim registry's answer to `ensure`, or `undefined` when it can be trusted:
 * an object whose `disposition` is `created` or `adopted` and whose `owner` is an object with a
 * non-empty string `ptyId` and `hostId`, and an `incarnationId` absent, `null` (not attested) or
 * an incarnation id; when this call's spawn ran (`spawnedId`), the answer is `created` and names
 * the PTY it started.
 * The owner's `generation` is the registry's own token, handed back to it only: not checked.
 */
function malformedEnsureAnswer(answer: unknown, spawnedId: string | undefined): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return 'not an answer ({ disposition, owner })'
  const { disposition, owner } = answer as { disposition?: unknown; owner?: unknown }
  if (disposition !== 'created' && disposition !== 'adopted') return `its \`disposition\` is neither "created" nor "adopted", got ${describeValue(disposition)}`
  if (typeof owner !== 'object' || owner === null || Array.isArray(owner)) return `its \`owner\` is not an object, got ${describeValue(owner)}`
  const { ptyId, hostId, incarnationId } = owner as { ptyId?: unknown; hostId?: unknown; incarnationId?: unknown }
  if (typeof ptyId !== 'string' || ptyId.length === 0) return `its owner's \`ptyId\` is not a non-empty string, got ${describeValue(ptyId)}`
  if (typeof hostId !== 'string' || hostId.length === 0) return `its owner's \`hostId\` is not a non-empty string, got ${describeValue(hostId)}`
  if (incarnationId !== undefined && incarnationId !== null && !isPtyIncarnationId(incarnationId)) {
    return `its owner's \`incarnationId\` is neither null nor an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters), got ${describeValue(incarnationId)}`
  }
  // Why: an adopted owner's pid is published as the PTY's (the reply, the `spawn` event, the
  // handle): a host that signals it would signal -1 (every process it may) or 0 (its own group).
  const pid = (owner as { pid?: unknown }).pid
  if (pid !== undefined && pid !== null && !(Number.isSafeInteger(pid) && (pid as number) > 0)) return `its owner's \`pid\` is neither absent nor a positive integer, got ${describeValue(pid)}`
  if (disposition === 'created' && spawnedId !== undefined && ptyId !== spawnedId) return `it names PTY ${JSON.stringify(ptyId)} created, but this call's spawn started ${JSON.stringify(spawnedId)}`
  // Why: a registry that ran this call's spawn and still answers `adopted` breaks the contract;
  // trusted, the process this call started was neither published nor stopped — left running.
  if (disposition === 'adopted' && spawnedId !== undefined) return `it names PTY ${JSON.stringify(ptyId)} adopted, but it ran this call's spawn, which started ${JSON.stringify(spawnedId)} (an ensure that runs the spawn answers \`created\`)`
  return undefined
}

/** The registry's owner, its `incarnationId` of `null` (not attested) left out. */
function ownerOfEnsureAnswer(answer: EnsureClaimResult): ClaimedOwner {
  const owner = answer.owner
  if ((owner as { incarnationId?: unknown }).incarnationId !== null) return owner
  const { incarnationId: _notAttested, ...rest } = owner
  return rest
}

/**
 * Branch 7a: the single-flight ensure of the claim. Its spawn callback runs the fresh spawn
 * (stages 6–9); a created owner's claim is released on a rollback, an adopted (or joined) one is
 * left to its creator.
 */
export async function ensureClaim(state: RuntimePtySpawnState): Promise<ClaimBranch> {
  const claims = state.deps.claims
  const claim = state.args.claim
  if (claims === undefined || claim === undefined) {
    throw new TypeError('Expected a `claim` option and a `claims` dependency for the claim branch, got neither')
  }
  state.stage = 'claim'
  // Why before the ensure: an adopted owner can exit after it was re-proven live and before it is
  // published; no pending registration fences it (its id was unknown), so the watcher must.
  const hostProvider = state.deps.resolveProvider(state.hostId)
  if (hostProvider !== undefined) {
    watchExits(state, hostProvider)
  }
  // Why before deciding the key is free: an owner another controller (or an earlier run) started
  // over the same provider is known only to the hosts' listings.
  try {
    await importClaimOwnersFromListings(state.deps, state.hostId)
  } catch (error) {
    throw isPtySpawnError(error) ? ownSpawnError(state, error.code, error.message, { cause: error.cause }) : error
  }
  let spawned: PtySpawnResult | null = null
  const ensured = await claims.ensure({
    claim,
    hostId: state.hostId,
    spawn: async () => {
      try {
        spawned = await spawnFresh(state)
      } catch (error) {
        // Why: joiners receive this error; give them a code, not a raw provider error.
        throw isPtySpawnError(error) ? error : ownSpawnError(state, codeOfFailure(state.stage ?? 'claim', error), messageOf(error), { cause: error })
      }
      return { ptyId: spawned.id, ...incarnationOf(spawned.incarnationId), ...(typeof spawned.pid === 'number' ? { pid: spawned.pid } : {}) }
    },
    isLive: (owner) => proveOwnerLive(state.deps.resolveProvider, owner),
    onJoin: () => {
      state.joinedAnotherStart = true
    },
    runSettled: settledOf(state),
  })
  const spawnedId = (spawned as PtySpawnResult | null)?.id
  const malformed = malformedEnsureAnswer(ensured, spawnedId)
  if (malformed !== undefined) {
    // Why: a process this call started is stopped by the rollback; the registry may hold the claim for it.
    if (spawnedId !== undefined) state.journal.record(`release claim of ${spawnedId}`, () => claims.release(spawnedId))
    throw ownSpawnError(
      state,
      'claim_ownership_unknown',
      `Claim ${JSON.stringify(claim.key)}: the claim registry's ensure answered ${describeValue(ensured)}: ${malformed}`,
      spawnedId === undefined ? {} : { ptyId: spawnedId },
    )
  }
  const owner = ownerOfEnsureAnswer(ensured)
  if (ensured.disposition === 'created' && spawned !== null) {
    const generation = owner.generation
    state.journal.record(`release claim ${owner.claimKey}`, () => claims.release(owner.ptyId, generation))
    return { result: spawned, disposition: 'created', owner }
  }
  // Why: published, the PTY would be routed to (and its execution context prepared for) a host
  // nothing here can reach; a host's own registry may name one (the in-memory one re-proves the
  // owner through its host's provider first).
  providerFor(state, owner.hostId, owner.ptyId)
  const result: PtySpawnResult = { id: owner.ptyId, isReattach: true, ...incarnationOf(owner.incarnationId) }
  if (typeof owner.pid === 'number') result.pid = owner.pid
  state.result = result
  // No `onPtySpawnCommitted` here: adopting (or joining) an owner starts no process.
  return { result, disposition: 'adopted', owner }
}
