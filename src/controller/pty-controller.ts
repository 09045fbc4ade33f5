import { EventEmitter } from 'node:events'
import type TypedEmitter from 'typed-emitter'
import { assertResizeDimension } from '../contracts/pty-dimension.js'
import {
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
  type PtyWaitBudget,
  type WriteSettlement,
  remainingWaitMs,
  resolveWaitDeadline,
  isPtyIncarnationId,
} from '../contracts/index.js'
import { callProvider } from '../contracts/call-provider.js'
import { assertKnownOptions, optionNamesOf } from '../contracts/known-options.js'
import { assertAbortSignal } from './abort.js'
import {
  assertBufferOptions,
  assertCwdOf,
  assertCharCount,
  assertNonNegativeNumber,
  assertOptionalBoolean,
  assertOptionalIncarnationId,
  assertOptionsObject,
  assertPtyId,
  assertWriteArguments,
  describeValue,
} from './argument-validation.js'
import { assembleController, releaseController, type ControllerModules } from './controller-assembly.js'
import type { PtyControllerOptions } from './controller-options.js'
import { disposableRegistration } from './disposable.js'
import type { PtyAttachOptions, PtyControllerDisposeOptions, PtyInspectOptions, PtyWriteOptions } from './controller-types.js'
import type { PtyControllerEvents } from './events.js'
import type { ProducerFlowState } from './flow-control.js'
import { resolveListingBudget } from './host-listing.js'
import { PtyControllerDisposedError, PtyControllerError } from './pty-controller-error.js'
import type { PtyRecord } from './pty-record.js'
import type { PtyTerminal, PtyTerminalHost } from './pty-terminal.js'
import { PtyTerminalRegistry } from './pty-terminal-registry.js'
import { defaultOutputQueueBound } from './terminal-output.js'
import { assertRendererSerializer, RENDERER_SERIALIZE_TIMEOUT_MS } from './renderer-serializers.js'
import { assertSlot } from './slot-adoption.js'
import { isWellFormedSlot } from '../spawn/in-memory-slot-store.js'
import { resolveStopAndWaitRequest } from './stop-and-wait-request.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

// The options of the per-call methods below: any other name is refused (a misspelt option would be
// ignored, its default used), checked at compile time to list every option of the type.
const ATTACH_OPTION_NAMES = optionNamesOf<PtyAttachOptions>()('hostId', 'signal')
const ADOPT_SLOT_OPTION_NAMES = optionNamesOf<PtyAdoptSlotOptions>()('slot', 'slotCreateClaim')
const WRITE_OPTION_NAMES = optionNamesOf<PtyWriteOptions>()('expectedIncarnationId')
const CWD_OPTION_NAMES = optionNamesOf<PtyCwdOptions>()('of')
const INSPECT_OPTION_NAMES = optionNamesOf<PtyInspectOptions>()('expectedIncarnationId', 'scanChildProcesses')

const TypedEventEmitter = EventEmitter as new () => TypedEmitter<PtyControllerEvents>

/** Every option `dispose` reads (complete: checked at compile time). */
const DISPOSE_OPTION_NAMES = optionNamesOf<PtyControllerDisposeOptions>()('stopPtys')

/**
 * The default {@link RuntimePtyController}: routes each PTY to the provider of its host, runs
 * spawns through the spawn pipeline, settles exits by evidence and the operator-close rule, fences
 * by incarnation, escalates stops, applies producer flow control, and publishes typed events
 * (`spawn`, `data`, `exit`, `liveness`, `error`).
 *
 * Create it with `createPtyController`. After `dispose()`, only the calls that would start or bind
 * a PTY reject (with {@link PtyControllerDisposedError}): `spawn`, `attach`, `claimSlotCreate` and
 * `adoptSlot`. Every other call can arrive late from an async callback (an ack from a renderer's
 * write callback, a view unmounting), so it is a harmless answer instead — writes are refused
 * `controller_disposed`, `acknowledgeData`/`clearBuffer`/`retireRejectedPty`/`resetInputModes` do
 * nothing, `resize` and the yes/no questions answer `false`, `stopAndWait` answers disposal's
 * verdict of the id's PTY (waiting for it, within the call's deadline: `true` only if its stop was
 * verified or its death is proven; else `false`), `kill` answers whether a stop of the id is still
 * committed (`true` while disposal is stopping its PTY, for a spawn or attach of it still coming,
 * which is stopped when it lands, and for a PTY whose stop disposal gave up on, which gets a forced
 * shutdown; else `false`), queries and
 * `serializeBuffer` answer `null` (`inspectProcess` `unavailable`), a renderer serializer registers
 * with nothing, listings and `inventory` have no host in scope. Malformed arguments are still
 * `TypeError`s.
 */
// Why a facade: each method checks its arguments, finds the record or host, and delegates to the
// module that owns the behaviour (the module map in docs/controller.md; wiring: controller-assembly.ts).
// A method without TSDoc implements the `RuntimePtyController` member of that name, whose TSDoc
// describes it (typedoc copies it into this class's reference).
export class PtyController extends TypedEventEmitter implements RuntimePtyController, AsyncDisposable {
  readonly #m: ControllerModules
  #disposePromise: Promise<void> | undefined
  /** Per-terminal handles; created on first use (`spawnTerminal`, `terminal`). */
  #terminals: PtyTerminalRegistry | undefined

  /** Create a controller; prefer `createPtyController`. Throws a `TypeError` on bad options. */
  constructor(options: PtyControllerOptions) {
    super()
    this.#m = assembleController(options, this, () => this.#disposePromise !== undefined)
  }

  // Spawning and handles

  spawn(options: PtySpawnOptions): Promise<PtySpawnReply> {
    return this.#spawn(options, undefined)
  }

  /** `spawn`, telling `published` (if given) which record the spawn published. */
  #spawn(options: PtySpawnOptions, published: ((record: PtyRecord) => void) | undefined): Promise<PtySpawnReply> {
    // Not `async`: the caller gets the pipeline's own promise (`Promise.resolve` of a native
    // promise is that promise), without a wrapping promise and its turns per spawn. Every refusal
    // still arrives as a rejection, never as a throw.
    return callProvider(() => {
      this.#assertUsable('spawn')
      // Why: one slot's spawns (and claimSlotCreate claims) take turns, so two never create its PTY at once.
      // (Options that are not an object go on to the pipeline, which refuses them naming the value.)
      // (A malformed slot too: the pipeline refuses it as `invalid_spawn_options`, naming it.)
      // The turn is taken inside `spawns.spawn`: a spawn queued behind it is already coming (a `kill` marks it).
      if (typeof options === 'object' && options !== null && isWellFormedSlot(options.slot)) {
        const { slot, slotCreateClaim } = options
        return this.#m.spawns.spawn(options, published, (work) => this.#m.slotGate.run(slot, slotCreateClaim, work))
      }
      return this.#m.spawns.spawn(options, published)
    })
  }

  /**
   * Attach-only adoption of a live PTY the controller does not track yet (the provider is asked
   * with `attachOnly`; never creates). For a PTY already tracked live: `true` while its provider
   * vouches for it (its `hasPty` answers `true`; one without `hasPty` is not asked), `false` once the
   * provider was found detached or disposed or its `hasPty` answers `null` or `false` — its output no
   * longer streams here (docs/controller.md, "After a provider's detach()"). `false` on
   * any doubt (no such PTY, a different id in the reply, an exited process, a failure — a runtime
   * whose sequence rebase throws or answers no sequence is also reported, `bookkeeping_failed`) and
   * at once for an aborted `signal`, tracking nothing.
   *
   * @throws TypeError (as a rejection) for a malformed `ptyId` or `options`: not an object, an option
   * other than `hostId` and `signal` (named), a `signal` that is not an `AbortSignal`.
   */
  async attach(ptyId: string, options: PtyAttachOptions = {}): Promise<boolean> {
    this.#assertUsable('attach')
    assertPtyId(ptyId)
    assertOptionsObject('options', options, ATTACH_OPTION_NAMES)
    assertAbortSignal(options.signal)
    return this.#m.spawns.attach(ptyId, options.hostId ?? 'local', options.signal)
  }

  /**
   * {@link PtyController.spawn}, answered with a {@link PtyTerminal} handle (its own events,
   * `exited` promise, flow-controlled `output()`, `Symbol.asyncDispose`). Output delivered before
   * the handle is returned is replayed to listeners and iterators that subscribe in the same turn.
   *
   * @throws what `spawn` throws.
   */
  async spawnTerminal(options: PtySpawnOptions): Promise<PtyTerminal> {
    // Before the registry: made now, it would subscribe to a controller whose listeners are gone.
    this.#assertUsable('spawnTerminal')
    const terminals = this.#terminalRegistry()
    let published: PtyRecord | undefined
    const reply = await this.#spawn(options, (record) => {
      published = record
    })
    // The handle of the incarnation this spawn published: by the time this runs, a concurrent
    // respawn of the same id may have replaced it (its handle is then fenced, as it should be).
    const terminal = published === undefined ? terminals.handleFor(reply.id) : terminals.handleOfRecord(published)
    if (terminal === null) throw new PtyControllerError('bookkeeping_failed', `PTY ${reply.id} was forgotten before its handle was made`)
    return terminal
  }

  /**
   * The handle of the incarnation tracked under `ptyId` (for example after `attach`): the same
   * object on every call, until the id is respawned. `null` for an untracked id, for an exited PTY
   * that had no handle before its exit, and after `dispose()`.
   */
  terminal(ptyId: string): PtyTerminal | null {
    assertPtyId(ptyId)
    if (this.disposed) return null
    return this.#terminalRegistry().handleFor(ptyId)
  }

  #terminalRegistry(): PtyTerminalRegistry {
    this.#terminals ??= new PtyTerminalRegistry(this.#terminalHost(), (ptyId) => this.#m.core.records.get(ptyId))
    return this.#terminals
  }

  /** What the terminal handles call: this controller's public calls, and the output iterators' opt-in. */
  #terminalHost(): PtyTerminalHost {
    const controller = this
    return {
      get disposed() {
        return controller.disposed
      },
      dispose: () => controller.dispose(),
      on: (event, listener) => controller.on(event, listener),
      write: (ptyId, data, inputKind) => controller.write(ptyId, data, inputKind),
      writeWithSettlement: (ptyId, data, inputKind) => controller.writeWithSettlement(ptyId, data, inputKind),
      resize: (ptyId, cols, rows) => controller.resize(ptyId, cols, rows),
      // A handle is one incarnation's: its stop is its PTY's alone, never a spawn of the id still
      // coming (a restart queued behind this very stop).
      kill: (ptyId) => {
        // During and after `dispose()`: as the controller's `kill` answers.
        if (this.disposed) return this.#m.stopping.killAfterDispose(ptyId)
        const record = this.#tracked(ptyId)
        if (record === undefined || record.state === 'exited') return false
        this.#m.stopping.kill(record)
        return true
      },
      stopAndWait: (ptyId, options) => this.#stopAndWait(ptyId, options, false),
      acknowledgeData: (ptyId, chars) => controller.acknowledgeData(ptyId, chars),
      acknowledgeIteratedData: (ptyId, chars, dropped) => {
        const record = this.#tracked(ptyId)
        if (record !== undefined && record.state === 'live') this.#m.output.acknowledge(record, chars, true, dropped)
      },
      acknowledgeDataFromNow: (ptyId, owed) => {
        const record = this.#tracked(ptyId)
        if (record !== undefined && record.state === 'live') this.#m.output.acknowledgeFromNow(record, owed)
      },
      iteratorsLeft: (ptyId) => {
        const record = this.#tracked(ptyId)
        if (record !== undefined && record.state === 'live') this.#m.output.iteratorsLeft(record)
      },
      report: (error) => this.#m.core.report(error.code, error.message, error.cause, error.ptyId),
      defaultMaxQueuedChars: defaultOutputQueueBound(this.#m.core.options.flowControl),
    }
  }

  // Writes, size and flow control

  /**
   * The contract's `write` (see `RuntimePtyController.write`), which also takes raw bytes: `data`
   * a `Uint8Array` (a `Buffer` is one) is written exactly as given — input that is no text, such
   * as xterm.js's `onBinary` (a mouse report in the X10 encoding past column 95 carries bytes
   * 0x80–0xFF, which a string written as UTF-8 cannot). `false` when the PTY's provider cannot
   * write bytes (see {@link PtyController.writeWithSettlement}). A string is written as UTF-8, as
   * before.
   *
   * @throws TypeError when `data` is neither a string nor a `Uint8Array`, or is a string with a
   * lone surrogate (naming its index); when `inputKind` or `options` is malformed. Nothing is
   * written.
   */
  write(ptyId: string, data: string | Uint8Array, inputKind: TerminalInputKind, options?: PtyWriteOptions): boolean {
    const settlement = this.writeWithSettlement(ptyId, data, inputKind, options)
    if (settlement instanceof Promise) return true
    return settlement.kind === 'accepted'
  }

  /**
   * The contract's `writeWithSettlement` (see `RuntimePtyController.writeWithSettlement`), which
   * also takes raw bytes: `data` a `Uint8Array` (a `Buffer` is one) goes to the provider's
   * `writeBytes` exactly as given, in order with the PTY's string writes. A provider without
   * `writeBytes` (one written before providers could take bytes: its `write` takes text only) is
   * never handed them: the write is settled `refused('provider_cannot_write_bytes')`, nothing
   * written. The bytes are read during the call: the caller may reuse its buffer once it returns.
   *
   * @throws TypeError when `data` is neither a string nor a `Uint8Array` (`42`, `[1, 2]`, an
   * `ArrayBuffer`), or is a string with a lone surrogate (naming its index); when `inputKind` or
   * `options` is malformed. Nothing is written.
   */
  writeWithSettlement(
    ptyId: string,
    data: string | Uint8Array,
    inputKind: TerminalInputKind,
    options?: PtyWriteOptions,
  ): WriteSettlement | Promise<WriteSettlement> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options, WRITE_OPTION_NAMES)
    assertWriteArguments(data, inputKind)
    assertOptionalIncarnationId('expectedIncarnationId', options?.expectedIncarnationId)
    return this.#m.input.write(ptyId, data, options?.expectedIncarnationId)
  }

  resize(ptyId: string, cols: number, rows: number): boolean {
    assertPtyId(ptyId)
    assertResizeDimension('cols', cols)
    assertResizeDimension('rows', rows)
    return !this.disposed && this.#m.input.resize(ptyId, cols, rows)
  }

  getSize(ptyId: string): PtySize | null {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#m.input.getSize(ptyId)
  }

  acknowledgeData(ptyId: string, chars: number): void {
    assertPtyId(ptyId)
    assertCharCount('chars', chars)
    const record = this.#tracked(ptyId)
    if (record !== undefined && record.state === 'live') this.#m.output.acknowledge(record, chars)
  }

  /** The flow-control state of a PTY (unacknowledged chars, paused, since when); for inspection. */
  getFlowControlState(ptyId: string): ProducerFlowState | null {
    assertPtyId(ptyId)
    const record = this.#tracked(ptyId)
    return record === undefined ? null : this.#m.output.state(record)
  }

  // Stopping

  kill(ptyId: string): boolean {
    assertPtyId(ptyId)
    // Why first, and whether or not a PTY is live under the id: a kill while the id's spawn (or
    // attach) is still coming — in flight, or queued behind its slot's turn or the stop of the id's
    // previous PTY — answered `false` (or `true` for that previous PTY alone), and the process the
    // spawn then started ran on, leaked (a job's timeout in a burst of spawns, a tab closed as its
    // terminal starts). Also after `dispose()`: one that lands then is stopped (as a spawn's own
    // start always is), and so is a process it re-attached (or an attach attached) that would be
    // left running.
    const marked = this.#m.spawns.stopWhenLanded(ptyId)
    // A late kill (an async callback after `dispose()` began) answers the truth and never throws:
    // `true` while disposal is still stopping the PTY (before: `false`, while it was in fact being
    // stopped) or a spawn or attach of the id still coming is marked; `false` once disposal's stop
    // of it was verified, or for a PTY `dispose({ stopPtys: false })` let go. A PTY whose stop
    // disposal gave up on (`stop_unverified`) gets a forced shutdown, as a kill of an unverified
    // PTY before `dispose()` still reaches it (before: `false`, nothing dispatched). Asked first:
    // a coming spawn's mark must not hide it.
    if (this.disposed) return this.#m.stopping.killAfterDispose(ptyId) || marked
    const record = this.#tracked(ptyId)
    if (record !== undefined && record.state !== 'exited') {
      this.#m.stopping.kill(record)
      return true
    }
    return marked
  }

  stopAndWait(ptyId: string, options?: PtyStopAndWaitOptions): Promise<boolean> {
    return this.#stopAndWait(ptyId, options, true)
  }

  /** `stopAndWait`; `withComing: false` stops the id's tracked PTY alone (a terminal handle's `stop`). */
  async #stopAndWait(ptyId: string, options: PtyStopAndWaitOptions | undefined, withComing: boolean): Promise<boolean> {
    assertPtyId(ptyId)
    const request = resolveStopAndWaitRequest(options, this.#m.core.options.stop.defaultDeadlineMs, this.#m.core.clock.now())
    // A late call (an async callback after `dispose()` began) waits for disposal's verdict of the
    // PTY, as a terminal handle's `stop()` does (before: `false` at once, even for a PTY disposal was
    // about to verify stopped).
    if (this.disposed) return this.#m.stopping.stopAndWaitAfterDispose(ptyId, request, withComing)
    return this.#m.stopping.stopAndWait(ptyId, request, withComing)
  }

  retireRejectedPty(ptyId: string, stopConfirmed: boolean, incarnationId: PtyIncarnationId | undefined): void {
    assertPtyId(ptyId)
    // Why: a truthy non-boolean (`'false'`, `1`) settled a verified stop — a death certified, its
    // claim and slot released — that nobody confirmed; a malformed incarnation silently retired nothing.
    if (typeof stopConfirmed !== 'boolean') throw argumentRefusal(`Expected the \`stopConfirmed\` argument to be a boolean, got ${describeValue(stopConfirmed)}`, 'stopConfirmed', stopConfirmed)
    if (incarnationId !== undefined && !isPtyIncarnationId(incarnationId)) {
      throw argumentRefusal(`Expected the \`incarnationId\` argument to be absent or an incarnation id (a string of 1 to 128 characters), got ${describeValue(incarnationId)}`, 'incarnationId', incarnationId)
    }
    const record = this.#tracked(ptyId)
    if (record === undefined || record.state === 'exited') return
    if (incarnationId !== undefined && record.incarnationId !== undefined && incarnationId !== record.incarnationId) return
    this.#m.stopping.retire(record, stopConfirmed)
  }

  // Existence, listings and inventory

  hasPty(ptyId: string): boolean | null {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#m.queries.hasPty(ptyId)
  }

  async probePtyLiveness(ptyId: string): Promise<boolean | null> {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#m.queries.probeLiveness(ptyId)
  }

  async listProcesses(hostId?: ExecutionHostId | null, options: PtyListOptions = {}): Promise<PtyProcessInfo[]> {
    assertOptionsObject('options', options)
    return this.#m.listings.list(hostId, resolveListingBudget(options))
  }

  async listProcessesWithHostScope(options: PtyListOptions = {}): Promise<PtyHostScopedListing> {
    assertOptionsObject('options', options)
    return this.#m.listings.listAllHosts(resolveListingBudget(options))
  }

  /**
   * What the controller knows to be live, from its own records. PTYs whose stop was unverified
   * stay in `allLivePtyIds` and are listed in `exitingPtyIds`, with PTYs being stopped.
   * `queriedHostIds` holds only the hosts whose latest listing through this controller answered
   * (none before any), so an id is never read as absent on a host nobody heard from.
   */
  inventory(scopeId?: string): PtyControllerInventory {
    // A number or an options object would answer an empty inventory: "nothing live" by mistake.
    if (scopeId !== undefined && (typeof scopeId !== 'string' || scopeId.length === 0)) {
      throw argumentRefusal(`Expected the \`scopeId\` argument to be absent or a non-empty string, got ${describeValue(scopeId)}`, 'scopeId', scopeId)
    }
    return this.#m.queries.inventory(scopeId, this.#m.listings.answeredHosts())
  }

  // Questions to a live PTY's provider: each `null` (or nothing) for an unknown or ended PTY, or on error

  async getCwd(ptyId: string, options?: PtyCwdOptions): Promise<string | null> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options, CWD_OPTION_NAMES)
    assertCwdOf(options?.of)
    return this.disposed ? null : this.#m.questions.cwd(ptyId, options)
  }

  async getForegroundProcess(ptyId: string): Promise<string | null> {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#m.questions.foregroundProcess(ptyId)
  }

  async hasChildProcesses(ptyId: string): Promise<boolean | null> {
    assertPtyId(ptyId)
    return this.disposed ? null : this.#m.questions.hasChildProcesses(ptyId)
  }

  async inspectProcess(ptyId: string, options: PtyInspectOptions = {}): Promise<PtyProcessInspection> {
    assertPtyId(ptyId)
    assertOptionsObject('options', options, INSPECT_OPTION_NAMES)
    assertOptionalBoolean('scanChildProcesses', options.scanChildProcesses)
    if (this.disposed) return { foregroundProcess: null, hasChildProcesses: null, unavailable: true }
    return this.#m.questions.inspect(ptyId, options)
  }

  async clearBuffer(ptyId: string): Promise<void> {
    assertPtyId(ptyId)
    if (!this.disposed) await this.#m.questions.clearBuffer(ptyId)
  }

  async serializeProviderBuffer(ptyId: string, options: { scrollbackRows?: number | undefined } = {}): Promise<PtyProviderBufferSnapshot | null> {
    assertPtyId(ptyId)
    assertBufferOptions(options)
    return this.disposed ? null : this.#m.questions.providerBuffer(ptyId, options)
  }

  async confirmForegroundProcess(ptyId: string): Promise<string | null> {
    assertPtyId(ptyId)
    if (this.disposed) return null
    return (await this.#m.questions.confirmForeground(ptyId))?.foregroundProcess ?? null
  }

  async confirmShellForeground(ptyId: string): Promise<boolean> {
    assertPtyId(ptyId)
    if (this.disposed) return false
    return (await this.#m.questions.confirmForeground(ptyId))?.shellForeground === true
  }

  async supportsForegroundProcessEvidence(host: ExecutionHostId | null = 'local'): Promise<boolean> {
    // `null` is the local host, as in `listProcesses(null)` (a host id the origin passes as `null`).
    const hostId = host ?? 'local'
    if (typeof hostId !== 'string' || hostId.length === 0) {
      throw argumentRefusal(`Expected the \`hostId\` argument to be a non-empty host id, got ${describeValue(hostId)}`, 'hostId', hostId)
    }
    if (this.disposed) return false
    return this.#m.questions.supportsForegroundEvidence(hostId)
  }

  async resetInputModes(ptyId: string): Promise<void> {
    assertPtyId(ptyId)
    if (this.disposed) return
    await this.#m.questions.resetInputModes(ptyId)
  }

  // Renderer snapshots and slots

  async serializeBuffer(ptyId: string, options: PtyWaitBudget & { scrollbackRows?: number | undefined } = {}): Promise<PtyBufferSerialization | null> {
    assertPtyId(ptyId)
    assertBufferOptions(options, ['scrollbackRows', 'deadlineMs', 'timeoutMs'])
    // The renderer's wait, as every wait: `deadlineMs` an epoch time, `timeoutMs` a duration.
    const epochNow = Date.now()
    const rendererWaitMs = remainingWaitMs(resolveWaitDeadline(options, RENDERER_SERIALIZE_TIMEOUT_MS, epochNow), epochNow)
    if (this.disposed) return null
    const core = this.#m.core
    const bufferOptions = options.scrollbackRows === undefined ? {} : { scrollbackRows: options.scrollbackRows }
    return this.#m.renderers.serialize(ptyId, bufferOptions, rendererWaitMs, () => this.serializeProviderBuffer(ptyId, bufferOptions), {
      threw: (error) => core.report('provider_threw', 'A renderer serializer threw', error, ptyId),
      timedOut: (ms) => core.report('renderer_unresponsive', `A renderer serializer did not answer serializeBuffer within ${ms} ms; the provider's snapshot answered instead`, undefined, ptyId),
    })
  }

  registerRendererSerializer(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable & Disposable {
    assertPtyId(ptyId)
    assertRendererSerializer(serializer)
    // A renderer mounted after dispose registers with nothing: there is nothing left to serialize for.
    if (this.disposed) return disposableRegistration(() => undefined)
    return this.#m.renderers.register(ptyId, serializer)
  }

  hasRendererSerializer(ptyId: string): boolean {
    assertPtyId(ptyId)
    return !this.disposed && this.#m.renderers.has(ptyId)
  }

  getRendererSerializerGeneration(ptyId: string): number {
    assertPtyId(ptyId)
    return this.#m.renderers.generation(ptyId)
  }

  async waitForRendererSerializer(ptyId: string, afterGeneration: number, timeoutMs?: number, signal?: AbortSignal): Promise<boolean> {
    assertPtyId(ptyId)
    assertAbortSignal(signal)
    if (this.disposed) {
      // Malformed arguments are TypeErrors, disposed or not (the live path checks them in `wait`).
      assertNonNegativeNumber('argument', 'afterGeneration', afterGeneration)
      if (timeoutMs !== undefined) assertNonNegativeNumber('argument', 'timeoutMs', timeoutMs)
      return false
    }
    return this.#m.renderers.wait(ptyId, afterGeneration, timeoutMs, signal)
  }

  claimSlotCreate(slot: PtySlot): PtySlotCreateRelease {
    this.#assertUsable('claimSlotCreate')
    assertSlot('argument', slot)
    return this.#m.slotGate.claim(slot)
  }

  async adoptSlot(options: PtyAdoptSlotOptions): Promise<PtySlotAdoption | null> {
    this.#assertUsable('adoptSlot')
    // A misspelt `slotCreateClaim` was ignored: the adoption then waited behind the caller's own
    // claim, for ever (and a `signal`, which it does not take, never ended the wait).
    assertOptionsObject('options', options, ADOPT_SLOT_OPTION_NAMES)
    const slot = options?.slot
    assertSlot('option', slot)
    return this.#m.spawns.adoptSlot(
      slot,
      (work) => this.#m.slotGate.run(slot, options.slotCreateClaim, work),
      async (ptyId, hostId, adopting, incarnationId) => {
        // As `attach` refuses after `dispose` — overtaken by it, as the caller sees it: an
        // `adoptSlot` in flight (before: named `attach`, a call the caller never made) — and checks its arguments.
        if (this.disposed) throw new PtyControllerDisposedError('adoptSlot', true)
        assertPtyId(ptyId)
        return this.#m.spawns.attach(ptyId, hostId, undefined, adopting, incarnationId)
      },
    )
  }

  // Disposal

  /**
   * Stop every PTY the controller owns (operator close, each bounded by `stop.defaultDeadlineMs`;
   * one still unconfirmed then is published as `stop_unverified`) — or, with `stopPtys: false`,
   * leave them running and let go of them silently — then cancel timers, unsubscribe from the
   * providers and remove every listener (a `stopAndWait` or listing still waiting gives up at
   * once). Idempotent: later calls return the same promise (the first call's options decide).
   * Providers are not disposed: the host owns them.
   *
   * @throws TypeError (rejects, disposing nothing) when `options` is not an object, names an
   *   option other than `stopPtys` (a misspelling), or `stopPtys` is not a boolean.
   */
  dispose(options?: PtyControllerDisposeOptions): Promise<void> {
    if (this.#disposePromise === undefined) {
      try {
        assertOptionsObject('options', options)
        // A misspelt `stopPtys: false` would stop every PTY it meant to keep: refused, not ignored.
        assertKnownOptions('', options, DISPOSE_OPTION_NAMES)
        assertOptionalBoolean('stopPtys', options?.stopPtys)
      } catch (error) {
        return Promise.reject(error)
      }
      this.#disposePromise = this.#runDispose(options?.stopPtys !== false)
    }
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

  async #runDispose(stopPtys: boolean): Promise<void> {
    if (stopPtys) await this.#m.stopping.stopAllOwned()
    // Left running: no exit will end their handles' output, so it ends here.
    else this.#terminals?.releaseAll()
    releaseController(this.#m)
    this.removeAllListeners()
    // No event reaches a handle any more: those of PTYs whose stop went unverified let go of their listeners.
    this.#terminals?.controllerDisposed()
  }

  /** The record tracked under `ptyId`; none after `dispose()`. */
  #tracked(ptyId: string): PtyRecord | undefined {
    return this.disposed ? undefined : this.#m.core.records.get(ptyId)
  }

  #assertUsable(method: string): void {
    if (this.#disposePromise !== undefined) throw new PtyControllerDisposedError(method)
  }
}
