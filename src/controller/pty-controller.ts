import { EventEmitter } from 'node:events'
import type TypedEmitter from 'typed-emitter'
import {
  LOCAL_EXECUTION_HOST_ID,
  assertPtyDimension,
  isTerminalInputKind,
  refusedWrite,
  settlementFromProviderWrite,
  unverifiableWrite,
  type ExecutionHostId,
  type PtyControllerInventory,
  type PtyCwdOptions,
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
  type PtyShutdownOptions,
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
import {
  assertNonNegativeNumber,
  assertOptionsObject,
  assertPtyId,
  assertWellFormedData,
  describeThrownValue,
  describeValue,
} from './argument-validation.js'
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
import { certifiesDeath, combineAnswers, observedExitCause } from './exit-evidence.js'
import {
  EXITED_PTY_RECORDS_KEPT,
  createPtyRecord,
  eventBelongsTo,
  incarnationField,
  waitForRecordState,
  type PtyRecord,
} from './pty-record.js'
import { verifyStop } from './verify-stop.js'
import { PtyTerminalRegistry, type PtyTerminal } from './pty-terminal.js'
import { ABORTED, assertAbortSignal, raceAbort } from './abort.js'
import {
  abortOf,
  deadlineOf,
  forceDelayMs,
  resolveStopAndWaitRequest,
  shutdownOptionsFor,
  type StopAndWaitRequest,
} from './stop-and-wait.js'
import { listOneHost, resolveListingBudget, type HostListingAnswer, type ListingBudget } from './host-listing.js'
import { confirmForegroundOf, providerSupportsForegroundEvidence } from './foreground-evidence.js'
import { INPUT_MODE_RESET_SEQUENCE } from './input-mode-reset.js'
import { RENDERER_SERIALIZER_WAIT_DEFAULT_MS, RendererSerializerRegistry, serializeBufferFor } from './renderer-serializers.js'
import { SlotCreateGate, adoptSlotOwner, assertSlot } from './slot-adoption.js'

/** Default PTY size when neither the spawn options nor the provider say (the usual VT100 size). */
const DEFAULT_COLS = 80
const DEFAULT_ROWS = 24

const TypedEventEmitter = EventEmitter as new () => TypedEmitter<PtyControllerEvents>

/**
 * The default {@link RuntimePtyController}: routes each PTY to the provider of its host, runs
 * spawns through the spawn pipeline, settles exits by evidence and the operator-close rule, fences
 * by incarnation, escalates stops, applies producer flow control, and publishes typed events
 * (`spawn`, `data`, `exit`, `liveness`, `error`).
 *
 * Create it with {@link createPtyController}. After `dispose()`, only `spawn` and `attach` reject
 * (with {@link PtyControllerDisposedError}): every other call can arrive late from an async
 * callback (an ack from a renderer's write callback), so it is a harmless answer instead — writes
 * are refused `controller_disposed`, `acknowledgeData`/`clearBuffer`/`retireRejectedPty` do
 * nothing, `kill`/`resize`/`stopAndWait` answer `false`, queries answer `null` (`inspectProcess`
 * `unavailable`), listings and `inventory` have no host in scope. Malformed arguments are still
 * `TypeError`s.
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
  /** Hosts whose latest process listing answered (what `inventory().queriedHostIds` reports). */
  readonly #answeredHosts = new Set<ExecutionHostId>()
  readonly #slotGate = new SlotCreateGate()
  readonly #renderers: RendererSerializerRegistry
  #disposePromise: Promise<void> | undefined
  /** Per-terminal handles; created on first use (`spawnTerminal`, `terminal`). */
  #terminals: PtyTerminalRegistry | undefined

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
          listHostIds: () => this.#options.providers.keys(),
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
        cols: record.size.cols,
        rows: record.size.rows,
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
   * An aborted `signal` answers `false` at once; nothing is tracked then.
   */
  async attach(ptyId: string, options: PtyAttachOptions = {}): Promise<boolean> {
    this.#assertUsable('attach')
    assertPtyId(ptyId)
    assertAbortSignal(options.signal)
    if (options.signal?.aborted === true) return false
    const tracked = this.#records.get(ptyId)
    if (tracked !== undefined && tracked.state === 'live') return true
    const hostId = options.hostId ?? 'local'
    const provider = this.#options.providers.get(hostId)
    if (provider === undefined) return false
    const inFlight = this.#held.begin()
    try {
      const result = await raceAbort(Promise.resolve(provider.spawn({ sessionId: ptyId, attachOnly: true })), options.signal)
      if (result === ABORTED || result.id !== ptyId || result.exitedBeforeSpawnReply === true || this.#disposePromise !== undefined) return false
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
        cols: record.size.cols,
        rows: record.size.rows,
      })
      this.#deliverHeld(early)
      return true
    } catch {
      return false
    } finally {
      this.#held.end(inFlight.token)
    }
  }

  /**
   * {@link PtyController.spawn}, answered with a {@link PtyTerminal} handle: one object per
   * terminal, with its own events, `exited` promise, flow-controlled `output()` and
   * `Symbol.asyncDispose`. Output delivered before the handle is returned is replayed to listeners
   * and iterators that subscribe in the same turn.
   *
   * @throws what `spawn` throws.
   */
  async spawnTerminal(options: PtySpawnOptions): Promise<PtyTerminal> {
    const terminals = this.#terminalRegistry()
    const reply = await this.spawn(options)
    const terminal = terminals.handleFor(reply.id)
    if (terminal === null) throw new PtyControllerError('bookkeeping_failed', `PTY ${reply.id} was forgotten before its handle was made`)
    return terminal
  }

  /**
   * The handle of the incarnation tracked under `ptyId` (for example after `attach`): the same
   * object on every call, until the id is respawned. `null` for an id the controller does not
   * track, for an exited PTY that had no handle before its exit, and after `dispose()`.
   */
  terminal(ptyId: string): PtyTerminal | null {
    assertPtyId(ptyId)
    if (this.disposed) return null
    return this.#terminalRegistry().handleFor(ptyId)
  }

  #terminalRegistry(): PtyTerminalRegistry {
    this.#terminals ??= new PtyTerminalRegistry(this, (ptyId) => this.#records.get(ptyId))
    return this.#terminals
  }

  // ---------------------------------------------------------------------------------------------
  // Writes and size

  /**
   * Write bytes; `true` when they were handed to the provider: settled `accepted`, or handed over
   * with the settlement still pending (an asynchronous provider), as the seed origin answers. `false`
   * when the write was refused (unknown, exited, fenced PTY; disposed controller) or settled
   * `unverifiable` at once. Why `true` for a pending settlement: the bytes left, and a caller that
   * retries on `false` (as the seed origin's callers do) would type them twice. Use
   * {@link PtyController.writeWithSettlement} to learn the final outcome.
   *
   * @throws TypeError when `data` has a lone surrogate (not well-formed UTF-16), naming its index:
   * refused, never silently replaced by U+FFFD.
   */
  write(ptyId: string, data: string, inputKind: TerminalInputKind, options?: PtyWriteOptions): boolean {
    const settlement = this.writeWithSettlement(ptyId, data, inputKind, options)
    if (settlement instanceof Promise) return true
    return settlement.kind === 'accepted'
  }

  /**
   * Write bytes and settle the outcome in three values. Refused (proven no byte left) for an
   * unknown id (`pty_not_found`), an exited or unverified-stopped PTY (`pty_exited`), an
   * `expectedIncarnationId` that is not the live one (`stale_incarnation`) and a disposed
   * controller (`controller_disposed`). A provider that throws yields
   * `unverifiable('provider_threw_after_handoff', true)`; a rejected async settlement likewise.
   * A provider answer that is not a `WriteSettlement` is read as the seed origin reads an older
   * provider's boolean (`settlementFromProviderWrite`): `false` is `refused('provider_refused_write')`,
   * `true` is `accepted`, anything else `unverifiable` with `bytesHandedToTransport: true`.
   *
   * @throws TypeError when `data` is not a string or is not well-formed UTF-16: a lone surrogate
   * (`'A\uD800B'`, usually a pair split by the caller's chunking) has no UTF-8 encoding and would
   * reach the child as U+FFFD, so it is refused — naming its index — rather than sent altered.
   * Nothing is written. The same holds for {@link PtyController.write}.
   */
  writeWithSettlement(
    ptyId: string,
    data: string,
    inputKind: TerminalInputKind,
    options?: PtyWriteOptions,
  ): WriteSettlement | Promise<WriteSettlement> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options)
    if (typeof data !== 'string') {
      throw new TypeError(`Expected the \`data\` argument to be a string, got ${describeValue(data)}`)
    }
    assertWellFormedData(data)
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
    let settlement: unknown
    try {
      settlement = record.provider.write(ptyId, data)
    } catch (error) {
      this.#report('provider_threw', `Provider ${record.provider.name} threw from write`, error, ptyId)
      return unverifiableWrite('provider_threw_after_handoff', true)
    }
    if (isPromiseLike(settlement)) {
      return Promise.resolve(settlement).then(settlementFromProviderWrite, (error: unknown) => {
        this.#report('provider_threw', `Provider ${record.provider.name} rejected a write settlement`, error, ptyId)
        return unverifiableWrite('provider_threw_after_handoff', true)
      })
    }
    return settlementFromProviderWrite(settlement)
  }

  /**
   * Resize a live PTY; `false` when it is unknown, not live, or the provider refused or threw.
   *
   * @throws TypeError when `cols` or `rows` is not an integer from 1 to `MAX_PTY_DIMENSION` (65 535),
   * the limit `spawn` applies too.
   */
  resize(ptyId: string, cols: number, rows: number): boolean {
    assertPtyId(ptyId)
    assertPtyDimension('cols', cols, 'argument')
    assertPtyDimension('rows', rows, 'argument')
    if (this.disposed) return false
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
    assertPtyId(ptyId)
    if (this.disposed) return null
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
    assertPtyId(ptyId)
    assertNonNegativeNumber('argument', 'chars', chars)
    if (this.disposed) return
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
    assertPtyId(ptyId)
    if (this.disposed) return null
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
   * — never dead. A real exit of that incarnation arriving later publishes its real cause in a
   * second `exit`, then liveness `exited` (unless a re-attach revived the PTY first).
   */
  kill(ptyId: string): boolean {
    assertPtyId(ptyId)
    if (this.disposed) return false
    const record = this.#records.get(ptyId)
    if (record === undefined || record.state === 'exited') return false
    record.stopRequested = true
    this.#armUnconfirmed(record)
    void this.#dispatchShutdown(record.provider, ptyId, record.incarnationId, false).then((outcome) => {
      if (outcome === 'rejected' && record.state === 'live') {
        this.#publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
      }
    })
    // Why after the dispatch: the provider must learn of the stop before held output (and an exit
    // behind it) is released, so it can tell a death that came first (issue 13.4).
    this.#releaseFlowForStop(record)
    return true
  }

  /**
   * Stop a PTY with escalation and wait, as the seed's `stopAndWait`: hang up, force
   * (`shutdown({ immediate: true })`) within the deadline, and answer `true` only once a shutdown
   * completed and a fresh listing of the owning host (polled with `keepHistory`) verifies the
   * incarnation gone; `false` on any doubt, at the deadline, or when `signal` aborts.
   * `deadlineMs` is an absolute epoch time on the controller's clock, `timeoutMs` a duration (at
   * most one; default `stop.defaultDeadlineMs`). An id this controller does not track is asked of
   * the hosts (see the docs). Verified without a provider exit ⇒ the controller publishes the exit
   * itself (code 0, `operator_close`).
   *
   * @throws TypeError when an option is malformed (naming it).
   */
  async stopAndWait(ptyId: string, options?: PtyStopAndWaitOptions): Promise<boolean> {
    assertPtyId(ptyId)
    const request = resolveStopAndWaitRequest(options, this.#options.stop.defaultDeadlineMs, this.#clock.now())
    if (this.disposed) return false
    const record = this.#records.get(ptyId)
    if (record === undefined) return this.#stopUntracked(ptyId, request)
    return this.#stopAndVerify(record, request)
  }

  /**
   * Retire a PTY the caller spawned and then rejected. `incarnationId` names the rejected
   * incarnation: a same-id respawn since then is left alone. Confirmed ⇒ the PTY is settled as an
   * operator close (exit code 0 if none was published) and liveness `exited`; not confirmed ⇒
   * liveness `unverifiable` and, if still live, an exit `stop_unverified`.
   */
  retireRejectedPty(ptyId: string, stopConfirmed: boolean, incarnationId: PtyIncarnationId | undefined): void {
    assertPtyId(ptyId)
    if (this.disposed) return
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
   * Three-valued existence, from the owning provider: its `hasPty` answer for a live PTY (`null`
   * when the provider has no `hasPty`, answers something else, or throws — the controller's own
   * record is not evidence the process still runs), `false` for one whose exit was proven, `null`
   * for an unverified stop. For an id the controller does not track, the providers are asked: any
   * `true` ⇒ `true`, all `false` ⇒ `false`, otherwise `null`.
   */
  hasPty(ptyId: string): boolean | null {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const record = this.#records.get(ptyId)
    if (record !== undefined) {
      if (record.state === 'exited') return false
      if (record.state === 'unverified') return null
      // Why null without hasPty (the seed's rule): the provider cannot answer, and the controller's
      // record only says no exit was seen yet. A provider that answers null, or throws, cannot tell
      // either — that doubt is passed on, never rounded up to "live".
      if (record.provider.hasPty === undefined) return null
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
    assertPtyId(ptyId)
    if (this.disposed) return null
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
   * List PTYs on one host (`null` is the local host, as in the seed origin), or on every host when
   * `hostId` is omitted (see {@link PtyController.listProcessesWithHostScope}: a failed remote host
   * is left out, a failed local host rejects). Every row is stamped with its host id.
   *
   * `deadlineMs` is an absolute epoch time (`Date.now() + 5_000`), `timeoutMs` a duration (give at
   * most one; default `LIST_PROCESSES_DEFAULT_DEADLINE_MS`); a deadline already past asks once and
   * does not wait. `signal` gives up early.
   *
   * A single host that fails, times out or is aborted rejects the call with a `listing_failed`
   * {@link PtyControllerError}: an unreachable host is unknown, and an empty list would read as
   * "nothing runs there".
   *
   * @throws TypeError when `hostId` names no registered provider, or the options are malformed.
   */
  async listProcesses(hostId?: ExecutionHostId | null, options: PtyListOptions = {}): Promise<PtyProcessInfo[]> {
    assertOptionsObject('options', options)
    const budget = resolveListingBudget(options)
    if (hostId === undefined) return (await this.#listAllHosts(budget)).processes
    const host = hostId ?? LOCAL_EXECUTION_HOST_ID
    const provider = this.#options.providers.get(host)
    if (provider === undefined) {
      throw new TypeError(`Expected the \`hostId\` argument to name a registered host, got ${describeValue(hostId)}`)
    }
    if (this.disposed) {
      throw new PtyControllerError('listing_failed', `Host ${host} was not asked: the controller was disposed`)
    }
    const answer = await listOneHost(host, provider, budget, this.#timers, (error) => this.#reportThrow(provider, 'confirmForeground', error))
    this.#noteListing(host, answer)
    if (answer.kind !== 'rows') throw listingFailure(host, answer)
    return answer.rows
  }

  /**
   * List every host's PTYs and say which hosts answered: an id missing from `processes` is
   * absent only if its host is in `hostIds`. Options as for {@link PtyController.listProcesses}.
   *
   * As in the seed origin, a failed (or timed-out) listing of the **local** host rejects with a
   * `listing_failed` {@link PtyControllerError}. A failed remote host is left out of `hostIds`,
   * reported on `error`, and the liveness of each live PTY the controller tracks on it becomes
   * `unverifiable` (`host_listing_failed`). An aborted listing leaves out every host that had not
   * answered (rejecting when that includes the local host), without touching liveness.
   */
  async listProcessesWithHostScope(options: PtyListOptions = {}): Promise<PtyHostScopedListing> {
    assertOptionsObject('options', options)
    return this.#listAllHosts(resolveListingBudget(options))
  }

  async #listAllHosts(budget: ListingBudget): Promise<PtyHostScopedListing> {
    // Disposed: no host is asked, so none answered (an empty listing with no host in scope).
    if (this.disposed) return { processes: [], hostIds: [] }
    const hosts = [...this.#options.providers.entries()]
    const answers = await Promise.all(
      hosts.map(([hostId, provider]) => listOneHost(hostId, provider, budget, this.#timers, (error) => this.#reportThrow(provider, 'confirmForeground', error))),
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
      return
    }
    this.#answeredHosts.delete(hostId)
    if (answer.kind === 'failed') this.#report('listing_failed', answer.message, answer.cause)
  }

  /** A remote host failed a listing: contact with its PTYs is lost, so none of them reads as live. */
  #markHostUnverifiable(hostId: ExecutionHostId): void {
    for (const record of this.#records.values()) {
      if (record.hostId !== hostId || record.state !== 'live' || record.superseded) continue
      this.#setLiveness(record, { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.hostListingFailed })
    }
  }

  /**
   * The PTY's working directory. By default the **foreground process's** (where the program the
   * user runs now works: `cd` inside a running tool shows here); `{ of: 'leader' }` asks for the
   * shell's (the PTY's leader), as an IDE's "new terminal here" wants. `null` when unknown, ended,
   * unreadable (or `''`), or on error.
   *
   * @throws TypeError when `options.of` is neither `'foreground'` nor `'leader'`.
   */
  async getCwd(ptyId: string, options?: PtyCwdOptions): Promise<string | null> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options)
    const of = options?.of
    if (of !== undefined && of !== 'foreground' && of !== 'leader') {
      throw new TypeError(`Expected the \`of\` option to be 'foreground' or 'leader', got ${describeValue(of)}`)
    }
    if (this.disposed) return null
    const cwd = await this.#askLive(ptyId, 'getCwd', (provider) =>
      options === undefined ? provider.getCwd?.(ptyId) : provider.getCwd?.(ptyId, options),
    )
    return typeof cwd === 'string' && cwd.length > 0 ? cwd : null
  }

  /** The PTY's foreground process name; `null` when unknown, ended, unreadable or on error. */
  async getForegroundProcess(ptyId: string): Promise<string | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const name = await this.#askLive(ptyId, 'getForegroundProcess', (provider) => provider.getForegroundProcess?.(ptyId))
    return typeof name === 'string' ? name : null
  }

  /** Whether the shell has child processes; `null` when unknown, ended, unreadable or on error. */
  async hasChildProcesses(ptyId: string): Promise<boolean | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const answer = await this.#askLive(ptyId, 'hasChildProcesses', (provider) => provider.hasChildProcesses?.(ptyId))
    return typeof answer === 'boolean' ? answer : null
  }

  /**
   * Foreground process and children in one call. `unavailable` when the PTY is unknown, not live,
   * or not the `expectedIncarnationId`.
   */
  async inspectProcess(ptyId: string, options: PtyInspectOptions = {}): Promise<PtyProcessInspection> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options)
    const record = this.#records.get(ptyId)
    const expected = options.expectedIncarnationId
    if (
      this.disposed ||
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
    assertPtyId(ptyId)
    if (this.disposed) return
    await this.#askLive(ptyId, 'clearBuffer', (provider) => provider.clearBuffer?.(ptyId))
  }

  /** The provider-owned screen snapshot of a live PTY; `null` when it keeps none or on error. */
  async serializeProviderBuffer(
    ptyId: string,
    options: { scrollbackRows?: number } = {},
  ): Promise<PtyProviderBufferSnapshot | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
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
   * the reset sequence (kitty keyboard flags, the alternate screen, bracketed paste, mouse and
   * focus reporting, application cursor keys and keypad, a hidden cursor) for the view to paint (it is not PTY output, so it takes no
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
   * `timeoutMs` (default 5 000 ms) passes, `signal` aborts or
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
   * are listed in `exitingPtyIds`, with PTYs being stopped. `queriedHostIds` holds only the hosts
   * whose latest process listing (through this controller) answered — empty before any listing —
   * so an id is never read as proven absent on a host nobody heard from.
   */
  inventory(scopeId?: string): PtyControllerInventory {
    const livePtyIds = new Set<string>()
    const allLivePtyIds = new Set<string>()
    const exitingPtyIds = new Set<string>()
    const terminalIdentityByPtyId = new Map<string, PtyControllerTerminalIdentity>()
    // Disposed: the controller owns nothing any more and asks no host.
    for (const record of this.disposed ? [] : this.#records.values()) {
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
      queriedHostIds: new Set(this.disposed ? [] : this.#answeredHosts),
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
      owned.map((record) =>
        this.#stopAndVerify(record, { deadlineAt: this.#clock.now() + this.#options.stop.defaultDeadlineMs }).catch(() => false),
      ),
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
    if (record !== undefined && record.provider === provider && eventBelongsTo(record, event.incarnationId)) {
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
    if (record !== undefined && record.provider === provider && eventBelongsTo(record, event.incarnationId)) {
      if (record.state === 'live') {
        this.#settleProviderExit(record, event)
        return
      }
      if (record.state === 'unverified') {
        // A real exit after the controller gave up on the stop: its real cause is published (a
        // second `exit`, after the synthetic `stop_unverified`), and the death confirmed.
        if (certifiesDeath(event, record.hostReportsChildExitStatus)) {
          this.#emitExit(record, event.code, observedExitCause(event, record.hostReportsChildExitStatus), event)
          this.#confirmDeath(record)
        }
        return
      }
      if (event.incarnationId !== undefined && event.incarnationId === record.incarnationId) return
    }
    if (allowBuffer) this.#held.hold({ kind: 'exit', provider, event })
    // Otherwise: an exit of an older incarnation (R1), or of a PTY this controller never tracked.
  }

  /**
   * The held events of a just-published PTY: those that arrived since its spawn started (older
   * ones predate it) and belong to its incarnation (`eventBelongsTo`: an event naming another
   * incarnation, or none once the incarnation is known, stays held for a spawn that may publish it).
   */
  #takeHeld(record: PtyRecord, since: number): HeldProviderEvent[] {
    return this.#held.take(record.provider, record.ptyId, since, (held) => eventBelongsTo(record, held.event.incarnationId))
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
    // Counted before delivery, so a listener that acknowledges the chunk it is handed is credited
    // for it; a listener that stops the PTY releases this count again.
    if (this.#flow !== null && record.state === 'live' && !record.stopRequested && hasFlowControl(record.provider)) {
      this.#flow.noteOutput(record.flowTarget, data.length)
    }
    // Built without a spread: this runs per output chunk.
    const incarnationId = record.incarnationId
    this.#emit('data', incarnationId === undefined ? { ptyId: record.ptyId, data, seq } : { ptyId: record.ptyId, incarnationId, data, seq })
  }

  #settleProviderExit(record: PtyRecord, event: PtyExitEvent): void {
    const observed = observedExitCause(event, record.hostReportsChildExitStatus)
    const verdict: PtyLivenessVerdict = certifiesDeath(event, record.hostReportsChildExitStatus)
      ? { kind: 'exited' }
      : { kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed }
    this.#publishExit(record, event.code, observed, verdict, event)
  }

  // ---------------------------------------------------------------------------------------------
  // Exit publication

  #publishExit(record: PtyRecord, code: number, observed: TerminalExitCause, verdict: PtyLivenessVerdict, event?: PtyExitEvent): void {
    this.#clearUnconfirmed(record)
    this.#flow?.release(record.flowTarget)
    this.#setState(record, verdict.kind === 'exited' ? 'exited' : 'unverified')
    this.#emitExit(record, code, observed, event)
    this.#setLiveness(record, verdict)
    if (verdict.kind === 'exited') this.#releaseOwnership(record)
  }

  /**
   * Emit `exit` with the cause settled by the operator-close rule. The rule applies to a stop
   * requested while the process lived: a provider that knew it dead before the stop request
   * (`diedBeforeStopRequest`) keeps its own cause (issue 13.4).
   */
  #emitExit(record: PtyRecord, code: number, observed: TerminalExitCause, event?: PtyExitEvent): void {
    const stopRequested = record.stopRequested && event?.diedBeforeStopRequest !== true
    const cause = settleExitCause(observed, { stopRequested })
    this.#emit('exit', { ptyId: record.ptyId, ...incarnationField(record.incarnationId), code, cause })
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
    stepOptions?: PtyShutdownOptions,
  ): Promise<'resolved' | 'rejected'> {
    const options = stepOptions ?? {
      ...(immediate ? { immediate: true } : {}),
      ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }),
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

  /**
   * The stop behind `stopAndWait` and `dispose`: hang up, force within the deadline, and answer
   * `true` only once a dispatched shutdown has **completed** (the provider's stop covers more than
   * the leader) and a fresh listing of the owning host verifies the incarnation gone.
   */
  async #stopAndVerify(record: PtyRecord, request: StopAndWaitRequest): Promise<boolean> {
    if (record.state === 'exited') return true
    record.stopRequested = true
    this.#armUnconfirmed(record)
    const remaining = (): number => Math.max(0, request.deadlineAt - this.#clock.now())
    const deadline = deadlineOf(this.#timers, this.#clock, request.deadlineAt, () => this.disposed)
    const aborted = abortOf(request.signal)
    const force = this.#timers.after(forceDelayMs(this.#options.stop.forceAfterMs, remaining()))
    const exited = waitForRecordState(record, 'exited')
    // Why one promise for both: an aborted wait gives up exactly like a passed deadline.
    const deadlinePassed = Promise.race([deadline.promise, aborted.promise.then(() => 'deadline' as const)])
    const exitObserved = exited.promise.then(() => 'exit' as const)
    const forceDue = force.promise.then(() => 'force' as const)
    const { provider, ptyId, incarnationId } = record
    const dispatch = (immediate: boolean): Promise<'shutdown_resolved' | 'shutdown_rejected'> =>
      this.#dispatchShutdown(provider, ptyId, incarnationId, immediate, shutdownOptionsFor(immediate, incarnationId, remaining(), request.keepHistory)).then(
        (outcome) => (outcome === 'resolved' ? ('shutdown_resolved' as const) : ('shutdown_rejected' as const)),
      )
    const verify = (): Promise<boolean | 'deadline'> => this.#verifyAbsent(record, deadlinePassed, remaining, request.keepHistory === true)
    try {
      // 1. Hang up. The answer that counts is the shutdown's own: an exit of the leader alone does
      //    not prove the rest of what the stop covers gone (a setsid child ignoring HUP).
      const hangUp = dispatch(false)
      // After the dispatch, as in `kill`: the provider learns of the stop before held output is released.
      this.#releaseFlowForStop(record)
      const first = await Promise.race([hangUp, forceDue, deadlinePassed])
      if (first === 'deadline') return false
      if (first === 'shutdown_resolved') {
        const verified = await verify()
        if (verified === 'deadline') return false
        if (verified) return this.#finishVerifiedStop(record)
        // Carried out but not proven gone yet: give it the rest of the graceful window.
        const next = await Promise.race([exitObserved, forceDue, deadlinePassed])
        if (next === 'deadline') return false
        if (next === 'exit') {
          const again = await verify()
          if (again === 'deadline') return false
          if (again) return this.#finishVerifiedStop(record)
        }
      }
      if (remaining() <= 0) return false
      // 2. Force (immediate): the hang-up failed, is still running at the force delay, or did not prove the process gone.
      const forced = await Promise.race([dispatch(true), deadlinePassed])
      if (forced === 'deadline') return false
      if (forced === 'shutdown_rejected') {
        // Neither stop completed: say so now rather than when the unconfirmed window ends.
        if (record.state === 'live') this.#publishUnverified(record, PTY_LIVENESS_REASONS.shutdownFailed)
        return false
      }
      // 3. Verify absence.
      const verified = await verify()
      return verified === true ? this.#finishVerifiedStop(record) : false
    } finally {
      deadline.cancel()
      aborted.cancel()
      force.cancel()
      exited.cancel()
    }
  }

  /**
   * `stopAndWait` for an id this controller does not track: ask the hosts. The host that lists the
   * id (or says `hasPty` true) owns it and is stopped and verified like a tracked PTY's; no host
   * claiming it, and every host proving it absent, is `true`; any doubt is `false`.
   */
  async #stopUntracked(ptyId: string, request: StopAndWaitRequest): Promise<boolean> {
    const remaining = (): number => Math.max(0, request.deadlineAt - this.#clock.now())
    const deadline = deadlineOf(this.#timers, this.#clock, request.deadlineAt, () => this.disposed)
    const aborted = abortOf(request.signal)
    const deadlinePassed = Promise.race([deadline.promise, aborted.promise.then(() => 'deadline' as const)])
    const timing = { deadlinePassed, remainingMs: remaining, sleep: (ms: number) => this.#timers.after(ms).promise }
    try {
      const hosts = [...this.#options.providers.values()]
      const answers = await Promise.all(hosts.map((provider) => verifyStop({ provider, ptyId, incarnationId: undefined }, timing)))
      if (answers.some((answer) => answer.kind === 'deadline')) return false
      const owner = hosts.find((provider, index) => answers[index]?.kind === 'present' || this.#safeHas(provider, ptyId) === true)
      if (owner === undefined) return answers.every((answer) => answer.kind === 'absent')
      const stopped = await Promise.race([
        this.#dispatchShutdown(owner, ptyId, undefined, true, shutdownOptionsFor(true, undefined, remaining(), request.keepHistory)),
        deadlinePassed,
      ])
      if (stopped !== 'resolved') return false
      const verified = await verifyStop({ provider: owner, ptyId, incarnationId: undefined }, timing, request.keepHistory === true)
      return verified.kind === 'absent'
    } finally {
      deadline.cancel()
      aborted.cancel()
    }
  }

  #safeHas(provider: PtyProvider, ptyId: string): boolean | null {
    try {
      const answer = provider.hasPty?.(ptyId)
      return typeof answer === 'boolean' ? answer : null
    } catch {
      return null
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
    keepHistory: boolean,
  ): Promise<boolean | 'deadline'> {
    const timing = { deadlinePassed, remainingMs: remaining, sleep: (ms: number) => this.#timers.after(ms).promise }
    const verification = await verifyStop(record, timing, keepHistory)
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
      notAcknowledging: () =>
        this.#report(
          'consumer_not_acknowledging',
          `PTY ${ptyId}'s producer was paused for the maximum hold without its consumer acknowledging; ` +
            'the unacknowledged output was forgiven and the producer resumed',
          undefined,
          ptyId,
        ),
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
        this.#report('listener_threw', `A \`${event}\` listener threw ${describeThrownValue(error)}`, error, payload.ptyId)
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

/** The `listing_failed` error for a host that did not answer a listing the caller needs. */
function listingFailure(hostId: ExecutionHostId, answer: Exclude<HostListingAnswer, { kind: 'rows' }>): PtyControllerError {
  if (answer.kind === 'aborted') return new PtyControllerError('listing_failed', `The listing of host ${hostId} was aborted`)
  return new PtyControllerError('listing_failed', answer.message, answer.cause === undefined ? {} : { cause: answer.cause })
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
