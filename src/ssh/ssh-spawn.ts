import { isOptionsObject } from '../contracts/known-options.js'
import { randomUUID } from 'node:crypto'
import { settleWithin } from '../contracts/settle-within.js'
import {
  PTY_LIVE_OTHER_INCARNATION_ERROR_CODE,
  toPtyIncarnationId,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtySpawnResult,
} from '../contracts/index.js'
import { createRemoteLaunch, type RemoteLaunch } from './remote-launch.js'
import type { AbandonedLaunches } from './ssh-abandoned-launches.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SshOptionError } from './ssh-option-error.js'
import { isSshProviderError, SshProviderError } from './ssh-provider-error.js'
import { SshPtySession } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { stopWithTimings, type SshStopTimings } from './ssh-shutdown.js'
import { SSH_SIGNAL_REQUEST_VERIFY_MS } from './ssh-stop.js'

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
  /** How long a launch may take to show its marker. */
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
        ? `Cannot attach to PTY ${JSON.stringify(sessionId)}: its SSH connection dropped and its fate is unknown`
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
 * Stops whatever a launch whose start was not seen left running on its channel, and answers
 * whether the server reported its end (then nothing of it runs): the SSH `signal` request
 * (`KILL`, to the launch's process — the script, or the program it became), a wait of up to
 * {@link SSH_SIGNAL_REQUEST_VERIFY_MS} for the report, then the channel's close. OpenSSH ignores the
 * request for root; the close still hangs the pty up, but only a report proves the end.
 */
async function endAbandonedLaunch(session: SshPtySession): Promise<boolean> {
  const { channel } = session
  // Still starting: the channel is open (a lost session's channel closed, or its connection dropped).
  if (session.state === 'starting' && !session.exitReported && !session.connection.lost) {
    try {
      channel.signal('KILL')
    } catch {
      // The channel is closing.
    }
    await channelEvent(channel, SSH_SIGNAL_REQUEST_VERIFY_MS)
  }
  try {
    channel.close()
  } catch {
    // Already closed.
  }
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
 * Open the PTY's session channel and put its session (`starting`) in the table. Rejects with the
 * channel's typed error, `spawn_failed` for an untyped one — or `provider_disposed` once the
 * provider is disposed (see {@link disposedDuringSpawn}).
 */
async function openSession(context: SshSpawnContext, spawnOptions: ProviderSpawnOptions, launch: RemoteLaunch, id: string): Promise<SshPtySession> {
  const { table, hostId } = context
  let ptyChannel
  try {
    ptyChannel = await context.keeper.openPtyChannel(launch.command, { term: context.terminalName, cols: launch.cols, rows: launch.rows, width: 0, height: 0 })
  } catch (error) {
    // The exec request may have reached the server (its reply did not come back): the program may
    // run with no channel and no pid to reach it by — looked for by its nonce from now on.
    if (isSshProviderError(error) && error.processMayExist) context.abandonedLaunches.add(launch.nonce)
    // A transport error here is the disposal's close (it waited for this open, then gave up): the
    // channel's error says whether the exec request may have reached the server
    // (`processMayExist`). A refusal started nothing.
    if (context.disposal() !== null) throw disposedDuringSpawn(context, launch, id, { mayExist: isSshProviderError(error) && error.processMayExist, started: false }, error)
    throw error instanceof SshProviderError
      ? error
      : new SshProviderError('spawn_failed', `The server ${hostId} refused the session channel: ${error instanceof Error ? error.message : String(error)}`, { cause: error, ptyId: id })
  }
  table.exitedIds.forget(id)
  const { connection, opened } = ptyChannel
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
 * A spawn the provider's disposal overtakes rejects with `provider_disposed` (its program stopped
 * by the disposal), never with the transport or launch error the disposal's stop and close caused.
 */
export async function spawnSshPty(context: SshSpawnContext, spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
  const { table, hostId } = context
  context.assertNotDisposed('spawn')
  if (!isOptionsObject(spawnOptions)) throw new SshOptionError('options', 'an object', spawnOptions)
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
  await context.keeper.connect()
  context.assertNotDisposed('spawn')
  const id = sessionId ?? randomUUID()
  if (table.sessions.has(id)) throw idInUse(id)
  // Held for the disposal: until its session is in the table, a disposal's stops would miss it.
  const session = await context.holdConnection(() => openSession(context, spawnOptions, launch, id))
  const { channel, connection: conn } = session
  // Once disposed no marker is awaited: the disposal stops this session with the other PTYs.
  if (context.disposal() === null) await settleWithin(session.started, context.launchTimeoutMs, undefined)
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
    // connection). With no pid to reach it by, it is looked for by its nonce (at once, on an open
    // connection, and once one opens again) until it is found gone — unless the server reported
    // its end.
    context.abandonedLaunches.add(launch.nonce)
    const ended = await context.holdConnection(() => endAbandonedLaunch(session))
    if (ended) context.abandonedLaunches.remove(launch.nonce)
    const output = session.takeLaunchOutput().trim()
    const program = JSON.stringify(launch.file ?? 'the login shell')
    throw new SshProviderError(
      lost ? 'transport_lost' : 'spawn_failed',
      `Could not start ${program} on ${hostId}${timedOut ? ` within ${context.launchTimeoutMs} ms` : ''}${output === '' ? '' : `: ${output.slice(0, 500)}`}${ended ? '' : `; it may run on the server all the same (its end was not reported after it was stopped)`}`,
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
