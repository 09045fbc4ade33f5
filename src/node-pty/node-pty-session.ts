import {
  refusedWrite,
  unverifiableWrite,
  WRITE_ACCEPTED,
  type PtyBytesEvent,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type WriteSettlement,
} from '../contracts/index.js'
import { constants as osConstants } from 'node:os'
import { UNVERIFIED_PROCESS_EXIT_CODE, resolveProcessExitCause } from '../exit-cause/index.js'
import { ExitDrain, type DrainChunk, type ExitDrainHooks } from './exit-drain.js'
import type { NodePtyTerminal } from './node-pty-module.js'
import { reapReported, reportsReaps } from './leader-identity.js'
import { dropQueuedInput, writeToMaster, type HeldWriteFate } from './master-write.js'
import { asBytes, stopDecodingOutput } from './undecoded-output.js'

/** SIGKILL's number as node-pty reports it: the one signal whose death proves a killer other than a stop. */
const SIGKILL_NUMBER = osConstants.signals.SIGKILL

/**
 * How long a spawn's startup `command` waits for the shell's first output (its prompt) before it
 * is written anyway. Written before the shell runs, the kernel would echo the typed-ahead text and
 * then the shell's line editor would draw it again; waiting for the prompt avoids the double echo,
 * and the fallback serves shells that print nothing.
 */
export const NODE_PTY_LAUNCH_COMMAND_FALLBACK_MS = 500

/** What a session needs from the provider. */
export type NodePtySessionHooks = {
  /** Deliver a data event to the provider's listeners. */
  emitData(event: PtyDataEvent): void
  /** Deliver a bytes event to the provider's listeners (sessions in bytes mode). */
  emitBytes(event: PtyBytesEvent): void
  /** Deliver the exit event to the provider's listeners. */
  emitExit(event: PtyExitEvent): void
  /** The session's exit was delivered; forget it. */
  onEnded(session: NodePtySession): void
  /**
   * Confirm from the OS that the leader is gone (`false` on any doubt). The leader's start time
   * (when known) tells it from a later process that reuses its pid; the first look learns it
   * (see `leader-identity.ts`).
   */
  isLeaderGone(session: NodePtySession): boolean
  /**
   * A cheap look (one syscall, no file read): `true` only when no process has the pid any more,
   * which proves the leader reaped. `false` says nothing (alive, a zombie, or a reused pid).
   */
  isLeaderReaped(pid: number): boolean
}

/** How a session was started. */
export type NodePtySessionInit = {
  /** The PTY id. */
  id: string
  /** The incarnation minted for this process. */
  incarnationId: PtyIncarnationId
  /** The terminal node-pty returned. */
  terminal: NodePtyTerminal
  /** The program that was started (the title fallback). */
  file: string
  /** Drain the tail at exit (see `exit-drain.ts`). */
  drainOutputAtExit: boolean
  /**
   * `true` for bytes mode: the session stops the terminal's decoding before its first read (see
   * `undecoded-output.ts`), so its chunks are `Buffer`s, delivered as bytes events. Default `false`.
   */
  bytes?: boolean
  /**
   * The most bytes of input held for the terminal while its program does not read (see
   * `NodePtyProviderOptions.maxPendingInputBytes`). Default: no bound.
   */
  maxPendingInputBytes?: number
  /** `false` when a wrapper owns the exit status (see `hostReportsChildExitStatus`). */
  hostReportsChildExitStatus: boolean
  /** The startup command to write once the shell runs. */
  command: string | undefined
  /** Listing fields. */
  scopeId: string | undefined
  /** Listing fields. */
  slotKey: string | undefined
  /** Listing fields. */
  claimKey: string | undefined
  /** The leader's start time, when already known (`null`: learnt by the first look). */
  leaderStartTime: string | null
  /**
   * Listen to node-pty's master stream itself, where its `onData` and `onExit` forward from, when
   * the terminal is node-pty's own Unix terminal (see `forwardingStreamOf`); otherwise, and by
   * default, through `onData` and `onExit`. The provider sets it off Windows.
   */
  readMasterStream?: boolean
}

/**
 * Where the shared stream listeners of {@link NodePtySession} find the session of the stream they
 * were called on.
 */
const SESSION_OF_STREAM = Symbol('ptykit.nodePtySession')

/** node-pty's master stream, as the session listens to it. */
type SessionStream = {
  on(event: string, listener: (...args: never[]) => void): unknown
  [SESSION_OF_STREAM]?: NodePtySession
}

/**
 * The master stream node-pty's terminal forwards its `onData` and `onExit` from, or `null`.
 * node-pty 1.x's `Terminal` subscribes to its stream's `data` and `exit` events in
 * `_forwardEvents` (and routes its own `emit('exit')` there): a terminal with that method and a
 * stream that can be listened to is node-pty's own. A stand-in, a wrapper, or another shape
 * answers `null`, and the session uses the public `onData` and `onExit`.
 */
function forwardingStreamOf(terminal: NodePtyTerminal): SessionStream | null {
  const internals = terminal as unknown as { _forwardEvents?: unknown; _socket?: { on?: unknown } | null }
  const stream = internals._socket
  if (typeof internals._forwardEvents !== 'function' || typeof stream !== 'object' || stream === null || typeof stream.on !== 'function') return null
  return stream as SessionStream
}

/** The exit as it was reported. */
export type NodePtySessionExit = {
  /** The code node-pty forwarded. */
  code: number
  /** The signal node-pty forwarded (`0` or absent for none). */
  signal: number | undefined
}

/**
 * One process on one PTY: its node-pty terminal, its exit drain, and what is known about it.
 * Internal to the provider.
 *
 * Every idle PTY carries one for its whole life, so it holds no closure it can do without: the
 * session is its drain's hooks object itself ({@link NodePtySession.emit},
 * {@link NodePtySession.onDeathHint}), node-pty's master stream reaches it through two
 * listeners shared by every session (`readMasterStream`), and the queue of writes behind a launch
 * command exists only while one waits (issue 18, memory per idle PTY).
 */
export class NodePtySession implements ExitDrainHooks<DrainChunk> {
  /** The PTY id. */
  readonly id: string
  /** The incarnation of this process. */
  readonly incarnationId: PtyIncarnationId
  /** The leader's pid. */
  readonly pid: number
  /** The node-pty terminal. */
  readonly terminal: NodePtyTerminal
  /** The program started. */
  readonly file: string
  /** Listing fields. */
  readonly scopeId: string | undefined
  /** Listing fields. */
  readonly slotKey: string | undefined
  /** Listing fields. */
  readonly claimKey: string | undefined
  /** Whether exits of this PTY carry the child's status. */
  readonly hostReportsChildExitStatus: boolean
  /**
   * The leader's start time: with the pid, its identity for good (`null` until learnt, or when
   * unknown). Learnt by the first look at the leader's pid while its reap is unreported, not at
   * the spawn; `leader-identity.ts` explains why that keeps the pid-reuse guarantee.
   */
  leaderStartTime: string | null
  /** The running stop, if one was requested. */
  stop: {
    done: Promise<void>
    escalateToKill(): void
    /** Keep waiting for the deaths until at least this time (a joining caller's deadline). */
    waitUntil(at: number): void
  } | null = null

  readonly #hooks: NodePtySessionHooks
  readonly #drain: ExitDrain<DrainChunk>
  readonly #bytes: boolean
  /** See {@link NodePtySessionInit.maxPendingInputBytes}. */
  readonly #maxPendingInputBytes: number
  #charsEmitted = 0
  #leaderGone = false
  /** `null` until a stop is requested; then whether the leader was already dead at that moment. */
  #stopRequestedAfterDeath: boolean | null = null
  /** Whether a stop sent SIGKILL while the leader was not known gone (see {@link NodePtySession.noteStopKill}). */
  #stopSentKill = false
  #exit: NodePtySessionExit | null = null
  #paused = false
  #command: string | undefined
  #commandTimer: NodeJS.Timeout | null = null
  /**
   * Writes made before the launch command was sent, queued behind it in order (`null`: none), each
   * with the settlement its caller waits for (see {@link NodePtySession.write}).
   */
  #writesBehindCommand: { data: string | Buffer; settle: (settlement: WriteSettlement | Promise<WriteSettlement>) => void }[] | null = null
  /**
   * The UTF-8 bytes of the launch command (with its Enter) and of the writes queued behind it:
   * bounded by `maxPendingInputBytes` as the master's held input is, so that they all fit there
   * when the command goes out (none accepted here is refused then).
   */
  #bytesBehindCommand = 0

  /**
   * Wire a freshly spawned terminal. Call synchronously right after node-pty's `spawn()`.
   *
   * @throws whatever subscribing to the terminal threw; the drain is released first (a held slave
   * side closed), and the caller must kill the process.
   */
  constructor(init: NodePtySessionInit, hooks: NodePtySessionHooks) {
    this.id = init.id
    this.incarnationId = init.incarnationId
    this.terminal = init.terminal
    this.pid = init.terminal.pid
    this.file = init.file
    this.scopeId = init.scopeId
    this.slotKey = init.slotKey
    this.claimKey = init.claimKey
    this.hostReportsChildExitStatus = init.hostReportsChildExitStatus
    this.leaderStartTime = init.leaderStartTime
    this.#hooks = hooks
    this.#bytes = init.bytes === true
    this.#maxPendingInputBytes = init.maxPendingInputBytes ?? Number.POSITIVE_INFINITY
    this.#drain = new ExitDrain<DrainChunk>(init.terminal, this, init.drainOutputAtExit, this.#bytes)
    try {
      // Why subscribe at once: output read before a listener exists is lost (node-pty #652).
      if (this.#bytes) stopDecodingOutput(init.terminal)
      const stream = init.readMasterStream === true ? forwardingStreamOf(init.terminal) : null
      if (stream !== null) {
        // Shared, not a closure per PTY: the same two listeners on every node-pty master stream,
        // which find their session through it (SESSION_OF_STREAM). Through node-pty's `onData` and
        // `onExit` every PTY carried two closures, their context and node-pty's two lazily built
        // `event` closures (and a `queue` array per chunk), allocated between two forks on every
        // spawn (docs/performance.md). These are the very events node-pty forwards from (see
        // forwardingStreamOf), heard right after it: same chunks, same order, same exit.
        stream[SESSION_OF_STREAM] = this
        stream.on('data', NodePtySession.#onStreamData)
        stream.on('exit', NodePtySession.#onStreamExit)
      } else {
        // node-pty types `onData` as strings; with its decoding stopped it hands Buffers.
        const drain = this.#drain
        if (this.#bytes) init.terminal.onData((chunk: DrainChunk) => drain.handleData(asBytes(chunk)))
        else init.terminal.onData((chunk: DrainChunk) => drain.handleData(chunk))
        init.terminal.onExit((event) => this.#onExit(event.exitCode, event.signal))
      }
    } catch (error) {
      // Release the drain (a held slave side); the provider kills the process it can no longer follow.
      this.#drain.finish()
      throw error
    }
    this.#command = init.command
    if (this.#command !== undefined) {
      this.#commandTimer = setTimeout(() => this.#writeCommand(), NODE_PTY_LAUNCH_COMMAND_FALLBACK_MS)
    }
  }

  /** Raw chars (bytes, in bytes mode) delivered so far (the provider's output sequence). */
  get charsEmitted(): number {
    return this.#charsEmitted
  }

  /** True once the leader is proven gone (its output may still be draining). */
  get leaderGone(): boolean {
    return this.#leaderGone
  }

  /** The reported exit, once delivered. */
  get exit(): NodePtySessionExit | null {
    return this.#exit
  }

  /** True while the consumer has paused the producer. */
  get paused(): boolean {
    return this.#paused
  }

  /** The drain's state (for diagnostics and tests). */
  get drainState(): ExitDrain['state'] {
    return this.#drain.state
  }

  /**
   * Look whether the leader died; start the drain when it did. Safe to call often.
   *
   * @param thorough - `true` (default) reads the OS's view of the process (a zombie counts as
   * dead); `false` only asks whether the pid is free (one syscall), for frequent callers such as
   * SIGCHLD, which fires for every child of the host. A leader that is merely a zombie is then
   * left to node-pty's native exit (which reaps it, see {@link NodePtySession}) or the next
   * thorough look.
   */
  checkLeader(thorough = true): void {
    if (this.#leaderGone || this.#exit !== null) return
    const gone = thorough ? this.#hooks.isLeaderGone(this) : this.#hooks.isLeaderReaped(this.pid)
    if (gone) this.#markLeaderGone()
  }

  /**
   * The cheap look right before a signal, for a leader a process table read during this stop
   * showed alive as the process learnt (the stop loop decides when it applies). On node-pty's own
   * terminal, whose exit callback marks it (`_boundClose`) in the poll phase after its `waitpid`:
   * a reported reap marks the leader gone — proven, without reading the OS; an unreported one
   * means the leader was reaped, if at all, within about one loop iteration, too soon for the
   * kernel to hand its pid out again (leader-identity.ts), so its pid and group may be signalled
   * without a `/proc` read (a signal that finds it reaped fails with `ESRCH`, harmlessly). That
   * read, per session per signal, was a third of a 1 000-PTY kill's main-thread time. Any other
   * terminal (a stand-in, a wrapper without node-pty's close bookkeeping) gets the thorough look.
   */
  checkLeaderByReap(): void {
    if (this.#leaderGone || this.#exit !== null) return
    if (!reportsReaps(this)) this.checkLeader()
    else if (reapReported(this)) this.#markLeaderGone()
  }

  #markLeaderGone(): void {
    this.#leaderGone = true
    // A dead producer has nothing left to throttle: what it wrote is bounded (the kernel's buffer,
    // and the read-out's budget for a survivor that keeps writing). Read it out now, so its exit
    // is not held until a consumer that is behind catches up.
    if (this.#paused) this.resume()
    this.#drain.noteChildGone()
  }

  /**
   * The drain's hook: output to deliver, in order. Not for other callers.
   *
   * @param data - a chunk the drain let through
   */
  emit(data: DrainChunk): void {
    this.#deliver(data)
  }

  /**
   * The drain's hook: the leader may be gone (node-pty's native layer saw an exit, or the master's
   * stream ended). When node-pty's own exit callback ran (it sets `_boundClose` right before
   * subscribing to the socket's close), its `waitpid` on this very pid has returned: the leader is
   * reaped, proven without reading the OS. Otherwise ask whether the pid is free (one syscall):
   * when the stream ended because the leader died, node-pty's `waitpid` thread has usually reaped
   * it already (19 ends in 20, measured), and the thorough look — a `/proc` read, the dearest on a
   * pid never read before — is left to the rest (a zombie counts as gone).
   */
  onDeathHint(): void {
    if (this.#leaderGone || this.#exit !== null) return
    if (reapReported(this) || this.#hooks.isLeaderReaped(this.pid)) this.#markLeaderGone()
    else this.checkLeader()
  }

  /**
   * A stop of this session was requested: note whether the leader was already known dead then
   * (its exit held back behind output), so the exit can say it ended on its own (issue 13.4), or
   * else that the stop came first (`stopRequestedBeforeDeath`). Only the first request counts.
   */
  noteStopRequested(): void {
    if (this.#stopRequestedAfterDeath !== null || this.#exit !== null) return
    this.checkLeader()
    this.#stopRequestedAfterDeath = this.#leaderGone
  }

  /**
   * A stop is about to send SIGKILL to the leader (its group or its pid), not known gone: noted
   * before it is sent. A leader that dies of SIGKILL while no stop had sent one was killed by
   * something else — an outside `kill -9`, the OOM killer — that crossed the stop's hang-up: its
   * exit keeps its own cause (see `#diedOfAnotherKill`).
   */
  noteStopKill(): void {
    if (!this.#leaderGone && this.#exit === null) this.#stopSentKill = true
  }

  /**
   * True when the leader died of SIGKILL after a stop was requested and before any stop sent
   * SIGKILL to it: taken as not the stop's doing. Why SIGKILL alone: it cannot be caught or ignored,
   * and it is not what a hang-up sets off, so it is evidence of a killer other than the stop (short
   * of a program whose SIGHUP handler kills itself with it); any other signal may be the stop's own
   * doing at one remove (a program whose pipe reader the hang-up ended dies
   * of SIGPIPE, one that handles SIGHUP by aborting dies of SIGABRT). A death by the stop's own
   * SIGKILL (crossing an outside one) stays the stop's: true either way. As the SSH provider rules.
   */
  #diedOfAnotherKill(signal: number | undefined): boolean {
    return this.#stopRequestedAfterDeath === false && !this.#stopSentKill && signal === SIGKILL_NUMBER
  }

  /**
   * Write text (as UTF-8) or raw bytes, and settle. `accepted` at once when the kernel took every
   * byte; when some must wait (the program does not read yet: the kernel's input buffer is full),
   * a promise that settles when their fate is known — `accepted` once the kernel took the last of
   * them, `refused('pty_exited')` when the PTY exits before any of them went (they are dropped with
   * it), `unverifiable('partial_write', true)` when it exits after some went, and
   * `refused('provider_refused_write')` / `unverifiable('partial_write', true)` when a later attempt
   * fails. Until 7 Dec such a write said `accepted` while its bytes were dropped at the exit.
   *
   * While the spawn's launch `command` is still waiting to be sent, the write is queued behind it
   * (bytes as a copy, since the caller may reuse its buffer), so input reaches the shell in the
   * order the host issued it; it settles as the write it becomes once the command went, or
   * `refused('pty_exited')` when the PTY ends first. Refused `input_backlog_full` (nothing written)
   * when the input held for a program that does not read would grow past
   * {@link NodePtySessionInit.maxPendingInputBytes}.
   */
  write(data: string | Uint8Array): WriteSettlement | Promise<WriteSettlement> {
    if (this.#exit !== null || this.#leaderGone) return refusedWrite('pty_exited')
    if (this.#command !== undefined) {
      if (this.#writesBehindCommand === null) this.#bytesBehindCommand = Buffer.byteLength(commandLine(this.#command), 'utf8')
      const size = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length
      if (this.#bytesBehindCommand + size > this.#maxPendingInputBytes) return refusedWrite('input_backlog_full')
      this.#bytesBehindCommand += size
      this.#writesBehindCommand ??= []
      const queued = this.#writesBehindCommand
      return new Promise<WriteSettlement>((resolve) => {
        queued.push({ data: typeof data === 'string' ? data : Buffer.from(data), settle: resolve })
      })
    }
    heldFate = undefined
    try {
      // Refused, not `pty_exited`: the terminal hung up (a closed master) or the kernel refused the
      // bytes, but the process may live on (one that closed its fds); its exit is reported apart.
      const outcome = writeToMaster(this.terminal, data, this.#maxPendingInputBytes, rememberHeldFate)
      if (outcome === 'backlog-full') return refusedWrite('input_backlog_full')
      if (outcome !== 'accepted') return refusedWrite('provider_refused_write')
    } catch {
      return unverifiableWrite('provider_threw_after_handoff', true)
    }
    const held = heldFate as Promise<HeldWriteFate> | undefined // set during the call (TypeScript cannot see it)
    heldFate = undefined
    return held === undefined ? WRITE_ACCEPTED : held.then(settlementOfHeldWrite)
  }

  /**
   * Give up the input held for a PTY whose end this provider will not see (it is being disposed and
   * its stop was not confirmed): the writes waiting on it settle `provider_refused_write` (or
   * `partial_write`), never left pending. Nothing after the exit, which dropped it already.
   */
  dropHeldInput(): void {
    if (this.#exit !== null) return
    dropQueuedInput(this.terminal, 'failure')
    for (const write of this.#writesBehindCommand ?? []) write.settle(refusedWrite('provider_refused_write'))
    this.#writesBehindCommand = null
    this.#command = undefined
  }

  /** Stop reading the master (kernel backpressure); nothing once the leader is gone (see `#markLeaderGone`). */
  pause(): void {
    if (this.#exit !== null || this.#paused || this.#leaderGone) return
    this.#paused = true
    this.#drain.notePaused()
    this.terminal.pause()
  }

  /** Resume reading the master. */
  resume(): void {
    if (this.#exit !== null || !this.#paused) return
    this.#paused = false
    this.terminal.resume()
    this.#drain.noteResumed()
  }

  #deliver(data: DrainChunk): void {
    this.#charsEmitted += data.length
    if (this.#bytes) this.#hooks.emitBytes({ id: this.id, bytes: data as Buffer, incarnationId: this.incarnationId })
    else this.#hooks.emitData({ id: this.id, data: data as string, incarnationId: this.incarnationId })
    if (this.#command !== undefined && this.#commandTimer !== null) {
      // The shell printed something (its prompt): it runs. Write after this turn's output.
      clearTimeout(this.#commandTimer)
      this.#commandTimer = setTimeout(() => this.#writeCommand(), 0)
    }
  }

  #writeCommand(): void {
    this.#commandTimer = null
    const command = this.#command
    this.#command = undefined
    const queued = this.#writesBehindCommand
    this.#writesBehindCommand = null
    if (command === undefined || this.#exit !== null || this.#leaderGone) {
      for (const write of queued ?? []) write.settle(refusedWrite('pty_exited'))
      return
    }
    void this.write(commandLine(command))
    if (queued !== null) for (const write of queued) write.settle(this.write(write.data))
  }

  /** A chunk node-pty's master stream emitted (`this` is the stream, as an EventEmitter calls it). */
  static readonly #onStreamData = function onStreamData(this: SessionStream, chunk: DrainChunk): void {
    const session = this[SESSION_OF_STREAM] as NodePtySession
    session.#drain.handleData(session.#bytes ? asBytes(chunk) : chunk)
  }

  /** node-pty's exit, as it emits it on the master stream (`this` is the stream). */
  static readonly #onStreamExit = function onStreamExit(this: SessionStream, exitCode: number, signal?: number): void {
    ;(this[SESSION_OF_STREAM] as NodePtySession).#onExit(exitCode, signal)
  }

  #onExit(exitCode: number, signal: number | undefined): void {
    if (this.#exit !== null) return
    // Before anyone hears of the exit (and respawns, reusing the master's fd number).
    dropQueuedInput(this.terminal)
    const held = this.#drain.finish()
    if (held.length > 0) this.#deliver(held)
    this.#leaderGone = true
    if (this.#commandTimer !== null) clearTimeout(this.#commandTimer)
    this.#commandTimer = null
    this.#command = undefined
    // Never sent: dropped with the PTY, and their callers told so.
    for (const write of this.#writesBehindCommand ?? []) write.settle(refusedWrite('pty_exited'))
    this.#writesBehindCommand = null
    // Why: some Windows hosts report `exitCode: undefined`. An absent status defaults to the
    // unverified sentinel, never to a number nobody observed (the cause, built from the raw
    // observation, says `cause_unreported`; the exit itself was still observed).
    const code = Number.isSafeInteger(exitCode) ? exitCode : UNVERIFIED_PROCESS_EXIT_CODE
    this.#exit = { code, signal }
    const cause = resolveProcessExitCause({
      exitCode,
      signal: signal ?? null,
      hostReportsChildExitStatus: this.hostReportsChildExitStatus,
    })
    try {
      this.#hooks.emitExit({
        id: this.id,
        code,
        incarnationId: this.incarnationId,
        cause,
        observed: 'provider',
        // A stop requested through this provider (its `shutdown` or `dispose`, whoever called
        // it) attests the order either way: a host that stops a PTY on the provider directly, or
        // disposes the provider before its controller, still gets an operator close.
        // An outside SIGKILL that crossed the stop is not the stop's: the death keeps its cause.
        ...(this.#stopRequestedAfterDeath === true || this.#diedOfAnotherKill(signal) ? { diedBeforeStopRequest: true } : {}),
        ...(this.#stopRequestedAfterDeath === false && !this.#diedOfAnotherKill(signal) ? { stopRequestedBeforeDeath: true } : {}),
      })
    } finally {
      this.#hooks.onEnded(this)
    }
  }
}

/**
 * The fate of the bytes the running `writeToMaster` call held (`undefined`: it held none), set by
 * {@link rememberHeldFate} during the call and read right after it by `NodePtySession.write`: one
 * module-level slot and function instead of a closure per keystroke (the call is synchronous).
 */
let heldFate: Promise<HeldWriteFate> | undefined

/** Where `writeToMaster` hands a held write's fate (see {@link heldFate}). */
function rememberHeldFate(fate: Promise<HeldWriteFate>): void {
  heldFate = fate
}

/** The launch command as written: a line — without an Enter it would sit in the shell's editor. */
function commandLine(command: string): string {
  return /[\r\n]$/.test(command) ? command : `${command}\r`
}

/**
 * The settlement of a write whose bytes were held, from their fate (see `writeToMaster`): what the
 * caller of `write` learns once it is known.
 */
function settlementOfHeldWrite(fate: HeldWriteFate): WriteSettlement {
  switch (fate) {
    case 'written':
      return WRITE_ACCEPTED
    case 'dropped':
      return refusedWrite('pty_exited')
    case 'failed':
      return refusedWrite('provider_refused_write')
    default:
      return unverifiableWrite('partial_write', true)
  }
}
