import type { PtyBytesEvent, PtyExitEvent } from '../contracts/index.js'
import type { NodePtyProvider } from '../node-pty/index.js'
import type { HostClient } from './host-client.js'
import { PTY_HOST_PROTOCOL_VERSION, type PtyHostMessage } from './protocol.js'
import { PTY_HOST_ACK_MAX_HOLD_MS, SessionFlow } from './session-flow.js'
import type { HeadlessScreen, HeadlessScreenFactory } from './headless-screen.js'
import type { JournalExit } from './session-journal.js'
import type { ScreenScheduler } from './screen-cursor.js'
import { SessionHistory } from './session-history.js'
import type { Utf8Piece } from './utf8-pieces.js'

/**
 * How many exited sessions keep their exit for late re-attaches and `listExits` (and, within
 * their budget, their history: see {@link PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR}), by
 * default (the host option `exitedSessionMemory`) — in the host's memory and in its session
 * journal, which the next host reads them back from. Why 1 024: an app running some hundreds of PTYs
 * may see more than 256 (the number before) end while it restarts, and the oldest then came back
 * `unknown`; with histories budgeted apart, an ended session whose history is released keeps
 * ~2 KiB of the host's heap (measured with real headless screens): ~2 MiB for all of them.
 */
export const PTY_HOST_EXITED_SESSION_MEMORY = 1024

/**
 * The default budget of the histories (replay rings and headless screens) of ended sessions, in
 * bytes per char of `historyChars`: 16, so 16 MiB at the default history of 1 Mi chars — the whole
 * history and screen of ~5 sessions that ended after a flood (a full ring of 1 MiB and a screen of
 * a full scrollback, ~3 MiB at 80 columns as the host counts them), or of ~60 that ended after a
 * screenful. Past it the oldest ended sessions' histories are released; their exits are kept.
 * Why scaled by `historyChars`: a host given long histories still keeps a few whole ones. Why a
 * budget at all: an ended session kept its history until 256 more had ended, and a host whose
 * sessions each printed 1 MB held ~1 GB for them (RSS 429 / 741 / 1 001 / 1 013 MB after 100 /
 * 200 / 300 / 400 such sessions; ~170 MB with this budget, ~130 MB with none kept).
 */
export const PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR = 16

/**
 * Why an ended session's history is no longer kept: a stop without `keepHistory`, the budget of
 * ended sessions' histories, or the session ended under an earlier host (`predecessor`: this host
 * has only its exit, from that host's journal).
 */
export type HistoryRelease = 'stop' | 'budget' | 'predecessor'

/** One session the host holds: its history, its subscribed clients, its flow control, its exit. */
export type HostSession = {
  readonly id: string
  readonly history: SessionHistory
  readonly subscribers: Set<HostClient>
  readonly flow: SessionFlow
  incarnationId: string | undefined
  exit: PtyExitEvent | null
  /**
   * Whether a client asked the host to stop this incarnation before its exit. An exit without one
   * ended on its own, whatever stop an app had on its way: its message says so
   * (`diedBeforeStopRequest`), so that app keeps the real cause rather than an operator close. An
   * exit after one says that instead (`stopRequestedBeforeDeath`, unless the process was found
   * dead at the request), so every app that hears it — also one that was not the one to ask (an
   * earlier run's stop, another app's) — reads it as the operator close it was.
   */
  stopRequested: boolean
  dropHistoryAtExit: boolean
  historyDropped: boolean
  /** Why the history was dropped, for an ended session whose history went while the host keeps its exit. */
  historyReleasedBy: HistoryRelease | undefined
  /** What the ended session's history counts against the budget (0 while live, and once released). */
  heldBytes: number
  /** Snapshots of this session running now: its screen is released only once they are done. */
  snapshotsInFlight: number
  /** The session's key in the host's journal (`session-journal.ts`), once its spawn was recorded there. */
  journalKey?: number
  /**
   * The session ended under an earlier host, whose journal this host read its exit from
   * ({@link HostSessionStore.remember}): this host never held its process.
   */
  fromJournal?: true
}

/** Where an attach replays from: an absolute sequence, everything retained (`null`), or nothing old. */
export type AttachFrom = number | null | 'live'

/** What an attach reply carries besides the session's id. */
export type AttachReply = {
  id: string
  pid: number | null
  incarnationId: string | undefined
  replayFrom: number
  lostChars: number
  exited: boolean
  cols: number | undefined
  rows: number | undefined
}

/** The sizes a store gives each session's history, and the budget of ended sessions' histories. */
export type HostHistoryLimits = {
  /** Raw output chars each session's ring keeps. */
  limitChars: number
  /** Scrollback rows of each session's headless screen. */
  scrollbackRows: number
  /**
   * The most bytes (as {@link SessionHistory.heldBytes} estimates them) the histories of ended
   * sessions hold together; past it the oldest ended sessions' histories are released (never the
   * latest ended one's, unless it is 0). Default
   * {@link PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR} × `limitChars`.
   */
  exitedHistoryBytes?: number
  /** How many ended sessions keep their exit. Default {@link PTY_HOST_EXITED_SESSION_MEMORY}. */
  exitedSessionMemory?: number
}

/**
 * The host's sessions: the live ones, and the latest {@link PTY_HOST_EXITED_SESSION_MEMORY}
 * exited ones — their exits, and the histories of the latest of them within the budget of ended
 * sessions' histories (`exitedHistoryBytes`). Fans each session's output and exit out to its
 * subscribed clients.
 */
export class HostSessionStore {
  /** Live sessions by id. */
  readonly live = new Map<string, HostSession>()
  /** Exited sessions by id, oldest first. */
  readonly exited = new Map<string, HostSession>()
  readonly #provider: NodePtyProvider
  readonly #screens: HeadlessScreenFactory
  readonly #screenScheduler: ScreenScheduler
  readonly #history: { limitChars: number; scrollbackRows: number }
  readonly #exitedHistoryBytes: number
  readonly #exitedSessionMemory: number
  /** What the kept histories of ended sessions hold together (their {@link HostSession.heldBytes}). */
  #exitedHeldBytes = 0
  readonly #ackMaxHoldMs: number

  /**
   * A store over the host's node-pty provider, with headless screens opened from `screens` and
   * their background parsing scheduled by `screenScheduler` (the host's screen feeder), each
   * session's acknowledgement pauses held at most `ackMaxHoldMs`.
   */
  constructor(
    provider: NodePtyProvider,
    screens: HeadlessScreenFactory,
    screenScheduler: ScreenScheduler,
    history: HostHistoryLimits,
    ackMaxHoldMs = PTY_HOST_ACK_MAX_HOLD_MS,
  ) {
    this.#provider = provider
    this.#screens = screens
    this.#screenScheduler = screenScheduler
    this.#history = { limitChars: history.limitChars, scrollbackRows: history.scrollbackRows }
    this.#exitedHistoryBytes = history.exitedHistoryBytes ?? PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR * history.limitChars
    this.#exitedSessionMemory = history.exitedSessionMemory ?? PTY_HOST_EXITED_SESSION_MEMORY
    this.#ackMaxHoldMs = ackMaxHoldMs
  }

  /** The budget of ended sessions' histories, in bytes. */
  get exitedHistoryBytes(): number {
    return this.#exitedHistoryBytes
  }

  /** What the histories of ended sessions the host still keeps hold together (estimated bytes). */
  get exitedHeldBytes(): number {
    return this.#exitedHeldBytes
  }

  /** A new live session (registered before its spawn, so no output of a fast process is missed). */
  create(id: string, cols: number, rows: number): HostSession {
    const previous = this.exited.get(id)
    if (previous !== undefined) {
      this.dropHistory(previous)
      this.exited.delete(id)
      this.#unsubscribeForgotten(previous)
    }
    const provider = this.#provider
    const flow = new SessionFlow(
      () => provider.pauseProducer(id),
      () => provider.resumeProducer(id),
      this.#ackMaxHoldMs,
    )
    const session: HostSession = {
      id,
      history: new SessionHistory(this.#screens, this.#screenScheduler, {
        cols,
        rows,
        limitChars: this.#history.limitChars,
        scrollbackRows: this.#history.scrollbackRows,
        isProducerHeld: () => flow.paused,
      }),
      subscribers: new Set(),
      flow,
      incarnationId: undefined,
      exit: null,
      stopRequested: false,
      dropHistoryAtExit: false,
      historyDropped: false,
      historyReleasedBy: undefined,
      heldBytes: 0,
      snapshotsInFlight: 0,
    }
    this.live.set(id, session)
    return session
  }

  /** Forget a session whose spawn failed. */
  discard(session: HostSession): void {
    if (this.live.get(session.id) === session) this.live.delete(session.id)
    for (const client of session.subscribers) client.subscriptions.delete(session.id)
    session.subscribers.clear()
    this.dropHistory(session)
  }

  /** `client` receives the session's events from now on. */
  subscribe(client: HostClient, session: HostSession): void {
    session.subscribers.add(client)
    client.subscriptions.add(session.id)
  }

  /**
   * The host forgot an ended session (past its exited-session memory, or replaced under its id):
   * its clients no longer follow it. Why: a client's subscriptions are otherwise dropped only when
   * it goes, and an app connected for days would keep an id for every session it ever followed.
   */
  #unsubscribeForgotten(session: HostSession): void {
    for (const client of session.subscribers) {
      if (this.live.get(session.id)?.subscribers.has(client) !== true) client.subscriptions.delete(session.id)
    }
  }

  /** `client` is gone: unsubscribe it everywhere, and drop its flow-control requests. */
  removeClient(client: HostClient): void {
    for (const id of client.subscriptions) {
      for (const session of [this.live.get(id), this.exited.get(id)]) {
        if (session === undefined) continue
        session.subscribers.delete(client)
        session.flow.remove(client)
      }
    }
    client.subscriptions.clear()
  }

  /**
   * Release a session's ring and headless screen (once), `why` noted for an ended one the host
   * keeps the exit of. A screen a snapshot is serializing is disposed once that snapshot is done
   * ({@link endSnapshot}); the session counts as released at once (no replay, no new snapshot).
   */
  dropHistory(session: HostSession, why: HistoryRelease = 'stop'): void {
    if (session.historyDropped) return
    session.historyDropped = true
    session.historyReleasedBy = why
    this.#exitedHeldBytes -= session.heldBytes
    session.heldBytes = 0
    if (session.snapshotsInFlight === 0) session.history.dispose()
  }

  /** A snapshot of `session`'s screen begins: its history stays until {@link endSnapshot}. */
  beginSnapshot(session: HostSession): void {
    session.snapshotsInFlight += 1
  }

  /** A snapshot of `session`'s screen is done: a history released meanwhile is disposed now. */
  endSnapshot(session: HostSession): void {
    session.snapshotsInFlight -= 1
    if (session.snapshotsInFlight === 0 && session.historyDropped) session.history.dispose()
  }

  /**
   * Release the histories of the oldest ended sessions until those kept hold at most the budget —
   * all but the latest ended one's, which is kept even alone over the budget (unless the budget is
   * 0). Why: `stopAndWait(id, { keepHistory: true })` then `serializeBuffer(id)` must find the
   * screen on a host whose screens are larger than its budget (a scrollback of 10 000 rows at 120
   * columns is ~22 MB); what it holds is what that session held while it ran. Their exits stay
   * (`listExits`, re-attaches, probes).
   */
  #releaseOverBudget(): void {
    if (this.#exitedHeldBytes <= this.#exitedHistoryBytes) return
    let left = this.exited.size
    for (const session of this.exited.values()) {
      left -= 1
      if (this.#exitedHeldBytes <= this.#exitedHistoryBytes || (left === 0 && this.#exitedHistoryBytes > 0)) return
      this.dropHistory(session, 'budget')
    }
  }

  /**
   * Record a read of a PTY (its bytes) and send the whole characters it completed to the
   * session's subscribers. Runs per output chunk.
   */
  onBytes(event: PtyBytesEvent): void {
    const session = this.live.get(event.id)
    if (session === undefined) return
    this.#deliver(session, session.history.appendRead(event.bytes), event.incarnationId)
  }

  #deliver(session: HostSession, piece: (Utf8Piece & { seq: number }) | null, incarnationId: string | undefined): void {
    if (piece === null) return
    for (const client of session.subscribers) {
      client.queueOutput(session.id, piece.bytes, piece.seq, incarnationId, piece.chars)
      session.flow.noteSent(client, piece.chars)
    }
  }

  /**
   * Send the exit to the subscribers (after the bytes of an unfinished last character, if any) and
   * retire the session. `record` runs once the exit is settled (the session's `exit` set, its last
   * output delivered) and **before** any subscriber is sent the exit: the host journals it there,
   * so an exit an app has heard of is never one a host that died right after forgets.
   */
  onExit(event: PtyExitEvent, record?: (session: HostSession) => void): void {
    const session = this.live.get(event.id)
    if (session === undefined) return
    if (!session.historyDropped) this.#deliver(session, session.history.endOfOutput(), event.incarnationId)
    session.exit = event
    this.live.delete(event.id)
    record?.(session)
    for (const client of session.subscribers) client.send(exitMessage(session, event))
    this.exited.delete(session.id)
    this.exited.set(session.id, session)
    if (session.dropHistoryAtExit) this.dropHistory(session)
    else if (!session.historyDropped) {
      // Counted once, at the exit: no output comes any more, and the estimate counts what the
      // screen has yet to parse at its most.
      session.heldBytes = session.history.heldBytes()
      this.#exitedHeldBytes += session.heldBytes
    }
    this.#forgetPastMemory()
    this.#releaseOverBudget()
  }

  /** Forget the oldest ended sessions past the exited-session memory. */
  #forgetPastMemory(): void {
    while (this.exited.size > this.#exitedSessionMemory) {
      const oldest = this.exited.values().next().value
      if (oldest === undefined) break
      this.dropHistory(oldest)
      this.exited.delete(oldest.id)
      this.#unsubscribeForgotten(oldest)
    }
  }

  /**
   * Forget an ended session an app said it has dealt with (`forgetExits`), as the memory forgets
   * its oldest: its exit, its history, its clients' subscriptions. Nothing for a live session.
   */
  forget(session: HostSession): void {
    if (this.exited.get(session.id) !== session) return
    this.dropHistory(session)
    this.exited.delete(session.id)
    this.#unsubscribeForgotten(session)
  }

  /**
   * Remember the exit of a session that ended under an earlier host (read from its journal), as
   * the latest ended session: `listExits`, a re-attach (no replay: this host has no history of it;
   * the exit) and a probe of its incarnation (`false`) answer with it, and a snapshot is refused
   * `history_released`. Ignored for an id this host holds live.
   */
  remember(exit: JournalExit): void {
    if (this.live.has(exit.id)) return
    const previous = this.exited.get(exit.id)
    if (previous !== undefined) {
      this.dropHistory(previous)
      this.exited.delete(exit.id)
      this.#unsubscribeForgotten(previous)
    }
    // No screen: nothing of its output is kept (a history of no chars, released at once).
    const history = new SessionHistory(() => NO_SCREEN, this.#screenScheduler, { cols: 1, rows: 1, limitChars: 1, scrollbackRows: 0 })
    history.seq = exit.seq ?? 0
    const event: PtyExitEvent = { id: exit.id, code: exit.code }
    if (exit.cause !== undefined) event.cause = exit.cause
    // Checked an incarnation id (isPtyIncarnationId) where it was read.
    if (exit.incarnationId !== undefined) event.incarnationId = exit.incarnationId as NonNullable<PtyExitEvent['incarnationId']>
    if (!exit.stopRequestedBeforeDeath) event.diedBeforeStopRequest = true
    const session: HostSession = {
      id: exit.id,
      history,
      subscribers: new Set(),
      flow: new SessionFlow(() => undefined, () => undefined, this.#ackMaxHoldMs),
      incarnationId: exit.incarnationId,
      exit: event,
      stopRequested: exit.stopRequestedBeforeDeath,
      dropHistoryAtExit: false,
      historyDropped: false,
      historyReleasedBy: undefined,
      heldBytes: 0,
      snapshotsInFlight: 0,
      fromJournal: true,
    }
    this.dropHistory(session, 'predecessor')
    this.exited.set(exit.id, session)
    this.#forgetPastMemory()
  }

  /**
   * The exit messages of the ended sessions the host remembers (the latest
   * {@link PTY_HOST_EXITED_SESSION_MEMORY}), oldest first: how an app that was away learns why
   * each one ended.
   */
  exitMessages(): PtyHostMessage[] {
    const messages: PtyHostMessage[] = []
    for (const session of this.exited.values()) if (session.exit !== null) messages.push(exitMessage(session, session.exit))
    return messages
  }

  /**
   * Attach `client`: subscribe it, reply with `reply` around the attach facts, then send what
   * fell out of the ring (a `loss`), the replay from `from`, and the exit if the session ended.
   */
  attach(client: HostClient, session: HostSession, from: AttachFrom, reply: (result: AttachReply) => PtyHostMessage): void {
    const current = session.history.seq
    const replay = session.historyDropped
      ? { replayFrom: current, lostChars: from === null || from === 'live' ? 0 : Math.max(0, current - from), data: '' }
      : session.history.replay(from === 'live' ? current : from)
    // A client already subscribed has been sent the live output up to `current`: its app drops the
    // replay as overlap. Only a new subscriber's app delivers (and acknowledges) the replay.
    const newSubscriber = !session.subscribers.has(client)
    this.subscribe(client, session)
    const size = this.#provider.getSize(session.id)
    client.send(
      reply({
        id: session.id,
        pid: this.#provider.getPid(session.id),
        incarnationId: session.incarnationId,
        replayFrom: replay.replayFrom,
        lostChars: replay.lostChars,
        exited: session.exit !== null,
        cols: size?.cols,
        rows: size?.rows,
      }),
    )
    if (replay.lostChars > 0) {
      client.send({ v: PTY_HOST_PROTOCOL_VERSION, type: 'loss', ptyId: session.id, fromSeq: replay.replayFrom - replay.lostChars, toSeq: replay.replayFrom })
    }
    if (replay.data.length > 0) {
      client.queueOutput(session.id, replay.data, current, session.incarnationId)
      if (newSubscriber) session.flow.noteReplay(client, replay.data.length)
      client.flushOutput()
    }
    if (session.exit !== null) client.send(exitMessage(session, session.exit))
  }
}

/**
 * What the journal records of an ended session's exit (see `session-journal.ts`): what its exit
 * message says, so that a host after this one answers with it. `undefined` while it has not ended.
 */
export function journalExitOf(session: HostSession): JournalExit | undefined {
  const exit = session.exit
  if (exit === null) return undefined
  const recorded: JournalExit = { id: session.id, code: exit.code, stopRequestedBeforeDeath: stopReachedBeforeDeath(session, exit), seq: session.history.seq }
  if (exit.cause !== undefined) recorded.cause = exit.cause
  if (exit.incarnationId !== undefined) recorded.incarnationId = exit.incarnationId
  return recorded
}

/** The screen of a session this host has no history of (one that ended under an earlier host): holds nothing, answers no snapshot. */
const NO_SCREEN: HeadlessScreen = {
  write: () => undefined,
  resize: () => undefined,
  clear: () => undefined,
  snapshot: () => Promise.reject(new Error('No screen is kept of a session that ended under an earlier host')),
  heldBytes: () => 0,
  dispose: () => undefined,
}

/**
 * The exit message of an exited session. `diedBeforeStopRequest` when the process ended before a
 * stop of it reached the host — the host's node-pty provider found it dead at the request, or no
 * request came before its exit (an app's stop still on the wire cannot have ended it);
 * `stopRequestedBeforeDeath` otherwise: a client's stop of this incarnation reached the host while
 * the process lived. Exactly one of the two, so an app of this version never reads an absence;
 * an app must not read the absence of either as the other (a host older than the field sends
 * neither, or only `diedBeforeStopRequest`).
 */
function exitMessage(session: HostSession, exit: PtyExitEvent): PtyHostMessage {
  const message: PtyHostMessage = { v: PTY_HOST_PROTOCOL_VERSION, type: 'exit', ptyId: session.id, code: exit.code }
  if (exit.cause !== undefined) message.cause = exit.cause
  if (exit.incarnationId !== undefined) message.incarnationId = exit.incarnationId
  if (stopReachedBeforeDeath(session, exit)) message.stopRequestedBeforeDeath = true
  else message.diedBeforeStopRequest = true
  return message
}

/**
 * Whether a client's stop of this incarnation reached the host while its process lived (else it
 * ended before any did): the one rule behind the exit message's two flags and the journal's.
 */
function stopReachedBeforeDeath(session: HostSession, exit: PtyExitEvent): boolean {
  return exit.diedBeforeStopRequest !== true && session.stopRequested
}
