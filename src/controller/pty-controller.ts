import { EventEmitter } from 'node:events'
import type TypedEmitter from 'typed-emitter'
import {
  isTerminalInputKind,
  refusedWrite,
  unverifiableWrite,
  type ExecutionHostId,
  type PtyControllerInventory,
  type PtyHostScopedListing,
  type PtySize,
  type PtyControllerTerminalIdentity,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyListOptions,
  type PtyLivenessVerdict,
  type PtyProcessInfo,
  type PtyProcessInspection,
  type PtyProvider,
  type PtyAdoptSlotOptions,
  type PtyBufferSerialization,
  type PtyDisposable,
  type PtyProviderBufferSnapshot,
  type PtyRendererSerializer,
  type PtySlot,
  type PtySlotAdoption,
  type PtySlotCreateRelease,
  type PtySpawnOptions,
  type PtySpawnReply,
  type PtySpawnResult,
  type PtyStopAndWaitOptions,
  type RuntimePtyController,
  type TerminalInputKind,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import {
  UNVERIFIED_PROCESS_EXIT_CODE,
  exitCauseFromWire,
  settleExitCause,
  type TerminalExitCause,
} from '../exit-cause/index.js'
import {
  PtySpawnError,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
  type PtySlotOwner,
  type PtySpawnOutcome,
} from '../spawn/index.js'
import type { PtyClock } from './clock.js'
import { assertNonNegativeNumber, assertPositiveInteger, assertPtyId, describeValue } from './argument-validation.js'
import {
  resolvePtyControllerOptions,
  type PtyControllerOptions,
  type PtyControllerRuntime,
  type ResolvedPtyControllerOptions,
} from './controller-options.js'
import { PtyControllerDisposedError, PtyControllerError, type PtyControllerErrorCode } from './errors.js'
import type { PtyAttachOptions, PtyInspectOptions, PtyWriteOptions } from './controller-types.js'
import type { PtyControllerEvents } from './events.js'
import { ProducerFlowControl, type ProducerFlowState } from './flow-control.js'
import { PTY_LIVENESS_REASONS } from './liveness-reasons.js'
import { ControllerTimers } from './controller-timers.js'
import {
  IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS,
  InFlightEventBuffer,
  type HeldProviderEvent,
} from './in-flight-event-buffer.js'
import { combineAnswers, isUnverifiedCause, observedExitCause } from './exit-evidence.js'
import {
  EXITED_PTY_RECORDS_KEPT,
  createPtyRecord,
  incarnationField,
  incarnationMatches,
  waitForRecordState,
  type PtyRecord,
} from './pty-record.js'
import { verifyStop } from './verify-stop.js'
import { LIST_PROCESSES_DEFAULT_DEADLINE_MS } from './stop-constants.js'
import { confirmForegroundOf, providerSupportsForegroundEvidence, withForegroundEvidence } from './foreground-evidence.js'
import { INPUT_MODE_RESET_SEQUENCE } from './input-mode-reset.js'
import { RENDERER_SERIALIZER_WAIT_DEFAULT_MS, RendererSerializerRegistry, serializeBufferFor } from './renderer-serializers.js'
import { SlotCreateGate, adoptSlotOwner, assertSlot } from './slot-adoption.js'

/** Default PTY size when neither the spawn options nor the provider say (the usual VT100 size). */
const DEFAULT_COLS = 80
const DEFAULT_ROWS = 24

type StopEvent = 'exit' | 'shutdown_resolved' | 'shutdown_rejected' | 'force' | 'deadline'

const TypedEventEmitter = EventEmitter as new () => TypedEmitter<PtyControllerEvents>

/**
 * The default {@link RuntimePtyController}: routes each PTY to the provider of its host, runs
 * spawns through the spawn pipeline, settles exits by evidence and the operator-close rule, fences
 * by incarnation, escalates stops, applies producer flow control, and publishes typed events
 * (`spawn`, `data`, `exit`, `liveness`, `error`).
 *
 * Create it with {@link createPtyController}. Every method throws
 * {@link PtyControllerDisposedError} once `dispose()` was called, except `dispose` itself and the
 * two write methods, which refuse with `controller_disposed`.
 */
export class PtyController extends TypedEventEmitter implements RuntimePtyController, AsyncDisposable {
  readonly #options: ResolvedPtyControllerOptions
  readonly #clock: PtyClock
  readonly #runtime: PtyControllerRuntime
  readonly #flow: ProducerFlowControl | null
  readonly #records = new Map<string, PtyRecord>()
  /** Exited records still in `#records`, oldest first; bounded by `EXITED_PTY_RECORDS_KEPT`. */
  readonly #exitedRecords = new Set<PtyRecord>()
  readonly #unsubscribes: Unsubscribe[] = []
  readonly #timers: ControllerTimers
  readonly #held: InFlightEventBuffer
  readonly #slotGate = new SlotCreateGate()
  readonly #renderers: RendererSerializerRegistry
  #disposePromise: Promise<void> | undefined

  /** Create a controller; prefer {@link createPtyController}. Throws a `TypeError` on bad options. */
  constructor(options: PtyControllerOptions) {
    super()
    this.#options = resolvePtyControllerOptions(options)
    this.#clock = this.#options.clock
    this.#runtime = this.#options.runtime
    this.#timers = new ControllerTimers(this.#clock, (error) =>
      this.#report('provider_threw', 'The controller failed inside a timer', error),
    )
    this.#held = new InFlightEventBuffer(IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS, (event) =>
      this.#report(
        'output_dropped',
        `Output held for spawns in flight passed ${IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS} chars; the oldest was dropped`,
        undefined,
        event.id,
      ),
    )
    this.#renderers = new RendererSerializerRegistry((ms) => this.#timers.after(ms))
    this.#flow = this.#options.flowControl === null ? null : new ProducerFlowControl(this.#options.flowControl, this.#clock)
    // Why at construction: an exit that races a spawn reply must reach `runtime.notePtyExit`
    // before the pipeline's admission gate runs, or a dead PTY would be published.
    const subscribed = new Set<PtyProvider>()
    for (const provider of this.#options.providers.values()) {
      if (subscribed.has(provider)) continue
      subscribed.add(provider)
      // Why not #guard: these run per output chunk; a closure per event was avoidable garbage.
      this.#unsubscribes.push(
        provider.onData((event) => {
          try {
            this.#onProviderData(provider, event, true)
          } catch (error) {
            this.#reportProviderEventFailure(error)
          }
        }),
      )
      this.#unsubscribes.push(
        provider.onExit((event) => {
          try {
            this.#onProviderExit(provider, event)
          } catch (error) {
            this.#reportProviderEventFailure(error)
          }
        }),
      )
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Spawning

  /**
   * Run the spawn pipeline (slot attach, claim join, rollback…), record the PTY and emit `spawn`.
   * Output that arrived while the spawn was in flight is delivered right after the `spawn` event.
   *
   * @throws PtySpawnError (with a stable `code`) when the pipeline refuses or fails.
   * @throws PtyControllerDisposedError when the controller was disposed, also while the spawn was in
   * flight: a process it started is then stopped, and the claim and slot binding it made released.
   */
  async spawn(options: PtySpawnOptions): Promise<PtySpawnReply> {
    this.#assertUsable('spawn')
    // Why: one slot's spawns (and claimSlotCreate claims) take turns, so two never create its PTY at once.
    if (options.slot !== undefined) return this.#slotGate.run(options.slot, options.slotCreateClaim, () => this.#spawnNow(options))
    return this.#spawnNow(options)
  }

  async #spawnNow(options: PtySpawnOptions): Promise<PtySpawnReply> {
    this.#assertUsable('spawn')
    const inFlight = this.#held.begin()
    try {
      const state = createRuntimePtySpawnState(
        {
          resolveProvider: (hostId) => this.#options.providers.get(hostId),
          runtime: this.#runtime,
          store: this.#options.store,
          claims: this.#options.claims,
        },
        options,
      )
      const outcome = await executeRuntimePtySpawn(state)
      const provider = this.#options.providers.get(outcome.hostId)
      const result = outcome.result
      if (provider === undefined) {
        throw new TypeError(`The spawn pipeline returned host ${describeValue(outcome.hostId)}, which has no provider`)
      }
      if (this.#disposePromise !== undefined) {
        this.#abandonCommittedSpawn(provider, outcome, options)
        throw new PtyControllerDisposedError('spawn')
      }
      const existing = this.#records.get(result.id)
      if (existing !== undefined && isExitedProcess(existing, provider, result)) {
        this.#rejectExitedReattach(outcome, options)
      }
      const sameProcess =
        existing !== undefined &&
        isSameProcess(existing, provider, result.incarnationId) &&
        result.isReattach === true &&
        result.providerSequence?.generation !== 'reset'
      const cols = result.cols ?? options.cols ?? DEFAULT_COLS
      const rows = result.rows ?? options.rows ?? DEFAULT_ROWS
      let record: PtyRecord
      if (sameProcess) {
        // A re-attach to the same process keeps its facts, including a pending stop intent.
        record = existing
        record.size = { cols, rows }
      } else {
        if (existing !== undefined) this.#supersede(existing)
        record = createPtyRecord({
          ptyId: result.id,
          hostId: outcome.hostId,
          provider,
          incarnationId: result.incarnationId,
          pid: typeof result.pid === 'number' ? result.pid : undefined,
          hostReportsChildExitStatus: result.hostReportsChildExitStatus !== false,
          scopeId: options.scopeId ?? options.slot?.scopeId ?? options.claim?.scopeId,
          slot: options.slot,
          claimKey: options.claim?.key,
          handle: options.preAllocatedHandle,
          flowTarget: this.#flowTarget(provider, result.id),
          size: { cols, rows },
          outputSequence: outcome.reconciledSequence ?? this.#runtime.getPtyOutputSequence?.(result.id) ?? 0,
        })
        this.#records.set(result.id, record)
      }
      const early = this.#takeHeld(record, inFlight.since)
      this.#held.end(inFlight.token)
      this.#reviveIfUnverified(record)
      this.#emit('spawn', {
        ptyId: record.ptyId,
        ...incarnationField(record.incarnationId),
        hostId: record.hostId,
        ...(record.pid === undefined ? {} : { pid: record.pid }),
        isReattach: result.isReattach === true,
      })
      this.#deliverHeld(early)
      return {
        id: record.ptyId,
        ...(record.pid === undefined ? {} : { pid: record.pid }),
        ...incarnationField(record.incarnationId),
        hostId: record.hostId,
        isReattach: result.isReattach === true,
        ...(outcome.claimDisposition === undefined ? {} : { claimDisposition: outcome.claimDisposition }),
      }
    } finally {
      this.#held.end(inFlight.token)
    }
  }

  /**
   * Attach-only adoption of a live PTY the controller does not track yet. Never creates: the
   * provider is asked with `attachOnly`. `false` on any doubt (no such PTY, a different id in the
   * reply, a process that already exited, a failure). `true` at once for a PTY already tracked live.
   */
  async attach(ptyId: string, options: PtyAttachOptions = {}): Promise<boolean> {
    this.#assertUsable('attach')
    assertPtyId(ptyId)
    const tracked = this.#records.get(ptyId)
    if (tracked !== undefined && tracked.state === 'live') return true
    const hostId = options.hostId ?? 'local'
    const provider = this.#options.providers.get(hostId)
    if (provider === undefined) return false
    const inFlight = this.#held.begin()
    try {
      const result = await provider.spawn({ sessionId: ptyId, attachOnly: true })
      if (result.id !== ptyId || result.exitedBeforeSpawnReply === true || this.#disposePromise !== undefined) return false
      const current = this.#records.get(ptyId)
      // The process died after the host answered, and its exit was already published.
      if (current !== undefined && isExitedProcess(current, provider, { ...result, isReattach: true })) return false
      if (current !== undefined && isSameProcess(current, provider, result.incarnationId)) {
        this.#reviveIfUnverified(current)
        return true
      }
      if (current !== undefined && current.state === 'live') return true
      if (current !== undefined) this.#supersede(current)
      const record = createPtyRecord({
        ptyId,
        hostId,
        provider,
        incarnationId: result.incarnationId,
        pid: typeof result.pid === 'number' ? result.pid : undefined,
        hostReportsChildExitStatus: result.hostReportsChildExitStatus !== false,
        scopeId: undefined,
        slot: undefined,
        claimKey: undefined,
        handle: undefined,
        flowTarget: this.#flowTarget(provider, ptyId),
        size: { cols: result.cols ?? DEFAULT_COLS, rows: result.rows ?? DEFAULT_ROWS },
        outputSequence: this.#runtime.getPtyOutputSequence?.(ptyId) ?? 0,
      })
      this.#records.set(ptyId, record)
      const early = this.#takeHeld(record, inFlight.since)
      this.#held.end(inFlight.token)
      this.#emit('spawn', {
        ptyId,
        ...incarnationField(record.incarnationId),
        hostId,
        ...(record.pid === undefined ? {} : { pid: record.pid }),
        isReattach: true,
      })
      this.#deliverHeld(early)
      return true
    } catch {
      return false
    } finally {
      this.#held.end(inFlight.token)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writes and size

  /**
   * Write bytes; `true` only when the provider settled `accepted` synchronously. `false` when the
   * write was refused (unknown, exited, fenced PTY; disposed controller), settled otherwise — and
   * also when the provider settles asynchronously, because the outcome is not known yet and a
   * boolean cannot say "unknown". Use {@link PtyController.writeWithSettlement} for remote hosts.
   */
  write(ptyId: string, data: string, inputKind: TerminalInputKind, options?: PtyWriteOptions): boolean {
    const settlement = this.writeWithSettlement(ptyId, data, inputKind, options)
    if (settlement instanceof Promise) return false
    return settlement.kind === 'accepted'
  }

  /**
   * Write bytes and settle the outcome in three values. Refused (proven no byte left) for an
   * unknown id (`pty_not_found`), an exited or unverified-stopped PTY (`pty_exited`), an
   * `expectedIncarnationId` that is not the live one (`stale_incarnation`) and a disposed
   * controller (`controller_disposed`). A provider that throws yields
   * `unverifiable('provider_threw_after_handoff', true)`; a rejected async settlement likewise.
   */
  writeWithSettlement(
    ptyId: string,
    data: string,
    inputKind: TerminalInputKind,
    options?: PtyWriteOptions,
  ): WriteSettlement | Promise<WriteSettlement> {
    if (typeof data !== 'string') {
      throw new TypeError(`Expected the \`data\` argument to be a string, got ${describeValue(data)}`)
    }
    if (!isTerminalInputKind(inputKind)) {
      throw new TypeError(
        `Expected the \`inputKind\` argument to be 'driving', 'launch' or 'query-reply', got ${describeValue(inputKind)}`,
      )
    }
    if (this.#disposePromise !== undefined) return refusedWrite('controller_disposed')
    const record = this.#records.get(ptyId)
    if (record === undefined) return refusedWrite('pty_not_found')
    const expected = options?.expectedIncarnationId
    if (expected !== undefined && expected !== record.incarnationId) return refusedWrite('stale_incarnation')
    if (record.state !== 'live') return refusedWrite('pty_exited')
    let settlement: WriteSettlement | Promise<WriteSettlement>
    try {
      settlement = record.provider.write(ptyId, data)
    } catch (error) {
      this.#report('provider_threw', `Provider ${record.provider.name} threw from write`, error, ptyId)
      return unverifiableWrite('provider_threw_after_handoff', true)
    }
    if (isPromiseLike(settlement)) {
      return Promise.resolve(settlement).catch((error: unknown) => {
        this.#report('provider_threw', `Provider ${record.provider.name} rejected a write settlement`, error, ptyId)
        return unverifiableWrite('provider_threw_after_handoff', true)
      })
    }
    return settlement
  }

  /**
   * Resize a live PTY; `false` when it is unknown, not live, or the provider refused or threw.
   *
   * @throws TypeError when `cols` or `rows` is not a positive integer.
   */
  resize(ptyId: string, cols: number, rows: number): boolean {
    this.#assertUsable('resize')
    assertPositiveInteger('cols', cols)
    assertPositiveInteger('rows', rows)
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return false
    try {
      const applied = record.provider.resize(ptyId, cols, rows)
      if (applied) record.size = { cols, rows }
      return applied
    } catch (error) {
      this.#report('provider_threw', `Provider ${record.provider.name} threw from resize`, error, ptyId)
      return false
    }
  }

  /** The size the provider reads back, else the size last applied; `null` for unknown or ended PTYs. */
  getSize(ptyId: string): PtySize | null {
    this.#assertUsable('getSize')
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    try {
      const readBack = record.provider.getSize?.(ptyId)
      if (readBack !== undefined && readBack !== null) return { cols: readBack.cols, rows: readBack.rows }
    } catch (error) {
      this.#report('provider_threw', `Provider ${record.provider.name} threw from getSize`, error, ptyId)
    }
    return { ...record.size }
  }

  // ---------------------------------------------------------------------------------------------
  // Flow control

  /**
   * The consumer processed `chars` more chars of a PTY's output. Credited against what is in
   * flight (never below zero), may resume a paused producer, and is forwarded to the provider's
   * own `acknowledgeData`. Acks for unknown or ended PTYs are ignored.
   *
   * @throws TypeError when `chars` is not a non-negative finite number.
   */
  acknowledgeData(ptyId: string, chars: number): void {
    this.#assertUsable('acknowledgeData')
    assertNonNegativeNumber('argument', 'chars', chars)
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return
    // Without producer flow control there is no count to clamp against: forward the ack as given.
    const counted = this.#flow !== null && hasFlowControl(record.provider)
    const credited = counted ? this.#flow.acknowledge(record.flowTarget, chars) : chars
    if (credited > 0 && record.provider.acknowledgeData !== undefined) {
      try {
        record.provider.acknowledgeData(ptyId, credited)
      } catch (error) {
        this.#report('flow_control_failed', `Provider ${record.provider.name} threw from acknowledgeData`, error, ptyId)
      }
    }
  }

  /** The flow-control state of a PTY (unacknowledged chars, paused, since when); for inspection. */
  getFlowControlState(ptyId: string): ProducerFlowState | null {
    this.#assertUsable('getFlowControlState')
    const record = this.#records.get(ptyId)
    if (record === undefined || this.#flow === null) return null
    return this.#flow.state(record.flowTarget)
  }

  // ---------------------------------------------------------------------------------------------
  // Stopping

  /**
   * Stop a PTY: marks the stop for its current incarnation first (so the exit that follows is
   * `operator_close`), then dispatches `provider.shutdown(id, { expectedIncarnationId })`. Returns
   * whether a stop was dispatched: `false` for unknown and exited ids. A PTY whose earlier stop
   * went unconfirmed can be killed again (ownership is kept so a retry can reach it).
   *
   * If the provider rejects, or reports no exit within `stop.unconfirmedAfterMs`, the controller
   * publishes `exit` with code −1 and cause `unknown/stop_unverified`, and liveness `unverifiable`
   * — never dead. A real exit of that incarnation arriving later emits no second `exit`, only a
   * `liveness` event `exited` (unless a re-attach revived the PTY first; see the `exit` event).
   */
  kill(ptyId: string): boolean {
    this.#assertUsable('kill')
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state === 'exited') return false
    record.stopRequested = true
    this.#releaseFlowForStop(record)
    this.#armUnconfirmed(record)
    void this.#dispatchShutdown(record.provider, ptyId, record.incarnationId, false).then((outcome) => {
      if (outcome === 'rejected' && record.state === 'live') {
        this.#publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      }
    })
    return true
  }

  /**
   * Stop a PTY with escalation and wait: hang up (`shutdown`); force
   * (`shutdown({ immediate: true })`) when the hang-up is rejected, or when `stop.forceAfterMs`
   * passed without the process proven gone; then verify absence — an authoritative listing
   * without the incarnation, or `probeLiveness === false`, or (when the host has no evidence
   * either way) the provider's own exit report. `true` only when verified before the deadline;
   * `false` on any doubt. Verified without a provider exit ⇒ the controller publishes the exit
   * itself (code 0, `operator_close`). An unknown id is `false`; an already exited one is `true`
   * (for the last `EXITED_PTY_RECORDS_KEPT` exited PTYs; older ones are forgotten, hence unknown).
   */
  async stopAndWait(ptyId: string, options: PtyStopAndWaitOptions = {}): Promise<boolean> {
    this.#assertUsable('stopAndWait')
    const deadlineMs = options.deadlineMs ?? this.#options.stop.defaultDeadlineMs
    assertNonNegativeNumber('option', 'deadlineMs', deadlineMs)
    const record = this.#records.get(ptyId)
    if (record === undefined) return false
    return this.#stopAndVerify(record, deadlineMs)
  }

  /**
   * Retire a PTY the caller spawned and then rejected. `incarnationId` names the rejected
   * incarnation: a same-id respawn since then is left alone. Confirmed ⇒ the PTY is settled as an
   * operator close (exit code 0 if none was published) and liveness `exited`; not confirmed ⇒
   * liveness `unverifiable` and, if still live, an exit `stop_unverified`.
   */
  retireRejectedPty(ptyId: string, stopConfirmed: boolean, incarnationId: PtyIncarnationId | undefined): void {
    this.#assertUsable('retireRejectedPty')
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state === 'exited') return
    if (incarnationId !== undefined && record.incarnationId !== undefined && incarnationId !== record.incarnationId) return
    record.stopRequested = true
    if (stopConfirmed) {
      this.#settleVerifiedStop(record)
    } else if (record.state === 'live') {
      this.#publishUnverified(record, PTY_LIVENESS_REASONS.retireUnconfirmed)
    } else {
      this.#setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.retireUnconfirmed })
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  /**
   * Three-valued existence: `true` for a live PTY (the provider's `hasPty` overrides when it
   * answers), `false` for one whose exit was proven, `null` for an unverified stop. For an id the
   * controller does not track, the providers are asked: any `true` ⇒ `true`, all `false` ⇒
   * `false`, otherwise `null`.
   */
  hasPty(ptyId: string): boolean | null {
    this.#assertUsable('hasPty')
    const record = this.#records.get(ptyId)
    if (record !== undefined) {
      if (record.state === 'exited') return false
      if (record.state === 'unverified') return null
      // Why: a provider without hasPty leaves the controller's own record (live) as the answer; a
      // provider that answers null, or throws, cannot tell — and that doubt is passed on, never
      // rounded up to "live".
      if (record.provider.hasPty === undefined) return true
      const answer = this.#safeSync(record.provider, ptyId, 'hasPty', () => record.provider.hasPty?.(ptyId))
      return typeof answer === 'boolean' ? answer : null
    }
    return this.#askAllSync(ptyId)
  }

  /**
   * Whether the PTY's process is alive: `false` only when proven absent (an observed exit, or the
   * owning provider's probe), `null` when unknown — including every provider error. A probe that
   * answers for a PTY whose stop was unverified updates its liveness (`exited` or `live`).
   */
  async probePtyLiveness(ptyId: string): Promise<boolean | null> {
    this.#assertUsable('probePtyLiveness')
    const record = this.#records.get(ptyId)
    if (record === undefined) {
      const answers = await Promise.all(
        [...this.#uniqueProviders()].map((provider) => this.#probe(provider, ptyId)),
      )
      return combineAnswers(answers)
    }
    if (record.state === 'exited') return false
    const answer = await this.#probe(record.provider, ptyId)
    if (record.state === 'unverified' && this.#records.get(ptyId) === record) {
      if (answer === false) this.#confirmDeath(record)
      else if (answer === true) this.#setLiveness(record, { kind: 'live' })
    }
    // Re-read: the probe may have confirmed the death above.
    return (record.state as PtyRecord['state']) === 'exited' ? false : answer
  }

  /**
   * List PTYs on one host, or on every host when `hostId` is omitted (hosts that fail or time out
   * are left out and reported on `error`; use {@link PtyController.listProcessesWithHostScope} to
   * know which hosts answered). Every row is stamped with its host id.
   *
   * A single host that fails or times out rejects the call with a `listing_failed`
   * {@link PtyControllerError}: an unreachable host is unknown, and an empty list would read as
   * "nothing runs there".
   *
   * @throws TypeError when `hostId` names no registered provider.
   */
  async listProcesses(hostId?: ExecutionHostId, options: PtyListOptions = {}): Promise<PtyProcessInfo[]> {
    this.#assertUsable('listProcesses')
    if (hostId !== undefined) {
      const provider = this.#options.providers.get(hostId)
      if (provider === undefined) {
        throw new TypeError(`Expected the \`hostId\` argument to name a registered host, got ${describeValue(hostId)}`)
      }
      const rows = await this.#listHost(hostId, provider, options)
      if (rows === null) {
        throw new PtyControllerError('listing_failed', `Host ${hostId} did not answer the process listing`)
      }
      return rows
    }
    return (await this.listProcessesWithHostScope(options)).processes
  }

  /**
   * List every host's PTYs and say which hosts answered: an id missing from `processes` is
   * absent only if its host is in `hostIds`.
   */
  async listProcessesWithHostScope(options: PtyListOptions = {}): Promise<PtyHostScopedListing> {
    this.#assertUsable('listProcessesWithHostScope')
    const hosts = [...this.#options.providers.entries()]
    const answers = await Promise.all(hosts.map(([hostId, provider]) => this.#listHost(hostId, provider, options)))
    const processes: PtyProcessInfo[] = []
    const hostIds: ExecutionHostId[] = []
    answers.forEach((rows, index) => {
      const host = hosts[index]
      if (rows === null || host === undefined) return
      hostIds.push(host[0])
      processes.push(...rows)
    })
    return { processes, hostIds }
  }

  /** The PTY's working directory; `null` when unknown, ended, unreadable (or `''`), or on error. */
  async getCwd(ptyId: string): Promise<string | null> {
    this.#assertUsable('getCwd')
    const cwd = await this.#askLive(ptyId, 'getCwd', (provider) => provider.getCwd?.(ptyId))
    return typeof cwd === 'string' && cwd.length > 0 ? cwd : null
  }

  /** The PTY's foreground process name; `null` when unknown, ended, unreadable or on error. */
  async getForegroundProcess(ptyId: string): Promise<string | null> {
    this.#assertUsable('getForegroundProcess')
    const name = await this.#askLive(ptyId, 'getForegroundProcess', (provider) => provider.getForegroundProcess?.(ptyId))
    return typeof name === 'string' ? name : null
  }

  /** Whether the shell has child processes; `null` when unknown, ended, unreadable or on error. */
  async hasChildProcesses(ptyId: string): Promise<boolean | null> {
    this.#assertUsable('hasChildProcesses')
    const answer = await this.#askLive(ptyId, 'hasChildProcesses', (provider) => provider.hasChildProcesses?.(ptyId))
    return typeof answer === 'boolean' ? answer : null
  }

  /**
   * Foreground process and children in one call. `unavailable` when the PTY is unknown, not live,
   * or not the `expectedIncarnationId`.
   */
  async inspectProcess(ptyId: string, options: PtyInspectOptions = {}): Promise<PtyProcessInspection> {
    this.#assertUsable('inspectProcess')
    const record = this.#records.get(ptyId)
    const expected = options.expectedIncarnationId
    if (
      record === undefined ||
      record.state !== 'live' ||
      (expected !== undefined && expected !== record.incarnationId)
    ) {
      return { foregroundProcess: null, hasChildProcesses: null, unavailable: true }
    }
    const [foregroundProcess, hasChildProcesses] = await Promise.all([
      this.getForegroundProcess(ptyId),
      options.scanChildProcesses === true ? this.hasChildProcesses(ptyId) : null,
    ])
    return { foregroundProcess, hasChildProcesses }
  }

  /** Clear the provider's buffered screen of a live PTY; nothing for unknown or ended ones. */
  async clearBuffer(ptyId: string): Promise<void> {
    this.#assertUsable('clearBuffer')
    await this.#askLive(ptyId, 'clearBuffer', (provider) => provider.clearBuffer?.(ptyId))
  }

  /** The provider-owned screen snapshot of a live PTY; `null` when it keeps none or on error. */
  async serializeProviderBuffer(
    ptyId: string,
    options: { scrollbackRows?: number } = {},
  ): Promise<PtyProviderBufferSnapshot | null> {
    this.#assertUsable('serializeProviderBuffer')
    const snapshot = await this.#askLive(ptyId, 'getBufferSnapshot', (provider) =>
      provider.getBufferSnapshot?.(ptyId, options),
    )
    return snapshot ?? null
  }

  // ---------------------------------------------------------------------------------------------
  // Foreground evidence, input modes, renderer snapshots, slot adoption (logic in their modules)

  /** The foreground process name **confirmed** by the owning provider; `null` when it cannot be confirmed. */
  async confirmForegroundProcess(ptyId: string): Promise<string | null> {
    this.#assertUsable('confirmForegroundProcess')
    return (await this.#confirmForeground(ptyId))?.foregroundProcess ?? null
  }

  /** `true` only when the provider confirmed the shell is in the foreground; `false` otherwise, also on doubt. */
  async confirmShellForeground(ptyId: string): Promise<boolean> {
    this.#assertUsable('confirmShellForeground')
    return (await this.#confirmForeground(ptyId))?.shellForeground === true
  }

  /**
   * Whether a host (default `'local'`) can give foreground evidence at all; `false` for a host
   * with no provider.
   */
  async supportsForegroundProcessEvidence(hostId: ExecutionHostId = 'local'): Promise<boolean> {
    this.#assertUsable('supportsForegroundProcessEvidence')
    const provider = this.#options.providers.get(hostId)
    return provider !== undefined && providerSupportsForegroundEvidence(provider)
  }

  /**
   * Restore the default input modes of a live PTY's view: emits `inputModesReset` with
   * {@link INPUT_MODE_RESET_SEQUENCE} for the view to paint (it is not PTY output, so it takes no
   * `seq`), then lets the provider reset its own screen model (`resetInputModes`), if it keeps
   * one. Nothing is written to the process. Nothing for an unknown or ended PTY.
   */
  async resetInputModes(ptyId: string): Promise<void> {
    this.#assertUsable('resetInputModes')
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return
    this.#emit('inputModesReset', { ptyId, ...incarnationField(record.incarnationId), data: INPUT_MODE_RESET_SEQUENCE })
    await this.#askLive(ptyId, 'resetInputModes', (provider) => provider.resetInputModes?.(ptyId))
  }

  /**
   * The snapshot a re-attaching view paints: the registered renderer's, else the provider's
   * (`serializeProviderBuffer`); `null` when neither can. Paint it, then follow `data` events
   * from its `seq`.
   */
  async serializeBuffer(ptyId: string, options: { scrollbackRows?: number } = {}): Promise<PtyBufferSerialization | null> {
    this.#assertUsable('serializeBuffer')
    return serializeBufferFor(
      this.#renderers.serializer(ptyId),
      options,
      () => this.serializeProviderBuffer(ptyId, options),
      (error) => this.#report('provider_threw', 'A renderer serializer threw', error, ptyId),
    )
  }

  /** Register the view holding the PTY's authoritative screen; a newer registration replaces it. */
  registerRendererSerializer(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable {
    this.#assertUsable('registerRendererSerializer')
    assertPtyId(ptyId)
    if (typeof serializer !== 'function') {
      throw new TypeError(`Expected the \`serializer\` argument to be a function, got ${describeValue(serializer)}`)
    }
    return this.#renderers.register(ptyId, serializer)
  }

  /** Whether a renderer serializer is registered for the PTY now. */
  hasRendererSerializer(ptyId: string): boolean {
    this.#assertUsable('hasRendererSerializer')
    return this.#renderers.has(ptyId)
  }

  /** The generation of the PTY's latest renderer registration; `0` before any. */
  getRendererSerializerGeneration(ptyId: string): number {
    this.#assertUsable('getRendererSerializerGeneration')
    return this.#renderers.generation(ptyId)
  }

  /**
   * `true` once a renderer with a generation above `afterGeneration` is registered; `false` when
   * `timeoutMs` (default {@link RENDERER_SERIALIZER_WAIT_DEFAULT_MS}) passes, `signal` aborts or
   * the controller is disposed.
   */
  async waitForRendererSerializer(
    ptyId: string,
    afterGeneration: number,
    timeoutMs: number = RENDERER_SERIALIZER_WAIT_DEFAULT_MS,
    signal?: AbortSignal,
  ): Promise<boolean> {
    this.#assertUsable('waitForRendererSerializer')
    assertNonNegativeNumber('argument', 'afterGeneration', afterGeneration)
    assertNonNegativeNumber('argument', 'timeoutMs', timeoutMs)
    return this.#renderers.wait(ptyId, afterGeneration, timeoutMs, signal)
  }

  /**
   * Reserve creating the slot's PTY. Spawns and adoptions of the slot by others wait until the
   * release; the holder passes it as `slotCreateClaim` to run inside it. Claims of one slot take
   * turns in order. Release it (once is enough) or the slot stays blocked.
   */
  claimSlotCreate(slot: PtySlot): PtySlotCreateRelease {
    this.#assertUsable('claimSlotCreate')
    assertSlot('`slot` argument', slot)
    return this.#slotGate.claim(slot)
  }

  /**
   * Adopt the slot's live owner (from the controller's records, or attach-only through its
   * provider: `materialized`), or `null` when it has none. Never spawns. Takes its turn with the
   * slot's spawns and claims.
   */
  async adoptSlot(options: PtyAdoptSlotOptions): Promise<PtySlotAdoption | null> {
    this.#assertUsable('adoptSlot')
    const slot = options?.slot
    assertSlot('`slot` option', slot)
    return this.#slotGate.run(slot, options.slotCreateClaim, () =>
      adoptSlotOwner(
        {
          store: this.#options.store,
          liveReply: (ptyId) => this.#liveReply(ptyId),
          attach: (ptyId, owner) => this.attach(ptyId, { hostId: owner.hostId }),
          bindSlot: (ptyId, boundSlot) => {
            const record = this.#records.get(ptyId)
            if (record !== undefined) record.slot = boundSlot
          },
        },
        slot,
      ),
    )
  }

  #liveReply(ptyId: string): PtySpawnReply | null {
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    return {
      id: record.ptyId,
      ...(record.pid === undefined ? {} : { pid: record.pid }),
      ...incarnationField(record.incarnationId),
      hostId: record.hostId,
      isReattach: true,
    }
  }

  async #confirmForeground(ptyId: string) {
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    return confirmForegroundOf(record.provider, ptyId, (error) => this.#reportThrow(record.provider, 'confirmForeground', error, ptyId))
  }

  #reportThrow(provider: PtyProvider, what: string, error: unknown, ptyId?: string): void {
    this.#report('provider_threw', `Provider ${provider.name} threw from ${what}`, error, ptyId)
  }

  /**
   * What the controller knows to be live, from its own records (which see every spawn and exit
   * it published). PTYs whose stop was unverified stay in `allLivePtyIds` (they may be alive) and
   * are listed in `exitingPtyIds`, with PTYs being stopped. `queriedHostIds` is every registered host.
   */
  inventory(scopeId?: string): PtyControllerInventory {
    this.#assertUsable('inventory')
    const livePtyIds = new Set<string>()
    const allLivePtyIds = new Set<string>()
    const exitingPtyIds = new Set<string>()
    const terminalIdentityByPtyId = new Map<string, PtyControllerTerminalIdentity>()
    for (const record of this.#records.values()) {
      if (record.state === 'exited') continue
      allLivePtyIds.add(record.ptyId)
      if (scopeId === undefined || record.scopeId === scopeId) livePtyIds.add(record.ptyId)
      if (record.stopRequested || record.state === 'unverified') exitingPtyIds.add(record.ptyId)
      terminalIdentityByPtyId.set(record.ptyId, {
        hostId: record.hostId,
        ...incarnationField(record.incarnationId),
        ...(record.handle === undefined ? {} : { handle: record.handle }),
      })
    }
    return {
      livePtyIds,
      allLivePtyIds,
      terminalIdentityByPtyId,
      queriedHostIds: new Set(this.#options.providers.keys()),
      exitingPtyIds,
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Disposal

  /**
   * Stop every PTY the controller owns (operator close, each bounded by `stop.defaultDeadlineMs`;
   * a stop still unconfirmed then is published as `stop_unverified`), cancel timers, unsubscribe
   * from the providers and remove every listener (a caller's `stopAndWait` or listing still waiting
   * then gives up at once). Idempotent: later calls return the same promise.
   * Providers are not disposed — the host owns them.
   */
  dispose(): Promise<void> {
    this.#disposePromise ??= this.#runDispose()
    return this.#disposePromise
  }

  /** Same as {@link PtyController.dispose}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose()
  }

  /** Whether `dispose()` was called. */
  get disposed(): boolean {
    return this.#disposePromise !== undefined
  }

  async #runDispose(): Promise<void> {
    const owned = [...this.#records.values()].filter((record) => record.state !== 'exited' && !record.superseded)
    await Promise.all(
      owned.map((record) => this.#stopAndVerify(record, this.#options.stop.defaultDeadlineMs).catch(() => false)),
    )
    for (const record of owned) {
      if (record.state === 'live') this.#publishUnverified(record, PTY_LIVENESS_REASONS.stopUnconfirmed)
      this.#clearUnconfirmed(record)
    }
    this.#timers.clearAll()
    this.#flow?.releaseAll()
    for (const unsubscribe of this.#unsubscribes.splice(0)) {
      try {
        unsubscribe()
      } catch {
        // Why: an unsubscribe that throws must not keep the rest subscribed.
      }
    }
    this.#held.clear()
    this.#slotGate.close()
    this.removeAllListeners()
  }

  // ---------------------------------------------------------------------------------------------
  // Provider events

  #onProviderData(provider: PtyProvider, event: PtyDataEvent, allowBuffer: boolean): void {
    if (typeof event !== 'object' || event === null || typeof event.data !== 'string') return
    const record = this.#records.get(event.id)
    if (record !== undefined && record.provider === provider && incarnationMatches(record, event.incarnationId)) {
      if (record.state === 'live') {
        this.#deliverData(record, event.data)
        return
      }
      // Output attributed to the ended incarnation itself is dropped: nothing follows an exit.
      if (event.incarnationId !== undefined && event.incarnationId === record.incarnationId) return
    }
    // Output for an id whose spawn may still be in flight: hold it until the spawn publishes.
    if (allowBuffer) this.#held.hold({ kind: 'data', provider, event })
  }

  #onProviderExit(provider: PtyProvider, event: PtyExitEvent): void {
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string') return
    // Why first: the runtime's early-exit fence must see the exit before a racing spawn is admitted.
    this.#noteRuntimeExit(event.id, event.incarnationId)
    this.#routeExit(provider, event, true)
  }

  #routeExit(provider: PtyProvider, event: PtyExitEvent, allowBuffer: boolean): void {
    const record = this.#records.get(event.id)
    if (record !== undefined && record.provider === provider && incarnationMatches(record, event.incarnationId)) {
      if (record.state === 'live') {
        this.#settleProviderExit(record, event)
        return
      }
      if (record.state === 'unverified') {
        // A real exit after the controller gave up on the stop: no second `exit` event.
        if (!isUnverifiedCause(observedExitCause(event, record.hostReportsChildExitStatus))) this.#confirmDeath(record)
        return
      }
      if (event.incarnationId !== undefined && event.incarnationId === record.incarnationId) return
    }
    if (allowBuffer) this.#held.hold({ kind: 'exit', provider, event })
    // Otherwise: an exit of an older incarnation (R1), or of a PTY this controller never tracked.
  }

  /**
   * The held events of a just-published PTY: those that arrived since its spawn started (older
   * ones predate it) and are not attributed to another incarnation (those stay held for a spawn
   * that may still publish it).
   */
  #takeHeld(record: PtyRecord, since: number): HeldProviderEvent[] {
    return this.#held.take(record.provider, record.ptyId, since, (held) => incarnationMatches(record, held.event.incarnationId))
  }

  /** Deliver taken events, right after the `spawn` event, as if they arrived now. */
  #deliverHeld(events: readonly HeldProviderEvent[]): void {
    for (const entry of events) {
      if (entry.kind === 'data') this.#onProviderData(entry.provider, entry.event, false)
      else this.#routeExit(entry.provider, entry.event, false)
    }
  }

  #deliverData(record: PtyRecord, data: string): void {
    let seq: number
    const note = this.#runtime.notePtyOutput
    if (note !== undefined) {
      try {
        seq = note.call(this.#runtime, record.ptyId, data.length)
      } catch (error) {
        this.#report('bookkeeping_failed', 'The runtime threw from notePtyOutput', error, record.ptyId)
        seq = record.outputSequence + data.length
      }
    } else {
      seq = record.outputSequence + data.length
    }
    record.outputSequence = seq
    // Built without a spread: this runs per output chunk.
    const incarnationId = record.incarnationId
    this.#emit('data', incarnationId === undefined ? { ptyId: record.ptyId, data, seq } : { ptyId: record.ptyId, incarnationId, data, seq })
    // Counted after delivery; a listener that stopped the PTY has already released its flow state.
    if (this.#flow !== null && record.state === 'live' && !record.stopRequested && hasFlowControl(record.provider)) {
      this.#flow.noteOutput(record.flowTarget, data.length)
    }
  }

  #settleProviderExit(record: PtyRecord, event: PtyExitEvent): void {
    const observed = observedExitCause(event, record.hostReportsChildExitStatus)
    const verdict: PtyLivenessVerdict = isUnverifiedCause(observed)
      ? { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed }
      : { kind: 'exited' }
    this.#publishExit(record, event.code, observed, verdict)
  }

  // ---------------------------------------------------------------------------------------------
  // Exit publication

  #publishExit(record: PtyRecord, code: number, observed: TerminalExitCause, verdict: PtyLivenessVerdict): void {
    const cause = settleExitCause(observed, { stopRequested: record.stopRequested })
    this.#clearUnconfirmed(record)
    this.#flow?.release(record.flowTarget)
    this.#setState(record, verdict.kind === 'exited' ? 'exited' : 'unverified')
    this.#emit('exit', { ptyId: record.ptyId, ...incarnationField(record.incarnationId), code, cause })
    this.#setLiveness(record, verdict)
    if (verdict.kind === 'exited') this.#releaseOwnership(record)
  }

  #publishUnverified(record: PtyRecord, reason: string): void {
    if (record.state !== 'live') return
    this.#publishExit(
      record,
      UNVERIFIED_PROCESS_EXIT_CODE,
      { kind: 'unknown', reason: 'stop_unverified' },
      { kind: 'unverifiable', reason },
    )
  }

  /** Proven death of a PTY whose exit was already published as unverified. */
  #confirmDeath(record: PtyRecord): void {
    if (record.state !== 'unverified') return
    this.#clearUnconfirmed(record)
    this.#setState(record, 'exited')
    this.#setLiveness(record, { kind: 'exited' })
    this.#releaseOwnership(record)
  }

  /** A stop verified by the host: publish the exit ourselves if the provider never did. */
  #settleVerifiedStop(record: PtyRecord): void {
    if (record.state === 'live') {
      // Why code 0 through the wire resolver: the listing proves absence, not why; with the stop
      // mark the operator-close rule turns the resulting `cause_unreported` into `operator_close`.
      this.#publishExit(record, 0, exitCauseFromWire({ code: 0 }), { kind: 'exited' })
    } else {
      this.#confirmDeath(record)
    }
  }

  #setState(record: PtyRecord, state: PtyRecord['state']): void {
    record.state = state
    for (const listener of [...record.stateListeners]) listener()
    if (state === 'exited') this.#rememberExited(record)
  }

  /** Keep the record of an exited PTY, forgetting the oldest past `EXITED_PTY_RECORDS_KEPT`. */
  #rememberExited(record: PtyRecord): void {
    this.#exitedRecords.add(record)
    if (this.#exitedRecords.size <= EXITED_PTY_RECORDS_KEPT) return
    const oldest = this.#exitedRecords.values().next().value
    if (oldest === undefined) return
    this.#exitedRecords.delete(oldest)
    if (this.#records.get(oldest.ptyId) === oldest && oldest.state === 'exited') this.#records.delete(oldest.ptyId)
  }

  #setLiveness(record: PtyRecord, verdict: PtyLivenessVerdict): void {
    this.#emit('liveness', { ptyId: record.ptyId, ...incarnationField(record.incarnationId), verdict })
  }

  #releaseOwnership(record: PtyRecord): void {
    // Only the current incarnation may release the id's claim and slot; a replacement owns them now.
    if (this.#records.get(record.ptyId) !== record || record.superseded) return
    this.#forgetRuntimePty(record.ptyId)
    if (record.claimKey !== undefined) this.#releaseClaim(record.ptyId, undefined)
    if (record.slot !== undefined) {
      this.#retireSlot(record.slot, { ptyId: record.ptyId, hostId: record.hostId, ...incarnationField(record.incarnationId) })
    }
  }

  /**
   * The controller was disposed while this spawn was in flight, so nobody will ever track the PTY:
   * undo what the pipeline committed for it. A process the spawn started is stopped (no orphan) and,
   * once the stop is carried out, reported to the runtime as exited — the controller is no longer
   * subscribed, so the runtime would otherwise keep it registered forever. The claim it created and
   * the slot binding it made are released. A re-attached or adopted process was not started by this
   * spawn: it is left running (a tracked one is stopped by `dispose` itself).
   */
  #abandonCommittedSpawn(provider: PtyProvider, outcome: PtySpawnOutcome, options: PtySpawnOptions): void {
    const { result } = outcome
    if (result.isReattach === true) return
    if (outcome.claimDisposition === 'created') this.#releaseClaim(result.id, outcome.claimOwner?.generation)
    if (options.slot !== undefined && outcome.slotOwner !== undefined) this.#retireSlot(options.slot, outcome.slotOwner)
    void this.#dispatchShutdown(provider, result.id, result.incarnationId, true).then((stopped) => {
      if (stopped !== 'resolved') return
      this.#noteRuntimeExit(result.id, result.incarnationId)
      this.#forgetRuntimePty(result.id)
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
    this.#noteRuntimeExit(result.id, result.incarnationId)
    this.#forgetRuntimePty(result.id)
    if (options.slot !== undefined && outcome.slotOwner !== undefined) this.#retireSlot(options.slot, outcome.slotOwner)
    if (outcome.claimOwner !== undefined) this.#releaseClaim(result.id, outcome.claimOwner.generation)
    throw new PtySpawnError('exited_during_start', `PTY ${JSON.stringify(result.id)} exited before the spawn could publish it`, {
      ptyId: result.id,
    })
  }

  #noteRuntimeExit(ptyId: string, incarnationId: PtyIncarnationId | undefined): void {
    try {
      this.#runtime.notePtyExit?.(ptyId, incarnationId)
    } catch (error) {
      this.#report('bookkeeping_failed', 'The runtime threw from notePtyExit', error, ptyId)
    }
  }

  #forgetRuntimePty(ptyId: string): void {
    try {
      this.#runtime.forgetPty?.(ptyId)
    } catch (error) {
      this.#report('bookkeeping_failed', 'The runtime threw from forgetPty', error, ptyId)
    }
  }

  #releaseClaim(ptyId: string, generation: string | undefined): void {
    try {
      this.#options.claims.release(ptyId, generation)
    } catch (error) {
      this.#report('bookkeeping_failed', 'The claim registry threw from release', error, ptyId)
    }
  }

  #retireSlot(slot: PtySlot, expected: PtySlotOwner): void {
    try {
      void Promise.resolve(this.#options.store.retireOwner(slot, expected)).catch((error: unknown) => {
        this.#report('bookkeeping_failed', 'The slot store rejected retireOwner', error, expected.ptyId)
      })
    } catch (error) {
      this.#report('bookkeeping_failed', 'The slot store threw from retireOwner', error, expected.ptyId)
    }
  }

  /**
   * A re-attach to an incarnation whose stop went unverified proves its host still holds it: the
   * record is live again (writes are accepted, liveness `live`) and keeps its stop intent, so its
   * eventual exit is settled as an operator close and published — the one case where an
   * incarnation gets a second `exit` event, after the first one said "unverified".
   */
  #reviveIfUnverified(record: PtyRecord): void {
    if (record.state !== 'unverified') return
    this.#setState(record, 'live')
    this.#setLiveness(record, { kind: 'live' })
  }

  #supersede(record: PtyRecord): void {
    record.superseded = true
    this.#exitedRecords.delete(record)
    this.#clearUnconfirmed(record)
    // Not released: a resume is addressed by id and would reach the replacement.
    this.#flow?.forget(record.flowTarget)
  }

  // ---------------------------------------------------------------------------------------------
  // Stop machinery

  #armUnconfirmed(record: PtyRecord): void {
    if (record.unconfirmedTimer !== undefined || record.state !== 'live') return
    record.unconfirmedTimer = this.#timers.set(() => {
      record.unconfirmedTimer = undefined
      this.#publishUnverified(record, PTY_LIVENESS_REASONS.stopUnconfirmed)
    }, this.#options.stop.unconfirmedAfterMs)
  }

  /**
   * Why release flow control when a stop is requested: a paused producer holds the output that
   * must drain before the exit can be delivered, so keeping it paused would delay (or, with a
   * wedged consumer, prevent) the very confirmation the stop waits for.
   */
  #releaseFlowForStop(record: PtyRecord): void {
    this.#flow?.release(record.flowTarget)
  }

  #clearUnconfirmed(record: PtyRecord): void {
    if (record.unconfirmedTimer === undefined) return
    this.#timers.clear(record.unconfirmedTimer)
    record.unconfirmedTimer = undefined
  }

  #dispatchShutdown(
    provider: PtyProvider,
    ptyId: string,
    incarnationId: PtyIncarnationId | undefined,
    immediate: boolean,
    deadlineMs?: number,
  ): Promise<'resolved' | 'rejected'> {
    const options = {
      ...(immediate ? { immediate: true } : {}),
      ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }),
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    }
    let pending: Promise<void>
    try {
      pending = Promise.resolve(provider.shutdown(ptyId, options))
    } catch (error) {
      pending = Promise.reject(error)
    }
    return pending.then(
      () => 'resolved' as const,
      (error: unknown) => {
        this.#report('shutdown_failed', `Provider ${provider.name} could not shut down ${ptyId}`, error, ptyId)
        return 'rejected' as const
      },
    )
  }

  async #stopAndVerify(record: PtyRecord, deadlineMs: number): Promise<boolean> {
    if (record.state === 'exited') return true
    record.stopRequested = true
    this.#releaseFlowForStop(record)
    this.#armUnconfirmed(record)
    const deadlineAt = this.#clock.now() + deadlineMs
    const remaining = (): number => Math.max(0, deadlineAt - this.#clock.now())
    const deadline = this.#timers.after(deadlineMs)
    const force = this.#timers.after(Math.min(this.#options.stop.forceAfterMs, deadlineMs))
    const exited = waitForRecordState(record, 'exited')
    const exitObserved = exited.promise.then(() => 'exit' as const)
    const deadlinePassed = deadline.promise.then(() => 'deadline' as const)
    const forceDue = force.promise.then(() => 'force' as const)
    const { provider, ptyId, incarnationId } = record
    try {
      // 1. Hang up, and wait for the exit, the hang-up's answer, the force delay or the deadline.
      const first: StopEvent = await Promise.race([
        exitObserved,
        this.#dispatchShutdown(provider, ptyId, incarnationId, false, remaining()).then((outcome) =>
          outcome === 'resolved' ? ('shutdown_resolved' as const) : ('shutdown_rejected' as const),
        ),
        forceDue,
        deadlinePassed,
      ])
      if (first === 'deadline') return false
      if (first === 'exit' || first === 'shutdown_resolved') {
        const verified = await this.#verifyAbsent(record, deadlinePassed, remaining)
        if (verified === 'deadline') return false
        if (verified) return this.#finishVerifiedStop(record)
        if (first === 'shutdown_resolved') {
          // The hang-up was carried out but the process is not proven gone yet: give it the rest of
          // the graceful window before forcing (a shell may still be running its exit traps).
          const next = await Promise.race([exitObserved, forceDue, deadlinePassed])
          if (next === 'deadline') return false
          if (next === 'exit') {
            const again = await this.#verifyAbsent(record, deadlinePassed, remaining)
            if (again === 'deadline') return false
            if (again) return this.#finishVerifiedStop(record)
          }
        }
      }
      if (remaining() <= 0) return false
      // 2. Force: the hang-up failed, timed out, or did not prove the process gone.
      let forcedOutcome: 'resolved' | 'rejected' | undefined
      const second = await Promise.race([
        exitObserved,
        this.#dispatchShutdown(provider, ptyId, incarnationId, true, remaining()).then((outcome) => {
          forcedOutcome = outcome
          return 'forced' as const
        }),
        deadlinePassed,
      ])
      if (second === 'deadline') return false
      // 3. Verify absence.
      const verified = await this.#verifyAbsent(record, deadlinePassed, remaining)
      if (verified === true) return this.#finishVerifiedStop(record)
      if (forcedOutcome === 'rejected' && record.state === 'live') {
        // Neither stop could be dispatched: say so now rather than when the unconfirmed window ends.
        this.#publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      }
      return false
    } finally {
      deadline.cancel()
      force.cancel()
      exited.cancel()
    }
  }

  #finishVerifiedStop(record: PtyRecord): boolean {
    this.#settleVerifiedStop(record)
    return true
  }

  /**
   * Whether the owning host proves this incarnation gone; `'deadline'` when the deadline came
   * first. When the host has no evidence either way, the provider's own exit report (R6: an
   * observed exit certifies the death) decides; a host that still sees the PTY always wins over it.
   */
  async #verifyAbsent(
    record: PtyRecord,
    deadlinePassed: Promise<'deadline'>,
    remaining: () => number,
  ): Promise<boolean | 'deadline'> {
    const verification = await verifyStop(record, deadlinePassed, remaining)
    switch (verification.kind) {
      case 'deadline':
        return 'deadline'
      case 'absent':
        return true
      case 'present':
        if (record.state === 'live') this.#setLiveness(record, { kind: 'live' })
        return false
      case 'failed':
        this.#report(
          'listing_failed',
          `Provider ${record.provider.name} could not list processes to verify a stop`,
          verification.error,
          record.ptyId,
        )
        if (record.state === 'live') {
          this.#setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.verificationFailed })
        }
        return false
      case 'no_evidence':
        return record.state === 'exited'
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  async #listHost(
    hostId: ExecutionHostId,
    provider: PtyProvider,
    options: PtyListOptions,
  ): Promise<PtyProcessInfo[] | null> {
    const deadlineMs = options.deadlineMs ?? LIST_PROCESSES_DEFAULT_DEADLINE_MS
    const deadline = this.#timers.after(deadlineMs)
    try {
      let pending: Promise<PtyProcessInfo[]>
      try {
        pending = Promise.resolve(provider.listProcesses({ deadlineMs }))
        if (options.includeForegroundProcessEvidence === true) {
          pending = pending.then((rows) =>
            Array.isArray(rows) ? withForegroundEvidence(provider, rows, (error) => this.#reportThrow(provider, 'confirmForeground', error)) : rows,
          )
        }
      } catch (error) {
        pending = Promise.reject(error)
      }
      const answer = await Promise.race([
        pending.then((rows) => ({ rows }), (error: unknown) => ({ error })),
        deadline.promise.then(() => 'deadline' as const),
      ])
      if (answer === 'deadline') {
        this.#report('listing_failed', `Host ${hostId} did not list its processes within ${deadlineMs} ms`, undefined)
        return null
      }
      if ('error' in answer || !Array.isArray(answer.rows)) {
        const cause = 'error' in answer ? answer.error : undefined
        this.#report('listing_failed', `Host ${hostId} failed to list its processes`, cause)
        return null
      }
      return answer.rows.map((row) => ({ ...row, hostId }))
    } finally {
      deadline.cancel()
    }
  }

  async #probe(provider: PtyProvider, ptyId: string): Promise<boolean | null> {
    if (provider.probeLiveness === undefined) return null
    try {
      const answer = await provider.probeLiveness(ptyId)
      return typeof answer === 'boolean' ? answer : null
    } catch {
      return null
    }
  }

  async #askLive<T>(
    ptyId: string,
    what: string,
    ask: (provider: PtyProvider) => T | Promise<T> | undefined,
  ): Promise<T | null> {
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    try {
      const answer = await ask(record.provider)
      return answer === undefined ? null : answer
    } catch (error) {
      this.#report('provider_threw', `Provider ${record.provider.name} threw from ${what}`, error, ptyId)
      return null
    }
  }

  #askAllSync(ptyId: string): boolean | null {
    const answers: (boolean | null)[] = []
    for (const provider of this.#uniqueProviders()) {
      const answer = this.#safeSync(provider, ptyId, 'hasPty', () => provider.hasPty?.(ptyId))
      answers.push(typeof answer === 'boolean' ? answer : null)
    }
    return combineAnswers(answers)
  }

  #safeSync<T>(provider: PtyProvider, ptyId: string, what: string, ask: () => T): T | undefined {
    try {
      return ask()
    } catch (error) {
      this.#report('provider_threw', `Provider ${provider.name} threw from ${what}`, error, ptyId)
      return undefined
    }
  }

  #uniqueProviders(): Set<PtyProvider> {
    return new Set(this.#options.providers.values())
  }

  #flowTarget(provider: PtyProvider, ptyId: string): PtyRecord['flowTarget'] {
    return {
      pause: () => this.#flowCall(provider, ptyId, 'pauseProducer'),
      resume: () => this.#flowCall(provider, ptyId, 'resumeProducer'),
    }
  }

  #flowCall(provider: PtyProvider, ptyId: string, method: 'pauseProducer' | 'resumeProducer'): void {
    try {
      provider[method]?.(ptyId)
    } catch (error) {
      // Why swallowed: flow control is an optimization riding the data path; it never stops delivery.
      this.#report('flow_control_failed', `Provider ${provider.name} threw from ${method}`, error, ptyId)
    }
  }

  /**
   * Emit to each listener separately, so that one that throws neither hides the event from the
   * others nor reaches the caller (a provider's callback).
   */
  #emit<E extends Exclude<keyof PtyControllerEvents, 'error'>>(
    event: E,
    payload: Parameters<PtyControllerEvents[E]>[0],
  ): void {
    for (const listener of this.rawListeners(event)) {
      try {
        ;(listener as (value: typeof payload) => void).call(this, payload)
      } catch (error) {
        this.#report('listener_threw', `A \`${event}\` listener threw`, error, payload.ptyId)
      }
    }
  }

  #report(code: PtyControllerErrorCode, message: string, cause: unknown, ptyId?: string): void {
    const error = new PtyControllerError(code, message, {
      ...(cause === undefined ? {} : { cause }),
      ...(ptyId === undefined ? {} : { ptyId }),
    })
    // With no `error` listener the fault is dropped: a bare EventEmitter would throw here and
    // crash the host over a fault the controller already survived.
    for (const listener of this.rawListeners('error')) {
      try {
        ;(listener as (value: PtyControllerError) => void).call(this, error)
      } catch {
        // An `error` listener that throws has nowhere left to report to.
      }
    }
  }

  /** Report a failure while handling a provider event: nothing ever throws back into the provider. */
  #reportProviderEventFailure(error: unknown): void {
    this.#report('provider_threw', 'The controller failed while handling a provider event', error)
  }

  #assertUsable(method: string): void {
    if (this.#disposePromise !== undefined) throw new PtyControllerDisposedError(method)
  }
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

/** A record of the same live-or-unverified process a provider just attached to. */
function isSameProcess(record: PtyRecord, provider: PtyProvider, incarnationId: PtyIncarnationId | undefined): boolean {
  return record.provider === provider && record.state !== 'exited' && record.incarnationId === incarnationId
}

function hasFlowControl(provider: PtyProvider): boolean {
  return typeof provider.pauseProducer === 'function' && typeof provider.resumeProducer === 'function'
}

function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * Create the default controller.
 *
 * @example
 * ```ts
 * const controller = createPtyController({ provider: createNodePtyProvider() })
 * controller.on('exit', ({ ptyId, cause }) => console.log(ptyId, describeTerminalExitCause(cause)))
 * const { id } = await controller.spawn({ cols: 80, rows: 24 })
 * controller.write(id, 'exit 3\r', 'driving')
 * ```
 *
 * @throws TypeError naming the option when the options are malformed (for example both or
 * neither of `provider` and `providers`).
 */
export function createPtyController(options: PtyControllerOptions): PtyController {
  return new PtyController(options)
}
