import type { PtyCwdOptions } from './cwd-options.js'
import type { TerminalExitCause } from '../exit-cause/index.js'
import type { ProviderBufferSnapshot } from './buffer-snapshot.js'
import type { PtyWaitBudget } from './deadline.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { ProviderProcessInfo, PtyForegroundProcessEvidence } from './process-info.js'
import type { ProviderSpawnOptions, PtySpawnResult } from './spawn-options.js'
import type { WriteSettlement } from './write-settlement.js'

/** A PTY's size in character cells. */
export type PtySize = {
  /** Columns. */
  cols: number
  /** Rows. */
  rows: number
}

/** Output from a provider. Plain serializable data: a provider may live in another process. */
export type PtyDataEvent = {
  /** The PTY id. */
  id: string
  /** The output, decoded as UTF-8. */
  data: string
  /** The incarnation that produced it, when attested (`undefined` means absent: not attested). */
  incarnationId?: PtyIncarnationId | undefined
}

/**
 * Output from a provider that delivers bytes (for example the node-pty provider created with
 * `output: 'bytes'`): the bytes the PTY's master gave, with no decoding. Such a provider reports a
 * PTY's output only here, never through {@link PtyProvider.onData}, and counts flow control
 * (`acknowledgeData`, `providerSequence`) in bytes. Plain data: a `Uint8Array` (a `Buffer` is one).
 */
export type PtyBytesEvent = {
  /** The PTY id. */
  id: string
  /** The output, as read from the PTY (a multi-byte UTF-8 sequence may be split across events). */
  bytes: Uint8Array
  /** The incarnation that produced it, when attested (`undefined` means absent: not attested). */
  incarnationId?: PtyIncarnationId | undefined
}

/**
 * A provider's report that output of a PTY went by undelivered: the chars (bytes, for a bytes-mode
 * PTY) `[fromSeq, toSeq)` of its stream never reached a data event, and the next one continues at
 * `toSeq` — for example a pty host whose replay ring no longer held what a dropped connection
 * missed. The controller moves the PTY's output sequence on by `toSeq − fromSeq`, so the
 * sequences after the gap still match the provider's (its snapshots' `seq`). A loss reported while
 * the PTY's spawn or attach is in flight is held with the output around it, except one that ends
 * at or before where the spawn result's `providerSequence` places the stream (an attach whose
 * `replayFrom` fell out of a ring): that placement counts it already. Plain serializable data.
 */
export type PtyOutputLossEvent = {
  /** The PTY id. */
  id: string
  /** The first lost position, in the provider's own sequence of the PTY's output. */
  fromSeq: number
  /** Where delivery resumes (exclusive end of the loss). */
  toSeq: number
  /** The incarnation whose output was lost, when attested (`undefined` means absent: not attested). */
  incarnationId?: PtyIncarnationId | undefined
}

/** A provider's report that a PTY's process ended. Plain serializable data. */
export type PtyExitEvent = {
  /** The PTY id. */
  id: string
  /**
   * The status the host forwarded. A negative code (see `UNVERIFIED_PROCESS_EXIT_CODE`) says the
   * host could not vouch for the status; whether the death is proven is `observed`'s to say — an
   * exit the provider observed certifies it whatever the code, so a provider that could not vouch
   * for the death sends `observed: 'synthetic'` with it.
   */
  code: number
  /**
   * The incarnation that exited, when attested; the controller fences exits by it. `undefined`
   * means absent (not attested), never a mismatch.
   */
  incarnationId?: PtyIncarnationId | undefined
  /**
   * The cause, when the provider can tell a signal from a code (build it with
   * `resolveProcessExitCause`). Omit it when you cannot: the controller then resolves the bare
   * code with `resolveUnreportedExitCause`, which refuses to read `0` as a clean exit. `undefined`
   * means absent.
   */
  cause?: TerminalExitCause | undefined
  /**
   * The evidence behind this event. `'provider'` (the default when absent): the provider observed
   * the process end (its own exit callback fired), which certifies the death whatever the code —
   * also a negative one. `'synthetic'`: the provider reports an exit it did not observe (it lost
   * contact, or gave up on a stop); with a negative code it does not certify the death.
   * `undefined` means absent (`'provider'`).
   */
  observed?: 'provider' | 'synthetic' | undefined
  /**
   * `true` when the provider knew the process dead before a stop of it was requested (an exit
   * reported late, behind held output): the operator-close rule then does not apply, since the
   * process ended on its own. The order of death and stop request decides, not the order of reports.
   * The bundled providers send it too for a death by SIGKILL that no stop had sent when the death
   * was seen (an outside `kill -9` or the OOM killer crossing the stop's hang-up): SIGKILL cannot be
   * caught, so the death is taken as not the stop's (a program that kills itself with SIGKILL in
   * its hang-up handler reads the same way). `undefined` means absent (not known).
   */
  diedBeforeStopRequest?: boolean | undefined
  /**
   * `true` when the provider attests that a stop of this incarnation was requested through it
   * before the process died — by a controller that no longer follows the PTY (an earlier run of
   * the app, whose pty host session outlived it), by another app sharing the provider's host, or
   * by the host calling the provider's `shutdown` or `dispose` itself (the bundled providers send
   * it whenever their own stop found the process not yet dead; a controller's own stop may carry
   * it too). The controller then applies the operator-close rule as for a stop it requested
   * itself, so the exit is `operator_close` rather than the signal the stop sent. Affirmative
   * evidence only: leave it out when you cannot tell (its absence never means "no stop"); an
   * unconfirmed stop stays `unknown/stop_unverified`, and `diedBeforeStopRequest` wins over it.
   * `undefined` means absent.
   */
  stopRequestedBeforeDeath?: boolean | undefined
}

/**
 * How to stop a PTY. The wait is bounded by `deadlineMs` (an **absolute** epoch time, as the seed
 * origin passes it: `Date.now() + 5_000`) or `timeoutMs` (a duration); give at most one. Read them
 * with `resolveWaitDeadline`.
 */
export type PtyShutdownOptions = PtyWaitBudget & {
  /** Skip the graceful steps and kill at once. */
  immediate?: boolean | undefined
  /** Only stop the PTY if its live process is this incarnation; a replacement is left alone. */
  expectedIncarnationId?: PtyIncarnationId | undefined
  /** Keep the provider's history of the PTY (scrollback, replay ring) after it stops, for providers with persistent sessions. */
  keepHistory?: boolean | undefined
}

/**
 * Options of {@link PtyProvider.probeLiveness}: which incarnation the question is about.
 *
 * Why a probe names one: a PTY id outlives its process. A provider may hold **another incarnation**
 * under the id by the time it is asked — a pty host shared by two apps, where app B spawned a new
 * `term-1` after app A's `term-1` died while A's connection was down. Asked by id alone, the
 * provider would answer `true` about B's process, and A's controller would call its dead PTY live.
 */
export type PtyLivenessProbeOptions = {
  /**
   * The incarnation asked about (the one the caller's record holds). When given, the answer is
   * about that incarnation only; when absent, about whatever process holds the id.
   */
  incarnationId?: PtyIncarnationId | undefined
}

/**
 * Options for a process listing: `deadlineMs` (absolute epoch time) or `timeoutMs` (a duration),
 * at most one, after which the listing gives up; and `membershipOnly`.
 */
export type PtyListProcessesOptions = PtyWaitBudget & {
  /**
   * The caller reads only which PTYs are listed and what each holds (`id`, `incarnationId`,
   * `claimKey`, `scopeId`, `slotKey` — these stay required), as a stop verification and an
   * owner's proof do: a provider may then skip reading `cwd` and `title` from the OS and answer
   * them `null` / its fallback title. A hint: a provider that ignores it is still correct. The
   * controller sets it when it verifies a stop (so a thousand concurrent `stopAndWait` calls do not
   * each read every live PTY from the OS) and when a spawn imports or re-proves claim owners (so a
   * burst of claim spawns does not either).
   */
  membershipOnly?: boolean | undefined
}

/** Removes a listener. Calling it twice is harmless. */
export type Unsubscribe = () => void

/**
 * What a host implements to plug a kind of terminal host into the controller: local PTYs, SSH,
 * a container, a daemon. Required members are the core every controller needs; optional ones are
 * capabilities (a missing one means "cannot", and the controller answers `null` for it).
 *
 * Rules every provider honours (the conformance suite in `ptykit/testing` checks them):
 * - events are plain data, never live objects, and every call is async-safe — the provider may
 *   run in another process;
 * - a PTY's data events all precede its exit event;
 * - an exit carries the incarnation that was spawned;
 * - a write after exit is refused or unverifiable, never silently accepted — nor a write whose
 *   bytes the provider held and dropped at the exit: such a write settles (as a promise) when
 *   their fate is known, `accepted` only once every byte went on;
 * - liveness and `hasPty` never answer `false` for a live PTY: `null` is the honest "unknown";
 * - a liveness probe that names an incarnation never answers `true` about another one;
 * - a malformed argument — a PTY id that is no non-empty string, a count that is no non-negative
 *   integer, options that are no object, an option nobody reads — is a programmer error, refused
 *   with `code: 'invalid_option'`, `option` (`'ptyId'`, `'chars'`, the option's name) and `value`:
 *   thrown by a method that answers synchronously, a rejection of one that answers with a
 *   promise; never answered as if about an unknown PTY. ptykit's providers all do.
 */
export interface PtyProvider {
  /** A short name for messages and listings (`'node-pty'`, `'fake'`, `'ssh'`). */
  readonly name: string
  /**
   * True when a PTY missing from {@link PtyProvider.listProcesses} is proven absent. Providers
   * that cannot serialize their own state (or list only partially) leave it false.
   */
  readonly authoritativeListings?: boolean | undefined
  /**
   * Start (or attach to) a PTY. Rejects on a failed launch; never leaves a process it did not
   * report. A provider that cannot tell whether its launch went through (a remote host that did
   * not answer a spawn request it may have received) rejects with an error whose
   * `processMayExist` is `true`, and still stops that process once it can: the spawn then fails
   * with outcome `unknown`, never `not_started`. One that started a process for this spawn and
   * stopped it again before rejecting (its end proven; say, disposed meanwhile) sets
   * `processStarted: true` on its error: the spawn then fails with outcome `rolled_back`.
   */
  spawn(options: ProviderSpawnOptions): Promise<PtySpawnResult>
  /**
   * Write text (its UTF-8 bytes) and settle the outcome (three-valued; may settle synchronously).
   * `data` that is not a string — a `Uint8Array` too: bytes come through
   * {@link PtyProvider.writeBytes} — is a programmer error: throw a `TypeError` naming it
   * (`code: 'invalid_option'`, `option: 'data'`, `value`) — never
   * settle it `unverifiable` with `bytesHandedToTransport: true`, which claims bytes were handed over.
   */
  write(id: string, data: string): WriteSettlement | Promise<WriteSettlement>
  /**
   * Write raw bytes — input that is not text, such as a terminal's mouse report in the X10
   * encoding at a column past 95 (bytes 0x80–0xFF, which no string written as UTF-8 can carry) —
   * exactly as given, and settle the outcome as {@link PtyProvider.write} does (the same refusals,
   * the same synchronous refusal when it is known before any I/O). An optional capability: the
   * controller writes a `Uint8Array` only through it, and settles one for a provider without it
   * `refused('provider_cannot_write_bytes')`, writing nothing — a provider written before this
   * member (whose `write` takes text only) is never handed bytes it would corrupt. A provider that
   * has it but whose transport cannot carry bytes to a given PTY (an older host behind it)
   * answers that refusal itself.
   *
   * Bytes and strings written to one PTY arrive in the order written. The caller may reuse
   * `bytes` once the call returns: a provider that holds any of them for later (a full input
   * buffer, a queue) copies them. `bytes` that is not a `Uint8Array` is a programmer error: throw
   * a `TypeError` naming it, as `write` does for `data`.
   */
  writeBytes?(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement>
  /**
   * Resize; returns false when the PTY is unknown or gone. A size that is not an integer from 1 to
   * `MAX_PTY_DIMENSION` (which the controller checks first, with the same code), or past a limit of
   * the provider's own within it, is refused by throwing an error with `code: 'invalid_option'`,
   * `option` (`'cols'` or `'rows'`) and `value` — every provider of ptykit does, the fake too; the
   * controller passes it to its caller. Any other throw is reported as `provider_threw`.
   */
  resize(id: string, cols: number, rows: number): boolean
  /** The size the PTY actually has, read back; `null` when it cannot be confirmed. */
  getSize?(id: string): PtySize | null
  /**
   * Stop the PTY. Resolves when the stop was carried out (or the PTY was already gone); the exit
   * itself is reported through {@link PtyProvider.onExit}. Rejects when the stop could not be
   * dispatched — or, with `code: 'shutdown_timeout'`, when it was sent but the PTY was not proven
   * gone by the stop's deadline: that stop may still land a moment later (the hang-up or kill it
   * sent ends the process), and its exit is then reported as any other. The node-pty and SSH
   * providers reject so, and the pty host with `code: 'host_error'`, `hostCode: 'shutdown_timeout'`.
   * A controller holds such a rejection's `shutdown_failed` report (and a `kill`'s `stop_unverified`
   * exit) until the unconfirmed-stop window ends, and makes none if the exit comes first.
   */
  shutdown(id: string, options?: PtyShutdownOptions): Promise<void>
  /** Stop reading the PTY so the producer blocks (kernel backpressure). */
  pauseProducer?(id: string): void
  /**
   * Resume reading after {@link PtyProvider.pauseProducer}. Also sent when the PTY is not paused,
   * to say its consumer no longer takes part in flow control: a provider that counts
   * {@link PtyProvider.acknowledgeData} on its own forgives the debt and stops pausing on it until
   * the next acknowledgement (nobody acknowledges until then). Must be harmless when not paused.
   */
  resumeProducer?(id: string): void
  /**
   * The consumer processed `chars` more characters of output (for providers with their own flow
   * control, which count output from the first acknowledgement until the next
   * {@link PtyProvider.resumeProducer}). A `chars` that is no non-negative integer is refused
   * (`code: 'invalid_option'`, `option: 'chars'`); `0` is harmless.
   */
  acknowledgeData?(id: string, chars: number): void
  /**
   * The PTYs this provider currently holds. Options that are no object, an option but
   * `deadlineMs`, `timeoutMs` and `membershipOnly`, and a `membershipOnly` that is no boolean are
   * refused (a rejection, `code: 'invalid_option'` naming the option).
   */
  listProcesses(options?: PtyListProcessesOptions): Promise<ProviderProcessInfo[]>
  /** Synchronous existence check; `null` when unknown. Never `false` for a live PTY. */
  hasPty?(id: string): boolean | null
  /**
   * Whether the PTY's process is alive: `true` only when it runs, `false` only when proven absent,
   * `null` when unknown.
   *
   * With `options.incarnationId`, the question is about **that incarnation**, not about the id:
   * `true` only when the process holding the id is that incarnation (never `true` about another
   * one — a caller that reads it as its own process revives a dead PTY). When the provider holds
   * another incarnation under the id (or none), it answers `false` only when it can prove the asked
   * one gone — it saw that incarnation end, or it alone starts processes under the id and never
   * holds two at once, so a later incarnation under the id means the asked one ended (the node-pty
   * and SSH providers) — and `null` otherwise. Why not `false` whenever it holds another: holding
   * a newer process proves nothing about one it never held or lost track of (the orphan of a pty
   * host that died, a process a daemon replaced without stopping it), and `false` is the one answer
   * a caller acts on as proof — it would "verify" a stop while that process still runs. A provider
   * that attests no incarnations cannot tell them apart: asked about one, it answers `null`, unless
   * it never reuses an id (then the id's answer is the incarnation's).
   *
   * ptykit's providers reject, with a `TypeError` naming it, options that are not an object, any
   * option but `incarnationId` (`expectedIncarnationId`, the name `write` and `shutdown` use, was
   * ignored: the answer was about whatever process held the id) and an `incarnationId` that is no
   * incarnation id.
   */
  probeLiveness?(id: string, options?: PtyLivenessProbeOptions): Promise<boolean | null>
  /**
   * The current working directory of the PTY's foreground process (default), or of its leader
   * (the shell) with `{ of: 'leader' }`; `null` when unreadable. Options that are no object, an
   * option but `of`, and an `of` that is neither `'foreground'` nor `'leader'` are refused (a
   * rejection, `code: 'invalid_option'` naming the option).
   */
  getCwd?(id: string, options?: PtyCwdOptions): Promise<string | null>
  /** The foreground process name; `null` when unreadable. */
  getForegroundProcess?(id: string): Promise<string | null>
  /** Whether the shell has child processes; `null` when unreadable. */
  hasChildProcesses?(id: string): Promise<boolean | null>
  /**
   * The PTY's **confirmed** foreground (see {@link PtyForegroundProcessEvidence}); `null` when it
   * cannot be confirmed (unknown or exited PTY, a foreground that changed between the reads).
   */
  confirmForeground?(id: string): Promise<PtyForegroundProcessEvidence | null>
  /** Whether this host can give foreground evidence at all. Absent: `true` when `confirmForeground` is present. */
  supportsForegroundProcessEvidence?(): boolean
  /**
   * Restore the default input modes in the provider's own screen model (for providers that keep
   * one); the controller hands the reset sequences to the consumer's view itself.
   */
  resetInputModes?(id: string): Promise<void>
  /** Clear the provider's buffered screen, if it keeps one. */
  clearBuffer?(id: string): Promise<void>
  /**
   * A snapshot of the provider-owned screen, if it keeps one; `null` for an id it has no screen
   * of. A controller also asks for an ended PTY's (a provider may keep the last screen: set
   * `incarnationId`, without which that answer is not used); a throw for an ended PTY (also one
   * whose exit arrived while the provider answered) is taken as `null`, for a live one it is
   * reported as the provider's fault.
   */
  getBufferSnapshot?(id: string, options?: { scrollbackRows?: number | undefined }): Promise<ProviderBufferSnapshot | null>
  /** Subscribe to output (decoded text). */
  onData(listener: (event: PtyDataEvent) => void): Unsubscribe
  /**
   * Subscribe to output delivered as bytes, for providers that can skip the decode (an optional
   * capability). A PTY's output goes to exactly one of `onData` and `onBytes`, never both; its
   * data events of either kind all precede its exit event.
   */
  onBytes?(listener: (event: PtyBytesEvent) => void): Unsubscribe
  /** Subscribe to exits. */
  onExit(listener: (event: PtyExitEvent) => void): Unsubscribe
  /**
   * Subscribe to gaps in a PTY's delivered output (an optional capability, for providers that can
   * lose output between a PTY and the app, such as the pty host over a dropped connection). A gap
   * is reported in order with the PTY's data events, before the data that follows it.
   */
  onOutputLoss?(listener: (event: PtyOutputLossEvent) => void): Unsubscribe
  /**
   * Stop every PTY this provider holds and release its resources. Idempotent: a second call
   * answers as the first.
   *
   * Once it resolved, the provider no longer knows what runs — the sessions of a pty host or of an
   * SSH server may outlive it —, so it answers nothing any more: **every method but `dispose` and
   * the `on*` subscriptions is refused** with an error whose `code` is `'provider_disposed'` and
   * whose message names the method — a rejection from a method that answers with a promise
   * (`spawn`, `shutdown`, `listProcesses`, `probeLiveness`, `getCwd`, `getForegroundProcess`,
   * `hasChildProcesses`, `confirmForeground`, `resetInputModes`, `clearBuffer`,
   * `getBufferSnapshot`), a throw from any other (`write`, `writeBytes`, `resize`, `getSize`,
   * `pauseProducer`, `resumeProducer`, `acknowledgeData`, `hasPty`,
   * `supportsForegroundProcessEvidence`). Never `[]`, `null` or `false`: each would be a guess
   * passed off as an answer (an authoritative empty listing proves every PTY gone). The bundled
   * providers refuse so before they check the arguments: a malformed call after the dispose gets
   * `provider_disposed`, not its `invalid_option`; and their refusal carries in `ptyId` the PTY the
   * call named (its first argument: `write('abc', …)` → `'abc'`; none for `spawn` or a listing). A request the
   * dispose cut off on its way is refused the same way — except a spawn that may have started a
   * process, which still says `processMayExist: true`. A provider may refuse earlier, from the
   * call of `dispose` on (each bundled provider refuses a spawn from then on). The controller reads
   * such a refusal as the provider's disposal: a stop of a PTY whose exit the provider reported is
   * still verified, and the disposal is reported once per provider, not per PTY and call.
   * ptykit's providers all follow this rule, and the conformance suite checks it.
   */
  dispose?(): Promise<void>
}
