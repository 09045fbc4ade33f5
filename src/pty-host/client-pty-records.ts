import {
  createListenerSet,
  createRecentIds,
  isPtyIncarnationId,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
} from '../contracts/index.js'
import { isTerminalExitCause } from '../exit-cause/index.js'
import { PTY_HOST_EXITED_ID_MEMORY, type PtyHostOutputLossEvent } from './pty-host-provider-options.js'
import type { PtyHostMessage } from './protocol.js'

/** What the app knows of one PTY in the host. `unknown`: contact lost, no exit observed. */
export type ClientPtyState = 'spawning' | 'live' | 'unknown' | 'exited'

/** The app's record of one PTY: its state, incarnation, the last sequence delivered, and its host. */
export type ClientPtyRecord = {
  id: string
  state: ClientPtyState
  incarnationId: PtyIncarnationId | undefined
  lastSeq: number
  hostInstanceId: string | undefined
  /** A spawn whose reply was lost with the connection: stop it as soon as the host is back. */
  orphaned?: boolean
}

/**
 * The app side's PTY records and its event listeners: turns the host's events into `data` (never
 * twice: overlapping replays are trimmed by sequence), `exit` and output-loss events.
 */
export class ClientPtyRecords {
  /** Records by PTY id. */
  readonly ptys = new Map<string, ClientPtyRecord>()
  /** `data` listeners (a throwing listener surfaces uncaught without stopping the others). */
  readonly data = createListenerSet<PtyDataEvent>()
  /** `exit` listeners. */
  readonly exit = createListenerSet<PtyExitEvent>()
  /** Output-loss listeners. */
  readonly loss = createListenerSet<PtyHostOutputLossEvent>()
  /** Ids of the most recently exited records: older exited records are dropped from `ptys`. */
  readonly #exitedIds = createRecentIds(PTY_HOST_EXITED_ID_MEMORY)
  readonly #liveCountChanged: () => void

  /** @param liveCountChanged - called when a PTY exits (the app may stop holding the connection). */
  constructor(liveCountChanged: () => void) {
    this.#liveCountChanged = liveCountChanged
  }

  /** The record of `id` for a spawn or attach on host `hostInstanceId` (a fresh one unless a live one exists). */
  record(id: string, hostInstanceId: string, incarnationId: PtyIncarnationId | undefined): ClientPtyRecord {
    const existing = this.ptys.get(id)
    if (existing !== undefined && existing.state !== 'exited') {
      delete existing.orphaned
      existing.hostInstanceId = hostInstanceId
      if (incarnationId !== undefined) existing.incarnationId = incarnationId
      return existing
    }
    const fresh: ClientPtyRecord = { id, state: 'spawning', incarnationId, lastSeq: 0, hostInstanceId }
    this.ptys.delete(id)
    this.#exitedIds.forget(id)
    this.ptys.set(id, fresh)
    return fresh
  }

  /** Whether any PTY is live or spawning (the app then holds the connection open). */
  anyLive(): boolean {
    for (const record of this.ptys.values()) if (record.state === 'live' || record.state === 'spawning') return true
    return false
  }

  /** Contact with the host was lost: every live PTY becomes unknown (never dead). */
  markUnknown(): void {
    for (const record of this.ptys.values()) if (record.state === 'live' || record.state === 'spawning') record.state = 'unknown'
  }

  /** Handle one event of the host. */
  onEvent(message: PtyHostMessage): void {
    switch (message.type) {
      case 'data':
        return this.#onData(message.ptyId, message.data, message.seq, message.incarnationId)
      case 'exit': {
        const record = this.ptys.get(message.ptyId)
        if (record === undefined || record.state === 'exited') return
        record.state = 'exited'
        const event: PtyExitEvent = { id: message.ptyId, code: typeof message.code === 'number' ? message.code : Number.NaN }
        const incarnationId = isPtyIncarnationId(message.incarnationId) ? message.incarnationId : record.incarnationId
        if (incarnationId !== undefined) event.incarnationId = incarnationId
        // The host's node-pty provider built the cause from the real status: carried unchanged.
        if (isTerminalExitCause(message.cause)) event.cause = message.cause
        for (const forgotten of this.#exitedIds.remember(message.ptyId)) {
          if (this.ptys.get(forgotten)?.state === 'exited') this.ptys.delete(forgotten)
        }
        this.#liveCountChanged()
        this.exit.fire(event)
        return
      }
      case 'loss':
        if (this.ptys.has(message.ptyId)) this.loss.fire({ id: message.ptyId, fromSeq: message.fromSeq, toSeq: message.toSeq })
        return
      default:
        return
    }
  }

  /** Runs per output frame: drop what was already delivered (a replay that overlaps), never deliver twice. */
  #onData(ptyId: string, data: string, seq: number, incarnationId: string | undefined): void {
    const record = this.ptys.get(ptyId)
    if (record === undefined || record.state === 'exited') return
    const start = seq - data.length
    const fresh = start >= record.lastSeq ? data : data.slice(record.lastSeq - start)
    if (seq > record.lastSeq) record.lastSeq = seq
    if (fresh.length === 0) return
    const known = record.incarnationId ?? (isPtyIncarnationId(incarnationId) ? incarnationId : undefined)
    this.data.fire(known === undefined ? { id: ptyId, data: fresh } : { id: ptyId, data: fresh, incarnationId: known })
  }
}
