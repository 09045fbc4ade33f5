import type { ExecutionHostId, PtyControllerInventory, PtyControllerTerminalIdentity, PtyIncarnationId, PtyProvider } from '../contracts/index.js'
import { reportProviderThrow, type ControllerCore } from './controller-core.js'
import type { ExitPublication } from './exit-publication.js'
import { combineAnswers } from './exit-evidence.js'
import { incarnationOf } from '../contracts/incarnation.js'
import type { PtyRecord } from './pty-record.js'

/**
 * Existence, liveness and inventory: `hasPty` and `probePtyLiveness` (asked of the owning provider,
 * or of every provider for an id the controller does not track) and the inventory from the
 * controller's own records. Questions to a live PTY's provider are in `live-pty-questions.ts`.
 */
export class ProviderQueries {
  readonly #core: ControllerCore
  readonly #exits: ExitPublication

  constructor(core: ControllerCore, exits: ExitPublication) {
    this.#core = core
    this.#exits = exits
  }

  /** Three-valued existence; see `PtyController.hasPty`. */
  hasPty(ptyId: string): boolean | null {
    const record = this.#core.records.get(ptyId)
    if (record !== undefined) {
      // Ended — unless a spawn or attach of its id is in flight here: then a new process may hold
      // the id already, and "absent" is no longer proven (the seed: never a denial on doubt).
      if (record.state === 'exited') return this.#core.records.isComing(ptyId) ? null : false
      if (record.state === 'unverified') return null
      // Why null without hasPty (the seed's rule): the provider cannot answer, and the controller's
      // record only says no exit was seen yet. A provider that answers null, or throws, cannot tell
      // either — that doubt is passed on, never rounded up to "live".
      if (record.provider.hasPty === undefined) return null
      const answer = this.#safeSync(record.provider, ptyId, 'hasPty', () => record.provider.hasPty?.(ptyId))
      return typeof answer === 'boolean' ? answer : null
    }
    const answers: (boolean | null)[] = []
    for (const provider of this.#uniqueProviders()) {
      const answer = this.#safeSync(provider, ptyId, 'hasPty', () => provider.hasPty?.(ptyId))
      answers.push(typeof answer === 'boolean' ? answer : null)
    }
    return this.#unlessComing(ptyId, combineAnswers(answers))
  }

  /**
   * A "no host has it" about an id whose spawn or attach is in flight here is no proof: the
   * process may not be started yet (the seed: never a denial on doubt). A `true` stays evidence.
   */
  #unlessComing(ptyId: string, answer: boolean | null): boolean | null {
    return answer === false && this.#core.records.isComing(ptyId) ? null : answer
  }

  /** Whether the process is alive, probing the provider; see `PtyController.probePtyLiveness`. */
  async probeLiveness(ptyId: string): Promise<boolean | null> {
    const record = this.#core.records.get(ptyId)
    // Each probe is given up (`null`) at dispose: a provider that never answers must not hold its caller.
    const probeOf = (provider: PtyProvider, incarnationId?: PtyIncarnationId): Promise<boolean | null> =>
      this.#core.timers.orAtDispose(probe(provider, ptyId, incarnationId), null)
    if (record === undefined) {
      // Coming when asked, or by the answer: either way the probes may predate its process.
      const comingWhenAsked = this.#core.records.isComing(ptyId)
      const answers = await Promise.all([...this.#uniqueProviders()].map((provider) => probeOf(provider)))
      const answer = combineAnswers(answers)
      return comingWhenAsked && answer === false ? null : this.#unlessComing(ptyId, answer)
    }
    if (record.state === 'exited') return this.#core.records.isComing(ptyId) ? null : false
    // About the record's incarnation: the provider may hold another one under the id by now
    // (another app's, on a shared pty host), whose `true` would revive this dead PTY.
    const answer = await probeOf(record.provider, record.incarnationId)
    if (record.state === 'unverified' && this.#core.records.isCurrent(record)) {
      if (answer === false) this.#exits.confirmDeath(record)
      else if (answer === true) this.#exits.setLiveness(record, { kind: 'live' })
    }
    // Re-read: the probe may have confirmed the death above.
    return (record.state as PtyRecord['state']) === 'exited' ? false : answer
  }

  /** What the controller knows to be live, from its records; see `PtyController.inventory`. */
  inventory(scopeId: string | undefined, answeredHosts: ReadonlySet<ExecutionHostId>): PtyControllerInventory {
    const livePtyIds = new Set<string>()
    const allLivePtyIds = new Set<string>()
    const exitingPtyIds = new Set<string>()
    const terminalIdentityByPtyId = new Map<string, PtyControllerTerminalIdentity>()
    // Disposed: the controller owns nothing any more and asks no host.
    const disposed = this.#core.disposed()
    for (const record of disposed ? [] : this.#core.records.values()) {
      if (record.state === 'exited') continue
      allLivePtyIds.add(record.ptyId)
      if (scopeId === undefined || record.scopeId === scopeId) livePtyIds.add(record.ptyId)
      if (record.stopRequested || record.state === 'unverified') exitingPtyIds.add(record.ptyId)
      terminalIdentityByPtyId.set(record.ptyId, {
        hostId: record.hostId,
        ...incarnationOf(record.incarnationId),
        ...(record.handle === undefined ? {} : { handle: record.handle }),
      })
    }
    return {
      livePtyIds,
      allLivePtyIds,
      terminalIdentityByPtyId,
      queriedHostIds: new Set(disposed ? [] : answeredHosts),
      exitingPtyIds,
    }
  }

  #safeSync<T>(provider: PtyProvider, ptyId: string, what: string, ask: () => T): T | undefined {
    try {
      return ask()
    } catch (error) {
      reportProviderThrow(this.#core, provider, what, error, ptyId)
      return undefined
    }
  }

  #uniqueProviders(): Set<PtyProvider> {
    return new Set(this.#core.options.providers.values())
  }
}

/**
 * Whether the provider of a PTY the controller tracks live still vouches for it, asked without I/O:
 * `true` when its `hasPty` answers `true`; `false` once the provider was found detached or
 * disposed (a call of the controller's was refused so), or when its `hasPty` answers `null`
 * ("unknown": a pty host provider after `detach()`, an SSH host whose link is down), `false`, or
 * throws (reported `provider_threw`, a gone provider's refusal once for it); `null` for a provider
 * without `hasPty`, which cannot be asked.
 */
export function providerVouchesFor(core: ControllerCore, record: PtyRecord): boolean | null {
  const provider = record.provider
  if (core.detachedProvidersReported.has(provider) || core.disposedProvidersReported.has(provider)) return false
  if (provider.hasPty === undefined) return null
  try {
    return provider.hasPty(record.ptyId) === true
  } catch (error) {
    reportProviderThrow(core, provider, 'hasPty', error, record.ptyId)
    return false
  }
}

/**
 * A provider's liveness probe, three-valued (`null` for a missing probe, a throw or a malformed
 * answer); about `incarnationId` when given (the argument is left out otherwise, as before it existed).
 */
async function probe(provider: PtyProvider, ptyId: string, incarnationId?: PtyIncarnationId): Promise<boolean | null> {
  if (provider.probeLiveness === undefined) return null
  try {
    const answer = await (incarnationId === undefined ? provider.probeLiveness(ptyId) : provider.probeLiveness(ptyId, { incarnationId }))
    return typeof answer === 'boolean' ? answer : null
  } catch {
    return null
  }
}
