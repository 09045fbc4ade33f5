import { isOptionsObject } from '../contracts/known-options.js'
import { findMisspeltSpawnOption } from '../contracts/spawn-options.js'
import { randomUUID } from 'node:crypto'
import { settleWithin } from '../contracts/settle-within.js'
import { delay } from '../contracts/delay.js'
import { waitClockNow } from '../contracts/deadline.js'
import {
  PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
  remainingWaitMs,
  toPtyIncarnationId,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtySpawnResult,
} from '../contracts/index.js'
import { createRemoteLaunch, parseLaunchRefusal, type RemoteLaunch } from './remote-launch.js'
import type { AbandonedLaunches } from './ssh-abandoned-launches.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SshOptionError } from './ssh-option-error.js'
import { isSshProviderError, SshProviderError } from './ssh-provider-error.js'
import { SshPtySession } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { stopWithTimings, type SshStopTimings } from './ssh-shutdown.js'
import { findStartedLaunch } from './remote-process.js'
import { SSH_SIDE_COMMAND_TIMEOUT_MS, SSH_SIGNAL_REQUEST_VERIFY_MS } from './ssh-stop.js'

/**
 * The longest wait for the server's report of a launch's end after its `KILL` (see
 * {@link killReportWaitMs}): as long as a side command may take (`SSH_SIDE_COMMAND_TIMEOUT_MS`). A
 * report that takes longer is not waited for: the launch is then looked for by its nonce.
 */
export const SSH_KILL_REPORT_MAX_WAIT_MS = 3_000

/** What a spawn needs from its provider. */
export type SshSpawnContext = {
  /** The provider's host id, for messages. */
  hostId: ExecutionHostId
  /** The PTYs. */
  table: SshSessionTable
  /** The connection a new PTY's channel opens on. */
  keeper: SshConnectionKeeper
  /**
   * Where a launch given up before its marker arrived goes while it may run on the server: it is
   * looked for by its nonce, and stopped, once a connection is open.
   */
  abandonedLaunches: Pick<AbandonedLaunches, 'add' | 'remove'>
  /** `$TERM` of the pty request. */
  terminalName: string
  /**
   * How long a spawn may take, from the call: the connect (when no connection is open), the
   * channel's open, the launch marker, and — the marker not seen — the `KILL` of the launch and the
   * wait for the server's report of its end (see {@link killReportWaitMs}).
   */
  launchTimeoutMs: number
  /** How a PTY whose commit hook threw is stopped again. */
  timings: SshStopTimings
  /** Throws `provider_disposed` once the provider is disposed. */
  assertNotDisposed(method: string): void
  /**
   * The provider's disposal once `dispose()` was called (it resolves when every PTY was stopped
   * and the connections were closed); `null` before.
   */
  disposal(): Promise<void> | null
  /**
   * Run `work` — channel work the disposal lets finish before it stops the PTYs and closes the
   * connections: a PTY's channel being opened (until its session is in the table), a launch being
   * stopped — so that no program is cut off unstopped. Held from before `work` starts (a disposal
   * called from within it waits for it too); returns its promise.
   */
  holdConnection<T>(work: () => Promise<T>): Promise<T>
}

/** The reply of a spawn that found its PTY already live: a re-attach, its sequence continued. */
function attachReply(session: SshPtySession): PtySpawnResult {
  return {
    id: session.id,
    pid: session.marker?.pid ?? null,
    incarnationId: session.incarnationId,
    isReattach: true,
    providerSequence: { value: session.charsEmitted, generation: 'continued' },
    cols: session.cols,
    rows: session.rows,
  }
}

/**
 * An `attachOnly` spawn: the live PTY's re-attach reply, or a typed refusal — `pty_absent` (proven
 * absent), `pty_live_other_incarnation`, or `transport_lost` for a lost PTY (not proven absent).
 */
function attachOnly(context: SshSpawnContext, sessionId: string | undefined, expectedIncarnationId: ProviderSpawnOptions['expectedIncarnationId']): PtySpawnResult {
  const { table, hostId } = context
  const known = sessionId === undefined ? undefined : table.get(sessionId)
  // An attach says the program runs: not one whose end is proven (its exit on its way behind the
  // output its channel holds).
  const ended = known?.endProven === true
  const live = known?.state === 'live' && !ended ? known : undefined
  if (live !== undefined && expectedIncarnationId !== undefined && live.incarnationId !== expectedIncarnationId) {
    // Live under another incarnation is not an absence: the caller must not start a second process.
    throw new SshProviderError(
      PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
      `Cannot attach to PTY ${JSON.stringify(sessionId)}: it is live on ${hostId} under another incarnation than ${JSON.stringify(expectedIncarnationId)}`,
      { ptyId: sessionId },
    )
  }
  if (live === undefined) {
    // A lost session is not proven absent (it may still run), unless its end is proven.
    const lost = known?.state === 'lost' && !ended
    const why = ended ? 'its program has exited (its exit is still being delivered)' : `no live PTY has that id (or incarnation) on ${hostId}`
    throw new SshProviderError(
      lost ? 'transport_lost' : 'pty_absent',
      lost
        ? `Cannot attach to PTY ${JSON.stringify(sessionId)}: ${known.lossDescription ?? 'its SSH connection dropped'}, and its fate is unknown`
        : `Cannot attach to PTY ${JSON.stringify(sessionId ?? null)}: ${why}`,
      { ptyId: sessionId },
    )
  }
  return attachReply(live)
}

function idInUse(id: string, exited = false): SshProviderError {
  const why = exited ? 'its program has exited; its exit is still being delivered, and the id is free once it is' : 'a PTY with that id is still held'
  return new SshProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: ${why}`, { ptyId: id })
}

/**
 * How long to wait for the server's report of a launch's end after its `KILL`, given how long its
 * channel took to open (`channelOpenMs`, from the open request to the channel): the link's round
 * trip as that channel measured it. Its open took three round trips (the open, the pty request,
 * the `exec` request — `ssh2` sends each once the one before is answered) and the server's fork;
 * the report takes one round trip and the server's kill and reap. So the open's time, never less
 * than {@link SSH_SIGNAL_REQUEST_VERIFY_MS} (the server's own reaction on a loaded machine), nor
 * more than {@link SSH_KILL_REPORT_MAX_WAIT_MS}. Until 7 Dec it was 200 ms whatever the link: over
 * a 600 ms round trip the kill landed, and the spawn said `processMayExist` all the same.
 */
export function killReportWaitMs(channelOpenMs: number): number {
  return Math.min(SSH_KILL_REPORT_MAX_WAIT_MS, Math.max(SSH_SIGNAL_REQUEST_VERIFY_MS, Number.isFinite(channelOpenMs) ? channelOpenMs : 0))
}

/**
 * Stops whatever a launch whose start was not seen left running on its channel, and answers
 * whether the server reported its end (then nothing of it runs): the SSH `signal` request
 * (`KILL`, to the launch's process group — the script, or the program it became), a wait of up to
 * `waitMs` for the report (see {@link killReportWaitMs}), then the channel's close. OpenSSH ignores
 * the request for root; the close still hangs the pty up, but only a report proves the end.
 */
async function endAbandonedLaunch(session: SshPtySession, waitMs: number): Promise<boolean> {
  const { channel } = session
  // Still starting: the channel is open (a lost session's channel closed, or its connection dropped).
  if (session.state === 'starting' && !session.exitReported && !session.connection.lost) {
    try {
      channel.signal('KILL')
    } catch {
      // The channel is closing.
    }
    if (!session.exitReported) await channelEvent(channel, Math.max(0, waitMs))
  }
  session.closeChannel()
  return session.exitReported
}

/** Resolves at the channel's first `exit` or `close` event, or after `ms`. */
function channelEvent(channel: SshPtySession['channel'], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      channel.removeListener?.('exit', done)
      channel.removeListener?.('close', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    channel.on('exit', done)
    channel.on('close', done)
  })
}

/**
 * How long a spawn waits, once output arrived with no launch marker, before it looks for the
 * launch by its nonce (see {@link awaitLaunchStart}): the marker is the preamble's first output
 * unless a login rc printed something before it, and then follows it at once.
 */
export const SSH_MARKER_GRACE_MS = 300

/**
 * Wait for the launch's start: its marker — or, the marker late, the program found by its nonce
 * through the connection's side shell ({@link findStartedLaunch}) and adopted as if the marker had
 * come ({@link SshPtySession.adoptLaunch}). A program that flushes its terminal's output as it
 * starts (`tcflush`, as tmux's client does) discards on Linux the marker a slow server had not
 * read yet: before 7 Dec such a spawn failed at the launch timeout although the program ran.
 * Looked for once output arrived without a marker and {@link SSH_MARKER_GRACE_MS} passed, and once
 * more at the end of the wait (`waitLeft()` down to 0), within half the kill reserve (`reserveMs`),
 * if output had arrived. A look that finds nothing (not started, still in its preamble, or already
 * ended) changes nothing: the spawn goes on waiting, or fails as it did — and so does a launch
 * that printed nothing at all (its marker held up by the link, not discarded).
 */
async function awaitLaunchStart(context: SshSpawnContext, session: SshPtySession, waitLeft: () => number, reserveMs: number): Promise<void> {
  const starting = (): boolean => session.marker === null && session.state === 'starting' && context.disposal() === null
  const look = async (timeoutMs: number): Promise<void> => {
    if (!starting() || session.connection.lost || timeoutMs <= 0) return
    const found = await findStartedLaunch(session.connection, session.launch.nonce, timeoutMs).catch(() => null)
    if (found !== null && found !== 'none' && starting()) session.adoptLaunch(found)
  }
  let outputCame = false
  const graceOver = session.outputWithoutMarker
    .then(() => {
      outputCame = true
      return delay(SSH_MARKER_GRACE_MS, { unref: true })
    })
    .then(() => 'grace' as const)
  const first = await settleWithin(Promise.race([session.started.then(() => 'started' as const), graceOver]), Math.max(0, waitLeft()), 'deadline' as const)
  if (first === 'grace') {
    await look(Math.min(SSH_SIDE_COMMAND_TIMEOUT_MS, Math.max(0, waitLeft())))
    if (starting()) await settleWithin(session.started, Math.max(0, waitLeft()), undefined)
  }
  // The last resort, before the spawn gives up — when output came but no marker (the grace not
  // over yet, or the first look found the launch still in its preamble). No output at all is no
  // sign of a flush: a marker held by a slow link; that launch is stopped as before.
  if (outputCame) await look(Math.min(SSH_SIDE_COMMAND_TIMEOUT_MS, reserveMs / 2))
}

/** When a spawn's channel open went out (`null`: not yet) and how long it took to answer. */
type ChannelOpenTiming = { requestedAt: number | null; openMs: number }

/**
 * Open the PTY's session channel and put its session (`starting`) in the table. Rejects with the
 * channel's typed error, `spawn_failed` for an untyped one — or `provider_disposed` once the
 * provider is disposed (see {@link disposedDuringSpawn}).
 *
 * Once `giveUp` aborted (the spawn's launch timeout passed while the open was unanswered: the
 * spawn has rejected), a channel the server hands over late is no PTY: its launch is killed and the
 * channel closed ({@link endAbandonedLaunch}), and it resolves `undefined` — the launch still looked
 * for by its nonce unless the server reported its end. An open that fails then proves nothing ran
 * unless its error says `processMayExist`.
 */
async function openSession(
  context: SshSpawnContext,
  spawnOptions: ProviderSpawnOptions,
  launch: RemoteLaunch,
  id: string,
  giveUp: AbortSignal,
  timing: ChannelOpenTiming,
): Promise<SshPtySession | undefined> {
  const { table, hostId } = context
  let ptyChannel
  try {
    ptyChannel = await context.keeper.openPtyChannel(
      launch.command,
      { term: context.terminalName, cols: launch.cols, rows: launch.rows, width: 0, height: 0 },
      // A refusal for want of room started nothing: only an open that may be answered counts.
      { giveUp, onRequest: (state) => void (timing.requestedAt = state === 'sent' ? waitClockNow() : null) },
    )
  } catch (error) {
    const mayExist = isSshProviderError(error) && error.processMayExist
    if (giveUp.aborted) {
      // The spawn gave up while this open was unanswered, and looks for the launch by its nonce:
      // a failure before the exec request proves it never ran.
      if (!mayExist) context.abandonedLaunches.remove(launch.nonce)
      throw error
    }
    // The exec request may have reached the server (its reply did not come back): the program may
    // run with no channel and no pid to reach it by — looked for by its nonce from now on.
    if (mayExist) context.abandonedLaunches.add(launch.nonce)
    // A transport error here is the disposal's close (it waited for this open, then gave up): the
    // channel's error says whether the exec request may have reached the server
    // (`processMayExist`). A refusal started nothing.
    if (context.disposal() !== null) throw disposedDuringSpawn(context, launch, id, { mayExist, started: false }, error)
    throw error instanceof SshProviderError
      ? error
      : new SshProviderError('spawn_failed', `The server ${hostId} refused the session channel: ${error instanceof Error ? error.message : String(error)}`, { cause: error, ptyId: id })
  }
  if (timing.requestedAt !== null) timing.openMs = waitClockNow() - timing.requestedAt
  const { connection, opened } = ptyChannel
  const late = giveUp.aborted
  if (!late) table.exitedIds.forget(id)
  const session = new SshPtySession(
    {
      id,
      incarnationId: toPtyIncarnationId(randomUUID()),
      channel: opened.channel,
      exitStatus: opened.exitStatus,
      connection,
      launch,
      scopeId: spawnOptions.scopeId,
      slotKey: spawnOptions.slotKey,
      claimKey: spawnOptions.claimKey,
    },
    table.sessionHooks,
  )
  if (late) {
    // Never in the table, none of its events delivered: its spawn failed already.
    session.abandon()
    const ended = await endAbandonedLaunch(session, killReportWaitMs(timing.openMs))
    // Looked for from now (it ran only now), unless its end was reported.
    if (ended) context.abandonedLaunches.remove(launch.nonce)
    else context.abandonedLaunches.add(launch.nonce)
    return undefined
  }
  table.sessions.set(id, session)
  return session
}

/**
 * The rejection of a spawn the provider's disposal overtook: `provider_disposed`, naming the
 * program, the host and the PTY id, and `processMayExist` when the program may run on the server
 * all the same (the disposal did not see its end reported).
 */
function disposedDuringSpawn(
  context: SshSpawnContext,
  launch: RemoteLaunch,
  id: string,
  { mayExist, started }: { mayExist: boolean; started: boolean },
  cause?: unknown,
): SshProviderError {
  const program = JSON.stringify(launch.file ?? 'the login shell')
  const fate = mayExist
    ? '; it may run on the server all the same (its end was not reported before the connection closed)'
    : started
      ? '; it had started, and the disposal stopped it'
      : ''
  return new SshProviderError(
    'provider_disposed',
    `Could not start ${program} on ${context.hostId}: the SSH provider was disposed while the spawn was in flight${fate}`,
    { cause, ptyId: id, processMayExist: mayExist, processStarted: started },
  )
}

/**
 * A spawn the disposal overtook after its channel opened: nothing is committed, none of its events
 * is delivered. The disposal stops its program with the other PTYs (its session was in the table
 * before the stops began); the rejection waits for the disposal, so it can tell whether the
 * program's end was reported (else `processMayExist`). Its launch ran (`processStarted`): "not
 * started" would be false — helper-137 found 1–9 of 120 such programs running at the disposal.
 */
async function refuseDisposedSpawn(context: SshSpawnContext, session: SshPtySession): Promise<never> {
  await context.disposal()?.catch(() => undefined)
  if (context.table.sessions.get(session.id) === session) context.table.sessions.delete(session.id)
  session.abandon()
  throw disposedDuringSpawn(context, session.launch, session.id, { mayExist: !session.endProven, started: true })
}

/**
 * The provider's `spawn`: an attach-only request answers from the table; a session id already
 * held re-attaches (live, not `isNewSession`) or is refused; otherwise the program is launched on a
 * session channel with a pty request, and the reply waits for its launch marker (the remote pid).
 * It settles within `launchTimeoutMs` of the call, whatever the link does: the connect, the
 * channel's open and the marker all count, and a launch whose marker did not come in time is sent
 * `KILL` early enough for the server's report of its end to come back before the deadline
 * ({@link killReportWaitMs}). A spawn the provider's disposal overtakes rejects with `provider_disposed` (its program stopped
 * by the disposal), never with the transport or launch error the disposal's stop and close caused.
 */
export async function spawnSshPty(context: SshSpawnContext, spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
  const calledAt = waitClockNow()
  const { table, hostId } = context
  context.assertNotDisposed('spawn')
  if (!isOptionsObject(spawnOptions)) throw new SshOptionError('options', 'an object', spawnOptions)
  // A misspelt option (`cdw`, `sessionID`, `id`) would be ignored, the default used.
  const misspelt = findMisspeltSpawnOption(spawnOptions)
  if (misspelt !== undefined) throw new SshOptionError(misspelt.name, misspelt.expected, misspelt.value, misspelt.secret)
  const { sessionId, expectedIncarnationId } = spawnOptions
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) {
    throw new SshOptionError('sessionId', 'a non-empty string', sessionId)
  }
  if (spawnOptions.attachOnly === true) return attachOnly(context, sessionId, expectedIncarnationId)
  if (sessionId !== undefined && table.sessions.has(sessionId)) {
    const existing = table.get(sessionId)
    const exited = existing?.endProven === true
    if (existing?.state === 'live' && !exited && spawnOptions.isNewSession !== true) return attachReply(existing)
    throw idInUse(sessionId, exited)
  }
  // Every refusal of a bad option happens here, before anything connects.
  const launch = createRemoteLaunch(spawnOptions)
  const program = JSON.stringify(launch.file ?? 'the login shell')
  // The whole spawn fits in the launch timeout, from the call: before 7 Dec its timer started only
  // once the channel had opened, and a spawn routed to a frozen link outlasted it (19.8 s against 15 s).
  const deadline = calledAt + context.launchTimeoutMs
  const left = (): number => remainingWaitMs(deadline, waitClockNow())
  const within = `within ${context.launchTimeoutMs} ms`
  // A connect that takes longer goes on (later spawns and the reconnects share it); this spawn stops waiting.
  // With no time left after it, nothing is sent: an open the spawn cannot wait for would only run a
  // launch it must then kill.
  if (!(await settleWithin(context.keeper.connect().then(() => true), left(), false)) || left() <= 0) {
    context.assertNotDisposed('spawn')
    throw new SshProviderError('spawn_failed', `Could not start ${program} on ${hostId} ${within}: no connection to it opened in time`, { ptyId: sessionId })
  }
  context.assertNotDisposed('spawn')
  const id = sessionId ?? randomUUID()
  // Another spawn under the same id may be opening its channel (its session not in the table yet):
  // both would run, and the one the table forgot would be stopped by nothing.
  if (table.sessions.has(id)) throw idInUse(id)
  if (table.openingIds.has(id)) throw new SshProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: another spawn under that id is starting`, { ptyId: id })
  // Aborted at the deadline, synchronously (a channel handed over after that is never a PTY).
  const giveUp = new AbortController()
  const timing: ChannelOpenTiming = { requestedAt: null, openMs: 0 }
  let timer: NodeJS.Timeout | undefined
  let opening: Promise<SshPtySession | undefined> | undefined
  let opened: SshPtySession | undefined | null
  table.openingIds.add(id)
  // Everything after the add is inside the `try`: whatever throws, the id is not left "opening"
  // for good (every later spawn under it refused `pty_id_in_use`). Nothing here throws today (the
  // provider's `holdConnection` wraps its work in an async function); before 7 Dec the timer and the
  // open were set up between the add and the `try` (found in a review, helper-208).
  try {
    timer = setTimeout(() => giveUp.abort(), left())
    // Held for the disposal: until its session is in the table, a disposal's stops would miss it.
    opening = context.holdConnection(() => openSession(context, spawnOptions, launch, id, giveUp.signal, timing))
    const gaveUp = new Promise<null>((resolve) => giveUp.signal.addEventListener('abort', () => resolve(null), { once: true }))
    opened = await Promise.race([opening, gaveUp])
  } finally {
    clearTimeout(timer)
    // In the table now, or never (a channel handed over after the deadline is never a PTY).
    table.openingIds.delete(id)
  }
  if (opened === null || opened === undefined) {
    // The open unanswered at the deadline: once it went out, the server may answer it when the link
    // carries it, and run the launch — then killed, its channel closed (`openSession`), and looked
    // for by its nonce meanwhile. Not sent (waiting for a connection with room): nothing will be.
    const sent = timing.requestedAt !== null
    if (sent) context.abandonedLaunches.add(launch.nonce)
    opening?.catch(() => undefined)
    if (context.disposal() !== null) throw disposedDuringSpawn(context, launch, id, { mayExist: sent, started: false })
    throw new SshProviderError(
      'spawn_failed',
      `Could not start ${program} on ${hostId} ${within}: the server did not answer its session channel in time${sent ? '; it may run on the server all the same once the link carries the request (it is then stopped, and its channel closed)' : ''}`,
      { ptyId: id, processMayExist: sent },
    )
  }
  const session = opened
  const { channel, connection: conn } = session
  // Kept from the launch timeout for the KILL of a launch given up and the wait for its report.
  const killReserveMs = Math.min(killReportWaitMs(timing.openMs), context.launchTimeoutMs / 2)
  // Once disposed no marker is awaited: the disposal stops this session with the other PTYs.
  if (context.disposal() === null) await awaitLaunchStart(context, session, () => left() - killReserveMs, killReserveMs)
  // Looked at again after every wait: a spawn the disposal overtook commits nothing.
  if (context.disposal() !== null) return refuseDisposedSpawn(context, session)
  if (session.marker === null) {
    // Its start was not seen: nothing is committed, and none of its events is delivered.
    table.sessions.delete(id)
    session.abandon()
    const lost = session.state === 'lost' && conn.lost
    const timedOut = session.state === 'starting'
    // It may have started all the same — a marker still in flight when the timeout passed, or lost
    // with the link; a program that ignores the hangup a closed channel sends survives that close.
    // Stop it first (a disposal that begins meanwhile waits for this stop before it closes the
    // connection), waiting for the server's report of its end until the deadline. With no pid to
    // reach it by, it is looked for by its nonce (at once, on an open connection, and once one
    // opens again) until it is found gone — unless the server reported its end.
    context.abandonedLaunches.add(launch.nonce)
    const ended = await context.holdConnection(() => endAbandonedLaunch(session, left()))
    if (ended) context.abandonedLaunches.remove(launch.nonce)
    const output = session.takeLaunchOutput().trim()
    // The remote refused the `cwd` or the program: the shell printed why and exited before it
    // started anything, so this is the option refusal a local provider gives, not a failure.
    const refusal = parseLaunchRefusal(output, launch.nonce, spawnOptions, hostId)
    if (refusal !== null) throw refusal
    throw new SshProviderError(
      lost ? 'transport_lost' : 'spawn_failed',
      `Could not start ${program} on ${hostId}${timedOut ? ` ${within}` : ''}${output === '' ? '' : `: ${output.slice(0, 500)}`}${ended ? '' : `; it may run on the server all the same (its end was not reported after it was stopped)`}`,
      { ptyId: id, processMayExist: !ended },
    )
  }
  try {
    spawnOptions.onPtySpawnCommitted?.()
  } catch (error) {
    session.release()
    await stopWithTimings(session, context.timings, true, undefined, context.keeper).catch(() => undefined)
    throw error
  }
  if (launch.startupCommand !== undefined && launch.startupCommand.length > 0) channel.write(`${launch.startupCommand}\r`)
  // Why a macrotask: the caller awaiting this reply must see it before the PTY's first events
  // (an `exit 3` can arrive in the same packet as the marker).
  setImmediate(() => session.release())
  return {
    id,
    pid: session.marker.pid,
    incarnationId: session.incarnationId,
    isReattach: false,
    providerSequence: { value: 0, generation: 'reset' },
    cols: launch.cols,
    rows: launch.rows,
  }
}
