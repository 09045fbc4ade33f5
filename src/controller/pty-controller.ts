import { EventEmitter } from 'node:events'
import type TypedEmitter from 'typed-emitter'
import {
  LOCAL_EXECUTION_HOST_ID,
  assertPtyDimension,
  type ExecutionHostId,
  type PtyAdoptSlotOptions,
  type PtyBufferSerialization,
  type PtyControllerInventory,
  type PtyCwdOptions,
  type PtyDisposable,
  type PtyHostScopedListing,
  type PtyIncarnationId,
  type PtyListOptions,
  type PtyProcessInfo,
  type PtyProcessInspection,
  type PtyProviderBufferSnapshot,
  type PtyRendererSerializer,
  type PtySize,
  type PtySlot,
  type PtySlotAdoption,
  type PtySlotCreateRelease,
  type PtySpawnOptions,
  type PtySpawnReply,
  type PtyStopAndWaitOptions,
  type RuntimePtyController,
  type TerminalInputKind,
  type WriteSettlement,
} from '../contracts/index.js'
import { assertAbortSignal } from './abort.js'
import {
  assertCwdOf,
  assertNonNegativeNumber,
  assertOptionsObject,
  assertPtyId,
  assertWriteArguments,
  describeValue,
} from './argument-validation.js'
import { Bookkeeping } from './bookkeeping.js'
import type { ControllerCore, ControllerReport } from './controller-core.js'
import { resolvePtyControllerOptions, type PtyControllerOptions } from './controller-options.js'
import { ControllerTimers } from './controller-timers.js'
import type { PtyAttachOptions, PtyInspectOptions, PtyWriteOptions } from './controller-types.js'
import { PtyControllerDisposedError, PtyControllerError } from './pty-controller-error.js'
import { emitToEachListener, reportToErrorListeners } from './event-dispatch.js'
import type { PtyControllerEvents } from './events.js'
import { ExitPublication } from './exit-publication.js'
import { ProducerFlowControl, type ProducerFlowState } from './flow-control.js'
import { providerSupportsForegroundEvidence } from './foreground-evidence.js'
import { resolveListingBudget } from './host-listing.js'
import { INPUT_MODE_RESET_SEQUENCE } from './input-mode-reset.js'
import { OutputDelivery } from './output-delivery.js'
import { ProcessListings } from './process-listings.js'
import { ProviderIntake } from './provider-intake.js'
import { ProviderQueries } from './provider-queries.js'
import { PtyInput } from './pty-input.js'
import { incarnationField } from './pty-record.js'
import { PtyRecordTable } from './pty-record-table.js'
import { PtyTerminalRegistry, type PtyTerminal } from './pty-terminal.js'
import { RENDERER_SERIALIZER_WAIT_DEFAULT_MS, RendererSerializerRegistry, serializeBufferFor } from './renderer-serializers.js'
import { SlotCreateGate, adoptSlotOwner, assertSlot } from './slot-adoption.js'
import { SpawnPublication } from './spawn-publication.js'
import { resolveStopAndWaitRequest } from './stop-and-wait.js'
import { stopUntracked } from './stop-untracked.js'
import { Stopping } from './stopping.js'

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
// Why a facade: each method checks its arguments, finds the record or host, and delegates to the
// module that owns the behaviour (see the module map in docs/controller.md).
export class PtyController extends TypedEventEmitter implements RuntimePtyController, AsyncDisposable {
  readonly #core: ControllerCore
  readonly #output: OutputDelivery
  readonly #exits: ExitPublication
  readonly #intake: ProviderIntake
  readonly #stopping: Stopping
  readonly #spawns: SpawnPublication
  readonly #input: PtyInput
  readonly #queries: ProviderQueries
  readonly #listings: ProcessListings
  readonly #slotGate = new SlotCreateGate()
  readonly #renderers: RendererSerializerRegistry
  #disposePromise: Promise<void> | undefined
  /** Per-terminal handles; created on first use (`spawnTerminal`, `terminal`). */
  #terminals: PtyTerminalRegistry | undefined

  /** Create a controller; prefer {@link createPtyController}. Throws a `TypeError` on bad options. */
  constructor(options: PtyControllerOptions) {
    super()
    const resolved = resolvePtyControllerOptions(options)
    const report: ControllerReport = (code, message, cause, ptyId) => reportToErrorListeners(this, code, message, cause, ptyId)
    const core: ControllerCore = {
      options: resolved,
      clock: resolved.clock,
      runtime: resolved.runtime,
      timers: new ControllerTimers(resolved.clock, (error) => report('provider_threw', 'The controller failed inside a timer', error)),
      flow: resolved.flowControl === null ? null : new ProducerFlowControl(resolved.flowControl, resolved.clock),
      records: new PtyRecordTable(),
      emit: (event, payload) => emitToEachListener(this, event, payload, report),
      report,
      disposed: () => this.#disposePromise !== undefined,
    }
    this.#core = core
    const bookkeeping = new Bookkeeping(core)
    this.#output = new OutputDelivery(core)
    this.#exits = new ExitPublication(core, bookkeeping, this.#output)
    this.#intake = new ProviderIntake(core, this.#output, this.#exits, bookkeeping)
    this.#stopping = new Stopping(core, this.#exits, this.#output)
    this.#spawns = new SpawnPublication(core, this.#intake, this.#exits, this.#output, this.#stopping, bookkeeping)
    this.#input = new PtyInput(core)
    this.#queries = new ProviderQueries(core, this.#exits)
    this.#listings = new ProcessListings(core, this.#exits)
    this.#renderers = new RendererSerializerRegistry((ms) => core.timers.after(ms))
    this.#intake.subscribe()
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
    if (options.slot !== undefined) return this.#slotGate.run(options.slot, options.slotCreateClaim, () => this.#spawns.spawn(options))
    return this.#spawns.spawn(options)
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
    const tracked = this.#core.records.get(ptyId)
    if (tracked !== undefined && tracked.state === 'live') return true
    const hostId = options.hostId ?? 'local'
    const provider = this.#core.options.providers.get(hostId)
    if (provider === undefined) return false
    return this.#spawns.attach(ptyId, hostId, provider, options.signal)
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
    this.#terminals ??= new PtyTerminalRegistry(this, (ptyId) => this.#core.records.get(ptyId))
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
    assertWriteArguments(data, inputKind)
    return this.#input.write(ptyId, data, options?.expectedIncarnationId)
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
    return !this.disposed && this.#input.resize(ptyId, cols, rows)
  }

  /** The size the provider reads back, else the size last applied; `null` for unknown or ended PTYs. */
  getSize(ptyId: string): PtySize | null {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#input.getSize(ptyId)
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
    const record = this.#core.records.get(ptyId)
    if (record !== undefined && record.state === 'live') this.#output.acknowledge(record, chars)
  }

  /** The flow-control state of a PTY (unacknowledged chars, paused, since when); for inspection. */
  getFlowControlState(ptyId: string): ProducerFlowState | null {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const record = this.#core.records.get(ptyId)
    return record === undefined ? null : this.#output.state(record)
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
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state === 'exited') return false
    this.#stopping.kill(record)
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
    const request = resolveStopAndWaitRequest(options, this.#core.options.stop.defaultDeadlineMs, this.#core.clock.now())
    if (this.disposed) return false
    const record = this.#core.records.get(ptyId)
    if (record === undefined) return stopUntracked(this.#core, ptyId, request)
    return this.#stopping.stopAndVerify(record, request)
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
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state === 'exited') return
    if (incarnationId !== undefined && record.incarnationId !== undefined && incarnationId !== record.incarnationId) return
    this.#stopping.retire(record, stopConfirmed)
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
    return this.disposed ? null : this.#queries.hasPty(ptyId)
  }

  /**
   * Whether the PTY's process is alive: `false` only when proven absent (an observed exit, or the
   * owning provider's probe), `null` when unknown — including every provider error. A probe that
   * answers for a PTY whose stop was unverified updates its liveness (`exited` or `live`).
   */
  async probePtyLiveness(ptyId: string): Promise<boolean | null> {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#queries.probeLiveness(ptyId)
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
    if (hostId === undefined) return (await this.#listings.listAllHosts(budget)).processes
    const host = hostId ?? LOCAL_EXECUTION_HOST_ID
    const provider = this.#core.options.providers.get(host)
    if (provider === undefined) {
      throw new TypeError(`Expected the \`hostId\` argument to name a registered host, got ${describeValue(hostId)}`)
    }
    return this.#listings.listHost(host, provider, budget)
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
    return this.#listings.listAllHosts(resolveListingBudget(options))
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
    assertCwdOf(options?.of)
    if (this.disposed) return null
    const cwd = await this.#queries.askLive(ptyId, 'getCwd', (provider) =>
      options === undefined ? provider.getCwd?.(ptyId) : provider.getCwd?.(ptyId, options),
    )
    return typeof cwd === 'string' && cwd.length > 0 ? cwd : null
  }

  /** The PTY's foreground process name; `null` when unknown, ended, unreadable or on error. */
  async getForegroundProcess(ptyId: string): Promise<string | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const name = await this.#queries.askLive(ptyId, 'getForegroundProcess', (provider) => provider.getForegroundProcess?.(ptyId))
    return typeof name === 'string' ? name : null
  }

  /** Whether the shell has child processes; `null` when unknown, ended, unreadable or on error. */
  async hasChildProcesses(ptyId: string): Promise<boolean | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const answer = await this.#queries.askLive(ptyId, 'hasChildProcesses', (provider) => provider.hasChildProcesses?.(ptyId))
    return typeof answer === 'boolean' ? answer : null
  }

  /**
   * Foreground process and children in one call. `unavailable` when the PTY is unknown, not live,
   * or not the `expectedIncarnationId`.
   */
  async inspectProcess(ptyId: string, options: PtyInspectOptions = {}): Promise<PtyProcessInspection> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options)
    const record = this.#core.records.get(ptyId)
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
    await this.#queries.askLive(ptyId, 'clearBuffer', (provider) => provider.clearBuffer?.(ptyId))
  }

  /** The provider-owned screen snapshot of a live PTY; `null` when it keeps none or on error. */
  async serializeProviderBuffer(
    ptyId: string,
    options: { scrollbackRows?: number } = {},
  ): Promise<PtyProviderBufferSnapshot | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    const snapshot = await this.#queries.askLive(ptyId, 'getBufferSnapshot', (provider) =>
      provider.getBufferSnapshot?.(ptyId, options),
    )
    return snapshot ?? null
  }

  // ---------------------------------------------------------------------------------------------
  // Foreground evidence, input modes, renderer snapshots, slot adoption (logic in their modules)

  /** The foreground process name **confirmed** by the owning provider; `null` when it cannot be confirmed. */
  async confirmForegroundProcess(ptyId: string): Promise<string | null> {
    this.#assertUsable('confirmForegroundProcess')
    return (await this.#queries.confirmForeground(ptyId))?.foregroundProcess ?? null
  }

  /** `true` only when the provider confirmed the shell is in the foreground; `false` otherwise, also on doubt. */
  async confirmShellForeground(ptyId: string): Promise<boolean> {
    this.#assertUsable('confirmShellForeground')
    return (await this.#queries.confirmForeground(ptyId))?.shellForeground === true
  }

  /**
   * Whether a host (default `'local'`) can give foreground evidence at all; `false` for a host
   * with no provider.
   */
  async supportsForegroundProcessEvidence(hostId: ExecutionHostId = 'local'): Promise<boolean> {
    this.#assertUsable('supportsForegroundProcessEvidence')
    const provider = this.#core.options.providers.get(hostId)
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
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state !== 'live') return
    this.#core.emit('inputModesReset', { ptyId, ...incarnationField(record.incarnationId), data: INPUT_MODE_RESET_SEQUENCE })
    await this.#queries.askLive(ptyId, 'resetInputModes', (provider) => provider.resetInputModes?.(ptyId))
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
      (error) => this.#core.report('provider_threw', 'A renderer serializer threw', error, ptyId),
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
          store: this.#core.options.store,
          liveReply: (ptyId) => this.#spawns.liveReply(ptyId),
          attach: (ptyId, owner) => this.attach(ptyId, { hostId: owner.hostId }),
          bindSlot: (ptyId, boundSlot) => {
            const record = this.#core.records.get(ptyId)
            if (record !== undefined) record.slot = boundSlot
          },
        },
        slot,
      ),
    )
  }

  /**
   * What the controller knows to be live, from its own records (which see every spawn and exit
   * it published). PTYs whose stop was unverified stay in `allLivePtyIds` (they may be alive) and
   * are listed in `exitingPtyIds`, with PTYs being stopped. `queriedHostIds` holds only the hosts
   * whose latest process listing (through this controller) answered — empty before any listing —
   * so an id is never read as proven absent on a host nobody heard from.
   */
  inventory(scopeId?: string): PtyControllerInventory {
    return this.#queries.inventory(scopeId, this.#listings.answeredHosts())
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
    await this.#stopping.stopAllOwned()
    this.#output.flushAll()
    this.#core.timers.clearAll()
    this.#core.flow?.releaseAll()
    this.#intake.close()
    this.#slotGate.close()
    this.removeAllListeners()
  }

  #assertUsable(method: string): void {
    if (this.#disposePromise !== undefined) throw new PtyControllerDisposedError(method)
  }
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
