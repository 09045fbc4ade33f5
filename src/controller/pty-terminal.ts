import {
  refusedWrite,
  type ExecutionHostId,
  type PtyIncarnationId,
  type PtySize,
  type PtyStopAndWaitOptions,
  type TerminalInputKind,
  type WriteSettlement,
} from '../contracts/index.js'
import { disposableUnsubscribe, type DisposableUnsubscribe } from './disposable.js'
import type {
  PtyControllerDataEvent,
  PtyControllerExitEvent,
  PtyControllerLivenessEvent,
  PtyControllerSpawnEvent,
} from './events.js'
import type { PtyController } from './pty-controller.js'
import { TerminalOutputFeed, type PtyTerminalOutputOptions } from './terminal-output.js'

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
   * delivered before the handle was handed to you, when you subscribe in that same turn).
   * Listening does not acknowledge anything: call `controller.acknowledgeData` yourself, or use
   * `output()`, to take part in flow control.
   */
  onData(listener: (event: PtyControllerDataEvent) => void): DisposableUnsubscribe
  /**
   * Call `listener` with each exit event of this incarnation published from now on (one, except
   * after a re-attach revived an unverified stop; see the controller's `exit` event). For an exit
   * that may already have happened, await `exited`.
   */
  onExit(listener: (event: PtyControllerExitEvent) => void): DisposableUnsubscribe
  /** Write bytes; `true` only when accepted. Refused once the incarnation ended or was replaced. */
  write(data: string, inputKind?: TerminalInputKind): boolean
  /** Write and settle in three values; `refused('stale_incarnation')` once the id was respawned. */
  writeWithSettlement(data: string, inputKind?: TerminalInputKind): WriteSettlement | Promise<WriteSettlement>
  /** Resize; `false` when the PTY ended, was replaced, or the provider refused. */
  resize(cols: number, rows: number): boolean
  /** Dispatch a stop (the exit that follows is `operator_close`); `false` when there is nothing to stop. */
  kill(): boolean
  /**
   * Stop with escalation and wait (`controller.stopAndWait`, options passed through): `true` only
   * when the stop was verified. For a replaced incarnation: `true` if its death was proven, else `false`.
   */
  stop(options?: PtyStopAndWaitOptions): Promise<boolean>
  /**
   * The output as an async iterable whose pulls drive flow control: a chunk is acknowledged when
   * the loop asks for the next one, so a slow `for await` pauses the process (above the high
   * watermark) with no ack code in the host. Ends after the last chunk before the exit. Every
   * iterator and every listener gets every chunk; the slowest active iterator sets the pace, and
   * a `break` (or an aborted `signal`) releases that iterator's hold. Opening an iterator opts the
   * terminal into flow control (an acknowledgement of 0 chars).
   */
  output(options?: PtyTerminalOutputOptions): AsyncIterableIterator<string>
  /** Stop the terminal and wait for the verification (`stop()`); for `await using`. */
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
}

/** Looks up the controller's current record of an id (`undefined` for ids it does not track). */
export type PtyTerminalRecordLookup = (ptyId: string) => PtyTerminalRecordView | undefined

/**
 * Above this many handles, the registry sweeps those whose record the controller no longer holds
 * (replaced or forgotten), and the threshold doubles with what is left: amortized O(1) per spawn.
 */
const SWEEP_MIN_HANDLES = 64

/**
 * The handles of one controller, kept current from its public events (`spawn`, `data`, `exit`,
 * `liveness`). Created on the first `spawnTerminal`/`terminal` call; from then on each published
 * spawn gets a handle (cheap: it holds listeners and a feed, nothing while nobody subscribes).
 */
export class PtyTerminalRegistry {
  readonly #controller: PtyController
  readonly #lookup: PtyTerminalRecordLookup
  readonly #handles = new Map<string, TerminalHandle>()
  #sweepAt = SWEEP_MIN_HANDLES

  /** Subscribe to `controller`'s events; `lookup` reads its current record of an id. */
  constructor(controller: PtyController, lookup: PtyTerminalRecordLookup) {
    this.#controller = controller
    this.#lookup = lookup
    controller.on('spawn', (event) => this.#onSpawn(event))
    controller.on('data', (event) => this.#handles.get(event.ptyId)?.onDataEvent(event))
    controller.on('exit', (event) => this.#current(event.ptyId, event.incarnationId)?.onExitEvent(event))
    controller.on('liveness', (event) => this.#onLiveness(event))
  }

  /**
   * The handle of the incarnation the controller tracks under `ptyId`: the same object on every
   * call. `null` for an unknown id, and for an exited PTY whose exit this registry did not see.
   */
  handleFor(ptyId: string): PtyTerminal | null {
    const record = this.#lookup(ptyId)
    if (record === undefined) return null
    const existing = this.#handles.get(ptyId)
    if (existing !== undefined && existing.record === record) return existing
    if (record.state === 'exited') return null
    return this.#adopt(record, false)
  }

  #onSpawn(event: PtyControllerSpawnEvent): void {
    const record = this.#lookup(event.ptyId)
    if (record === undefined) return
    const existing = this.#handles.get(event.ptyId)
    if (existing !== undefined && existing.record === record) {
      existing.onRevived()
      return
    }
    this.#adopt(record, true)
  }

  #onLiveness(event: PtyControllerLivenessEvent): void {
    if (event.verdict.kind !== 'exited') return
    this.#current(event.ptyId, event.incarnationId)?.onDeathProven()
  }

  #current(ptyId: string, incarnationId: PtyIncarnationId | undefined): TerminalHandle | undefined {
    const handle = this.#handles.get(ptyId)
    if (handle === undefined || handle.record !== this.#lookup(ptyId)) return undefined
    if (incarnationId !== undefined && handle.incarnationId !== undefined && incarnationId !== handle.incarnationId) {
      return undefined
    }
    return handle
  }

  #adopt(record: PtyTerminalRecordView, publishing: boolean): TerminalHandle {
    this.#handles.get(record.ptyId)?.onReplaced()
    const handle = new TerminalHandle(this.#controller, this.#lookup, record, publishing)
    this.#handles.set(record.ptyId, handle)
    if (this.#handles.size > this.#sweepAt) this.#sweep()
    return handle
  }

  #sweep(): void {
    for (const [ptyId, handle] of this.#handles) {
      if (this.#lookup(ptyId) === handle.record) continue
      handle.onReplaced()
      this.#handles.delete(ptyId)
    }
    this.#sweepAt = Math.max(SWEEP_MIN_HANDLES, this.#handles.size * 2)
  }
}

/** The {@link PtyTerminal} of one incarnation. */
class TerminalHandle implements PtyTerminal {
  readonly record: PtyTerminalRecordView
  readonly exited: Promise<PtyControllerExitEvent>
  readonly #controller: PtyController
  readonly #lookup: PtyTerminalRecordLookup
  readonly #feed: TerminalOutputFeed
  readonly #dataListeners = new Set<(event: PtyControllerDataEvent) => void>()
  readonly #exitListeners = new Set<(event: PtyControllerExitEvent) => void>()
  #resolveExited: ((event: PtyControllerExitEvent) => void) | undefined
  #deathProven = false
  /** True during the turn that publishes the spawn: its output is kept for replay. */
  #publishing: boolean

  constructor(
    controller: PtyController,
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
    this.#feed = new TerminalOutputFeed((chars) => this.#acknowledge(chars))
    this.#publishing = publishing
    if (publishing) {
      // Why: the controller delivers output held while the spawn was in flight right after the
      // `spawn` event, in the same synchronous turn — before `spawnTerminal` could hand the handle
      // over. Keep it for whoever subscribes right after getting the handle.
      this.#feed.startReplay()
      queueMicrotask(() => {
        this.#publishing = false
      })
    }
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
    this.#dataListeners.add(listener)
    for (const event of this.#feed.replayedEvents()) listener(event)
    return disposableUnsubscribe(() => this.#dataListeners.delete(listener))
  }

  onExit(listener: (event: PtyControllerExitEvent) => void): DisposableUnsubscribe {
    this.#exitListeners.add(listener)
    return disposableUnsubscribe(() => this.#exitListeners.delete(listener))
  }

  write(data: string, inputKind: TerminalInputKind = 'driving'): boolean {
    if (!this.#isCurrent()) return false
    return this.#controller.write(this.id, data, inputKind)
  }

  writeWithSettlement(
    data: string,
    inputKind: TerminalInputKind = 'driving',
  ): WriteSettlement | Promise<WriteSettlement> {
    if (!this.#isCurrent()) return refusedWrite('stale_incarnation')
    return this.#controller.writeWithSettlement(this.id, data, inputKind)
  }

  resize(cols: number, rows: number): boolean {
    if (!this.#isCurrent()) return false
    return this.#controller.resize(this.id, cols, rows)
  }

  kill(): boolean {
    if (!this.#isCurrent()) return false
    return this.#controller.kill(this.id)
  }

  stop(options: PtyStopAndWaitOptions = {}): Promise<boolean> {
    if (!this.#isCurrent()) return Promise.resolve(this.#deathProven || this.record.state === 'exited')
    return this.#controller.stopAndWait(this.id, options)
  }

  output(options?: PtyTerminalOutputOptions): AsyncIterableIterator<string> {
    // Why an empty ack: acknowledging is the controller's opt-in to flow control (where it engages
    // only for consumers that acknowledge), so the iterator paces the process from its first chunk.
    this.#acknowledge(0)
    return this.#feed.iterate(options)
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // A disposed controller already stopped everything it owned.
    if (this.#controller.disposed) return
    await this.stop()
  }

  /** A `data` event of this id (the controller emits output only for the current incarnation). */
  onDataEvent(event: PtyControllerDataEvent): void {
    if (!this.#publishing) this.#feed.dropReplay()
    this.#feed.push(event)
    if (this.#dataListeners.size > 0) callEach(this.#dataListeners, event)
  }

  onExitEvent(event: PtyControllerExitEvent): void {
    this.#feed.end()
    const resolve = this.#resolveExited
    this.#resolveExited = undefined
    resolve?.(event)
    if (this.#exitListeners.size > 0) callEach(this.#exitListeners, event)
  }

  onDeathProven(): void {
    this.#deathProven = true
  }

  /** A re-attach to this very incarnation (it may revive one whose stop went unverified). */
  onRevived(): void {
    if (this.record.state === 'live') this.#feed.reopen()
  }

  /** Another incarnation took the id: nothing more will come for this one. */
  onReplaced(): void {
    this.#feed.dropReplay()
    this.#feed.end()
  }

  #isCurrent(): boolean {
    return this.#lookup(this.id) === this.record
  }

  #acknowledge(chars: number): void {
    // Why the checks: an ack is addressed by id, and must never credit a replacement (or reach a
    // disposed controller, which throws).
    if (this.#controller.disposed || this.record.state !== 'live' || !this.#isCurrent()) return
    this.#controller.acknowledgeData(this.id, chars)
  }
}

/**
 * Call every listener even when one throws; then rethrow the first failure, so the controller
 * reports it on its `error` event (`listener_threw`) like a throw from any of its own listeners.
 */
function callEach<T>(listeners: ReadonlySet<(value: T) => void>, value: T): void {
  let failure: { error: unknown } | undefined
  for (const listener of [...listeners]) {
    try {
      listener(value)
    } catch (error) {
      failure ??= { error }
    }
  }
  if (failure !== undefined) throw failure.error
}
