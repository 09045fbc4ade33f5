import { assertResizeDimension } from '../contracts/pty-dimension.js'
import {
  refusedWrite,
  type ExecutionHostId,
  type PtyIncarnationId,
  type PtyStopAndWaitOptions,
  type TerminalInputKind,
  type WriteSettlement,
} from '../contracts/index.js'
import { assertAbortSignal } from './abort.js'
import { isPromiseLike } from '../contracts/promise-like.js'
import { observeRejection } from './event-dispatch.js'
import { assertCharCount, assertOptionsObject, assertWriteArguments, describeThrownValue, describeValue } from './argument-validation.js'
import { PtyControllerError } from './pty-controller-error.js'
import { disposableUnsubscribe, type DisposableUnsubscribe } from './disposable.js'
import type { PtyControllerDataEvent, PtyControllerExitEvent, PtyControllerOutputLossEvent } from './events.js'
import type { PtyTerminal, PtyTerminalHost, PtyTerminalRecordLookup, PtyTerminalRecordView } from './pty-terminal.js'
import { assertStopAndWaitOptions } from './stop-and-wait-request.js'
import { stopAnsweredByDeath } from './pty-record.js'
import { TerminalOutputFeed, assertMaxQueuedChars, type PtyTerminalOutputOptions } from './terminal-output.js'
import { optionNamesOf } from '../contracts/known-options.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** The options of `output()`: any other name is refused, not ignored. */
const OUTPUT_OPTION_NAMES = optionNamesOf<PtyTerminalOutputOptions>()('signal', 'maxQueuedChars')

/** The {@link PtyTerminal} of one incarnation. */
export class TerminalHandle implements PtyTerminal {
  readonly record: PtyTerminalRecordView
  readonly exited: Promise<PtyControllerExitEvent>
  readonly #controller: PtyTerminalHost
  readonly #lookup: PtyTerminalRecordLookup
  readonly #feed: TerminalOutputFeed
  readonly #dataListeners = new Set<(event: PtyControllerDataEvent) => void>()
  readonly #exitListeners = new Set<(event: PtyControllerExitEvent) => void>()
  /** Created by the first listener: most terminals never lose output, nor have anyone ask. */
  #lossListeners: Set<(event: PtyControllerOutputLossEvent) => void> | undefined
  #resolveExited: ((event: PtyControllerExitEvent) => void) | undefined
  /**
   * Nothing more will ever reach this handle's listeners: its death is proven, or its controller's
   * dispose is over (it hears no event any more). Listeners are let go of, and later ones not kept.
   */
  #hearsNothingMore = false
  /** The PTY delivers its output as bytes (`bytes` events), which handles do not carry. */
  #bytes = false
  /** True during the turn that publishes the spawn: its output is kept for replay. */
  #publishing: boolean
  /** Counts the publications (`#startPublishing`): a drop scheduled for one replay never drops a later one. */
  #replayEpoch = 0
  /** A consumer was handed the replay: it is dropped once that turn is over (see `#replayHandedOut`). */
  #replayDropScheduled = false

  constructor(
    controller: PtyTerminalHost,
    lookup: PtyTerminalRecordLookup,
    record: PtyTerminalRecordView,
    publishing: boolean,
  ) {
    this.#controller = controller
    this.#lookup = lookup
    this.record = record
    this.exited = new Promise((resolve) => {
      this.#resolveExited = resolve
    })
    this.#feed = new TerminalOutputFeed(
      (chars, dropped) => {
        if (this.#mayAcknowledge()) this.#controller.acknowledgeIteratedData(this.id, chars, dropped)
      },
      () => {
        if (this.#mayAcknowledge()) this.#controller.iteratorsLeft(this.id)
      },
      (error) => this.#controller.report(error),
    )
    this.#publishing = false
    if (publishing) this.#startPublishing()
  }

  get id(): string {
    return this.record.ptyId
  }

  get pid(): number | undefined {
    return this.record.pid
  }

  get incarnationId(): PtyIncarnationId | undefined {
    return this.record.incarnationId
  }

  get hostId(): ExecutionHostId {
    return this.record.hostId
  }

  get cols(): number {
    return this.record.size.cols
  }

  get rows(): number {
    return this.record.size.rows
  }

  onData(listener: (event: PtyControllerDataEvent) => void): DisposableUnsubscribe {
    assertListener(listener)
    this.#replayHandedOut()
    // Replayed before it is added: one that throws reaches the caller unsubscribed (it would
    // otherwise stay subscribed with no unsubscribe ever handed back). Nothing arrives in between.
    for (const event of this.#feed.replayedEvents()) this.#replayTo(listener, event)
    // Nothing more will come (its death is proven, or the controller's dispose is over): the handle
    // keeps no listener (see onDeathProven, onControllerDisposed).
    if (this.#hearsNothingMore) return disposableUnsubscribe(() => undefined)
    this.#dataListeners.add(listener)
    return disposableUnsubscribe(() => this.#dataListeners.delete(listener))
  }

  acknowledgeData(chars: number): void {
    assertCharCount('chars', chars)
    this.#acknowledge(chars)
  }

  onExit(listener: (event: PtyControllerExitEvent) => void): DisposableUnsubscribe {
    assertListener(listener)
    if (this.#hearsNothingMore) return disposableUnsubscribe(() => undefined)
    this.#exitListeners.add(listener)
    return disposableUnsubscribe(() => this.#exitListeners.delete(listener))
  }

  onOutputLoss(listener: (event: PtyControllerOutputLossEvent) => void): DisposableUnsubscribe {
    assertListener(listener)
    if (this.#hearsNothingMore) return disposableUnsubscribe(() => undefined)
    const listeners = (this.#lossListeners ??= new Set())
    listeners.add(listener)
    return disposableUnsubscribe(() => listeners.delete(listener))
  }

  // Why each call checks its arguments before the fence: a malformed call is the caller's bug, a
  // TypeError whatever became of the incarnation (as the controller's calls are after `dispose`).

  write(data: string | Uint8Array, inputKind: TerminalInputKind = 'driving'): boolean {
    assertWriteArguments(data, inputKind)
    if (!this.#isCurrent()) return false
    return this.#controller.write(this.id, data, inputKind)
  }

  writeWithSettlement(
    data: string | Uint8Array,
    inputKind: TerminalInputKind = 'driving',
  ): WriteSettlement | Promise<WriteSettlement> {
    assertWriteArguments(data, inputKind)
    if (!this.#isCurrent()) {
      // Stale only when the id names another process now; an id the controller forgot (among
      // many later exits) was not reused: this handle's PTY ended.
      const replaced = this.#lookup(this.id) !== undefined || this.record.state === 'live'
      return refusedWrite(replaced ? 'stale_incarnation' : 'pty_exited')
    }
    return this.#controller.writeWithSettlement(this.id, data, inputKind)
  }

  resize(cols: number, rows: number): boolean {
    assertResizeDimension('cols', cols)
    assertResizeDimension('rows', rows)
    if (!this.#isCurrent()) return false
    return this.#controller.resize(this.id, cols, rows)
  }

  kill(): boolean {
    if (!this.#isCurrent()) return false
    return this.#controller.kill(this.id)
  }

  stop(options: PtyStopAndWaitOptions = {}): Promise<boolean> {
    try {
      assertStopAndWaitOptions(options)
    } catch (error) {
      return Promise.reject(error as Error)
    }
    // Proven ended: nothing left to stop, also once the id was respawned or the controller disposed
    // (whose `stopAndWait` answers `false` for every id) — unless a stop of it is not proven done
    // (`stopAnsweredByDeath`): the leader's exit does not prove the rest of what it covers gone.
    if (stopAnsweredByDeath(this.record)) return Promise.resolve(true)
    if (!this.#isCurrent()) {
      // A replaced incarnation a disposing controller may still be settling: answer once it is done.
      if (this.#controller.disposed) return this.#controller.dispose().then(() => stopAnsweredByDeath(this.record))
      return Promise.resolve(false)
    }
    // Also during `dispose()`: the controller's `stopAndWait` then answers disposal's verdict of this
    // PTY (its stop verified, within this call's deadline and signal), so the two agree (h180).
    return this.#controller.stopAndWait(this.id, options)
  }

  output(options?: PtyTerminalOutputOptions): AsyncIterableIterator<string> & AsyncDisposable {
    assertOptionsObject('options', options, OUTPUT_OPTION_NAMES)
    assertAbortSignal(options?.signal)
    assertMaxQueuedChars(options?.maxQueuedChars)
    // The iterator opts in to flow control (where it engages only for consumers that acknowledge),
    // so it paces the process from its first chunk — owing nothing for output that went by before
    // it existed (it will never be handed that output, so it could never acknowledge it) but the
    // replay it is handed. One opened with an aborted signal yields nothing and opts in to nothing.
    // An iterator of a bytes PTY is never handed a chunk: it opts in to nothing either.
    if (options?.signal?.aborted !== true && !this.#bytes && this.#mayAcknowledge()) {
      this.#controller.acknowledgeDataFromNow(this.id, this.#feed.replayOwed())
    }
    if (options?.signal?.aborted !== true) this.#replayHandedOut()
    return this.#feed.iterate({ ...options, maxQueuedChars: options?.maxQueuedChars ?? this.#controller.defaultMaxQueuedChars })
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // A disposed controller stops everything it owns: wait until it has (its `dispose()` is the
    // same promise on every call), as `stop()` waits — a scope left while the dispose is still
    // stopping this terminal must not end with its process running.
    if (this.#controller.disposed) await this.#controller.dispose()
    else await this.stop()
  }

  /** A `data` event of this id (the controller emits output only for the current incarnation). */
  onDataEvent(event: PtyControllerDataEvent): Promise<void> | undefined {
    if (!this.#publishing) this.#feed.dropReplay()
    this.#feed.push(event)
    return this.#dataListeners.size > 0 ? callEach(this.#dataListeners, event) : undefined
  }

  /**
   * A `bytes` event of this id: the PTY delivers bytes, which handles do not carry. Why tell flow
   * control: iterators opened before anyone knew will never be handed a chunk, so they can never
   * acknowledge one, and their opt-in would hold the process paused until the cap forgave it. A
   * consumer that acknowledges through `acknowledgeData` keeps flow control engaged.
   */
  onBytesEvent(): void {
    if (this.#bytes) return
    this.#bytes = true
    if (this.#mayAcknowledge()) this.#controller.iteratorsLeft(this.id)
  }

  /** An `outputLoss` event of this incarnation. */
  onOutputLossEvent(event: PtyControllerOutputLossEvent): Promise<void> | undefined {
    return this.#lossListeners !== undefined && this.#lossListeners.size > 0 ? callEach(this.#lossListeners, event) : undefined
  }

  onExitEvent(event: PtyControllerExitEvent): Promise<void> | undefined {
    this.#feed.end()
    const resolve = this.#resolveExited
    this.#resolveExited = undefined
    resolve?.(event)
    return this.#exitListeners.size > 0 ? callEach(this.#exitListeners, event) : undefined
  }

  /**
   * The incarnation's death is proven: nothing more will ever come for it (no output, no exit, no
   * revival), so its listeners are let go of. Why: the controller keeps the handle for as long as
   * it remembers the ended PTY (`terminal(id)` answers it), the latest 1 024 of them; a host's
   * listeners — and the view each closure holds, a closed tab's xterm — stayed reachable until
   * 1 024 more terminals ended (about 1.9 MB per closed tab with a 5 000-row view, h156).
   */
  onDeathProven(): void {
    this.#letGoOfListeners()
  }

  /**
   * The controller's `dispose()` is over: it removed its listeners, so no event reaches this handle
   * any more — not the real exit of a PTY whose stop went unverified, nor anything of one
   * `dispose({ stopPtys: false })` let go of. Why let go of the listeners: the disposed controller
   * keeps its handles, so a host that keeps the controller (a module-level variable) kept each such
   * terminal's views reachable through listeners that could never be called.
   */
  onControllerDisposed(): void {
    this.#letGoOfListeners()
  }

  #letGoOfListeners(): void {
    this.#hearsNothingMore = true
    this.#dataListeners.clear()
    this.#exitListeners.clear()
    this.#lossListeners = undefined
  }

  /**
   * A `spawn` event of this very incarnation, for a handle made before it: asked for by a `spawn`
   * listener that ran before the registry's, or a re-attach (which may revive an incarnation whose
   * stop went unverified). Its output may follow again, and the output delivered in this turn is
   * kept for replay, as for a handle made by the spawn event.
   */
  onPublished(): void {
    if (this.record.state === 'live') this.#feed.reopen()
    this.#startPublishing()
  }

  /**
   * Nothing more will come for this incarnation: another took the id, or the controller let go of
   * it (disposed with `stopPtys: false`). Its output ends; `exited` stays pending (no exit was seen).
   */
  onOutputEnded(): void {
    this.#feed.dropReplay()
    this.#feed.end()
  }

  /**
   * Why: the controller delivers output held while the spawn was in flight right after the `spawn`
   * event, in the same synchronous turn — before `spawnTerminal` could hand the handle over. Keep
   * it for whoever subscribes right after getting the handle.
   */
  #startPublishing(): void {
    if (this.#publishing) return
    this.#publishing = true
    this.#replayEpoch += 1
    this.#feed.startReplay()
    queueMicrotask(() => {
      this.#publishing = false
    })
  }

  /**
   * A listener or iterator is being handed the replay: drop it once this turn is over, so the
   * subscribers of this turn get it (a listener and an iterator subscribed together, or every
   * terminal of a `Promise.all` of spawns), and those of a later turn do not. Why: the replay is the
   * output that came before the handle was handed over, for whoever subscribed then. Kept until the
   * next chunk, as it was, a view re-subscribed to an idle shell (a tab moved to another panel)
   * drew the first prompt again, and an `output()` opened after `write('make\r')` to wait for the
   * next prompt was handed the first one at once. A replay nobody was handed yet is kept until the
   * next chunk, as before: its first subscriber never saw that output. Why `setImmediate` and not
   * the controller's clock: "this turn" is the event loop's, not a span of time (a test's fake
   * timers that fake `setImmediate` keep the replay until they run it).
   */
  #replayHandedOut(): void {
    if (this.#replayDropScheduled || !this.#feed.holdsReplay()) return
    this.#replayDropScheduled = true
    const epoch = this.#replayEpoch
    setImmediate(() => {
      this.#replayDropScheduled = false
      // A publication since (a re-attach that revived the incarnation) keeps its own replay.
      if (epoch === this.#replayEpoch && !this.#publishing) this.#feed.dropReplay()
    })
  }

  /**
   * Hand `listener` one replayed chunk. A throw goes to `onData`'s caller (above); a promise the
   * listener returns is watched as the controller's emit watches one: its rejection is reported
   * `listener_threw`, where it would otherwise be an unhandled rejection, which ends a Node process
   * by default.
   */
  #replayTo(listener: (event: PtyControllerDataEvent) => unknown, event: PtyControllerDataEvent): void {
    observeRejection(listener(event), (error) => {
      this.#controller.report(
        new PtyControllerError('listener_threw', `A \`data\` listener's promise rejected with ${describeThrownValue(error)}`, {
          cause: error,
          ptyId: event.ptyId,
        }),
      )
    })
  }

  #isCurrent(): boolean {
    return this.#lookup(this.id) === this.record
  }

  #acknowledge(chars: number): void {
    if (this.#mayAcknowledge()) this.#controller.acknowledgeData(this.id, chars)
  }

  /**
   * Whether an ack (or an iterator's opt-in) may go out. Why the checks: it is addressed by id, and
   * must never credit a replacement; a disposed controller has nothing left to credit.
   */
  #mayAcknowledge(): boolean {
    return !this.#controller.disposed && this.record.state === 'live' && this.#isCurrent()
  }
}

/** @throws TypeError naming the `listener` argument unless it is a function. */
function assertListener(listener: unknown): void {
  if (typeof listener !== 'function') {
    throw argumentRefusal(`Expected the \`listener\` argument to be a function, got ${describeValue(listener)}`, 'listener', listener)
  }
}

/**
 * Call every listener even when one throws; then rethrow the first failure, so the controller
 * reports it on its `error` event (`listener_threw`) like a throw from any of its own listeners.
 * Promises the listeners return (`async` listeners) come back as one promise, which rejects as
 * soon as one of them rejects — a sibling that never settles does not hold the report back — and
 * resolves once all have settled: the controller reports that first rejection the same way (later
 * ones are handled, unreported, as later throws are). With a throw as well, the throw is the
 * failure reported.
 */
function callEach<T>(listeners: ReadonlySet<(value: T) => unknown>, value: T): Promise<void> | undefined {
  let failure: { error: unknown } | undefined
  let thenables: PromiseLike<unknown>[] | undefined
  for (const listener of [...listeners]) {
    try {
      const result = listener(value)
      // Most listeners return nothing (or a number, `push`'s): one comparison, no allocation.
      if (result !== undefined && isPromiseLike(result)) (thenables ??= []).push(result)
    } catch (error) {
      failure ??= { error }
    }
  }
  const settled = thenables === undefined ? undefined : firstRejection(thenables)
  if (failure !== undefined) {
    void settled?.catch(() => undefined)
    throw failure.error
  }
  return settled
}

/** Rejects with the first of `thenables` to reject, at once; resolves once all have fulfilled. */
function firstRejection(thenables: readonly PromiseLike<unknown>[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let pending = thenables.length
    for (const thenable of thenables) {
      Promise.resolve(thenable).then(() => {
        pending -= 1
        if (pending === 0) resolve()
      }, reject)
    }
  })
}
