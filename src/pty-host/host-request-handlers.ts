import { describeTerminalExitCause, isTerminalExitCause } from '../exit-cause/index.js'
import { describeValue } from '../contracts/describe-value.js'
import { isPtyIncarnationId, refusedWrite, resolveWaitDeadline, type PtyListProcessesOptions, type PtyShutdownOptions, type ProviderSpawnOptions, type WriteSettlement } from '../contracts/index.js'
import type { NodePtyProvider } from '../node-pty/index.js'
import { NODE_PTY_DEFAULT_COLS, NODE_PTY_DEFAULT_ROWS } from '../node-pty/launch-plan.js'
import { inheritFrom } from '../node-pty/spawn-inheritance.js'
import { spawnInheritanceOfRequest } from './spawn-request-params.js'
import type { HostClient } from './host-client.js'
import type { HostSession, HostSessionStore } from './host-sessions.js'
import { bytesParam, countParam, forgetExitsParam, PTY_HOST_PROTOCOL_VERSION, sessionIdProblem, SPAWN_LAUNCH_KEYS, stringParam, type PtyHostMethod, type PtyHostRequest } from './protocol.js'
import { invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { assertScreenWithinLimit } from './screen-limit.js'
import { PTY_HOST_MAX_FRAME_BYTES } from './frame-codec.js'
import type { PtyHostBufferSnapshot, SessionHistory } from './session-history.js'
import type { SessionJournal } from './session-journal.js'
import type { PredecessorOrphans } from './predecessor-orphans.js'

/** What a handler resolves with: a result to reply with, or {@link REPLIED} when it sent the reply itself. */
export type HostHandlerResult = Promise<unknown>

/** One request handler of the host. */
export type HostRequestHandler = (client: HostClient, request: PtyHostRequest) => HostHandlerResult

/** What the handlers need of the host around them. */
export type HostHandlerContext = {
  /** The node-pty provider running the PTYs. */
  provider: NodePtyProvider
  /** The sessions. */
  sessions: HostSessionStore
  /** A session was created or discarded: re-evaluate the idle exit. */
  activityChanged: () => void
  /** Scrollback rows of each session's headless screen (they count towards its cell limit). */
  scrollbackRows: number
  /**
   * This host took its lock over from a host that died holding it (`takeHostLock`): processes of
   * that host's sessions may still run, so an id this host never held is unknown here, not absent.
   */
  succeedsDeadHost?: boolean
  /**
   * This host's session journal: a spawn is recorded before it forks (refused when it cannot be),
   * and its process once it started.
   */
  journal?: SessionJournal
  /** What this host knows of a predecessor's sessions (its journal): answers probes and stops of them. */
  orphans?: PredecessorOrphans
}

/** Marks a handler that sent its own reply. */
export const REPLIED = Symbol('replied')

function launchOptions(params: Record<string, unknown>, id: string): ProviderSpawnOptions {
  const options: ProviderSpawnOptions = { sessionId: id, isNewSession: true }
  for (const key of SPAWN_LAUNCH_KEYS) {
    if (params[key] !== undefined) (options as Record<string, unknown>)[key] = params[key]
  }
  return options
}

/**
 * A write's settlement, after telling the client when the provider holds its bytes (a promise: a
 * program that does not read): a `held` message, so the app does not keep its event loop open
 * for the reply, which comes only once their fate is known (see the `held` message). A request
 * without an id (a notify) is told nothing.
 */
function saidWhenHeld(client: HostClient, request: PtyHostRequest, settlement: WriteSettlement | Promise<WriteSettlement>): WriteSettlement | Promise<WriteSettlement> {
  if (settlement instanceof Promise && typeof request.id === 'number') client.send({ v: PTY_HOST_PROTOCOL_VERSION, type: 'held', id: request.id })
  return settlement
}

/**
 * Refuse an `expectedIncarnationId` parameter that is there but no string: read as absent, it let
 * a stop or an attach reach whatever process holds the id now (a fence the caller asked for).
 */
function assertFenceParam(value: unknown): void {
  if (value !== undefined && typeof value !== 'string') throw invalidPtyHostOption('expectedIncarnationId', 'an incarnation id (a string)', value)
}

const absent = (ptyId: string, why: string): PtyHostError => new PtyHostError('pty_absent', `Cannot attach to PTY ${JSON.stringify(ptyId)}: ${why}`, { ptyId })

/**
 * The host's request handlers, one per protocol method. A spawn whose client is gone by the time
 * the PTY is up is stopped at once (see `spawn`): a session nobody was told about has no owner.
 */
export function createHostRequestHandlers({ provider, sessions, activityChanged, scrollbackRows, succeedsDeadHost = false, journal, orphans }: HostHandlerContext): Record<PtyHostMethod, HostRequestHandler> {
  const { live, exited } = sessions
  /**
   * Whether a predecessor may have held a process under `id` that this host cannot name (so its
   * "no such session" proves nothing): without a journal of it, whenever the lock was a dead host's.
   */
  const predecessorMayHold = (id: string): boolean => (orphans === undefined ? succeedsDeadHost : orphans.mayHoldUnnamed(id))
  /**
   * Spawns whose PTY is not up yet, by session id. A shutdown that arrives meanwhile (the app's
   * spawn request timed out, so it stops what the host may still start) waits for it: the
   * provider cannot stop a process it has not started, and the session would live on unowned.
   */
  const spawnsInFlight = new Map<string, Promise<unknown>>()
  /**
   * The refusal of a write (text or bytes) aimed at the incarnation `expected` of `id` when that is
   * not the live process, else `undefined`: a write for an ended one must never reach a process
   * spawned under the same id since (another app's, or after a host restart).
   */
  const fencedWrite = (id: string, expected: unknown): WriteSettlement | undefined => {
    if (typeof expected !== 'string') return undefined
    const session = live.get(id)
    if (session === undefined) return refusedWrite(exited.has(id) ? 'pty_exited' : 'pty_not_found')
    if (session.incarnationId !== undefined && session.incarnationId !== expected) return refusedWrite('stale_incarnation')
    return undefined
  }
  /**
   * Whether a session the host holds has a process that died while its exit is still on its way
   * (the host's provider looks at the leader). A session whose spawn is still in flight has no
   * process to look at yet: not dead.
   */
  const diedOnItsWay = (session: HostSession): boolean =>
    session.exit === null && session.incarnationId !== undefined && !spawnsInFlight.has(session.id) && provider.hasPty?.(session.id) === false
  /** The live session a request names, when `client` is subscribed to it. */
  const subscribedSession = (client: HostClient, request: PtyHostRequest): HostSession | undefined => {
    const session = live.get(stringParam(request.params, 'ptyId'))
    return session !== undefined && session.subscribers.has(client) ? session : undefined
  }
  return {
    async spawn(client, request) {
      const id = stringParam(request.params, 'sessionId')
      // Before anything is made: an id the output frames cannot carry made every flush to this
      // client throw (its other sessions' output, exits and replies never came again).
      const idProblem = sessionIdProblem(id)
      if (idProblem !== undefined) {
        throw new PtyHostError('invalid_spawn_option', `Expected the \`sessionId\` option to be ${idProblem}, got ${describeValue(id)}`, { option: 'sessionId' })
      }
      const holder = live.get(id)
      if (holder !== undefined) {
        const why = diedOnItsWay(holder) ? 'its process has exited; its exit is still being delivered, and the id is free once it is' : 'a live PTY already has that id'
        throw new PtyHostError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: ${why}`, { ptyId: id })
      }
      const spawnOptions = launchOptions(request.params, id)
      // The app's environment and directory, which the PTY inherits in place of the host's.
      const inheritance = spawnInheritanceOfRequest(request.params)
      if (inheritance !== undefined) inheritFrom(spawnOptions, inheritance)
      const cols = typeof spawnOptions.cols === 'number' && spawnOptions.cols > 0 ? spawnOptions.cols : NODE_PTY_DEFAULT_COLS
      const rows = typeof spawnOptions.rows === 'number' && spawnOptions.rows > 0 ? spawnOptions.rows : NODE_PTY_DEFAULT_ROWS
      // Before the session exists: a refused spawn leaves no session, no screen, no process.
      assertScreenWithinLimit({ cols, rows, scrollbackRows }, 'invalid_spawn_option')
      const session = sessions.create(id, cols, rows)
      // Recorded before the fork: a host that dies after it leaves a session its successor knows of.
      // A spawn the journal cannot record does not happen (its process could outlive this host
      // with nobody able to find it).
      if (journal !== undefined) {
        try {
          session.journalKey = journal.intent(id)
        } catch (error) {
          sessions.discard(session)
          throw new PtyHostError('host_error', `Cannot create PTY ${JSON.stringify(id)}: the pty host could not write its session journal (${String(error)})`, { ptyId: id })
        }
      }
      sessions.subscribe(client, session)
      activityChanged()
      let result: Awaited<ReturnType<NodePtyProvider['spawn']>>
      const spawning = provider.spawn(spawnOptions)
      spawnsInFlight.set(id, spawning)
      try {
        result = await spawning
      } catch (error) {
        sessions.discard(session)
        journal?.ended(session.journalKey)
        activityChanged()
        throw error
      } finally {
        if (spawnsInFlight.get(id) === spawning) spawnsInFlight.delete(id)
      }
      session.incarnationId = result.incarnationId
      // Unless its exit came first (then the journal has its end already).
      if (session.exit === null) journal?.spawned(session.journalKey!, result.incarnationId, result.pid ?? null)
      // Why stop it: the reply cannot reach its client, so no app knows this session exists.
      const orphaned = (): void => {
        for (const other of session.subscribers) if (other !== client && !other.socket.destroyed) return
        session.dropHistoryAtExit = true
        session.stopRequested = true
        void provider.shutdown(id, { immediate: true }).catch(() => undefined)
      }
      if (client.socket.destroyed) {
        orphaned()
        return REPLIED
      }
      // parseRequest admits spawn only as a request: it always has an id to reply to.
      client.send({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: request.id as number, ok: true, result }, (written) => {
        if (!written) orphaned()
      })
      return REPLIED
    },
    async attach(client, request) {
      const id = stringParam(request.params, 'ptyId')
      const rawFrom = request.params.fromSeq
      const fromSeq = rawFrom === 'live' ? 'live' : (countParam(request.params, 'fromSeq') ?? null)
      const expected = request.params.expectedIncarnationId
      assertFenceParam(expected)
      const includeExited = request.params.includeExited === true
      const session = live.get(id) ?? (includeExited ? exited.get(id) : undefined)
      if (session === undefined) throw absent(id, 'the pty host holds no live PTY with that id')
      // An attach says the process runs: not one that died while its exit is still on its way. A
      // reconnect's re-attach takes it, to get its exit.
      if (!includeExited && diedOnItsWay(session)) {
        throw absent(id, 'its process has exited (its exit is still being delivered)')
      }
      if (typeof expected === 'string' && session.incarnationId !== expected) {
        if (!live.has(id)) throw absent(id, `the PTY that exited was incarnation ${JSON.stringify(session.incarnationId)}, not ${JSON.stringify(expected)}`)
        throw new PtyHostError(
          'pty_live_other_incarnation',
          `Cannot attach to PTY ${JSON.stringify(id)}: the live process is incarnation ${JSON.stringify(session.incarnationId)}, not ${JSON.stringify(expected)}`,
          { ptyId: id },
        )
      }
      // parseRequest admits attach only as a request: it always has an id to reply to.
      const requestId = request.id as number
      sessions.attach(client, session, fromSeq, (result) => ({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: requestId, ok: true, result }))
      return REPLIED
    },
    async write(client, request) {
      const id = stringParam(request.params, 'ptyId')
      const { data } = request.params
      // Refused, never written as `''` and answered accepted (as hosts before 7 Dec did): a write
      // that is not text settles nothing true.
      if (typeof data !== 'string') throw invalidPtyHostOption('data', 'a string (bytes go in a writeBytes request)', data)
      return saidWhenHeld(client, request, fencedWrite(id, request.params.expectedIncarnationId) ?? provider.write(id, data))
    },
    async writeBytes(client, request) {
      const id = stringParam(request.params, 'ptyId')
      const bytes = bytesParam(request.params, 'bytes')
      return saidWhenHeld(client, request, fencedWrite(id, request.params.expectedIncarnationId) ?? provider.writeBytes(id, bytes))
    },
    async resize(_client, request) {
      const id = stringParam(request.params, 'ptyId')
      const cols = countParam(request.params, 'cols') ?? 0
      const rows = countParam(request.params, 'rows') ?? 0
      // Before the PTY is resized: an oversized screen is refused and the session keeps its size.
      assertScreenWithinLimit({ cols, rows, scrollbackRows })
      const resized = provider.resize(id, cols, rows)
      if (resized) live.get(id)?.history.resize(cols, rows)
      return resized
    },
    async shutdown(_client, request) {
      const id = stringParam(request.params, 'ptyId')
      const shutdownOptions: PtyShutdownOptions = {}
      const { immediate, deadlineMs, timeoutMs, expectedIncarnationId, keepHistory } = request.params
      // Refused, never read as absent: a fence that is no string stopped whatever process held the
      // id, and a `keepHistory` that is not a boolean dropped the history.
      assertFenceParam(expectedIncarnationId)
      for (const [name, value] of [['immediate', immediate], ['keepHistory', keepHistory]] as const) {
        if (value !== undefined && typeof value !== 'boolean') throw invalidPtyHostOption(name, 'a boolean', value)
      }
      if (typeof immediate === 'boolean') shutdownOptions.immediate = immediate
      // The caller's deadline crosses unchanged: an absolute epoch time stays one.
      if (typeof deadlineMs === 'number') shutdownOptions.deadlineMs = deadlineMs
      if (typeof timeoutMs === 'number') shutdownOptions.timeoutMs = timeoutMs
      if (typeof expectedIncarnationId === 'string') shutdownOptions.expectedIncarnationId = expectedIncarnationId as never
      // Refused before anything is noted or stopped (a client that does not check its budget, as
      // an app of an earlier ptykit): the session's stop mark would turn the process's own later
      // death into a stop's, and a predecessor's orphan would be stopped by a deadline long past.
      resolveWaitDeadline(shutdownOptions, 0)
      // A spawn of this id still starting: stop what it starts (a failed spawn leaves nothing).
      await spawnsInFlight.get(id)?.catch(() => undefined)
      const session = live.get(id)
      // A dead predecessor's process (its journal's): the one asked for, or — asked by id, with no
      // session of this host under it — every one running under the id. Resolves once gone.
      if (orphans !== undefined) {
        const asked = shutdownOptions.expectedIncarnationId
        const targets = asked !== undefined ? (orphans.hasIncarnation(asked) ? [asked] : []) : session === undefined ? orphans.runningUnder(id) : []
        if (targets.length > 0) {
          const deadlineAt = shutdownOptions.deadlineMs ?? (shutdownOptions.timeoutMs === undefined ? undefined : Date.now() + shutdownOptions.timeoutMs)
          const stopOptions: { immediate?: boolean; deadlineAt?: number } = {}
          if (shutdownOptions.immediate === true) stopOptions.immediate = true
          if (deadlineAt !== undefined) stopOptions.deadlineAt = deadlineAt
          await Promise.all(targets.map((incarnationId) => orphans.stop(incarnationId, stopOptions)))
          activityChanged()
          return null
        }
      }
      if (session !== undefined && (shutdownOptions.expectedIncarnationId === undefined || session.incarnationId === shutdownOptions.expectedIncarnationId)) {
        session.stopRequested = true
        session.dropHistoryAtExit = keepHistory !== true
      } else if (session === undefined && keepHistory !== true) {
        const ended = exited.get(id)
        if (ended !== undefined) sessions.dropHistory(ended)
      }
      await provider.shutdown(id, shutdownOptions)
      return null
    },
    // Flow control counts only from a subscriber: what a client leaves behind is dropped with its
    // subscriptions when it goes (`removeClient`), so a crashed app never leaves a session frozen.
    async pause(client, request) {
      subscribedSession(client, request)?.flow.setAppPaused(client, true)
      return null
    },
    async resume(client, request) {
      subscribedSession(client, request)?.flow.setAppPaused(client, false)
      return null
    },
    async ack(client, request) {
      const chars = countParam(request.params, 'chars') ?? 0
      subscribedSession(client, request)?.flow.acknowledge(client, chars)
      return null
    },
    async list(_client, request) {
      const { deadlineMs, timeoutMs, membershipOnly } = request.params
      const listOptions: PtyListProcessesOptions = {}
      if (typeof deadlineMs === 'number') listOptions.deadlineMs = deadlineMs
      if (typeof timeoutMs === 'number') listOptions.timeoutMs = timeoutMs
      if (membershipOnly === true) listOptions.membershipOnly = true
      const rows = await provider.listProcesses(listOptions)
      return rows.filter((row) => live.has(row.id))
    },
    async exits() {
      return sessions.exitMessages()
    },
    async forgetExits(_client, request) {
      // Each exit only as it was listed: of the incarnation named (none named: an exit that
      // attests none), never a later one's under the same id.
      const named = forgetExitsParam(request.params)
      const forgotten = new Set<HostSession>()
      for (const { ptyId, incarnationId } of named) {
        const session = exited.get(ptyId)
        if (session !== undefined && session.exit !== null && session.exit.incarnationId === incarnationId) forgotten.add(session)
      }
      if (forgotten.size === 0) return 0
      // The journal first: a host after this one must not list them again. When it cannot be
      // rewritten nothing is forgotten (the app may ask again).
      try {
        journal?.forgetExits([...forgotten].map((session) => ({ id: session.id, incarnationId: session.exit!.incarnationId })))
      } catch (error) {
        throw new PtyHostError('host_error', `Cannot forget the exits: the pty host could not rewrite its session journal (${String(error)}); nothing was forgotten`)
      }
      for (const session of forgotten) sessions.forget(session)
      return forgotten.size
    },
    async probe(_client, request) {
      const id = stringParam(request.params, 'ptyId')
      // The incarnation the app asks about (its PTY's): the id may hold another app's process by
      // now, spawned under the same id since — never answered `true` for it.
      const expected = request.params.expectedIncarnationId
      if (typeof expected === 'string') {
        const session = live.get(id)
        if (isPtyIncarnationId(expected) && session?.incarnationId === expected) return provider.probeLiveness(id, { incarnationId: expected })
        // Not the live one (a spawn in flight is a new incarnation). Gone when this host saw it
        // end. A dead predecessor's, as its journal tells: running (same pid and start time) or
        // proven gone.
        if (exited.get(id)?.incarnationId === expected) return false
        const predecessors = orphans?.probeIncarnation(expected)
        if (predecessors !== undefined) return predecessors
        // Gone when no predecessor could hold it unnamed: the host holds every session it starts,
        // and its journal names every one its predecessors left running.
        return predecessorMayHold(id) ? null : false
      }
      if (live.has(id)) return provider.probeLiveness(id)
      // A predecessor's process under the id, as its journal tells (running, or proven gone).
      const predecessors = orphans?.probeId(id)
      if (predecessors === true || predecessors === null) return predecessors
      // The host holds every session it started: one it does not hold is proven absent — unless
      // it never held it and a dead predecessor may have, unnamed (its orphans outlive it): unknown.
      // An exit an earlier host journalled proves no more than that host's journal does.
      const ownExit = exited.get(id)
      return predecessorMayHold(id) && (ownExit === undefined || ownExit.fromJournal === true) ? null : false
    },
    async cwd(_client, request) {
      // Whose directory (`of`, read since the welcome's `cwdOf`): a value this host does not know
      // is refused, never answered as the foreground's.
      const of = (request.params as Record<string, unknown> | undefined)?.['of']
      if (of !== undefined && of !== 'foreground' && of !== 'leader') throw invalidPtyHostOption('of', "'foreground' or 'leader'", of)
      return provider.getCwd(stringParam(request.params, 'ptyId'), of === 'leader' ? { of } : undefined)
    },
    async foreground(_client, request) {
      return provider.getForegroundProcess(stringParam(request.params, 'ptyId'))
    },
    async children(_client, request) {
      return provider.hasChildProcesses(stringParam(request.params, 'ptyId'))
    },
    async snapshot(_client, request) {
      const id = stringParam(request.params, 'ptyId')
      const rows = countParam(request.params, 'scrollbackRows')
      const session = live.get(id) ?? exited.get(id)
      // A session whose spawn is still in flight has no incarnation yet: no screen to prove as its.
      if (session === undefined || session.incarnationId === undefined) return null
      // An ended session whose screen is gone says so: never an empty screen in its place.
      if (session.historyDropped) throw historyReleased(session, sessions.exitedHistoryBytes)
      // Its screen stays until this is done, whatever releases the history meanwhile (its exit).
      sessions.beginSnapshot(session)
      let snapshot: PtyHostBufferSnapshot
      try {
        snapshot = await snapshotWithinFrame(session.history, rows, scrollbackRows)
      } finally {
        sessions.endSnapshot(session)
      }
      // Whose screen it is: an app answers an ended PTY's snapshot only with this proof.
      return { ...snapshot, incarnationId: session.incarnationId }
    },
    async clear(_client, request) {
      live.get(stringParam(request.params, 'ptyId'))?.history.clear()
      return null
    },
  }
}

/**
 * The refusal of a snapshot of an ended session whose history is no longer kept (`history_released`):
 * why, how it ended, and where its exit can still be read.
 */
function historyReleased(session: HostSession, budgetBytes: number): PtyHostError {
  const exit = session.exit
  const ended = exit === null ? 'ended' : `ended (${exit.cause !== undefined && isTerminalExitCause(exit.cause) ? describeTerminalExitCause(exit.cause) : `exit code ${exit.code}`})`
  const why =
    session.historyReleasedBy === 'budget'
      ? `the host released its history and screen to keep the ended sessions' within its exitedHistoryBytes (${budgetBytes} bytes; the oldest ended sessions' go first)`
      : session.historyReleasedBy === 'predecessor'
        ? 'it ended under an earlier pty host, whose journal kept its exit but no screen'
        : 'it was stopped without keepHistory, which releases its history and screen at its exit'
  return new PtyHostError(
    'history_released',
    `The pty host no longer keeps the screen of PTY ${JSON.stringify(session.id)} (incarnation ${JSON.stringify(session.incarnationId)}), which ${ended}: ${why}. listExits() still tells how it ended`,
    { ptyId: session.id },
  )
}

/**
 * The most JSON bytes of a snapshot's `data` a reply carries: the frame limit less room for the
 * envelope. A larger reply would make the app drop the connection (and every PTY on it).
 */
const PTY_HOST_SNAPSHOT_MAX_JSON_BYTES = PTY_HOST_MAX_FRAME_BYTES - 64 * 1024

/**
 * A snapshot whose reply fits one frame: with `scrollbackRows` (all the screen holds when
 * `undefined`), or — when that serializes past {@link PTY_HOST_SNAPSHOT_MAX_JSON_BYTES} (a wide
 * screen of true-colour output: ~50 JSON bytes a cell) — with fewer scrollback rows: the latest
 * that fit. Each try serializes the whole screen while the host's loop waits, so the tries are
 * few: the screen alone next (when even that does not fit, `host_error` after two tries), then the
 * rows its bytes per scrollback row say fit (halved while still over, in case rows differ much).
 * A caller that asked for more gets fewer lines, never a dropped connection.
 *
 * @param screenScrollbackRows - the scrollback rows the host's screens keep (the most there can be)
 * @param maxJsonBytes - the most JSON bytes of `data` a reply may carry (a parameter for tests)
 */
export async function snapshotWithinFrame(
  history: Pick<SessionHistory, 'snapshotAndRowsHeld'>,
  scrollbackRows: number | undefined,
  screenScrollbackRows: number,
  maxJsonBytes: number = PTY_HOST_SNAPSHOT_MAX_JSON_BYTES,
): Promise<PtyHostBufferSnapshot> {
  const asked = Math.min(scrollbackRows ?? screenScrollbackRows, screenScrollbackRows)
  const first = await history.snapshotAndRowsHeld(scrollbackRows)
  const firstBytes = jsonBytes(first.snapshot.data)
  if (firstBytes <= maxJsonBytes) return first.snapshot
  // The rows it held: as the screen tells, else as asked (the most it can have held).
  const held = Math.min(asked, first.scrollbackRowsHeld ?? asked)
  const tooLarge = (): PtyHostError =>
    new PtyHostError('host_error', `The screen of this PTY serializes to more than a frame holds (${PTY_HOST_MAX_FRAME_BYTES} bytes) even without scrollback`)
  if (held === 0) throw tooLarge()
  const bare = await history.snapshotAndRowsHeld(0)
  const bareBytes = jsonBytes(bare.snapshot.data)
  if (bareBytes > maxJsonBytes) throw tooLarge()
  // Why not count the rows the data held: a long line wrapped over many rows is one line of it.
  const bytesPerRow = Math.max(1, (firstBytes - bareBytes) / held)
  let rows = Math.min(Math.floor(held / 2), Math.floor((0.9 * maxJsonBytes - bareBytes) / bytesPerRow))
  for (;;) {
    if (rows <= 0) return bare.snapshot
    const taken = await history.snapshotAndRowsHeld(rows)
    if (jsonBytes(taken.snapshot.data) <= maxJsonBytes) return taken.snapshot
    rows = Math.floor(rows / 2)
  }
}

/** The UTF-8 bytes of `text` as JSON. */
function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8')
}
