import type {
  ExecutionHostId,
  ProviderSpawnOptions,
  PtyCwdOptions,
  PtyExitEvent,
  PtyForegroundProcessEvidence,
  PtyIncarnationId,
  PtyListProcessesOptions,
  PtyLivenessProbeOptions,
  PtyProcessInfo,
  PtyProvider,
  PtyProviderBufferSnapshot,
  WriteSettlement,
} from '../contracts/index.js'
import type { FakeDeliveryScheduling } from './fake-delivery-queue.js'
import type { FakeExit, FakeShutdownBehaviour, FakeSpawnScript } from './fake-spawn-script.js'

// The public shape of the fake provider: its options, what it records, what a test inspects, and
// the provider-plus-controls interface `createFakePtyProvider` returns.

/** Options of {@link createFakePtyProvider}. */
export type FakePtyProviderOptions = {
  /** The provider's `name`. Default `'fake'`. */
  name?: string | undefined
  /**
   * Whether the fake's listings prove absence. Default `true`. With `false`, liveness of an exited
   * or unknown PTY is `null` rather than `false`.
   */
  authoritativeListings?: boolean | undefined
  /** Provider-wide default for `hostReportsChildExitStatus` (a spawn script or an exit overrides it). */
  hostReportsChildExitStatus?: boolean | undefined
  /** Prefix of minted PTY ids (and incarnation ids). Default `'fake-'`. */
  idPrefix?: string | undefined
  /** The `hostId` of listing rows. Default `'local'`. */
  hostId?: ExecutionHostId | undefined
  /** The clock stamped on recorded calls. Default: a counter (1, 2, 3…), never the wall clock. */
  now?: (() => number) | undefined
  /** The script of every spawn that has none queued and none in its metadata. */
  defaultScript?: FakeSpawnScript | undefined
  /** When scripted post-reply events are delivered. Default `'macrotask'`. */
  scheduling?: FakeDeliveryScheduling | undefined
  /** What `supportsForegroundProcessEvidence` answers. Default `true`. */
  foregroundProcessEvidence?: boolean | undefined
}

/** The `PtyProvider` methods the fake records, and its `detach()` (the pty host provider's, played). */
export type FakeProviderMethod =
  | 'spawn'
  | 'write'
  | 'writeBytes'
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
  | 'onOutputLoss'
  | 'dispose'
  | 'detach'

/** What {@link FakePtyProvider.setProcessInfo} changes; an absent field is left as it is. */
export type FakeProcessInfo = {
  /** What `getForegroundProcess` answers. */
  foregroundProcess?: string | null | undefined
  /** What `hasChildProcesses` answers. */
  hasChildProcesses?: boolean | null | undefined
  /** What `confirmForeground` answers (`null`: cannot confirm). */
  foregroundEvidence?: PtyForegroundProcessEvidence | null | undefined
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
  /**
   * The text written; for a write of bytes (`writeBytes`), the bytes decoded as UTF-8 (a malformed
   * sequence as U+FFFD): assert bytes with {@link FakeWrite.bytes} or `writtenBytes`.
   */
  data: string
  /** For a write of bytes (`writeBytes`) only: a copy of the bytes, exactly as written. */
  bytes?: Uint8Array
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
  /**
   * Concatenation of the data of every accepted write (a write of bytes decoded as UTF-8: see
   * {@link FakeWrite.data}).
   */
  written: string
  /**
   * The bytes every accepted write handed on, in order: a string as its UTF-8 encoding, a write of
   * bytes exactly as written. What a program reading the PTY would have read.
   */
  writtenBytes: Uint8Array
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
  /**
   * The exit that ended this incarnation, once it did — `null` also after a stop with the
   * `'exit_unreported'` behaviour, which ends the process without any exit (see `live`).
   */
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
 * (unless the PTY's producer is paused, which holds output until `resumeProducer`). One exception
 * through a controller: called from inside a controller listener about the same PTY (a `data`
 * listener that calls `controller.kill(id)`, whose `shutdown` reports the exit at once), the
 * controller publishes the event only once the one being delivered has reached every listener.
 */
export interface FakePtyProvider extends PtyProvider {
  /** Whether absence from a listing is proof. */
  readonly authoritativeListings: boolean
  /** Every `PtyProvider` method call, in order. */
  readonly calls: readonly FakeProviderCall[]
  /**
   * Settles synchronously — the PTY's scripted settlement, `refused('pty_exited')` after exit,
   * `refused('pty_not_found')` for an unknown id — except while the PTY's input is held
   * ({@link FakePtyProvider.setInputHeld}): then a promise, settled when released or dropped.
   */
  write(id: string, data: string): WriteSettlement | Promise<WriteSettlement>
  /**
   * Settles as {@link FakePtyProvider.write} does, recording a copy of the bytes (see
   * `getPty(id).writes` and `writtenBytes`). To test a provider without the capability (one
   * written before providers could take bytes), leave it out: `const { writeBytes, ...textOnly } =
   * createFakePtyProvider()` — a controller then refuses bytes `provider_cannot_write_bytes`.
   */
  writeBytes(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement>
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
  /** Its live PTYs (optional fields absent, never `undefined`). */
  listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
  /** The scripted liveness, or the default (see {@link FakeSpawnScript.liveness}). */
  hasPty(id: string): boolean | null
  /**
   * Same answer as {@link FakePtyProvider.hasPty}, asynchronously. Asked about an incarnation the
   * id does not hold now, never `true`: `false` with authoritative listings (it ended, or the fake
   * never minted it) except for one a script's reused id replaced while it ran, which is `null`
   * (its fate is unknown), as it is without authoritative listings.
   */
  probeLiveness(id: string, options?: PtyLivenessProbeOptions): Promise<boolean | null>
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
  getBufferSnapshot(id: string, options?: { scrollbackRows?: number | undefined }): Promise<PtyProviderBufferSnapshot | null>
  /**
   * Kills every PTY (their exits are emitted) — none after {@link FakePtyProvider.detach}, whose
   * PTYs run on — rejects pending spawns, then drops every listener. A pending spawn rejects with
   * `FakePtyProviderDisposedError` (`code: 'provider_disposed'`, as the real providers), and so
   * does every call after but `dispose`, `detach` and the `on*` subscriptions (a method answering
   * with a promise rejects, any other throws), its `method` and `ptyId` naming the call.
   */
  dispose(): Promise<void>
  /**
   * Play the pty host provider's `detach()` (docs/pty-host.md, "After `detach()`"): the fake lets
   * go of its PTYs, which run on where it no longer sees them — for a host app's test of its quit
   * path or of a controller whose provider was detached (docs/controller.md, "After a provider's
   * `detach()`"). Resolves at once. Afterwards, as the pty host provider:
   *
   * - refused with {@link FakePtyProviderDetachedError} (`code: 'provider_detached'`, naming the
   *   method and the PTY): `spawn`, `listProcesses`, `clearBuffer`, and `shutdown` — but of a PTY
   *   whose exit a listener heard before the detach, which resolves;
   * - `null` ("unknown"): `hasPty` and `probeLiveness` (`false` for a PTY whose exit was heard),
   *   `getSize`, `getCwd`, `getForegroundProcess`, `hasChildProcesses`, `confirmForeground`,
   *   `getBufferSnapshot`;
   * - a write refused `provider_refused_write` (`pty_exited` for a PTY whose exit was heard), a
   *   resize `false`; `pauseProducer`, `resumeProducer`, `acknowledgeData` and `resetInputModes`
   *   do nothing; `supportsForegroundProcessEvidence` answers as before;
   * - no event reaches a listener (output held for a paused PTY is dropped; a write held by
   *   `setInputHeld` settles `unverifiable('transport_lost', true)`); a hung spawn still settles as
   *   the test says (`releaseSpawn`, `failSpawn`), as the pty host lets a spawn already sent finish;
   * - the test controls that emit or script (`emitData`, `emitExit`, `setLiveness`…) throw a
   *   `TypeError` saying the fake was detached; the inspections (`getPty`, `calls`…) answer;
   * - `dispose()` stops nothing and reports no exit.
   *
   * Arguments are still checked first. Recorded in `calls`; a second call, or one after
   * `dispose()`, does nothing.
   */
  detach(): Promise<void>
  /** Same as `dispose()`, for `await using provider = createFakePtyProvider()`. */
  [Symbol.asyncDispose](): Promise<void>

  // The controls below throw a `TypeError` naming the control, the argument and the value for a
  // malformed argument or an id never spawned; and, naming the control, once the provider was
  // disposed or detached (what they emit or script could not be seen) — but the inspections
  // (`livePtyIds`, `getPty`, `clearCalls`, `pendingSpawnCount`, `listenerCount`) and `settle()`.

  /** Queue the script of the next spawn that carries no `metadata.fakeScript`. */
  scriptNextSpawn(script: FakeSpawnScript): void
  /** Emit output for a live PTY now (held while paused). */
  emitData(id: string, data: string): void
  /**
   * `chars` of a live PTY's output go by undelivered (as over a dropped link whose replay came too
   * late): an `onOutputLoss` event now, in order with its output (held while paused). The PTY's
   * sequence (its snapshots' `seq`) moves past them.
   */
  emitOutputLoss(id: string, chars: number): void
  /**
   * End a live PTY now with this exit — or, with the `incarnationId` of an older incarnation the
   * fake minted under the id, emit a stale exit (the current process lives on). An
   * `incarnationId` never minted under the id throws (a typo made a stale exit that ended nothing).
   */
  emitExit(id: string, exit: FakeExit): void
  /**
   * Override liveness answers for the PTY's current incarnation — also once it exited (a provider
   * that cannot tell); `undefined` restores the default.
   */
  setLiveness(id: string, value: boolean | null | undefined): void
  /** Override the settlement of writes to the live PTY; `undefined` restores `accepted`. Throws for a PTY that exited. */
  setWriteSettlement(id: string, settlement: WriteSettlement | undefined): void
  /**
   * Play a program that reads no input (busy, stopped, `sleep`), whose input the provider holds as
   * a real one does once the terminal's input buffer is full: with `true`, every later write to the
   * live PTY is held, its settlement a promise — `accepted` (or the scripted settlement) and
   * recorded in `writes` once released with `false`, in order; `refused('pty_exited')` when the
   * PTY ends first (its exit, or a stop), the bytes dropped with it, as the real providers settle a
   * write whose held bytes never reached the PTY. Throws for a PTY that exited.
   */
  setInputHeld(id: string, held: boolean): void
  /** Change what a stop of the live PTY does. Throws for a PTY that exited (its stop resolves). */
  setShutdownBehaviour(id: string, behaviour: FakeShutdownBehaviour): void
  /** Change what process inspection of the live PTY answers. Throws for a PTY that exited (answered `null`). */
  setProcessInfo(id: string, info: FakeProcessInfo): void
  /** While set, `listProcesses` rejects with this error (a host that cannot be listed); `undefined` clears it (`null` throws). */
  setListingFailure(error: unknown): void
  /** Ids whose current incarnation is live. */
  livePtyIds(): string[]
  /** Inspect the current incarnation behind an id; `undefined` when the id was never spawned. */
  getPty(id: string): FakePtyInspection | undefined
  /** Forget the recorded calls. */
  clearCalls(): void
  /** Resolve a hung spawn: the oldest pending one, or the one with this PTY id (also once detached; throws once disposed). */
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
