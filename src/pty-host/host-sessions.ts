import type { PtyBytesEvent, PtyExitEvent } from '../contracts/index.js'
import type { NodePtyProvider } from '../node-pty/index.js'
import type { HostClient } from './host-client.js'
import { PTY_HOST_PROTOCOL_VERSION, type PtyHostMessage } from './protocol.js'
import { PTY_HOST_ACK_MAX_HOLD_MS, SessionFlow } from './session-flow.js'
import type { HeadlessScreenFactory } from './headless-screen.js'
import type { ScreenScheduler } from './screen-cursor.js'
import { SessionHistory } from './session-history.js'
import type { Utf8Piece } from './utf8-pieces.js'

/** How many exited sessions keep their exit (and, unless dropped, their history) for late re-attaches. */
export const PTY_HOST_EXITED_SESSION_MEMORY = 256

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
  /** The session's key in the host's journal (`session-journal.ts`), once its spawn was recorded there. */
  journalKey?: number
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

/**
 * The host's sessions: the live ones, and the latest {@link PTY_HOST_EXITED_SESSION_MEMORY}
 * exited ones. Fans each session's output and exit out to its subscribed clients.
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
    history: { limitChars: number; scrollbackRows: number },
    ackMaxHoldMs = PTY_HOST_ACK_MAX_HOLD_MS,
  ) {
    this.#provider = provider
    this.#screens = screens
    this.#screenScheduler = screenScheduler
    this.#history = history
    this.#ackMaxHoldMs = ackMaxHoldMs
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

  /** Release a session's ring and headless screen (once). */
  dropHistory(session: HostSession): void {
    if (session.historyDropped) return
    session.historyDropped = true
    session.history.dispose()
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

  /** Send the exit to the subscribers (after the bytes of an unfinished last character, if any) and retire the session. */
  onExit(event: PtyExitEvent): void {
    const session = this.live.get(event.id)
    if (session === undefined) return
    if (!session.historyDropped) this.#deliver(session, session.history.endOfOutput(), event.incarnationId)
    session.exit = event
    this.live.delete(event.id)
    for (const client of session.subscribers) client.send(exitMessage(session, event))
    this.exited.delete(session.id)
    this.exited.set(session.id, session)
    if (session.dropHistoryAtExit) this.dropHistory(session)
    while (this.exited.size > PTY_HOST_EXITED_SESSION_MEMORY) {
      const oldest = this.exited.values().next().value
      if (oldest === undefined) break
      this.dropHistory(oldest)
      this.exited.delete(oldest.id)
      this.#unsubscribeForgotten(oldest)
    }
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
  if (exit.diedBeforeStopRequest === true || !session.stopRequested) message.diedBeforeStopRequest = true
  else message.stopRequestedBeforeDeath = true
  return message
}
