import type { PtyCwdOptions } from '../contracts/index.js'
import { callProvider } from '../contracts/call-provider.js'
import { describeValue } from '../contracts/describe-value.js'
import {
  createListenerSet,
  rethrowOnMicrotask,
  assertPtyDimension,
  LOCAL_EXECUTION_HOST_ID,
  WRITE_ACCEPTED,
  refusedWrite,
  resolveWaitDeadline,
  toPtyIncarnationId,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyListProcessesOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyProviderBufferSnapshot,
  type PtyForegroundProcessEvidence,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import { resolveProcessExitCause, type ProcessExitObservation } from '../exit-cause/index.js'
import { FakePtyAbsentError } from './fake-pty-absent-error.js'
import { FakePtyLiveOtherIncarnationError } from './fake-pty-live-other-incarnation-error.js'
import type { FakeExit, FakeShutdownBehaviour, FakeSpawnScript } from './fake-spawn-script.js'

/** The first pid the fake hands out; looks like a real pid and never collides with 0 or 1, which mean something special. */
export const FAKE_PID_BASE = 1000

/** Columns when a spawn names none: the contract's documented default. */
export const FAKE_DEFAULT_COLS = 80

/** Rows when a spawn names none: the contract's documented default. */
export const FAKE_DEFAULT_ROWS = 24

/** The signal a confirmed graceful stop reports: SIGHUP, what closing a terminal sends. */
export const FAKE_GRACEFUL_STOP_SIGNAL = 1

/** The signal a confirmed immediate stop (and `dispose`) reports: SIGKILL. */
export const FAKE_IMMEDIATE_STOP_SIGNAL = 9

/** The foreground process name of a fake PTY spawned without a `file`. */
export const FAKE_DEFAULT_PROCESS_NAME = 'fake-shell'

/**
 * The spawn-options metadata key the fake reads a {@link FakeSpawnScript} from, as an alternative
 * to `scriptNextSpawn`. It makes generic drivers (the conformance suite) able to script a spawn.
 */
export const FAKE_SCRIPT_METADATA_KEY = 'fakeScript'

/**
 * Microtask turns `settle()` yields before it looks for scheduled deliveries: enough for a
 * caller's chain of `await`s on a resolved spawn (a pipeline of a dozen stages) to run first.
 */
export const FAKE_SETTLE_MICROTASK_TURNS = 32

/** Rounds after which `settle()` gives up: a listener that schedules deliveries forever is a bug, not a wait. */
export const FAKE_SETTLE_MAX_ROUNDS = 1000

/**
 * When scripted post-reply events (`output`, `exit`) are delivered:
 *
 * - `macrotask` (default): on the next macrotask after the spawn resolved, so every microtask —
 *   a caller's whole chain of `await`s after the spawn — runs first, as with a real PTY whose
 *   output arrives on a later I/O turn;
 * - `microtask`: right after the spawn caller's first continuation; harsher, exposes code that
 *   assumes nothing arrives between `await spawn()` and its next step;
 * - `manual`: only when the test calls `settle()`.
 *
 * In every mode `await provider.settle()` delivers everything already scheduled.
 */
export type FakeDeliveryScheduling = 'macrotask' | 'microtask' | 'manual'

/** Options of {@link createFakePtyProvider}. */
export type FakePtyProviderOptions = {
  /** The provider's `name`. Default `'fake'`. */
  name?: string
  /**
   * Whether the fake's listings prove absence. Default `true`. With `false`, liveness of an exited
   * or unknown PTY is `null` rather than `false`.
   */
  authoritativeListings?: boolean
  /** Provider-wide default for `hostReportsChildExitStatus` (a spawn script or an exit overrides it). */
  hostReportsChildExitStatus?: boolean
  /** Prefix of minted PTY ids (and incarnation ids). Default `'fake-'`. */
  idPrefix?: string
  /** The `hostId` of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId
  /** The clock stamped on recorded calls. Default: a counter (1, 2, 3…), never the wall clock. */
  now?: () => number
  /** The script of every spawn that has none queued and none in its metadata. */
  defaultScript?: FakeSpawnScript
  /** When scripted post-reply events are delivered. Default `'macrotask'`. */
  scheduling?: FakeDeliveryScheduling
  /** What `supportsForegroundProcessEvidence` answers. Default `true`. */
  foregroundProcessEvidence?: boolean
}

/** The `PtyProvider` methods the fake records. */
export type FakeProviderMethod =
  | 'spawn'
  | 'write'
  | 'resize'
  | 'getSize'
  | 'shutdown'
  | 'pauseProducer'
  | 'resumeProducer'
  | 'acknowledgeData'
  | 'listProcesses'
  | 'hasPty'
  | 'probeLiveness'
  | 'getCwd'
  | 'getForegroundProcess'
  | 'hasChildProcesses'
  | 'confirmForeground'
  | 'supportsForegroundProcessEvidence'
  | 'resetInputModes'
  | 'clearBuffer'
  | 'getBufferSnapshot'
  | 'onData'
  | 'onExit'
  | 'dispose'

/** What {@link FakePtyProvider.setProcessInfo} changes; an absent field is left as it is. */
export type FakeProcessInfo = {
  /** What `getForegroundProcess` answers. */
  foregroundProcess?: string | null
  /** What `hasChildProcesses` answers. */
  hasChildProcesses?: boolean | null
  /** What `confirmForeground` answers (`null`: cannot confirm). */
  foregroundEvidence?: PtyForegroundProcessEvidence | null
}

/** One recorded call of a `PtyProvider` method, in call order. */
export type FakeProviderCall = {
  /** The method called. */
  method: FakeProviderMethod
  /** Its arguments, as passed (not copied). */
  args: readonly unknown[]
  /** The injected clock's reading at the call. */
  at: number
}

/** One write the fake received while the PTY was live, with the settlement it answered. */
export type FakeWrite = {
  /** The bytes written. */
  data: string
  /** What the write was settled as. */
  settlement: WriteSettlement
}

/** What a test can inspect about the current incarnation behind a fake PTY id. */
export type FakePtyInspection = {
  /** The PTY id. */
  id: string
  /** The current (latest) incarnation. */
  incarnationId: PtyIncarnationId
  /** Every incarnation ever minted under this id, oldest first. */
  incarnations: readonly PtyIncarnationId[]
  /** The pid reported. */
  pid: number
  /** Current columns (after resizes). */
  cols: number
  /** Current rows (after resizes). */
  rows: number
  /** True while the process runs (also while its spawn reply is still pending). */
  live: boolean
  /** True while the producer is paused. */
  paused: boolean
  /** True while the spawn reply is held by a `hang` script. */
  spawnPending: boolean
  /** Concatenation of the data of every accepted write. */
  written: string
  /** Every write received while live, with its settlement. */
  writes: readonly FakeWrite[]
  /** Total chars acknowledged with `acknowledgeData`. */
  acknowledgedChars: number
  /** How many times `resetInputModes` was called for this incarnation. */
  inputModeResets: number
  /** Total chars of output produced so far (the provider's sequence). */
  producedChars: number
  /** Events produced while paused that are not delivered yet. */
  heldEventCount: number
  /** The exit that ended this incarnation, once it did. */
  exit: PtyExitEvent | null
  /** The options it was spawned with. */
  spawnOptions: ProviderSpawnOptions
  /** The script it was spawned with. */
  script: FakeSpawnScript
}

/**
 * A deterministic, scriptable {@link PtyProvider} that needs no OS, plus the controls a test
 * drives it with. Every `PtyProvider` member (optional ones included) is implemented.
 *
 * Control methods emit synchronously: when `emitData`/`emitExit` return, the listeners have run
 * (unless the PTY's producer is paused, which holds output until `resumeProducer`).
 */
export interface FakePtyProvider extends PtyProvider {
  /** Whether absence from a listing is proof. */
  readonly authoritativeListings: boolean
  /** Every `PtyProvider` method call, in order. */
  readonly calls: readonly FakeProviderCall[]
  /** Settles synchronously: the PTY's scripted settlement, `refused('pty_exited')` after exit, `refused('pty_not_found')` for an unknown id. */
  write(id: string, data: string): WriteSettlement
  /** The size read back; `null` for an unknown or exited PTY. */
  getSize(id: string): {
    /** Current columns. */
    cols: number
    /** Current rows. */
    rows: number
  } | null
  /** Recorded; holds output until resumed. */
  pauseProducer(id: string): void
  /** Recorded; delivers held output (then a held exit) in order. */
  resumeProducer(id: string): void
  /** Recorded; adds to the PTY's `acknowledgedChars`. */
  acknowledgeData(id: string, chars: number): void
  /** The scripted liveness, or the default (see {@link FakeSpawnScript.liveness}). */
  hasPty(id: string): boolean | null
  /** Same answer as {@link FakePtyProvider.hasPty}, asynchronously. */
  probeLiveness(id: string): Promise<boolean | null>
  /** The spawn's `cwd`, or `null` (the fake's foreground process and leader share it). */
  getCwd(id: string, options?: PtyCwdOptions): Promise<string | null>
  /** The scripted foreground process name, or `null` for an exited PTY. */
  getForegroundProcess(id: string): Promise<string | null>
  /** The scripted answer (default `false`), or `null` for an exited PTY. */
  hasChildProcesses(id: string): Promise<boolean | null>
  /** The scripted confirmed evidence (default `null`: a fake confirms nothing unless told), `null` for an exited PTY. */
  confirmForeground(id: string): Promise<PtyForegroundProcessEvidence | null>
  /** The `foregroundProcessEvidence` option (default `true`). */
  supportsForegroundProcessEvidence(): boolean
  /** Recorded; counts `inputModeResets` of a live PTY. */
  resetInputModes(id: string): Promise<void>
  /** Empties the PTY's screen buffer. */
  clearBuffer(id: string): Promise<void>
  /** All output produced so far as the "screen", with `seq` = produced chars. */
  getBufferSnapshot(id: string, options?: { scrollbackRows?: number }): Promise<PtyProviderBufferSnapshot | null>
  /** Kills every PTY (their exits are emitted), rejects pending spawns, then drops every listener. */
  dispose(): Promise<void>
  /** Same as `dispose()`, for `await using provider = createFakePtyProvider()`. */
  [Symbol.asyncDispose](): Promise<void>

  /** Queue the script of the next spawn that carries no `metadata.fakeScript`. */
  scriptNextSpawn(script: FakeSpawnScript): void
  /** Emit output for a live PTY now (held while paused). */
  emitData(id: string, data: string): void
  /** End a live PTY now with this exit (or, with a foreign `incarnationId`, emit a stale exit). */
  emitExit(id: string, exit: FakeExit): void
  /** Override liveness answers for the PTY's current incarnation; `undefined` restores the default. */
  setLiveness(id: string, value: boolean | null | undefined): void
  /** Override the settlement of writes to the PTY; `undefined` restores `accepted`. */
  setWriteSettlement(id: string, settlement: WriteSettlement | undefined): void
  /** Change what a stop of the PTY does. */
  setShutdownBehaviour(id: string, behaviour: FakeShutdownBehaviour): void
  /** Change what process inspection of the PTY answers. */
  setProcessInfo(id: string, info: FakeProcessInfo): void
  /** While set, `listProcesses` rejects with this error (a host that cannot be listed); `undefined` clears it. */
  setListingFailure(error: unknown): void
  /** Ids whose current incarnation is live. */
  livePtyIds(): string[]
  /** Inspect the current incarnation behind an id; `undefined` when the id was never spawned. */
  getPty(id: string): FakePtyInspection | undefined
  /** Forget the recorded calls. */
  clearCalls(): void
  /** Resolve a hung spawn: the oldest pending one, or the one with this PTY id. */
  releaseSpawn(id?: string): void
  /** Reject a hung spawn (oldest, or by id) with `error`; its process is removed, never left running. */
  failSpawn(id?: string, error?: unknown): void
  /** How many spawns are hung. */
  pendingSpawnCount(): number
  /** How many data and exit listeners are subscribed. */
  listenerCount(): number
  /** Deliver everything scheduled (scripted post-reply output and exits), letting pending microtasks run first. */
  settle(): Promise<void>
}

type HeldEvent = { kind: 'data'; event: PtyDataEvent } | { kind: 'exit'; event: PtyExitEvent }

type FakePtyRecord = {
  id: string
  incarnationId: PtyIncarnationId
  pid: number
  cols: number
  rows: number
  state: 'live' | 'exited' | 'replaced' | 'removed'
  spawnPending: boolean
  paused: boolean
  held: HeldEvent[]
  /** Whether a stop of this incarnation was requested (the first one decides `diedBeforeStopRequest`). */
  stopRequested?: boolean
  writes: FakeWrite[]
  acknowledgedChars: number
  producedChars: number
  buffer: string
  exit: PtyExitEvent | null
  options: ProviderSpawnOptions
  script: FakeSpawnScript
  liveness: boolean | null | undefined
  writeSettlement: WriteSettlement | undefined
  shutdownBehaviour: FakeShutdownBehaviour
  hostReportsChildExitStatus: boolean | undefined
  foregroundProcess: string | null
  hasChildProcesses: boolean | null
  foregroundEvidence: PtyForegroundProcessEvidence | null
  inputModeResets: number
}

type PendingSpawn = {
  record: FakePtyRecord
  result: PtySpawnResult
  resolve: (result: PtySpawnResult) => void
  reject: (error: unknown) => void
}




function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function basename(file: string): string {
  const parts = file.split(/[\\/]/)
  return parts[parts.length - 1] || file
}

// Why: a host callback or a listener that throws must not strand a half-done fake operation;
// the error is rethrown on its own microtask so the test runner still reports it.
const reportAsync = rethrowOnMicrotask

/**
 * Build the spawn-options `metadata` that scripts a fake spawn: `{ fakeScript: script }`. Lets a
 * generic driver (the conformance suite, a host's own helper) script the fake without a handle on it.
 *
 * @example
 * ```ts
 * await provider.spawn({ metadata: fakeScriptMetadata({ output: ['hi\r\n'], exit: { exitCode: 0 } }) })
 * ```
 */
export function fakeScriptMetadata(script: FakeSpawnScript): Readonly<Record<string, unknown>> {
  return { [FAKE_SCRIPT_METADATA_KEY]: script }
}

/**
 * Create a deterministic fake {@link PtyProvider}: no OS, no real timers, no wall clock.
 *
 * Script spawns with `scriptNextSpawn`, `metadata.fakeScript` or `defaultScript`; drive live PTYs
 * with `emitData`/`emitExit`; assert on `calls`, `getPty(id)` and the events. Scripted output and
 * exits after the reply are delivered on a later turn (see {@link FakeDeliveryScheduling}); `await
 * provider.settle()` delivers them deterministically.
 *
 * @example
 * ```ts
 * const provider = createFakePtyProvider()
 * provider.scriptNextSpawn({ output: ['hello\r\n'], exit: { exitCode: 0, signal: 15 } })
 * const { id } = await provider.spawn({ cols: 80, rows: 24 })
 * await provider.settle() // data 'hello\r\n', then exit { code: 0, cause: signaled(15) }
 * ```
 */
export function createFakePtyProvider(options: FakePtyProviderOptions = {}): FakePtyProvider {
  const name = options.name ?? 'fake'
  const idPrefix = options.idPrefix ?? 'fake-'
  const hostId = options.hostId ?? LOCAL_EXECUTION_HOST_ID
  const authoritativeListings = options.authoritativeListings ?? true
  const scheduling = options.scheduling ?? 'macrotask'
  if (typeof name !== 'string') throw new TypeError(`Expected the \`name\` option to be a string, got ${describeValue(name)}`)
  if (typeof idPrefix !== 'string') {
    throw new TypeError(`Expected the \`idPrefix\` option to be a string, got ${describeValue(idPrefix)}`)
  }
  if (scheduling !== 'macrotask' && scheduling !== 'microtask' && scheduling !== 'manual') {
    throw new TypeError(
      `Expected the \`scheduling\` option to be 'macrotask', 'microtask' or 'manual', got ${describeValue(scheduling)}`,
    )
  }
  let tick = 0
  const now = options.now ?? ((): number => ++tick)

  const calls: FakeProviderCall[] = []
  const ptys = new Map<string, FakePtyRecord>()
  const incarnationsById = new Map<string, PtyIncarnationId[]>()
  const scriptQueue: FakeSpawnScript[] = []
  const pending: PendingSpawn[] = []
  // Snapshot delivery: a listener that unsubscribes (or subscribes) while we deliver must not skip
  // anyone; a throwing listener is reported asynchronously.
  const dataListeners = createListenerSet<PtyDataEvent>({ onListenerError: reportAsync })
  const exitListeners = createListenerSet<PtyExitEvent>({ onListenerError: reportAsync })
  const scheduled: Array<() => void> = []
  let drainRequested = false
  let listingFailure: { error: unknown } | undefined
  let ptyCounter = 0
  let incarnationCounter = 0
  let disposed = false

  const record = (method: FakeProviderMethod, args: readonly unknown[]): void => {
    calls.push({ method, args, at: now() })
  }

  const deliver = (held: HeldEvent): void => {
    if (held.kind === 'data') dataListeners.fire(held.event)
    else exitListeners.fire(held.event)
  }

  const flushHeld = (pty: FakePtyRecord, ignorePause: boolean): void => {
    while (pty.held.length > 0 && (ignorePause || !pty.paused)) {
      const next = pty.held.shift()
      if (next !== undefined) deliver(next)
    }
  }

  const produceData = (pty: FakePtyRecord, data: string): void => {
    pty.producedChars += data.length
    pty.buffer += data
    const event: PtyDataEvent = { id: pty.id, data, incarnationId: pty.incarnationId }
    // Why: output produced while paused (or behind held output) waits, in order, for resume.
    if (pty.paused || pty.held.length > 0) pty.held.push({ kind: 'data', event })
    else dataListeners.fire(event)
  }

  const buildExitEvent = (pty: FakePtyRecord, exit: FakeExit, incarnationId: PtyIncarnationId): PtyExitEvent => {
    const event: PtyExitEvent = { id: pty.id, code: exit.exitCode, incarnationId }
    if (exit.observed !== undefined) event.observed = exit.observed
    if (exit.withoutCause !== true) {
      const hostReports =
        exit.hostReportsChildExitStatus ?? pty.hostReportsChildExitStatus ?? options.hostReportsChildExitStatus
      const observation: ProcessExitObservation = { exitCode: exit.exitCode, signal: exit.signal ?? null }
      if (hostReports !== undefined) observation.hostReportsChildExitStatus = hostReports
      event.cause = resolveProcessExitCause(observation)
    }
    return event
  }

  const endProcess = (pty: FakePtyRecord, exit: FakeExit): void => {
    pty.state = 'exited'
    const event = buildExitEvent(pty, exit, pty.incarnationId)
    pty.exit = event
    // Why: data always precedes exit — an exit behind held output waits for it; otherwise it is
    // delivered now, even while paused (there is nothing left to read).
    if (pty.held.length > 0) pty.held.push({ kind: 'exit', event })
    else exitListeners.fire(event)
  }

  const drain = (): void => {
    drainRequested = false
    while (scheduled.length > 0) {
      const next = scheduled.shift()
      next?.()
    }
  }

  const requestDrain = (): void => {
    if (scheduling === 'manual' || drainRequested) return
    drainRequested = true
    if (scheduling === 'microtask') {
      queueMicrotask(drain)
      return
    }
    // Looked up at call time so that fake timers (vi.useFakeTimers) can intercept it.
    const setImmediateFn = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate
    if (typeof setImmediateFn === 'function') setImmediateFn(drain)
    else setTimeout(drain, 0)
  }

  const isCurrentLive = (pty: FakePtyRecord): boolean => pty.state === 'live' && ptys.get(pty.id) === pty

  // Scripted events after the reply: each is dropped if the process died (or was replaced) meanwhile.
  const scheduleAfterReply = (pty: FakePtyRecord, promise: Promise<PtySpawnResult>): void => {
    const { output, exit } = pty.script
    if ((output === undefined || output.length === 0) && exit === undefined) return
    for (const chunk of output ?? []) {
      scheduled.push(() => {
        if (isCurrentLive(pty)) produceData(pty, chunk)
      })
    }
    if (exit !== undefined) {
      scheduled.push(() => {
        if (isCurrentLive(pty)) endProcess(pty, exit)
      })
    }
    // Why: request the drain only once the spawn promise has resolved, so the caller's first
    // continuation always runs before any scripted event.
    void promise.then(requestDrain, () => undefined)
  }

  const requirePty = (id: string, control: string): FakePtyRecord => {
    const pty = ptys.get(id)
    if (pty === undefined) throw new TypeError(`${control}: no fake PTY has the id ${JSON.stringify(id)}`)
    return pty
  }

  const livenessOf = (id: string): boolean | null => {
    const pty = ptys.get(id)
    if (pty !== undefined && pty.liveness !== undefined) return pty.liveness
    if (pty !== undefined && pty.state === 'live') return true
    return authoritativeListings ? false : null
  }

  const pickScript = (spawnOptions: ProviderSpawnOptions): FakeSpawnScript => {
    const fromMetadata = spawnOptions.metadata?.[FAKE_SCRIPT_METADATA_KEY]
    if (fromMetadata !== undefined) {
      if (!isPlainObject(fromMetadata)) {
        throw new TypeError(
          `Expected the \`metadata.${FAKE_SCRIPT_METADATA_KEY}\` option to be a FakeSpawnScript object, got ${describeValue(fromMetadata)}`,
        )
      }
      return fromMetadata as FakeSpawnScript
    }
    return scriptQueue.shift() ?? options.defaultScript ?? {}
  }

  const attach = (spawnOptions: ProviderSpawnOptions, script: FakeSpawnScript | undefined): Promise<PtySpawnResult> => {
    if (script?.fail !== undefined) return Promise.reject(script.fail)
    const id = spawnOptions.sessionId
    const pty = id === undefined ? undefined : ptys.get(id)
    if (pty === undefined || pty.state !== 'live') return Promise.reject(new FakePtyAbsentError(id))
    const expected = spawnOptions.expectedIncarnationId
    if (expected !== undefined && expected !== pty.incarnationId) {
      // Why not an absence: a process holds the id, so the expected one is not proven gone.
      return Promise.reject(
        new FakePtyLiveOtherIncarnationError(pty.id, { expectedIncarnationId: expected, liveIncarnationId: pty.incarnationId }),
      )
    }
    const result: PtySpawnResult = {
      id: pty.id,
      pid: pty.pid,
      incarnationId: pty.incarnationId,
      isReattach: true,
      providerSequence: { value: pty.producedChars, generation: 'continued' },
      cols: pty.cols,
      rows: pty.rows,
    }
    if (pty.hostReportsChildExitStatus !== undefined) result.hostReportsChildExitStatus = pty.hostReportsChildExitStatus
    return Promise.resolve(result)
  }

  const spawnFresh = (spawnOptions: ProviderSpawnOptions, script: FakeSpawnScript): Promise<PtySpawnResult> => {
    if (script.fail !== undefined) return Promise.reject(script.fail)
    const id = script.id ?? spawnOptions.sessionId ?? `${idPrefix}${++ptyCounter}`
    const previous = ptys.get(id)
    if (previous !== undefined && previous.state === 'live') {
      // Why: a reused id replaces the old process silently (a daemon that lost track of it); the
      // test can still emit the old incarnation's late exit with `emitExit(id, { incarnationId })`.
      flushHeld(previous, true)
      previous.state = 'replaced'
    }
    incarnationCounter += 1
    const incarnationId = toPtyIncarnationId(`${idPrefix}inc-${incarnationCounter}`)
    incarnationsById.set(id, [...(incarnationsById.get(id) ?? []), incarnationId])
    const hostReports = script.hostReportsChildExitStatus ?? options.hostReportsChildExitStatus
    const pty: FakePtyRecord = {
      id,
      incarnationId,
      pid: script.pid ?? FAKE_PID_BASE + incarnationCounter,
      cols: script.cols ?? spawnOptions.cols ?? FAKE_DEFAULT_COLS,
      rows: script.rows ?? spawnOptions.rows ?? FAKE_DEFAULT_ROWS,
      state: 'live',
      spawnPending: script.hang === true,
      paused: false,
      held: [],
      writes: [],
      acknowledgedChars: 0,
      producedChars: 0,
      buffer: '',
      exit: null,
      options: spawnOptions,
      script,
      liveness: script.liveness,
      writeSettlement: script.writeSettlement,
      shutdownBehaviour: script.shutdown ?? 'confirm',
      hostReportsChildExitStatus: hostReports,
      foregroundProcess: spawnOptions.file === undefined ? FAKE_DEFAULT_PROCESS_NAME : basename(spawnOptions.file),
      hasChildProcesses: false,
      foregroundEvidence: null,
      inputModeResets: 0,
    }
    ptys.set(id, pty)
    if (script.commitOnSpawn !== false && spawnOptions.onPtySpawnCommitted !== undefined) {
      try {
        spawnOptions.onPtySpawnCommitted()
      } catch (error) {
        reportAsync(error)
      }
    }
    const result: PtySpawnResult = {
      id,
      pid: pty.pid,
      incarnationId,
      isReattach: false,
      cols: pty.cols,
      rows: pty.rows,
    }
    if (script.providerSequence !== undefined) result.providerSequence = script.providerSequence
    if (hostReports !== undefined) result.hostReportsChildExitStatus = hostReports
    if (script.exitBeforeReply !== undefined) {
      for (const chunk of script.output ?? []) produceData(pty, chunk)
      endProcess(pty, script.exitBeforeReply)
      result.exitedBeforeSpawnReply = true
      return Promise.resolve(result)
    }
    if (script.hang === true) {
      return new Promise<PtySpawnResult>((resolve, reject) => {
        pending.push({ record: pty, result, resolve, reject })
      })
    }
    const promise = Promise.resolve(result)
    scheduleAfterReply(pty, promise)
    return promise
  }

  const takePending = (id: string | undefined, control: string): PendingSpawn => {
    const index = id === undefined ? 0 : pending.findIndex((entry) => entry.record.id === id)
    const entry = pending[index]
    if (index < 0 || entry === undefined) {
      throw new TypeError(
        `${control}: no hung spawn${id === undefined ? '' : ` with the id ${JSON.stringify(id)}`} is pending`,
      )
    }
    pending.splice(index, 1)
    entry.record.spawnPending = false
    return entry
  }

  const provider: FakePtyProvider = {
    name,
    authoritativeListings,
    get calls(): readonly FakeProviderCall[] {
      return calls
    },

    spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
      record('spawn', [spawnOptions])
      if (disposed) return Promise.reject(new Error(`The fake PTY provider "${name}" was disposed`))
      // A refused option rejects (never throws): the same single failure path as every provider.
      return callProvider(() => {
        if (spawnOptions.cols !== undefined) assertPtyDimension('cols', spawnOptions.cols)
        if (spawnOptions.rows !== undefined) assertPtyDimension('rows', spawnOptions.rows)
        if (spawnOptions.attachOnly === true) {
          const fromMetadata = spawnOptions.metadata?.[FAKE_SCRIPT_METADATA_KEY]
          return attach(spawnOptions, isPlainObject(fromMetadata) ? (fromMetadata as FakeSpawnScript) : undefined)
        }
        const script = pickScript(spawnOptions)
        const existing = spawnOptions.sessionId === undefined ? undefined : ptys.get(spawnOptions.sessionId)
        // A persistent-session spawn of a live session attaches to it, as a daemon would.
        if (existing !== undefined && existing.state === 'live' && spawnOptions.isNewSession !== true && script.id === undefined) {
          return attach(spawnOptions, script)
        }
        return spawnFresh(spawnOptions, script)
      })
    },

    write(id: string, data: string): WriteSettlement {
      record('write', [id, data])
      const pty = ptys.get(id)
      if (pty === undefined) return refusedWrite('pty_not_found')
      if (pty.state !== 'live') return refusedWrite('pty_exited')
      const settlement = pty.writeSettlement ?? WRITE_ACCEPTED
      pty.writes.push({ data, settlement })
      return settlement
    },

    resize(id: string, cols: number, rows: number): boolean {
      record('resize', [id, cols, rows])
      assertPtyDimension('cols', cols, 'argument')
      assertPtyDimension('rows', rows, 'argument')
      const pty = ptys.get(id)
      if (pty === undefined || pty.state !== 'live') return false
      pty.cols = cols
      pty.rows = rows
      return true
    },

    getSize(id: string): { cols: number; rows: number } | null {
      record('getSize', [id])
      const pty = ptys.get(id)
      if (pty === undefined || pty.state !== 'live') return null
      return { cols: pty.cols, rows: pty.rows }
    },

    shutdown(id: string, shutdownOptions?: PtyShutdownOptions): Promise<void> {
      record('shutdown', shutdownOptions === undefined ? [id] : [id, shutdownOptions])
      try {
        // Same rules as every provider: deadlineMs absolute, timeoutMs a duration, not both, finite.
        resolveWaitDeadline(shutdownOptions, 0)
      } catch (error) {
        return Promise.reject(error)
      }
      const pty = ptys.get(id)
      if (pty !== undefined && !pty.stopRequested) {
        pty.stopRequested = true
        // Dead on its own before the first stop (its exit maybe still held behind output): the exit says so (issue 13.4).
        if (pty.state === 'exited' && pty.exit !== null && pty.exit.incarnationId === pty.incarnationId) pty.exit.diedBeforeStopRequest = true
      }
      if (pty === undefined || pty.state !== 'live') return Promise.resolve()
      const expected = shutdownOptions?.expectedIncarnationId
      // Why: a stop aimed at an older incarnation must leave the replacement alone.
      if (expected !== undefined && expected !== pty.incarnationId) return Promise.resolve()
      switch (pty.shutdownBehaviour) {
        case 'fail':
          return Promise.reject(new Error(`Fake shutdown of PTY ${JSON.stringify(id)} failed (scripted)`))
        case 'never_confirm':
          return Promise.resolve()
        case 'confirm':
          endProcess(pty, {
            exitCode: 0,
            signal: shutdownOptions?.immediate === true ? FAKE_IMMEDIATE_STOP_SIGNAL : FAKE_GRACEFUL_STOP_SIGNAL,
          })
          return Promise.resolve()
      }
    },

    pauseProducer(id: string): void {
      record('pauseProducer', [id])
      const pty = ptys.get(id)
      if (pty !== undefined) pty.paused = true
    },

    resumeProducer(id: string): void {
      record('resumeProducer', [id])
      const pty = ptys.get(id)
      if (pty === undefined) return
      pty.paused = false
      flushHeld(pty, false)
    },

    acknowledgeData(id: string, chars: number): void {
      record('acknowledgeData', [id, chars])
      const pty = ptys.get(id)
      if (pty !== undefined) pty.acknowledgedChars += chars
    },

    listProcesses(listOptions?: PtyListProcessesOptions): Promise<PtyProcessInfo[]> {
      record('listProcesses', listOptions === undefined ? [] : [listOptions])
      try {
        // Read as every provider must (absolute `deadlineMs`, relative `timeoutMs`): a malformed
        // budget is a TypeError naming the option. The fake answers at once, so any deadline —
        // a past one included ("ask once, do not wait") — gets the full listing.
        resolveWaitDeadline(listOptions, 0)
      } catch (error) {
        return Promise.reject(error)
      }
      if (listingFailure !== undefined) return Promise.reject(listingFailure.error)
      const rows: PtyProcessInfo[] = []
      for (const pty of ptys.values()) {
        if (pty.state !== 'live') continue
        const row: PtyProcessInfo = {
          id: pty.id,
          hostId,
          incarnationId: pty.incarnationId,
          pid: pty.pid,
          cwd: pty.options.cwd ?? null,
          title: pty.foregroundProcess ?? FAKE_DEFAULT_PROCESS_NAME,
        }
        if (pty.options.scopeId !== undefined) row.scopeId = pty.options.scopeId
        if (pty.options.slotKey !== undefined) row.slotKey = pty.options.slotKey
        if (pty.options.claimKey !== undefined) row.claimKey = pty.options.claimKey
        rows.push(row)
      }
      return Promise.resolve(rows)
    },

    hasPty(id: string): boolean | null {
      record('hasPty', [id])
      return livenessOf(id)
    },

    probeLiveness(id: string): Promise<boolean | null> {
      record('probeLiveness', [id])
      return Promise.resolve(livenessOf(id))
    },

    getCwd(id: string, options?: PtyCwdOptions): Promise<string | null> {
      record('getCwd', options === undefined ? [id] : [id, options])
      const pty = ptys.get(id)
      return Promise.resolve(pty !== undefined && pty.state === 'live' ? (pty.options.cwd ?? null) : null)
    },

    getForegroundProcess(id: string): Promise<string | null> {
      record('getForegroundProcess', [id])
      const pty = ptys.get(id)
      return Promise.resolve(pty !== undefined && pty.state === 'live' ? pty.foregroundProcess : null)
    },

    hasChildProcesses(id: string): Promise<boolean | null> {
      record('hasChildProcesses', [id])
      const pty = ptys.get(id)
      return Promise.resolve(pty !== undefined && pty.state === 'live' ? pty.hasChildProcesses : null)
    },

    confirmForeground(id: string): Promise<PtyForegroundProcessEvidence | null> {
      record('confirmForeground', [id])
      const pty = ptys.get(id)
      const evidence = pty !== undefined && pty.state === 'live' ? pty.foregroundEvidence : null
      return Promise.resolve(evidence === null ? null : { ...evidence })
    },

    supportsForegroundProcessEvidence(): boolean {
      record('supportsForegroundProcessEvidence', [])
      return options.foregroundProcessEvidence ?? true
    },

    resetInputModes(id: string): Promise<void> {
      record('resetInputModes', [id])
      const pty = ptys.get(id)
      if (pty !== undefined && pty.state === 'live') pty.inputModeResets += 1
      return Promise.resolve()
    },

    clearBuffer(id: string): Promise<void> {
      record('clearBuffer', [id])
      const pty = ptys.get(id)
      if (pty !== undefined) pty.buffer = ''
      return Promise.resolve()
    },

    getBufferSnapshot(id: string, snapshotOptions?: { scrollbackRows?: number }): Promise<PtyProviderBufferSnapshot | null> {
      record('getBufferSnapshot', snapshotOptions === undefined ? [id] : [id, snapshotOptions])
      const pty = ptys.get(id)
      if (pty === undefined || pty.state !== 'live') return Promise.resolve(null)
      return Promise.resolve({ data: pty.buffer, cols: pty.cols, rows: pty.rows, seq: pty.producedChars, source: 'fake' })
    },

    onData(listener: (event: PtyDataEvent) => void): Unsubscribe {
      record('onData', [listener])
      return dataListeners.add(listener)
    },

    onExit(listener: (event: PtyExitEvent) => void): Unsubscribe {
      record('onExit', [listener])
      return exitListeners.add(listener)
    },

    dispose(): Promise<void> {
      record('dispose', [])
      if (disposed) return Promise.resolve()
      disposed = true
      for (const pty of [...ptys.values()]) {
        if (pty.state !== 'live') {
          flushHeld(pty, true)
          continue
        }
        pty.paused = false
        flushHeld(pty, true)
        endProcess(pty, { exitCode: 0, signal: FAKE_IMMEDIATE_STOP_SIGNAL })
      }
      for (const entry of pending.splice(0)) {
        entry.record.spawnPending = false
        entry.reject(new Error(`The fake PTY provider "${name}" was disposed while the spawn of ${JSON.stringify(entry.record.id)} was pending`))
      }
      scheduled.length = 0
      dataListeners.clear()
      exitListeners.clear()
      return Promise.resolve()
    },

    [Symbol.asyncDispose](): Promise<void> {
      return provider.dispose()
    },

    scriptNextSpawn(script: FakeSpawnScript): void {
      if (!isPlainObject(script)) {
        throw new TypeError(`Expected the \`script\` argument to be a FakeSpawnScript object, got ${describeValue(script)}`)
      }
      scriptQueue.push(script)
    },

    emitData(id: string, data: string): void {
      const pty = requirePty(id, 'emitData')
      if (pty.state !== 'live') {
        throw new TypeError(
          `emitData: the fake PTY ${JSON.stringify(id)} is not live; output after its exit would break the data-before-exit rule`,
        )
      }
      produceData(pty, data)
    },

    emitExit(id: string, exit: FakeExit): void {
      const pty = requirePty(id, 'emitExit')
      if (exit.incarnationId !== undefined && exit.incarnationId !== pty.incarnationId) {
        // A stale exit of an older process: reported as such, and the current process lives on.
        exitListeners.fire(buildExitEvent(pty, exit, exit.incarnationId))
        return
      }
      if (pty.state !== 'live') {
        throw new TypeError(`emitExit: the fake PTY ${JSON.stringify(id)} already exited; a second exit would be a lie`)
      }
      endProcess(pty, exit)
    },

    setLiveness(id: string, value: boolean | null | undefined): void {
      requirePty(id, 'setLiveness').liveness = value
    },

    setWriteSettlement(id: string, settlement: WriteSettlement | undefined): void {
      requirePty(id, 'setWriteSettlement').writeSettlement = settlement
    },

    setShutdownBehaviour(id: string, behaviour: FakeShutdownBehaviour): void {
      requirePty(id, 'setShutdownBehaviour').shutdownBehaviour = behaviour
    },

    setProcessInfo(id: string, info: FakeProcessInfo): void {
      const pty = requirePty(id, 'setProcessInfo')
      if (info.foregroundEvidence !== undefined) pty.foregroundEvidence = info.foregroundEvidence === null ? null : { ...info.foregroundEvidence }
      if (info.foregroundProcess !== undefined) pty.foregroundProcess = info.foregroundProcess
      if (info.hasChildProcesses !== undefined) pty.hasChildProcesses = info.hasChildProcesses
    },

    setListingFailure(error: unknown): void {
      listingFailure = error === undefined ? undefined : { error }
    },

    livePtyIds(): string[] {
      return [...ptys.values()].filter((pty) => pty.state === 'live').map((pty) => pty.id)
    },

    getPty(id: string): FakePtyInspection | undefined {
      const pty = ptys.get(id)
      if (pty === undefined) return undefined
      return {
        id: pty.id,
        incarnationId: pty.incarnationId,
        incarnations: [...(incarnationsById.get(id) ?? [])],
        pid: pty.pid,
        cols: pty.cols,
        rows: pty.rows,
        live: pty.state === 'live',
        paused: pty.paused,
        spawnPending: pty.spawnPending,
        written: pty.writes
          .filter((write) => write.settlement.kind === 'accepted')
          .map((write) => write.data)
          .join(''),
        writes: [...pty.writes],
        acknowledgedChars: pty.acknowledgedChars,
        inputModeResets: pty.inputModeResets,
        producedChars: pty.producedChars,
        heldEventCount: pty.held.length,
        exit: pty.exit,
        spawnOptions: pty.options,
        script: pty.script,
      }
    },

    clearCalls(): void {
      calls.length = 0
    },

    releaseSpawn(id?: string): void {
      const entry = takePending(id, 'releaseSpawn')
      // Why: a process that died while its reply was held was seen exiting before the reply.
      const result: PtySpawnResult =
        entry.record.state === 'live' ? entry.result : { ...entry.result, exitedBeforeSpawnReply: true }
      const promise = Promise.resolve(result)
      entry.resolve(result)
      scheduleAfterReply(entry.record, promise)
    },

    failSpawn(id?: string, error: unknown = new Error('Fake spawn failed (scripted)')): void {
      const entry = takePending(id, 'failSpawn')
      const pty = entry.record
      // Why: a provider whose spawn fails leaves nothing running and reports nothing.
      if (pty.state === 'live') pty.state = 'removed'
      if (ptys.get(pty.id) === pty) ptys.delete(pty.id)
      entry.reject(error)
    },

    pendingSpawnCount(): number {
      return pending.length
    },

    listenerCount(): number {
      return dataListeners.size + exitListeners.size
    },

    async settle(): Promise<void> {
      for (let round = 0; round < FAKE_SETTLE_MAX_ROUNDS; round += 1) {
        for (let turn = 0; turn < FAKE_SETTLE_MICROTASK_TURNS; turn += 1) await Promise.resolve()
        if (scheduled.length === 0) return
        drain()
      }
      throw new Error(`settle() gave up after ${FAKE_SETTLE_MAX_ROUNDS} rounds: deliveries kept being scheduled`)
    },
  }
  return provider
}
