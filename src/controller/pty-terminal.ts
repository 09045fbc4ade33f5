import type {
  ExecutionHostId,
  PtyIncarnationId,
  PtySize,
  PtyStopAndWaitOptions,
  TerminalInputKind,
  WriteSettlement,
} from '../contracts/index.js'
import type { DisposableUnsubscribe } from './disposable.js'
import type { PtyControllerDataEvent, PtyControllerEvents, PtyControllerExitEvent, PtyControllerOutputLossEvent } from './events.js'
import type { PtyTerminalOutputOptions } from './terminal-output.js'
import type { PtyControllerError } from './pty-controller-error.js'

/**
 * One terminal: one incarnation of a PTY the controller tracks, as an object — the per-terminal
 * view over the id-keyed controller, like node-pty's `IPty` or VS Code's `Terminal`.
 *
 * A handle is fenced to its incarnation: once the id is respawned (a new process behind the same
 * id) this handle gets no more events, and its writes, resizes and stops are refused instead of
 * reaching the new process — ask `controller.terminal(id)` for the new handle.
 *
 * Get one with `controller.spawnTerminal(options)` or `controller.terminal(id)`.
 */
export type PtyTerminal = AsyncDisposable & {
  /** The PTY id (the key of the id-keyed controller API). */
  readonly id: string
  /** The root process id, when the provider proved one. */
  readonly pid: number | undefined
  /** The incarnation this handle is fenced to, when the provider attested one. */
  readonly incarnationId: PtyIncarnationId | undefined
  /** The host the PTY runs on. */
  readonly hostId: ExecutionHostId
  /** Columns, as last applied (updated by every successful resize, through any API). */
  readonly cols: number
  /** Rows, as last applied (updated by every successful resize, through any API). */
  readonly rows: number
  /**
   * The exit of this incarnation, with its settled cause. Resolves once — also when the exit came
   * before anyone awaited it — and never rejects. A stop that was given up on resolves it with
   * `unknown/stop_unverified` (code −1). An incarnation replaced under its id before the controller
   * saw its exit never resolves it (the controller publishes no exit for it).
   */
  readonly exited: Promise<PtyControllerExitEvent>
  /**
   * Call `listener` with each output chunk of this incarnation from now on (plus the output
   * delivered before the handle was handed to you, when you subscribe in that same turn: once a
   * subscriber was handed it, a subscriber of a later turn is not — a view subscribed again gets
   * no prompt twice).
   * Listening does not acknowledge anything: call `acknowledgeData` (below) as the
   * output is consumed (e.g. from a renderer's write callback), or use `output()`, to take part in
   * flow control. Once this incarnation's death is proven (liveness `exited`), the handle lets go
   * of its `onData`, `onExit` and `onOutputLoss` listeners and keeps none added later: nothing more
   * can come (a stop that went unverified keeps them, until the controller's `dispose()` is over:
   * then no handle hears anything more, and every handle lets go of its listeners).
   *
   * @throws TypeError when `listener` is not a function (as `onExit` and `onOutputLoss`); what the
   * listener throws while it is handed that earlier output (it is then not subscribed).
   */
  onData(listener: (event: PtyControllerDataEvent) => void): DisposableUnsubscribe
  /**
   * Acknowledge `chars` chars of this incarnation's output as consumed (the controller's
   * `acknowledgeData`, fenced to this incarnation). An ack that arrives late — after the id was
   * respawned, the terminal ended, or the controller was disposed — does nothing: it never
   * credits the process that replaced this one.
   *
   * @throws TypeError when `chars` is not a non-negative integer.
   */
  acknowledgeData(chars: number): void
  /**
   * Call `listener` with each exit event of this incarnation published from now on: one, except
   * after an unverified stop — its `stop_unverified` exit is followed by a second with the real
   * cause when the process's end is seen later, also after a re-attach revived it (see the
   * controller's `exit` event; `exited` keeps the first). For an exit that may already have
   * happened, await `exited`.
   */
  onExit(listener: (event: PtyControllerExitEvent) => void): DisposableUnsubscribe
  /**
   * Call `listener` when output of this incarnation went by undelivered (the controller's
   * `outputLoss`: its provider reported a gap, and `seq` jumped past it). `output()` and `onData`
   * go on after the gap; a view that follows by `seq` repaints from a snapshot.
   */
  onOutputLoss(listener: (event: PtyControllerOutputLossEvent) => void): DisposableUnsubscribe
  /**
   * Write text (as UTF-8) or raw bytes (a `Uint8Array`, a `Buffer` included: written exactly as
   * given, as the controller's `write`); `true` when handed over. Refused once the incarnation
   * ended or was replaced, and bytes when the PTY's provider cannot write bytes
   * (`provider_cannot_write_bytes`).
   *
   * @throws TypeError for malformed `data` or `inputKind` (as the controller's), also on a handle
   * whose incarnation ended or was replaced — as every call below with a malformed argument.
   */
  write(data: string | Uint8Array, inputKind?: TerminalInputKind): boolean
  /**
   * Write text or raw bytes (as `write`) and settle in three values;
   * `refused('stale_incarnation')` once the id was respawned, `refused('pty_exited')` once the PTY
   * ended, `refused('provider_cannot_write_bytes')` for bytes its provider cannot write.
   */
  writeWithSettlement(data: string | Uint8Array, inputKind?: TerminalInputKind): WriteSettlement | Promise<WriteSettlement>
  /**
   * Resize; `false` when the PTY ended, was replaced, or the provider refused.
   *
   * @throws TypeError with `code: 'invalid_option'`, `option` and `value` for a size that is not an
   * integer from 1 to `MAX_PTY_DIMENSION`, as the controller's `resize`.
   */
  resize(cols: number, rows: number): boolean
  /**
   * Dispatch a stop (the exit that follows is `operator_close`); `false` when there is nothing to
   * stop. After the controller's `dispose()` began: `true` while disposal is still stopping this
   * PTY (nothing more is dispatched), and for one whose stop disposal gave up on
   * (`stop_unverified`), which gets a forced shutdown; `false` once disposal verified its stop, or
   * let it go.
   */
  kill(): boolean
  /**
   * Stop with escalation and wait (`controller.stopAndWait`, options passed through): `true` only
   * when the stop was verified. `true` at once once this incarnation's end was proven (also after
   * the id was respawned or the controller disposed); for one replaced before that, `false`. After
   * the controller's `dispose()` began, as the controller's `stopAndWait` answers: disposal's
   * verdict of this PTY (`true` only if its stop was verified), within this call's deadline and
   * `signal`; `false` for a PTY disposal gave up on or let go.
   * Rejects with a `TypeError` naming a malformed option.
   */
  stop(options?: PtyStopAndWaitOptions): Promise<boolean>
  /**
   * The output as an async iterable whose pulls drive flow control: a chunk is acknowledged when
   * the loop asks for the next one, so a slow `for await` pauses the process (above the high
   * watermark) with no ack code in the host. Ends after the last chunk before the exit. Every
   * iterator and every listener gets every chunk; the slowest active iterator sets the pace, and
   * a `break` (or an aborted `signal`) releases that iterator's hold. Opening an iterator opts the
   * terminal into flow control (an acknowledgement of 0 chars). Text only: for a PTY whose
   * provider delivers bytes (the controller's `bytes` event) it yields nothing and holds nothing back.
   *
   * An iterator nobody pulls is bounded: once it holds more than `maxQueuedChars` (default 8 Mi
   * chars) it drops what it holds, leaves, and its next pull rejects with `output_overrun`.
   *
   * The iterator is `AsyncDisposable` (its `return()`): `await using output = terminal.output()`
   * lets go of one pulled by hand (`output.next()`) at the end of the scope, as a `break` does.
   *
   * @throws TypeError when `options` is not an object or holds an option other than `signal` and
   * `maxQueuedChars` (naming it), its `signal` not an `AbortSignal` or its `maxQueuedChars` not a
   * positive integer (or `Infinity`).
   */
  output(options?: PtyTerminalOutputOptions): AsyncIterableIterator<string> & AsyncDisposable
  /**
   * Stop the terminal and wait for the verification (`stop()`); for `await using`. While the
   * controller is being disposed, wait for the dispose instead (it stops every terminal it owns).
   */
  [Symbol.asyncDispose](): Promise<void>
}

/** What a handle reads from the controller's record of its incarnation (the record is its identity). */
export type PtyTerminalRecordView = {
  /** The PTY id. */
  readonly ptyId: string
  /** The host. */
  readonly hostId: ExecutionHostId
  /** The incarnation, when attested. */
  readonly incarnationId: PtyIncarnationId | undefined
  /** The proven root pid. */
  readonly pid: number | undefined
  /** The size last applied. */
  readonly size: PtySize
  /** `live`, `unverified` (exit published, death not proven) or `exited`. */
  readonly state: 'live' | 'unverified' | 'exited'
  /** The last `exit` event published for this incarnation, if any. */
  readonly publishedExit: PtyControllerExitEvent | undefined
  /** The liveness last published (`exited` once the death is proven and that was told). */
  readonly liveness: { readonly kind: string }
  /** A stop of this incarnation was requested and is not proven done (see `stopAnsweredByDeath`). */
  readonly stopUnproven: boolean
}

/** Looks up the controller's current record of an id (`undefined` for ids it does not track). */
export type PtyTerminalRecordLookup = (ptyId: string) => PtyTerminalRecordView | undefined

/**
 * What handles and their registry use of the controller (the `PtyController` facade): its public
 * events and its id-keyed calls. Named here so the handles depend on the controller's surface,
 * not on its module.
 */
export type PtyTerminalHost = {
  /** Whether the controller was disposed. */
  readonly disposed: boolean
  /** The controller's `dispose()`: the same promise on every call, settled once it stopped what it owned. */
  dispose(): Promise<void>
  /** Subscribe to one of the controller's public events. */
  on<E extends keyof PtyControllerEvents>(event: E, listener: PtyControllerEvents[E]): unknown
  /** The controller's `write`. */
  write(ptyId: string, data: string | Uint8Array, inputKind: TerminalInputKind): boolean
  /** The controller's `writeWithSettlement`. */
  writeWithSettlement(ptyId: string, data: string | Uint8Array, inputKind: TerminalInputKind): WriteSettlement | Promise<WriteSettlement>
  /** The controller's `resize`. */
  resize(ptyId: string, cols: number, rows: number): boolean
  /** The controller's `kill`, of the PTY tracked under the id alone (not a spawn of the id still coming). */
  kill(ptyId: string): boolean
  /** The controller's `stopAndWait`, of the PTY tracked under the id alone (not a spawn of the id still coming). */
  stopAndWait(ptyId: string, options?: PtyStopAndWaitOptions): Promise<boolean>
  /** The controller's `acknowledgeData`. */
  acknowledgeData(ptyId: string, chars: number): void
  /**
   * An `output()` iterator's acknowledgement (its leaving may disengage flow control again).
   * `dropped`: of output an overrun iterator let go of unread, which never engages flow control.
   */
  acknowledgeIteratedData(ptyId: string, chars: number, dropped: boolean): void
  /**
   * A consumer that sees the PTY's output only from now on begins to acknowledge (an `output()`
   * iterator): flow control engages owing only `owed`, what it will be handed of what went by
   * before (a replay).
   */
  acknowledgeDataFromNow(ptyId: string, owed: number): void
  /** The PTY's terminal has no `output()` iterator left. */
  iteratorsLeft(ptyId: string): void
  /** Report a fault of a handle's on the controller's `error` event (an iterator's overrun). */
  report(error: PtyControllerError): void
  /** An `output()` iterator's `maxQueuedChars` when it gives none (see `defaultOutputQueueBound`). */
  readonly defaultMaxQueuedChars: number
}
