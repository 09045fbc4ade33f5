import {
  createListenerSet,
  createRecentIds,
  isPtyIncarnationId,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyOutputLossEvent,
} from '../contracts/index.js'
import { isTerminalExitCause } from '../exit-cause/index.js'
import { PTY_HOST_EXITED_ID_MEMORY } from './pty-host-provider-options.js'
import type { PtyHostMessage } from './protocol.js'

/** An `exit` message of the host, as a reply lists them (the cause and incarnation are checked when read). */
export function isExitMessage(value: unknown): value is Extract<PtyHostMessage, { type: 'exit' }> {
  if (value === null || typeof value !== 'object') return false
  const message = value as Record<string, unknown>
  return message.type === 'exit' && typeof message.ptyId === 'string' && typeof message.code === 'number'
}

/**
 * The exit event an `exit` message of the host describes; `incarnationId` when the message names
 * none (the one this app knows the PTY by).
 */
export function exitEventOfMessage(message: Extract<PtyHostMessage, { type: 'exit' }>, incarnationId?: PtyIncarnationId): PtyExitEvent {
  const event: PtyExitEvent = { id: message.ptyId, code: typeof message.code === 'number' ? message.code : Number.NaN }
  const attested = isPtyIncarnationId(message.incarnationId) ? message.incarnationId : incarnationId
  if (attested !== undefined) event.incarnationId = attested
  // The host's node-pty provider built the cause from the real status: carried unchanged.
  if (isTerminalExitCause(message.cause)) event.cause = message.cause
  // The host saw the process end before any stop of it reached the host (see `exitMessage`).
  if (message.diedBeforeStopRequest === true) event.diedBeforeStopRequest = true
  // A stop of this incarnation reached the host while it lived — maybe another app's, or an
  // earlier run's: the controller settles it as an operator close though it never asked. Only
  // when the host says so (a host older than the field says nothing, which proves no stop).
  else if (message.stopRequestedBeforeDeath === true) event.stopRequestedBeforeDeath = true
  return event
}

/** What the app knows of one PTY in the host. `unknown`: contact lost, no exit observed. */
export type ClientPtyState = 'spawning' | 'live' | 'unknown' | 'exited'

/** Whether a PTY in `state` holds the app's connection open (it runs, or is being spawned). */
export function isLive(state: ClientPtyState): boolean {
  return state === 'live' || state === 'spawning'
}

/**
 * The app's record of one PTY: its state, incarnation, the last sequence delivered, and its host.
 * `state` changes only through {@link ClientPtyRecords.setState}, which keeps the live count exact.
 */
export type ClientPtyRecord = {
  readonly id: string
  readonly state: ClientPtyState
  incarnationId: PtyIncarnationId | undefined
  lastSeq: number
  /**
   * The end of the output this app delivered or reported lost (never moved by where an attach
   * places the stream): a loss is reported only past it, so a gap is never reported twice.
   */
  accountedSeq: number
  hostInstanceId: string | undefined
  /** A spawn whose reply never came (the connection dropped, or it timed out): stop it as soon as the host is back. */
  orphaned: boolean
  /**
   * The app holds a pause of this PTY (`pauseProducer`, not yet `resumeProducer`). The host drops a
   * connection's pauses when it closes, so a re-attach asks for it again.
   */
  appPaused: boolean
  /**
   * This app asked the host to stop the PTY (`shutdown`). An end proven without the host's exit
   * message (its exit forgotten, see {@link ClientPtyRecords.settleForgotten}) says it ended on its
   * own (`diedBeforeStopRequest`) only when no stop was asked.
   */
  stopAsked: boolean
  /**
   * This app's last `shutdown` of the PTY did not end in the host's "done": the host answered
   * `shutdown_timeout` or `shutdown_failed`, or the app never learnt the outcome (the request timed
   * out, the connection dropped or the host died first, a dispose or detach cut it off). Something
   * of its session may live on (its exit does not say otherwise). A later `shutdown` then still
   * goes to the host (after a reconnect) — whose provider keeps that stop unfinished and tries
   * again, or says so — or rejects, rather than resolving at once as for an ended PTY.
   */
  stopUnfinished: boolean
}

/**
 * What a call in flight (an attach) learns of the output delivered for its PTY meanwhile: where the
 * first of it began (`undefined` while none was). A caller that holds what arrives during its call
 * (the controller does) places that output by it, not after the reply's position.
 */
export type DeliveryWatch = { deliveredFrom: number | undefined }

/**
 * The app side's PTY records and its event listeners: turns the host's events into `data` (never
 * twice: overlapping replays are trimmed by sequence), `exit` and output-loss events.
 */
export class ClientPtyRecords {
  /** Records by PTY id. */
  readonly #ptys = new Map<string, ClientPtyRecord>()
  /** `data` listeners (a throwing listener surfaces uncaught without stopping the others). */
  readonly data = createListenerSet<PtyDataEvent>()
  /** `exit` listeners. */
  readonly exit = createListenerSet<PtyExitEvent>()
  /** Output-loss listeners. */
  readonly loss = createListenerSet<PtyOutputLossEvent>()
  /** Ids of the most recently exited records: older exited records are dropped from `ptys`. */
  readonly #exitedIds = createRecentIds(PTY_HOST_EXITED_ID_MEMORY)
  readonly #anyLiveChanged: () => void
  /** Records in `#ptys` whose state is `live` or `spawning` (kept by {@link setState}, {@link record} and {@link forget}). */
  #live = 0
  /** Watches of calls in flight, by PTY id (see {@link watchDeliveries}); empty almost always. */
  readonly #deliveryWatches = new Map<string, Set<DeliveryWatch>>()

  /**
   * @param anyLiveChanged - called when {@link anyLive} changes: the first PTY becomes live or
   * spawning, or the last one stops being so (the app then holds, or stops holding, the connection).
   */
  constructor(anyLiveChanged: () => void) {
    this.#anyLiveChanged = anyLiveChanged
  }

  /**
   * Note where the output delivered for `id` from now on begins (the first chunk's or loss's start),
   * until {@link unwatchDeliveries}.
   */
  watchDeliveries(id: string): DeliveryWatch {
    const watch: DeliveryWatch = { deliveredFrom: undefined }
    let watches = this.#deliveryWatches.get(id)
    if (watches === undefined) this.#deliveryWatches.set(id, (watches = new Set()))
    watches.add(watch)
    return watch
  }

  /** Stop a {@link watchDeliveries} watch. */
  unwatchDeliveries(id: string, watch: DeliveryWatch): void {
    const watches = this.#deliveryWatches.get(id)
    if (watches === undefined) return
    watches.delete(watch)
    if (watches.size === 0) this.#deliveryWatches.delete(id)
  }

  #noteDelivered(id: string, from: number): void {
    const watches = this.#deliveryWatches.get(id)
    if (watches === undefined) return
    for (const watch of watches) if (watch.deliveredFrom === undefined) watch.deliveredFrom = from
  }

  /** The records by PTY id (read-only: records enter through {@link record} and leave through {@link forget}). */
  get ptys(): ReadonlyMap<string, ClientPtyRecord> {
    return this.#ptys
  }

  /**
   * The record of `id` for an attach on host `hostInstanceId`: a record not exited is returned as it
   * is — what it says (its host, its incarnation, whether it is an orphan) changes only once the
   * host answered the attach — else a fresh one, `spawning`.
   */
  recordForAttach(id: string, hostInstanceId: string, incarnationId: PtyIncarnationId | undefined): ClientPtyRecord {
    const existing = this.#ptys.get(id)
    if (existing !== undefined && existing.state !== 'exited') return existing
    return this.#fresh(id, hostInstanceId, incarnationId)
  }

  /**
   * The record of `id` for a spawn on host `hostInstanceId`. A live (or spawning) record is
   * returned as it is (the provider refuses a spawn under an id live here before it asks for a
   * record, so it never takes one over); any other record —
   * exited, or `unknown`: a process of an earlier connection, maybe of a host that died — gives
   * way to a fresh one, so the new process's stream starts from nothing it did not print.
   */
  recordForSpawn(id: string, hostInstanceId: string): ClientPtyRecord {
    const existing = this.#ptys.get(id)
    if (existing !== undefined && isLive(existing.state)) return existing
    return this.#fresh(id, hostInstanceId, undefined)
  }

  /** A fresh `spawning` record of `id`, replacing any earlier one (it goes last in the map's order). */
  #fresh(id: string, hostInstanceId: string, incarnationId: PtyIncarnationId | undefined): ClientPtyRecord {
    const existing = this.#ptys.get(id)
    if (existing !== undefined) this.forget(existing)
    const fresh: ClientPtyRecord = { id, state: 'spawning', incarnationId, lastSeq: 0, accountedSeq: 0, hostInstanceId, orphaned: false, appPaused: false, stopAsked: false, stopUnfinished: false }
    this.#ptys.set(id, fresh)
    this.#countLive(1)
    return fresh
  }

  /** Drop `record` (when it is still the record of its id). */
  forget(record: ClientPtyRecord): void {
    if (this.#ptys.get(record.id) !== record) return
    this.#ptys.delete(record.id)
    this.#exitedIds.forget(record.id)
    if (isLive(record.state)) this.#countLive(-1)
  }

  /** Change `record`'s state (a record no longer in the map changes without being counted). */
  setState(record: ClientPtyRecord, state: ClientPtyState): void {
    const wasLive = isLive(record.state)
    ;(record as { state: ClientPtyState }).state = state
    if (wasLive !== isLive(state) && this.#ptys.get(record.id) === record) this.#countLive(wasLive ? -1 : 1)
  }

  #countLive(delta: 1 | -1): void {
    this.#live += delta
    if (this.#live === (delta > 0 ? 1 : 0)) this.#anyLiveChanged()
  }

  /** Whether any PTY is live or spawning (the app then holds the connection open). O(1): a count kept by the records' state changes. */
  anyLive(): boolean {
    return this.#live > 0
  }

  /** Contact with the host was lost: every live PTY becomes unknown (never dead). */
  markUnknown(): void {
    if (this.#live === 0) return
    for (const record of this.#ptys.values()) if (isLive(record.state)) this.setState(record, 'unknown')
  }

  /** Handle one event of the host. */
  onEvent(message: PtyHostMessage): void {
    switch (message.type) {
      case 'data':
        return this.#onData(message.ptyId, message.data, message.seq, message.incarnationId)
      case 'exit': {
        const record = this.#ptys.get(message.ptyId)
        if (record === undefined || record.state === 'exited') return
        this.#publishExit(record, exitEventOfMessage(message, record.incarnationId))
        return
      }
      case 'loss':
        return this.#onLoss(message.ptyId, message.fromSeq, message.toSeq)
      default:
        return
    }
  }

  /**
   * The host that runs `record`'s PTY (the same host process) holds no session of it and no longer
   * remembers its exit (it keeps the last `PTY_HOST_EXITED_SESSION_MEMORY`): its process is proven
   * ended — the host holds every session it runs — and how it ended is not known. Reported as an
   * exit, `unknown/cause_unreported`, with `diedBeforeStopRequest` unless this app had asked for a
   * stop. Why: left `unknown`, a PTY that ended while the app was disconnected stayed unverifiable
   * for good (hasPty `null`) though the host answered that it was gone — 44 of 300 sessions that
   * ended during one drop.
   */
  settleForgotten(record: ClientPtyRecord): void {
    if (this.#ptys.get(record.id) !== record || record.state === 'exited') return
    const event: PtyExitEvent = { id: record.id, code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } }
    if (record.incarnationId !== undefined) event.incarnationId = record.incarnationId
    if (!record.stopAsked) event.diedBeforeStopRequest = true
    this.#publishExit(record, event)
  }

  /**
   * `record`'s PTY was a host's that died, and the host that took its place proved its process
   * gone (from the dead host's session journal). With `remembered` — its exit as the dead host
   * observed it and journalled it, which the successor lists (`exits`) — that exit is reported:
   * its cause and whether a stop ended it. Without (it ended after the host died, or as the host
   * died: not that host's child, so no status of it was seen): reported as an exit,
   * `unknown/host_status_unavailable`, and with neither `diedBeforeStopRequest` nor
   * `stopRequestedBeforeDeath` (whose stop ended it, if one did, is not known here: the
   * controller's own stop settles it as an operator close).
   */
  settlePredecessorEnd(record: ClientPtyRecord, remembered?: Extract<PtyHostMessage, { type: 'exit' }>): void {
    if (this.#ptys.get(record.id) !== record || record.state === 'exited') return
    if (remembered !== undefined && remembered.ptyId === record.id && remembered.incarnationId === record.incarnationId) {
      this.#publishExit(record, exitEventOfMessage(remembered, record.incarnationId))
      return
    }
    const event: PtyExitEvent = { id: record.id, code: 0, cause: { kind: 'unknown', reason: 'host_status_unavailable' } }
    if (record.incarnationId !== undefined) event.incarnationId = record.incarnationId
    this.#publishExit(record, event)
  }

  /** `record` exited: remember it among the recent exits (older exited records are dropped) and tell the listeners. */
  #publishExit(record: ClientPtyRecord, event: PtyExitEvent): void {
    this.setState(record, 'exited')
    for (const forgotten of this.#exitedIds.remember(record.id)) {
      const old = this.#ptys.get(forgotten)
      if (old?.state === 'exited') this.forget(old)
    }
    this.exit.fire(event)
  }

  /**
   * The host no longer had `[fromSeq, toSeq)` when this app re-attached: reported (with the
   * incarnation, so the controller moves its sequence past the gap), and delivery resumes at `toSeq`.
   * Trimmed like output: only what lies past what this app already delivered or reported — two
   * re-attaches from the same point (a reconnect's and a caller's) each get the host's `loss`, and a
   * gap reported twice would move the controller's sequence past the host's.
   */
  #onLoss(ptyId: string, lossFrom: number, toSeq: number): void {
    const record = this.#ptys.get(ptyId)
    if (record === undefined || record.state === 'exited' || typeof lossFrom !== 'number' || typeof toSeq !== 'number') return
    const fromSeq = Math.max(lossFrom, record.accountedSeq)
    if (toSeq <= fromSeq) return
    record.accountedSeq = toSeq
    if (toSeq > record.lastSeq) record.lastSeq = toSeq
    if (this.#deliveryWatches.size !== 0) this.#noteDelivered(ptyId, fromSeq)
    const event: PtyOutputLossEvent = { id: ptyId, fromSeq, toSeq }
    if (record.incarnationId !== undefined) event.incarnationId = record.incarnationId
    this.loss.fire(event)
  }

  /** Runs per output frame: drop what was already delivered (a replay that overlaps), never deliver twice. */
  #onData(ptyId: string, data: string, seq: number, incarnationId: string | undefined): void {
    const record = this.#ptys.get(ptyId)
    if (record === undefined || record.state === 'exited') return
    const start = seq - data.length
    const fresh = start >= record.lastSeq ? data : data.slice(record.lastSeq - start)
    if (seq > record.lastSeq) record.lastSeq = seq
    if (fresh.length === 0) return
    if (seq > record.accountedSeq) record.accountedSeq = seq
    if (this.#deliveryWatches.size !== 0) this.#noteDelivered(ptyId, seq - fresh.length)
    const known = record.incarnationId ?? (isPtyIncarnationId(incarnationId) ? incarnationId : undefined)
    this.data.fire(known === undefined ? { id: ptyId, data: fresh } : { id: ptyId, data: fresh, incarnationId: known })
  }
}
