import {
  LOCAL_EXECUTION_HOST_ID,
  isPtyIncarnationId,
  type ExecutionHostId,
  type ProviderSequence,
  type PtyIncarnationId,
  type PtyProvider,
  type PtySlot,
  type PtySlotAdoption,
  type PtySpawnOptions,
  type PtySpawnReply,
  type PtySpawnResult,
} from '../contracts/index.js'
import { PtySpawnError, createRuntimePtySpawnState, executeRuntimePtySpawn, slotStoreKey, type PtySpawnDeps, type PtySpawnOutcome } from '../spawn/index.js'
import { malformedReplyField } from '../spawn/provider-call.js'
import { glanceAtLiveOwner } from '../spawn/slot-owner-views.js'
import { isPromiseLike } from '../contracts/promise-like.js'
import { ABORTED, raceAbort } from './abort.js'
import { describeThrownValue, describeValue } from './argument-validation.js'
import { observeRejection } from './event-dispatch.js'
import { RUNTIME_ANSWER_REFUSED, type Bookkeeping } from './bookkeeping.js'
import type { ControllerCore } from './controller-core.js'
import type { PtyControllerSpawnEvent } from './events.js'
import { PtyControllerDisposedError } from './pty-controller-error.js'
import type { ExitPublication } from './exit-publication.js'
import type { InFlightSpawn } from './in-flight-event-buffer.js'
import type { OutputDelivery } from './output-delivery.js'
import type { ProviderIntake } from './provider-intake.js'
import { adoptSlotOwner } from './slot-adoption.js'
import { providerVouchesFor } from './provider-queries.js'
import { createPtyRecord, waitForRecord, type PtyRecord, type PtyRecordInit } from './pty-record.js'
import type { ComingPty } from './pty-record-table.js'
import type { Stopping } from './stopping.js'

/** Default PTY size when neither the spawn options nor the provider say (the usual VT100 size). */
const DEFAULT_COLS = 80
const DEFAULT_ROWS = 24

/**
 * An owner the slot store names that an `adoptSlot` would attach (see `SpawnPublication.adoptSlot`):
 * its adoption waiting for the turn, and which process it is and where it runs, as the store
 * names them — only an owner whose stop can be fenced and dispatched here is one.
 */
type ExpectedSlotOwner = {
  /** The adoption of it, as a coming attach (`PtyRecordTable.expectAdoption`). */
  coming: ComingPty
  /** The provider of the host the store names. */
  provider: PtyProvider
  /** Its incarnation, as the store attests it: the fence of a stop of it. */
  incarnationId: PtyIncarnationId
  /** Whether the adoption's attach went on as `coming` already (once: a second attach is a new coming). */
  attached: boolean
}

/** What a record owns beyond its process: scope, slot, claim and pre-allocated handle. */
type RecordOwnership = Pick<PtyRecordInit, 'scopeId' | 'slot' | 'claimKey' | 'claimGeneration' | 'handle'>

const OWNS_NOTHING: RecordOwnership = { scopeId: undefined, slot: undefined, claimKey: undefined, claimGeneration: undefined, handle: undefined }

/** No records (the answer for most spawns, shared). */
const NO_RECORDS: readonly PtyRecord[] = Object.freeze([])
/**
 * The spawns of a slot (with a `sessionId`) still waiting for their slot's turn. A spawn of the id
 * outside the slot does not wait for them: the turn may be held by a `claimSlotCreate` claim of the
 * very caller of that spawn, who releases it only once the spawn returns — it waited for ever.
 */
const behindSlotTurn = new WeakSet<ComingPty>()
/** No spawns or attaches (the answer for most spawns, shared). */
const NO_COMINGS: readonly ComingPty[] = Object.freeze([])

/** The event buffer's first mark: every event still held (the incarnation fence picks a record's own). */
const ALL_HELD = 0

/** Runs a spawn's work in its turn (its slot's, see `SlotCreateGate.run`). */
export type SpawnTurn = (work: () => Promise<PtySpawnReply>) => Promise<PtySpawnReply>

/**
 * Publishing a PTY: running the spawn pipeline (or an attach-only adoption), turning the
 * provider's reply into a record (one `recordFromReply` for both), emitting `spawn`, then
 * releasing the events held while it was in flight. Also undoing a spawn that can no longer be
 * published (the controller was disposed, or the re-attached process already exited).
 */
export class SpawnPublication {
  readonly #core: ControllerCore
  readonly #intake: ProviderIntake
  readonly #exits: ExitPublication
  readonly #output: OutputDelivery
  readonly #stopping: Stopping
  readonly #bookkeeping: Bookkeeping
  /** The pipeline's dependencies: the same for every spawn, so built once. */
  readonly #deps: PtySpawnDeps

  constructor(
    core: ControllerCore,
    intake: ProviderIntake,
    exits: ExitPublication,
    output: OutputDelivery,
    stopping: Stopping,
    bookkeeping: Bookkeeping,
  ) {
    this.#core = core
    this.#intake = intake
    this.#exits = exits
    this.#output = output
    this.#stopping = stopping
    this.#bookkeeping = bookkeeping
    const providers = core.options.providers
    this.#deps = {
      resolveProvider: (hostId) => providers.get(hostId),
      runtime: core.runtime,
      store: core.options.store,
      claims: core.options.claims,
      listHostIds: () => providers.keys(),
      hostHoldingPtyId: (ptyId, hostId) => {
        const tracked = core.records.get(ptyId)
        if (tracked !== undefined && tracked.state !== 'exited' && !tracked.superseded && tracked.hostId !== hostId) return tracked.hostId
        return core.records.comingOnOtherHost(ptyId, hostId)
      },
    }
  }

  /**
   * Run the spawn pipeline and publish its PTY; see `PtyController.spawn`. `published` (optional)
   * learns the record published — the incarnation this spawn made, even when a concurrent respawn
   * of the id replaces it before the caller resumes (`spawnTerminal` hands back its handle).
   * `turn` (optional) runs it in its slot's turn: a spawn with a `sessionId` counts as coming from
   * this call on, queued behind the turn, so a `kill` of the id meanwhile stops what it publishes
   * (as for a spawn in flight) and `stopAndWait` waits for it.
   */
  spawn(options: PtySpawnOptions, published?: (record: PtyRecord) => void, turn?: SpawnTurn): Promise<PtySpawnReply> {
    const records = this.#core.records
    if (this.#core.disposed()) return Promise.reject(new PtyControllerDisposedError('spawn', true))
    const sessionId = sessionIdOf(options)
    const coming = sessionId === undefined ? undefined : records.expectComing(sessionId)
    // Why no wrapping `async`/`finally` here: the caller gets the spawn's own promise, without the
    // turns a wrapper takes — `spawnTerminal` replays the output delivered with the publication to
    // whoever subscribes in the turn the handle is returned. `#spawnNow` releases `coming`.
    if (turn === undefined) return this.#spawnNow(options, published, coming, true)
    // A slot's spawns take their slot's turns instead of their id's, and until its turn comes one
    // is no earlier spawn another spawn of the id waits for (`behindSlotTurn`).
    if (coming !== undefined) behindSlotTurn.add(coming)
    const inTurn = turn(() => {
      if (coming !== undefined) behindSlotTurn.delete(coming)
      return this.#spawnNow(options, published, coming, false)
    })
    // The turn refused before running it (a `slotCreateClaim` that is not this slot's): released here.
    if (coming !== undefined) inTurn.catch(() => records.release(coming))
    return inTurn
  }

  /**
   * `spawn` in its turn; `coming` is its registration under its `sessionId` (queued until its host
   * is known), released when it is over; `takeIdTurn`: wait for the spawns and attaches of that id
   * begun before it (a spawn outside a slot's turns).
   */
  async #spawnNow(
    options: PtySpawnOptions,
    published: ((record: PtyRecord) => void) | undefined,
    coming: ComingPty | undefined,
    takeIdTurn: boolean,
  ): Promise<PtySpawnReply> {
    const core = this.#core
    try {
      if (core.disposed()) throw new PtyControllerDisposedError('spawn', true)
      // Checks the options (before the wait reads them).
      const state = createRuntimePtySpawnState(this.#deps, this.#withObservedCommitHook(options))
      // Spawns of one session id take turns, in call order, as spawns of one slot do: this one waits
      // for the spawns and attaches of its id begun before it, then finds what they published — live
      // (its provider attaches it), or being stopped by a `kill` since (waited for below: a restart).
      // Why: sent at once, node-pty refused the second of two (`pty_id_in_use`) where the fake
      // attached it, and `kill, spawn, kill, spawn` left nothing running (the first restart stopped
      // by the second `kill`, the second refused while the first was starting).
      const earlier = coming !== undefined && takeIdTurn ? this.#earlierComingsOf(coming) : NO_COMINGS
      if (coming !== undefined && earlier.length > 0) {
        await this.#awaitLanded(coming.ptyId, earlier, options.signal)
        if (core.disposed()) throw new PtyControllerDisposedError('spawn', true)
      }
      // Awaited only when there is something to wait for: a spawn's path takes no extra turn otherwise.
      const stopping = this.#stoppingPtysOf(options)
      if (stopping.length > 0) {
        await this.#awaitStops(stopping, options.signal)
        if (core.disposed()) throw new PtyControllerDisposedError('spawn', true)
      }
      // A caller's id: refused when live (or in flight) on another host — taken over, the other host's
      // process ran on untracked. (Its ended record no longer proves the id absent since `spawn` began.)
      if (coming !== undefined) this.#claimIdOnHost(coming, options.hostId ?? LOCAL_EXECUTION_HOST_ID)
      const inFlight = this.#intake.beginInFlight()
      try {
        const outcome = await executeRuntimePtySpawn(state)
        const provider = core.options.providers.get(outcome.hostId)
        const result = outcome.result
        if (provider === undefined) {
          throw new TypeError(`The spawn pipeline returned host ${describeValue(outcome.hostId)}, which has no provider`)
        }
        if (core.disposed()) {
          this.#abandonCommittedSpawn(provider, outcome, options, coming !== undefined && coming.stopRequested && coming.ptyId === result.id)
          throw new PtyControllerDisposedError('spawn', true)
        }
        // The sequence the record starts from: the pipeline's rebase (stage 11), or the stream start's below.
        let reconciledSequence = outcome.reconciledSequence
        if (result.isReattach !== true && result.providerSequence === undefined) {
          // A process this spawn started streams from its first byte, whether or not its provider
          // said so (`providerSequence` is optional): tell the runtime, as a `reset` would, or a later
          // re-attach's `continued` count would be placed on top of what it already counted.
          // (Guarded: the PTY is committed and running; a throwing runtime is reported, not the spawn's failure.)
          reconciledSequence = this.#bookkeeping.startRuntimeStream(result.id, NEW_STREAM)
        }
        const existing = core.records.get(result.id)
        if (existing !== undefined && isExitedProcess(existing, provider, result)) {
          this.#rejectExitedReattach(outcome, options)
        }
        // The same process: a re-attach to it, or the start that a joined claim spawn published first
        // (the joiner's reply came back before the creator's) — attested by its incarnation id, or,
        // for a provider without them, by the claim owner's generation the joiner published it with.
        const sameProcess =
          existing !== undefined &&
          isSameProcess(existing, provider, result.incarnationId) &&
          (result.isReattach === true
            ? result.providerSequence?.generation !== 'reset'
            : result.incarnationId !== undefined || isPublishedStartOf(existing, outcome))
        let record: PtyRecord
        if (sameProcess) {
          // The same process keeps its record and its facts, including a pending stop intent.
          record = existing
          record.size = sizeOf(result, options)
          // A joiner published it from the claim's owner, which names no pid; the creator's reply does.
          if (record.pid === undefined && typeof result.pid === 'number') record.pid = result.pid
        } else {
          if (existing !== undefined) this.#exits.supersede(existing)
          record = this.#recordFromReply(outcome.hostId, provider, result, options, {
            scopeId: options.scopeId ?? options.slot?.scopeId ?? options.claim?.scopeId,
            slot: options.slot,
            claimKey: options.claim?.key,
            claimGeneration: outcome.claimOwner?.generation,
            handle: options.preAllocatedHandle,
          }, reconciledSequence)
        }
        if (sameProcess && existing.state === 'live' && (result.isReattach !== true || outcome.joinedAnotherStart === true)) {
          // The second of a joined claim's two spawns to come back (the creator, or the joiner):
          // the other announced the process (one `spawn` event per process); only the events held
          // for this spawn are left to deliver.
          this.#intake.deliverHeld(record, this.#intake.takeHeld(record, inFlight.since), streamStartOf(result))
        } else if (outcome.joinedAnotherStart === true) {
          // A joiner that publishes first announces a process this controller just started (not a
          // re-attach), with all its output so far: what it printed before this call started is held
          // for the creator, still in flight, and belongs to this process all the same (attested by
          // its incarnation id, or — without one — by the join: the owner is the creator's start).
          this.#publish(record, inFlight, false, result, ALL_HELD)
        } else {
          this.#publish(record, inFlight, result.isReattach === true, result)
        }
        published?.(record)
        // A `kill` of the id since this spawn began stops what it publishes (and nothing a later spawn
        // of the id publishes) — only a PTY under the id the `kill` named: a claim's or slot's spawn
        // that adopted (or joined) an owner publishes that owner's PTY, under its own id, which
        // another caller holds.
        if (coming !== undefined && record.ptyId === coming.ptyId) this.#landed(coming, record)
        const reply = replyOf(record, result.isReattach === true)
        if (outcome.claimDisposition !== undefined) reply.claimDisposition = outcome.claimDisposition
        return reply
      } finally {
        this.#intake.endInFlight(inFlight)
      }
    } finally {
      if (coming !== undefined) core.records.release(coming)
    }
  }

  /**
   * `kill(ptyId)`: every spawn (`sessionId`) and attach of the id begun so far — queued behind its
   * slot's turn or a stop of the id, or in flight — stops the PTY it publishes under that id as soon
   * as it lands (a spawn that fails, or that publishes another id's PTY — a claim's or slot's owner
   * it adopted —, leaves nothing to stop; a spawn or attach of the id begun later is not affected).
   * Whether there was any.
   */
  stopWhenLanded(ptyId: string): boolean {
    return this.#core.records.requestStopOfComing(ptyId)
  }

  /**
   * The spawn or attach `coming` published `record` under its id: a `kill` asked since it began
   * stops it now, and so does each `stopAndWait` waiting for it.
   */
  #landed(coming: ComingPty, record: PtyRecord): void {
    coming.settled = true
    if (coming.stopRequested) this.#stopLanded(record)
    for (const listener of coming.onPublished ?? []) listener(record)
  }

  /**
   * A `kill` was asked while the spawn or attach that published `record` was coming: stop it now, through
   * `kill`'s own path (fenced by the incarnation it published) — unless it is over already (an
   * exit held while in flight, or one of its own during the publication) or a listener of the
   * publication already stopped it.
   */
  #stopLanded(record: PtyRecord): void {
    if (record.state === 'exited' || record.superseded || !this.#core.records.isCurrent(record)) return
    if (record.state === 'live' && record.unconfirmedTimer !== undefined) return
    this.#stopping.kill(record)
  }

  /**
   * Send the spawn or attach `coming` (queued) in flight to `hostId` (`PtyRecordTable.goInFlight`);
   * throws a `PtySpawnError` (`invalid_spawn_options`, option `sessionId`) when the id is live, or
   * in flight, on another host.
   */
  #claimIdOnHost(coming: ComingPty, hostId: ExecutionHostId): void {
    const records = this.#core.records
    const ptyId = coming.ptyId
    const live = records.get(ptyId)
    const liveElsewhere = live !== undefined && live.state === 'live' && !live.superseded && live.hostId !== hostId
    const otherHost = liveElsewhere ? live.hostId : records.comingOnOtherHost(ptyId, hostId)
    if (otherHost !== undefined) {
      throw new PtySpawnError(
        'invalid_spawn_options',
        `Cannot spawn PTY ${JSON.stringify(ptyId)} on host ${JSON.stringify(hostId)}: that session id is ${liveElsewhere ? 'live' : 'being spawned'} on host ${JSON.stringify(otherHost)} (stop it there first)`,
        { ptyId, option: 'sessionId', value: ptyId },
      )
    }
    records.goInFlight(coming, hostId)
  }

  /** The spawns and attaches of `coming`'s id begun before it, queued or in flight. */
  #earlierComingsOf(coming: ComingPty): readonly ComingPty[] {
    const all = this.#core.records.comingOf(coming.ptyId)
    return all.slice(0, Math.max(0, all.indexOf(coming))).filter((earlier) => !behindSlotTurn.has(earlier))
  }

  /**
   * Wait until each of `earlier` (spawns and attaches of `ptyId`) is over — published or failed —,
   * the caller's abort (the pipeline then refuses the spawn), or `dispose`.
   */
  async #awaitLanded(ptyId: string, earlier: readonly ComingPty[], signal: AbortSignal | undefined): Promise<void> {
    const landed = this.#core.records.whenLanded(ptyId, earlier)
    // Settled when the wait ends for any reason, so the dispose wait below never outlives it (an
    // aborted wait's `landed` stays pending for ever once cancelled).
    let over!: () => void
    const ended = new Promise<void>((resolve) => (over = resolve))
    try {
      await raceAbort(this.#core.timers.orAtDispose(Promise.race([landed.promise, ended]), undefined), signal)
    } finally {
      landed.cancel()
      over()
    }
  }

  /**
   * A spawn for a session id, slot or claim whose live PTY this controller is stopping waits until
   * that stop settles — its exit, or its window (`stop.unconfirmedAfterMs`), the caller's abort or
   * `dispose`, whichever comes first — so it starts a new process instead of re-attaching to (or
   * adopting) the one being stopped: "restart the terminal" is `kill()` then `spawn()`.
   */
  async #awaitStops(stopping: readonly PtyRecord[], signal: AbortSignal | undefined): Promise<void> {
    const window = this.#core.timers.after(this.#core.options.stop.unconfirmedAfterMs)
    const settled = stopping.map((record) => waitForRecord(record, () => !isStopUnderWay(record)))
    try {
      await raceAbort(Promise.race([Promise.all(settled.map(({ promise }) => promise)), window.promise]), signal)
    } finally {
      window.cancel()
      for (const { cancel } of settled) cancel()
    }
  }

  /**
   * The live PTYs with a stop requested that own `slot`: bound to it, or named its owner by the
   * slot store's live view (a store that throws names none here: the adoption reads it again).
   */
  #stoppingOwnersOf(slot: PtySlot): readonly PtyRecord[] {
    // A glance that never throws: a store that fails here is read again (and answered for) by the adoption.
    const owner = glanceAtLiveOwner(this.#core.options.store, slot) as { ptyId?: unknown } | null | undefined
    const liveOwnerId = typeof owner?.ptyId === 'string' && owner.ptyId.length > 0 ? owner.ptyId : undefined
    return this.#stoppingPtysOf(liveOwnerId === undefined ? { slot } : { slot, sessionId: liveOwnerId })
  }

  /** The live PTYs whose stop is under way that hold the session id, slot or claim `options` names. */
  #stoppingPtysOf(options: PtySpawnOptions): readonly PtyRecord[] {
    const { sessionId, slot, claim } = options
    if (sessionId === undefined && slot === undefined && claim === undefined) return NO_RECORDS
    const slotKey = slot === undefined ? undefined : slotStoreKey(slot)
    const stopping: PtyRecord[] = []
    for (const record of this.#core.records.values()) {
      // A stop under way only: a PTY revived after its stop went unverified keeps the stop intent,
      // but nobody is stopping it (waited for, it held the spawn a whole stop window for nothing).
      if (!isStopUnderWay(record) || record.superseded) continue
      const holdsIt =
        // Any host's: a restart on another host waits for the stop too (one live record per id).
        (sessionId !== undefined && record.ptyId === sessionId) ||
        (slotKey !== undefined && record.slot !== undefined && slotStoreKey(record.slot) === slotKey) ||
        (claim !== undefined && record.claimKey === claim.key)
      if (holdsIt) stopping.push(record)
    }
    return stopping
  }

  /**
   * Attach-only adoption of a live PTY on `hostId`'s provider; see `PtyController.attach`. The
   * caller checked the arguments. `expectedIncarnationId` (an `adoptSlot`'s: the incarnation the
   * slot store names) fences it: another process under the id is not attached (the provider is
   * asked to refuse it, and a reply naming another incarnation is not published, nor stopped).
   */
  async attach(
    ptyId: string,
    hostId: ExecutionHostId,
    signal: AbortSignal | undefined,
    adopting?: ComingPty,
    expectedIncarnationId?: PtyIncarnationId,
  ): Promise<boolean> {
    if (signal?.aborted === true) return false
    const core = this.#core
    const tracked = core.records.get(ptyId)
    // Tracked live already: attached, if on the host asked about — a PTY of another host (an
    // SSH-scoped id asked of `local`) is not this host's to attach ("false on doubt") — and only
    // while its provider still vouches for it: after the provider's `detach()` its output no
    // longer streams here (until 7 Dec: `true` from the record alone, the provider not asked).
    if (tracked?.state === 'live') return tracked.hostId === hostId && providerVouchesFor(core, tracked) !== false
    const provider = core.options.providers.get(hostId)
    if (provider === undefined) return false
    // Coming from now on: a `kill` of the id while it is in flight stops what it attaches (as for a
    // spawn). An adoption's attach goes on as the coming its adoption registered when it began, so
    // a `kill` while the adoption waited for its turn carries into it.
    const coming = adopting !== undefined && adopting.ptyId === ptyId ? adopting : core.records.expectComing(ptyId)
    try {
      this.#claimIdOnHost(coming, hostId)
    } catch {
      // The id is being spawned (or attached) on another host.
      core.records.release(coming)
      return false
    }
    const inFlight = this.#intake.beginInFlight()
    try {
      // Stage 5 of the pipeline, for the sequence rebase below (stage 11), checked as the pipeline
      // checks it: a runtime that throws or answers no sequence is reported and the attach answers
      // `false` before the provider is asked (as for a rebase it fails). Inside the `try`: its
      // in-flight window and its coming registration are released (outside, it rejected and kept
      // both: a `kill` of the id answered `true`).
      const sequenceBefore = this.#bookkeeping.sequenceBefore(ptyId)
      if (sequenceBefore === RUNTIME_ANSWER_REFUSED) return false
      const attaching = Promise.resolve(
        provider.spawn(expectedIncarnationId === undefined ? { sessionId: ptyId, attachOnly: true } : { sessionId: ptyId, attachOnly: true, expectedIncarnationId }),
      )
      const result = await raceAbort(attaching, signal)
      if (result === ABORTED) {
        // The caller gave up on it, but a `kill` of the id that marked it still holds (it answered
        // `true`): what the host attaches is stopped once it answers, as below.
        if (coming.stopRequested) void attaching.then((late) => this.#stopUntracked(provider, ptyId, late), () => undefined)
        return false
      }
      // A malformed reply (an incarnation id that is not one, a pid that is not) is no proof of the process.
      if (malformedReplyField(result) !== undefined || result.id !== ptyId || result.exitedBeforeSpawnReply === true) return false
      // Another process under the id than the one asked about (a provider that ignored the fence): not
      // this attach's — neither published nor, for a `kill` that marked the attach, stopped.
      if (expectedIncarnationId !== undefined && result.incarnationId !== expectedIncarnationId) return false
      if (core.disposed()) {
        // Nobody will track it: left running (an attach never started it) — unless a `kill` of the
        // id marked this attach, before or after `dispose()`: it is stopped, as it would have been
        // had it landed before.
        if (coming.stopRequested) {
          this.#stopUntracked(provider, ptyId, result)
          // An adoption's attach: the adoption, refused now, does not stop the owner a second time.
          coming.settled = true
        }
        return false
      }
      const current = core.records.get(ptyId)
      // The process died after the host answered, and its exit was already published.
      if (current !== undefined && isExitedProcess(current, provider, { ...result, isReattach: true })) return false
      if (current !== undefined && isSameProcess(current, provider, result.incarnationId)) {
        if (current.state === 'live') {
          // Another attach (or spawn) published it while this one was in flight: one `spawn`
          // event per revival; only what is still held for this attach is left to deliver.
          this.#intake.deliverHeld(current, this.#intake.takeHeld(current, inFlight.since), undefined)
          this.#landed(coming, current)
          return true
        }
        // Published again as the spawn path does for the same process (its stop went unverified):
        // live again, a `spawn` event (re-attach) that reopens its handle's output, and the events
        // held while this attach was in flight delivered.
        this.#publish(current, inFlight, true, result)
        this.#landed(coming, current)
        return true
      }
      if (current !== undefined && current.state === 'live') return current.hostId === hostId
      // As a spawn's re-attach does: the reply's providerSequence places the stream. Before the
      // supersede: a runtime that fails the rebase refuses the attach, and the id's previous record
      // must stay the id's (superseded by an attach that published nothing, its later death was
      // never published and released neither its claim nor its slot, and disposal skipped it).
      const reconciled = this.#bookkeeping.rebaseAttached(result, sequenceBefore)
      if (reconciled === RUNTIME_ANSWER_REFUSED) {
        // A `kill` of the id marked this attach (it answered `true`): what it attached is stopped,
        // as when `dispose()` overtakes it; an adoption's attach so settled does not stop it twice.
        if (coming.stopRequested) {
          this.#stopUntracked(provider, ptyId, result)
          coming.settled = true
        }
        return false
      }
      if (current !== undefined) this.#exits.supersede(current)
      const record = this.#recordFromReply(hostId, provider, result, {}, OWNS_NOTHING, reconciled)
      this.#publish(record, inFlight, true, result)
      this.#landed(coming, record)
      return true
    } catch {
      return false
    } finally {
      core.records.release(coming)
      this.#intake.endInFlight(inFlight)
    }
  }

  /**
   * Stop the process an attach of `ptyId` that nobody will track attached (`reply`, its host's
   * answer), because a `kill` marked the attach: fenced by the incarnation it attached, and at once
   * (`immediate`), since nobody follows the stop up. A reply that proves no process is left alone.
   */
  #stopUntracked(provider: PtyProvider, ptyId: string, reply: PtySpawnResult): void {
    if (malformedReplyField(reply) !== undefined || reply.id !== ptyId || reply.exitedBeforeSpawnReply === true) return
    void this.#stopping.dispatch(ptyId, { provider, incarnationId: reply.incarnationId }, true)
  }

  /**
   * Adopt the slot's live owner (see `PtyController.adoptSlot`) in its `turn`, attaching through
   * `attach` when the controller does not track it live. From this call on, each owner the slot
   * store names (live view, and persisted view once read) that the controller does not track live
   * — with its incarnation, on a host with a provider here (`#expectSlotOwners`) —
   * counts as an adoption of it waiting for its turn (`PtyRecordTable.expectAdoption`): a `kill` of
   * it meanwhile marks the adoption, and that owner, if its attach publishes it, is stopped the
   * moment it lands (not another process the slot was rebound to under the id meanwhile); `stopAndWait` of it stops the process where it runs and marks the
   * adoption too (it does not wait for the turn). An owner so marked that the adoption does not
   * publish — it adopts another owner (the slot changed hands meanwhile) or none, or it is refused
   * (disposed, `slot_owner_conflict`, a claim not the slot's, the store or the attach failing) —
   * runs all the same: it is stopped where it runs when the adoption ends (`#stopMarkedOwners`).
   * A `kill` of the owner during the turn itself wins too: the adoption does not hand it back
   * (`#adoptInTurn`).
   */
  async adoptSlot(
    slot: PtySlot,
    turn: <T>(work: () => Promise<T>) => Promise<T>,
    attach: (ptyId: string, hostId: ExecutionHostId, adopting: ComingPty | undefined, incarnationId: PtyIncarnationId | undefined) => Promise<boolean>,
  ): Promise<PtySlotAdoption | null> {
    const owners = this.#expectSlotOwners(slot)
    try {
      return await turn(() => this.#adoptInTurn(slot, owners.comings, attach))
    } finally {
      // However the adoption ended — refused in or before its turn (disposed, `slot_owner_conflict`,
      // a `slotCreateClaim` not the slot's, the store or the attach failing), `null`, or another
      // owner adopted —, an owner a `kill` marked that its attach did not publish (and stop) runs
      // still: the `kill` answered `true`, so it is stopped where it runs. (Before: only when
      // `dispose` refused the adoption; otherwise it ran on behind that `true`.)
      this.#stopMarkedOwners(owners.comings)
      owners.release()
    }
  }

  /**
   * `adoptSlot`'s work in the slot's turn. A `kill` of the owner wins wherever it lands before the
   * answer: an owner being stopped when the turn begins is waited for (its exit, or its stop
   * window), and so is one a `kill` reached during the turn itself — after that first check: in
   * flight, or as its attach landed —, then the slot is read again. Each PTY is waited for once:
   * one that outlives its stop window is adopted as the slot holds it then (revived by the attach
   * when its stop went unverified), as a slot spawn re-attaches it.
   */
  async #adoptInTurn(
    slot: PtySlot,
    owners: ReadonlyMap<string, ExpectedSlotOwner>,
    attach: (ptyId: string, hostId: ExecutionHostId, adopting: ComingPty | undefined, incarnationId: PtyIncarnationId | undefined) => Promise<boolean>,
  ): Promise<PtySlotAdoption | null> {
    const records = this.#core.records
    const waitedFor = new Set<PtyRecord>()
    let stopping: readonly PtyRecord[] = NO_RECORDS
    for (;;) {
      // Checked here, after the slot's turn: an adoption that waited behind a claim when the
      // controller was disposed is refused, as a spawn is — not answered "the slot has no owner".
      if (this.#core.disposed()) throw new PtyControllerDisposedError('adoptSlot', true)
      // An owner this controller is stopping (a `kill` of it) is no pane's any more: as a slot
      // spawn does, wait until that stop settles, then adopt what the slot holds by then (before:
      // the owner being stopped was handed back, and died under the caller moments later).
      stopping = [...new Set([...stopping, ...this.#stoppingOwnersOf(slot)])].filter((record) => !waitedFor.has(record))
      if (stopping.length > 0) {
        for (const record of stopping) waitedFor.add(record)
        await this.#awaitStops(stopping, undefined)
        if (this.#core.disposed()) throw new PtyControllerDisposedError('adoptSlot', true)
      }
      const adoption = await adoptSlotOwner(
        {
          store: this.#core.options.store,
          liveReply: (ptyId) => {
            const record = records.get(ptyId)
            // Not handed back as live once its provider no longer vouches for it (after its
            // `detach()`), as `attach` answers `false` for it: its output no longer streams here.
            return record === undefined || record.state !== 'live' || providerVouchesFor(this.#core, record) === false ? null : replyOf(record, true)
          },
          attach: (ptyId, owner) => {
            // The adoption's first attach of the owner it expected goes on as the coming a `kill`
            // may have marked while it waited; a later one (a second round) is a new attach. So is
            // an attach of another process than the one expected — the slot rebound, while the
            // adoption waited, to a newer process under the same id (another host, or another
            // incarnation): the `kill` was asked of that owner, not of this one. (Before, the mark
            // carried into it, and the kill stopped the newer process as its attach landed.)
            const expected = owners.get(ptyId)
            const isExpected =
              expected !== undefined &&
              !expected.attached &&
              expected.incarnationId === owner.incarnationId &&
              this.#core.options.providers.get(owner.hostId) === expected.provider
            const adopting = isExpected ? expected.coming : undefined
            if (isExpected) expected.attached = true
            // Fenced by the incarnation the store names: a newer process under the id is not the owner.
            return attach(ptyId, owner.hostId, adopting, owner.incarnationId)
          },
          bindSlot: (ptyId, boundSlot) => {
            const record = records.get(ptyId)
            if (record !== undefined) record.slot = boundSlot
          },
        },
        slot,
      )
      // An owner marked but not published (another one adopted, or none): stopped now, before the
      // check below — it may be the very PTY this adoption found tracked live.
      this.#stopMarkedOwners(owners)
      // Overtaken by `dispose()` (its attach in flight, or the store's read): refused, as a spawn
      // then is — not `null` ("the slot has no owner"), nor an owner disposal is stopping.
      if (this.#core.disposed()) throw new PtyControllerDisposedError('adoptSlot', true)
      if (adoption === null) return null
      // A `kill` of it since the check above (during the store's read, the attach in flight, or as
      // the attach landed, which stopped it): not handed back as if live. (Before, it was.) Only a
      // stop under way (its unconfirmed window armed): a PTY revived after its stop went unverified
      // keeps the stop intent, but nobody is stopping it — handed back at once.
      const adopted = records.get(adoption.result.id)
      if (adopted === undefined || !isStopUnderWay(adopted) || waitedFor.has(adopted)) return adoption
      stopping = [adopted]
    }
  }

  /**
   * Register, as an adoption waiting for its turn, each owner the slot store names for `slot` that
   * the controller does not track live: the live view's at once, the persisted view's when it
   * answers (if the adoption has not ended by then). A store that throws or rejects here registers
   * nothing: the adoption reads it again in its turn, and answers for it there.
   *
   * Only an owner a stop committed now could reach, and reach alone, when the adoption ends
   * without publishing it (`#stopMarkedOwners`): one whose host has a provider here (as `attach`
   * answers `false` for a host without one), and whose incarnation the store attests — the fence
   * of that stop, which may come long after the `kill` (the turn waits behind a claim): unfenced,
   * it would end whatever runs under the id by then, a newer process of another window. Neither
   * is marked by a `kill`, which answers `false` for it ("false on doubt").
   */
  #expectSlotOwners(slot: PtySlot): { comings: Map<string, ExpectedSlotOwner>; release: () => void } {
    const records = this.#core.records
    const store = this.#core.options.store
    const comings = new Map<string, ExpectedSlotOwner>()
    let ended = false
    const expectOwner = (owner: unknown): void => {
      const { ptyId, hostId, incarnationId } = (owner ?? {}) as { ptyId?: unknown; hostId?: unknown; incarnationId?: unknown }
      if (ended || typeof ptyId !== 'string' || ptyId.length === 0 || comings.has(ptyId)) return
      const record = records.get(ptyId)
      if (record?.state === 'live') return // a `kill` stops it where it is
      // The very incarnation whose death is proven: the adoption cannot attach it (nor is there anything to stop).
      if (record?.state === 'exited' && record.incarnationId !== undefined && record.incarnationId === incarnationId) return
      const provider = typeof hostId === 'string' ? this.#core.options.providers.get(hostId) : undefined
      if (provider === undefined || !isPtyIncarnationId(incarnationId)) return
      comings.set(ptyId, { coming: records.expectAdoption(ptyId), provider, incarnationId, attached: false })
    }
    try {
      expectOwner(glanceAtLiveOwner(store, slot))
      const persisted = store.getPersistedOwner(slot)
      if (isPromiseLike(persisted)) void Promise.resolve(persisted).then(expectOwner, () => undefined)
      else expectOwner(persisted)
    } catch {
      // Read again (and answered for) in the adoption's turn.
    }
    return {
      comings,
      release: () => {
        ended = true
        for (const { coming } of comings.values()) records.release(coming)
      },
    }
  }

  /**
   * Each owner the adoption expected that a `kill` marked (the `kill` answered `true`: a stop is
   * committed) and that its attach did not publish — and stop — is stopped now, once: a process
   * this controller tracks as that very owner (the store's host and incarnation) through `kill`'s
   * own path, so its exit is an operator close; otherwise on the host the slot store names, at
   * once, fenced by the incarnation it names (nobody follows that stop up). Always fenced: an
   * owner the store names no incarnation of is never expected (`#expectSlotOwners`).
   */
  #stopMarkedOwners(owners: ReadonlyMap<string, ExpectedSlotOwner>): void {
    for (const [ptyId, expected] of owners) {
      // Settled: published (and stopped) by its attach, or stopped by the attach `dispose()` overtook.
      if (expected.coming.settled || !expected.coming.stopRequested) continue
      expected.coming.settled = true
      const { provider, incarnationId } = expected
      const tracked = this.#core.records.get(ptyId)
      const isTheOwner = tracked !== undefined && tracked.state !== 'exited' && tracked.provider === provider && tracked.incarnationId === incarnationId
      if (isTheOwner && !this.#core.disposed()) this.#stopLanded(tracked)
      else void this.#stopping.dispatch(ptyId, { provider, incarnationId }, true)
    }
  }

  /** A new record for the incarnation a provider's reply names, tracked under its id. */
  #recordFromReply(
    hostId: ExecutionHostId,
    provider: PtyProvider,
    result: PtySpawnResult,
    requested: { cols?: number | undefined; rows?: number | undefined },
    ownership: RecordOwnership,
    reconciledSequence: number | null | undefined,
  ): PtyRecord {
    const record = createPtyRecord({
      ptyId: result.id,
      hostId,
      provider,
      incarnationId: result.incarnationId,
      pid: typeof result.pid === 'number' ? result.pid : undefined,
      hostReportsChildExitStatus: result.hostReportsChildExitStatus !== false,
      scopeId: ownership.scopeId,
      slot: ownership.slot,
      claimKey: ownership.claimKey,
      claimGeneration: ownership.claimGeneration,
      handle: ownership.handle,
      flowTarget: this.#output.targetFor(provider, result.id),
      size: sizeOf(result, requested),
      outputSequence: reconciledSequence ?? this.#bookkeeping.runtimeOutputSequence(result.id),
    })
    this.#core.records.set(record)
    this.#output.follow(record)
    return record
  }

  /**
   * `options` with an `async` `onPtySpawnCommitted` hook's rejection observed: reported on `error`
   * (`listener_threw`), where it would otherwise be an unhandled rejection, which ends a Node
   * process by default. (A hook that throws still fails the spawn with `commit_failed`: the
   * pipeline does not wait for a promise, so a rejection can only be reported.)
   */
  #withObservedCommitHook(options: PtySpawnOptions): PtySpawnOptions {
    const hook: unknown = typeof options === 'object' && options !== null ? options.onPtySpawnCommitted : undefined
    if (typeof hook !== 'function') return options
    const report = this.#core.report
    return {
      ...options,
      onPtySpawnCommitted: () => {
        // Called on the caller's options, as the pipeline calls the hook (`args.onPtySpawnCommitted()`):
        // a hook written as a method keeps its `this`.
        observeRejection((hook as (this: PtySpawnOptions) => unknown).call(options), (error) => {
          report('listener_threw', `The \`onPtySpawnCommitted\` hook's promise rejected with ${describeThrownValue(error)}`, error)
        })
      },
    }
  }

  /**
   * Emit `spawn` for the record, then deliver what was held for it while it was in flight (since
   * `heldSince`, a mark of the event buffer; by default the start of this spawn), placed by the
   * provider's `result`.
   */
  #publish(record: PtyRecord, inFlight: InFlightSpawn, isReattach: boolean, result: PtySpawnResult, heldSince = inFlight.since): void {
    const early = this.#intake.takeHeld(record, heldSince)
    this.#intake.endInFlight(inFlight)
    if (record.state === 'unverified') this.#intake.discardHeldBefore(record)
    // The publication is one delivery (`delivery-gate.ts`): what a `liveness` or `spawn` listener's
    // stop makes the provider report meanwhile (an exit from inside `shutdown`) comes after the
    // output held for the spawn, not before it (when that output was dropped).
    this.#core.delivery.within(record.ptyId, () => {
      const revived = this.#exits.reviveIfUnverified(record)
      // Built only for a listener, field by field: most hosts follow the spawn's reply, not the event.
      if (this.#core.listens('spawn')) {
        const event: PtyControllerSpawnEvent = { ptyId: record.ptyId, hostId: record.hostId, isReattach, cols: record.size.cols, rows: record.size.rows }
        if (record.incarnationId !== undefined) event.incarnationId = record.incarnationId
        if (record.pid !== undefined) event.pid = record.pid
        this.#core.emit('spawn', event)
      }
      if (revived && record.charsDroppedWhileUnverified > 0) {
        // What it printed between its unverified exit and now reached nobody: a gap, in sequence.
        const dropped = record.charsDroppedWhileUnverified
        record.charsDroppedWhileUnverified = 0
        this.#output.skip(record, dropped)
      }
      // A revived record keeps its own sequence (the reply does not place it): every held gap counts.
      this.#intake.deliverHeld(record, early, revived ? undefined : streamStartOf(result))
    })
  }

  /**
   * The controller was disposed while this spawn was in flight, so nobody will ever track the PTY:
   * undo what the pipeline committed for it. A process the spawn started is stopped (no orphan) and,
   * once the stop is carried out, reported to the runtime as exited — the controller is no longer
   * subscribed, so the runtime would otherwise keep it registered forever. The claim it created and
   * the slot binding it made are released. A re-attached or adopted process was not started by this
   * spawn: it is left running (a tracked one is stopped by `dispose` itself) — unless a `kill` of
   * the id marked this spawn (`stopRequested`): the caller asked for it to be stopped when it lands.
   */
  #abandonCommittedSpawn(provider: PtyProvider, outcome: PtySpawnOutcome, options: PtySpawnOptions, stopRequested: boolean): void {
    const { result } = outcome
    if (result.isReattach === true && !stopRequested) return
    if (outcome.claimDisposition === 'created') this.#bookkeeping.releaseClaim(result.id, outcome.claimOwner?.generation)
    if (options.slot !== undefined && outcome.slotOwner !== undefined) this.#bookkeeping.retireSlot(options.slot, outcome.slotOwner)
    void this.#stopping.dispatch(result.id, { provider, incarnationId: result.incarnationId }, true).then((stopped) => {
      if (stopped !== 'resolved') return
      this.#bookkeeping.noteRuntimeExit(result.id, result.incarnationId)
      this.#bookkeeping.forgetRuntimePty(result.id)
    })
  }

  /**
   * The process a spawn re-attached to (or adopted) exited after the pipeline's last check and
   * before the controller could publish it: its exit was already published, so nothing is
   * published again. The pipeline's commit for it is undone (the runtime registration, the slot
   * binding, the claim) and the spawn fails with `exited_during_start`.
   */
  #rejectExitedReattach(outcome: PtySpawnOutcome, options: PtySpawnOptions): never {
    const { result } = outcome
    this.#bookkeeping.noteRuntimeExit(result.id, result.incarnationId)
    this.#bookkeeping.forgetRuntimePty(result.id)
    if (options.slot !== undefined && outcome.slotOwner !== undefined) this.#bookkeeping.retireSlot(options.slot, outcome.slotOwner)
    if (outcome.claimOwner !== undefined) this.#bookkeeping.releaseClaim(result.id, outcome.claimOwner.generation)
    throw new PtySpawnError('exited_during_start', `PTY ${JSON.stringify(result.id)} exited before the spawn could publish it`, {
      ptyId: result.id,
    })
  }
}

/** The caller's `sessionId`, when `options` names one (the pipeline checks the options). */
function sessionIdOf(options: PtySpawnOptions): string | undefined {
  const sessionId: unknown = typeof options === 'object' && options !== null ? options.sessionId : undefined
  return typeof sessionId === 'string' ? sessionId : undefined
}

/** A stream that begins with this process (see `rebaseOutputSequence`: the count stays, now placed). */
const NEW_STREAM: ProviderSequence = Object.freeze({ value: 0, generation: 'reset' })

function sizeOf(result: PtySpawnResult, requested: { cols?: number | undefined; rows?: number | undefined }): { cols: number; rows: number } {
  return { cols: result.cols ?? requested.cols ?? DEFAULT_COLS, rows: result.rows ?? requested.rows ?? DEFAULT_ROWS }
}

function replyOf(record: PtyRecord, isReattach: boolean): PtySpawnReply {
  // Field by field, not spread: this runs once per spawn.
  const reply: PtySpawnReply = { id: record.ptyId, hostId: record.hostId, isReattach }
  if (record.pid !== undefined) reply.pid = record.pid
  if (record.incarnationId !== undefined) reply.incarnationId = record.incarnationId
  return reply
}

/**
 * Whether a re-attach reply names the very incarnation whose exit the record already proved: the
 * process died after the pipeline's last check. Needs an attested incarnation on both sides.
 */
function isExitedProcess(record: PtyRecord, provider: PtyProvider, result: PtySpawnResult): boolean {
  return (
    result.isReattach === true &&
    record.state === 'exited' &&
    record.provider === provider &&
    record.incarnationId !== undefined &&
    record.incarnationId === result.incarnationId
  )
}

/**
 * Where a spawn result's `providerSequence` places the PTY's stream, in the provider's own
 * sequence (`undefined` when it names none): an output loss that ends there lies before it.
 */
function streamStartOf(result: PtySpawnResult): number | undefined {
  const value = result.providerSequence?.value
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

/**
 * Whether `record` was published, by a joiner, from the very start this claim creator's `outcome`
 * made: the same claim owner generation (minted per reservation, so no other start has it).
 */
function isPublishedStartOf(record: PtyRecord, outcome: PtySpawnOutcome): boolean {
  return outcome.claimDisposition === 'created' && record.claimGeneration !== undefined && record.claimGeneration === outcome.claimOwner?.generation
}

/**
 * Whether a stop of `record` is under way: asked (`kill`, `stopAndWait`) of the live PTY, and its
 * unconfirmed window still open — or a `stopAndWait` still escalating against it, live or
 * `unverified` (one that outlived the window, or began after it: no window is armed, but the force
 * is still to come). A PTY revived after its stop went unverified keeps the stop intent, but with
 * neither, nobody is stopping it.
 */
function isStopUnderWay(record: PtyRecord): boolean {
  if (!record.stopRequested || record.state === 'exited') return false
  return record.escalatingStops > 0 || (record.state === 'live' && record.unconfirmedTimer !== undefined)
}

/** A record of the same live-or-unverified process a provider just attached to. */
function isSameProcess(record: PtyRecord, provider: PtyProvider, incarnationId: PtyIncarnationId | undefined): boolean {
  return record.provider === provider && record.state !== 'exited' && record.incarnationId === incarnationId
}
