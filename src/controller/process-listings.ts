import { LOCAL_EXECUTION_HOST_ID, type ExecutionHostId, type PtyHostScopedListing, type PtyProcessInfo, type PtyProvider } from '../contracts/index.js'
import { incarnationsAgree } from '../contracts/incarnation.js'
import { describeValue } from './argument-validation.js'
import { reportProviderGone, reportProviderThrow, type ControllerCore } from './controller-core.js'
import { PtyControllerError } from './pty-controller-error.js'
import type { ExitPublication } from './exit-publication.js'
import { listOneHost, type HostListingAnswer, type ListingBudget } from './host-listing.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/**
 * Process listings across hosts, and what they teach the controller: which hosts answered (the
 * `queriedHostIds` of `inventory`), and that the live PTYs of a remote host that failed can no
 * longer be vouched for (liveness `unverifiable`).
 */
export class ProcessListings {
  readonly #core: ControllerCore
  readonly #exits: ExitPublication
  /** Hosts whose latest process listing answered (what `inventory().queriedHostIds` reports). */
  readonly #answeredHosts = new Set<ExecutionHostId>()

  constructor(core: ControllerCore, exits: ExitPublication) {
    this.#core = core
    this.#exits = exits
  }

  /** The hosts whose latest listing answered. */
  answeredHosts(): ReadonlySet<ExecutionHostId> {
    return this.#answeredHosts
  }

  /**
   * `listProcesses`: every host when `hostId` is `undefined`, else that one (`null` is the local
   * host, as in the seed origin).
   *
   * @throws TypeError (as a rejection) when `hostId` names no registered provider.
   */
  async list(hostId: ExecutionHostId | null | undefined, budget: ListingBudget): Promise<PtyProcessInfo[]> {
    if (hostId === undefined) return (await this.listAllHosts(budget)).processes
    const host = hostId ?? LOCAL_EXECUTION_HOST_ID
    const provider = this.#core.options.providers.get(host)
    if (provider === undefined) {
      throw argumentRefusal(`Expected the \`hostId\` argument to name a registered host, got ${describeValue(hostId)}`, 'hostId', hostId)
    }
    return this.#listHost(host, provider, budget)
  }

  /** List one registered host; a host that does not answer rejects with `listing_failed`. */
  async #listHost(hostId: ExecutionHostId, provider: PtyProvider, budget: ListingBudget): Promise<PtyProcessInfo[]> {
    if (this.#core.disposed()) {
      throw new PtyControllerError('listing_failed', `Host ${hostId} was not asked: the controller was disposed`)
    }
    const answer = await listOneHost(hostId, provider, budget, this.#core.timers, (error) =>
      reportProviderThrow(this.#core, provider, 'confirmForeground', error),
    )
    this.#noteListing(hostId, answer)
    if (answer.kind !== 'rows') throw listingFailure(hostId, answer)
    return answer.rows
  }

  /** List every host; see `PtyController.listProcessesWithHostScope`. */
  async listAllHosts(budget: ListingBudget): Promise<PtyHostScopedListing> {
    const core = this.#core
    // Disposed: no host is asked, so none answered (an empty listing with no host in scope).
    if (core.disposed()) return { processes: [], hostIds: [] }
    const hosts = [...core.options.providers.entries()]
    const answers = await Promise.all(
      hosts.map(([hostId, provider]) =>
        listOneHost(hostId, provider, budget, core.timers, (error) => reportProviderThrow(core, provider, 'confirmForeground', error)),
      ),
    )
    const processes: PtyProcessInfo[] = []
    const hostIds: ExecutionHostId[] = []
    let localFailure: PtyControllerError | undefined
    answers.forEach((answer, index) => {
      const host = hosts[index]
      if (host === undefined) return
      const [hostId] = host
      this.#noteListing(hostId, answer)
      if (answer.kind === 'rows') {
        hostIds.push(hostId)
        processes.push(...answer.rows)
      } else if (hostId === LOCAL_EXECUTION_HOST_ID) {
        localFailure = listingFailure(hostId, answer)
      } else if (answer.kind === 'failed') {
        this.#markHostUnverifiable(hostId)
      }
    })
    if (localFailure !== undefined) throw localFailure
    return { processes, hostIds }
  }

  /** Remember whether a host answered its latest listing; report a failure on `error`. */
  #noteListing(hostId: ExecutionHostId, answer: HostListingAnswer): void {
    if (answer.kind === 'rows') {
      this.#answeredHosts.add(hostId)
      this.#markHostRecovered(hostId, answer.rows)
      return
    }
    this.#answeredHosts.delete(hostId)
    if (answer.kind !== 'failed') return
    // A disposed (or detached) provider refuses every listing: said once for it (the caller's
    // rejection says it each time).
    const provider = this.#core.options.providers.get(hostId)
    if (provider === undefined || reportProviderGone(this.#core, provider, 'listing_failed', answer.cause) === null) this.#core.report('listing_failed', answer.message, answer.cause)
  }

  /**
   * A host answered again after a failed listing: each of its PTYs it lists (this incarnation) is
   * vouched for again, and reads as live — else a host that failed once left them unverifiable
   * for good.
   */
  #markHostRecovered(hostId: ExecutionHostId, rows: readonly PtyProcessInfo[]): void {
    let listed: Map<string, PtyProcessInfo> | undefined
    for (const record of this.#core.records.values()) {
      if (record.hostId !== hostId || record.state !== 'live' || record.superseded) continue
      const { liveness } = record
      if (liveness.kind !== 'unverifiable' || liveness.reason !== PTY_LIVENESS_REASONS.hostListingFailed) continue
      listed ??= new Map(rows.map((row) => [row.id, row]))
      const row = listed.get(record.ptyId)
      if (row === undefined || !incarnationsAgree(record.incarnationId, row.incarnationId)) continue
      this.#exits.setLiveness(record, { kind: 'live' })
    }
  }

  /** A remote host failed a listing: contact with its PTYs is lost, so none of them reads as live. */
  #markHostUnverifiable(hostId: ExecutionHostId): void {
    for (const record of this.#core.records.values()) {
      if (record.hostId !== hostId || record.state !== 'live' || record.superseded) continue
      this.#exits.setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.hostListingFailed })
    }
  }
}

/** The `listing_failed` error for a host that did not answer a listing the caller needs. */
function listingFailure(hostId: ExecutionHostId, answer: Exclude<HostListingAnswer, { kind: 'rows' }>): PtyControllerError {
  if (answer.kind === 'aborted') return new PtyControllerError('listing_failed', `The listing of host ${hostId} was aborted`)
  return new PtyControllerError('listing_failed', answer.message, answer.cause === undefined ? {} : { cause: answer.cause })
}
