import type { PtyIncarnationId } from '../contracts/index.js'
import type { PtyControllerLivenessEvent, PtyControllerSpawnEvent } from './events.js'
import type { PtyTerminal, PtyTerminalHost, PtyTerminalRecordLookup, PtyTerminalRecordView } from './pty-terminal.js'
import { TerminalHandle } from './terminal-handle.js'

/**
 * Above this many handles, the registry sweeps those whose record the controller no longer holds
 * (replaced or forgotten), and the threshold doubles with what is left: amortized O(1) per spawn.
 */
const SWEEP_MIN_HANDLES = 64

/**
 * The handles of one controller, kept current from its public events (`spawn`, `data`, `bytes`,
 * `outputLoss`, `exit`, `liveness`). Created on the first `spawnTerminal`/`terminal` call; from
 * then on each published spawn gets a handle (cheap: it holds listeners and a feed, nothing while
 * nobody subscribes).
 */
export class PtyTerminalRegistry {
  readonly #controller: PtyTerminalHost
  readonly #lookup: PtyTerminalRecordLookup
  readonly #handles = new Map<string, TerminalHandle>()
  /** Every handle made, by its record (weakly): a replaced incarnation's handle stays reachable for a spawn that published it. */
  readonly #byRecord = new WeakMap<PtyTerminalRecordView, TerminalHandle>()
  #sweepAt = SWEEP_MIN_HANDLES

  /** Subscribe to `controller`'s events; `lookup` reads its current record of an id. */
  constructor(controller: PtyTerminalHost, lookup: PtyTerminalRecordLookup) {
    this.#controller = controller
    this.#lookup = lookup
    controller.on('spawn', (event) => this.#onSpawn(event))
    controller.on('data', (event) => this.#forOutput(event.ptyId)?.onDataEvent(event))
    controller.on('bytes', (event) => this.#forOutput(event.ptyId)?.onBytesEvent())
    controller.on('outputLoss', (event) => this.#current(event.ptyId, event.incarnationId)?.onOutputLossEvent(event))
    controller.on('exit', (event) => this.#current(event.ptyId, event.incarnationId)?.onExitEvent(event))
    controller.on('liveness', (event) => this.#onLiveness(event))
  }

  /**
   * The handle of the incarnation the controller tracks under `ptyId` (an exited one too, while the
   * controller remembers it): the same object on every call. `null` for an unknown id.
   */
  handleFor(ptyId: string): PtyTerminal | null {
    const record = this.#lookup(ptyId)
    if (record === undefined) return null
    const existing = this.#handles.get(ptyId)
    if (existing !== undefined && existing.record === record) return existing
    // An incarnation whose exit was published gets a handle too, resolved `exited` with it: the
    // same answer whether or not a handle was made before (by `spawnTerminal`, or any handle's
    // registry following every spawn) — before, it was `null` or a handle depending on that.
    return this.#adopt(record, false)
  }

  /**
   * The handle of exactly `record`'s incarnation: the one made when it was published, replaced or
   * not (a replaced one is fenced: it refuses `stale_incarnation`), else the current one's.
   */
  handleOfRecord(record: PtyTerminalRecordView): PtyTerminal | null {
    return this.#byRecord.get(record) ?? (this.#lookup(record.ptyId) === record ? this.handleFor(record.ptyId) : null)
  }

  /**
   * The controller let go of every PTY without stopping it (`dispose({ stopPtys: false })`): every
   * handle's output ends, and no event reaches it any more, which lets go of its listeners.
   */
  releaseAll(): void {
    for (const handle of this.#handles.values()) {
      handle.onOutputEnded()
      handle.onControllerDisposed()
    }
    this.#handles.clear()
  }

  /** The controller's dispose is over: no event reaches any handle any more, which lets go of its listeners. */
  controllerDisposed(): void {
    for (const handle of this.#handles.values()) handle.onControllerDisposed()
  }

  #onSpawn(event: PtyControllerSpawnEvent): void {
    const record = this.#lookup(event.ptyId)
    if (record === undefined) return
    const existing = this.#handles.get(event.ptyId)
    // Made before this event: by a `spawn` listener that ran before this one, or a re-attach.
    if (existing !== undefined && existing.record === record) {
      existing.onPublished()
      return
    }
    this.#adopt(record, true)
  }

  #onLiveness(event: PtyControllerLivenessEvent): void {
    if (event.verdict.kind !== 'exited') return
    this.#current(event.ptyId, event.incarnationId)?.onDeathProven()
  }

  /**
   * The handle that hears output of `ptyId`: the current incarnation's (the controller emits output
   * of no other). A handle of a replaced incarnation never does. Why a look-up and not the table
   * alone: a host `spawn` listener registered before this registry's runs first, and may make the
   * provider emit the new process's output at once — before this registry saw the spawn, while the
   * table still holds the old incarnation's handle. The new incarnation's handle is then made here,
   * publishing (it keeps the output for whoever subscribes when the spawn resolves), and the spawn
   * event that follows finds it. An id with no handle at all gets none from its output.
   */
  #forOutput(ptyId: string): TerminalHandle | undefined {
    const handle = this.#handles.get(ptyId)
    if (handle === undefined) return undefined
    const record = this.#lookup(ptyId)
    if (handle.record === record) return handle
    return record === undefined ? undefined : this.#adopt(record, true)
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
    this.#handles.get(record.ptyId)?.onOutputEnded()
    const handle = new TerminalHandle(this.#controller, this.#lookup, record, publishing)
    // A handle made after its incarnation's exit was published (a stop that went unverified,
    // before anyone asked for the handle) resolves `exited` with it, and its output has ended.
    if (record.state !== 'live' && record.publishedExit !== undefined) handle.onExitEvent(record.publishedExit)
    // One whose death was already published as proven keeps no listener: nothing will ever come
    // for it. (Not merely `exited`: while its exit is being published, a listener may still join.)
    if (record.liveness.kind === 'exited') handle.onDeathProven()
    this.#handles.set(record.ptyId, handle)
    this.#byRecord.set(record, handle)
    if (this.#handles.size > this.#sweepAt) this.#sweep()
    return handle
  }

  #sweep(): void {
    for (const [ptyId, handle] of this.#handles) {
      if (this.#lookup(ptyId) === handle.record) continue
      handle.onOutputEnded()
      this.#handles.delete(ptyId)
    }
    this.#sweepAt = Math.max(SWEEP_MIN_HANDLES, this.#handles.size * 2)
  }
}
