import type { PtyCwdOptions } from '../contracts/cwd-options.js'
import { probedIncarnation } from '../contracts/liveness-probe-options.js'
import { assertAcknowledgedChars, assertCwdOptions, assertListProcessesOptions, assertShutdownOptions, isPtyIdArgument } from '../contracts/provider-arguments.js'
import { isOptionsObject } from '../contracts/known-options.js'
import { isPtyDimension, MAX_PTY_DIMENSION } from '../contracts/pty-dimension.js'
import { assertWriteBytes, assertWriteData } from '../contracts/write-settlement.js'
import { randomBytes } from 'node:crypto'
import {
  isPtyIncarnationId,
  LOCAL_EXECUTION_HOST_ID,
  PTY_INCARNATION_ID_MAX_LENGTH,
  refusedWrite,
  resolveWaitDeadline,
  unverifiableWrite,
  type ProviderSpawnOptions,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyListProcessesOptions,
  type PtyLivenessProbeOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type PtyWaitBudget,
  type WriteSettlement,
} from '../contracts/index.js'
import { describeValue } from '../contracts/describe-value.js'
import { refuseCallsAfterDispose } from '../contracts/disposed-provider.js'
import { settleWithin } from '../contracts/settle-within.js'
import { NODE_PTY_SHUTDOWN_DEADLINE_MS } from '../node-pty/stop-schedule.js'
import { ClientPtyRecords, exitEventOfMessage, isExitMessage, isLive, type ClientPtyRecord, type ClientPtyState, type DeliveryWatch } from './client-pty-records.js'
import { addAppEnvironment, asSessionIdRefusal, misspeltSpawnOptionRefusal, spawnOptionsRefusal, spawnRequestParams } from './spawn-request-params.js'
import { isRequestTimeout, type PtyHostConnection } from './pty-host-connection.js'
import { assertIntegerOption, invalidPtyHostOption, isPtyHostError, PtyHostError, PtyHostOptionError } from './pty-host-error.js'
import { PtyHostLink } from './pty-host-link.js'
import { PTY_HOST_MAX_FORGET_EXITS, sessionIdProblem, stopMismatchedHostAdvice } from './protocol.js'
import {
  PTY_HOST_CONNECT_TIMEOUT_MS,
  PTY_HOST_RECONNECT_MAX_ATTEMPTS,
  PTY_HOST_REQUEST_TIMEOUT_MS,
  validatePtyHostProviderOptions,
  type PtyHostExitToForget,
  type PtyHostProvider,
  type PtyHostProviderOptions,
  type PtyHostReplayFrom,
} from './pty-host-provider-options.js'
import { PTY_HOST_DEFAULT_SCROLLBACK_ROWS, type PtyHostBufferSnapshot } from './session-history.js'
import { assertScreenWithinLimit } from './screen-limit.js'
import { bytePieces, combinePieceSettlements, textPieces, writePieceBytesFor, writePieceCharsFor } from './write-pieces.js'
import { defaultPtyHostSocketPath, ptyHostPaths } from './socket-security.js'

/**
 * How much longer than the request timeout `detach()` waits for the requests already sent: their
 * own timeouts (armed earlier, each fired at most a loop turn late) come first.
 */
const DETACH_AFTER_REQUEST_TIMEOUT_MS = 250

export {
  PTY_HOST_CONNECT_TIMEOUT_MS,
  PTY_HOST_EXITED_ID_MEMORY,
  PTY_HOST_RECONNECT_INITIAL_DELAY_MS,
  PTY_HOST_RECONNECT_MAX_ATTEMPTS,
  PTY_HOST_RECONNECT_MAX_DELAY_MS,
  PTY_HOST_REQUEST_TIMEOUT_MS,
  type PtyHostExitToForget,
  type PtyHostProvider,
  type PtyHostProviderOptions,
  type PtyHostReplayFrom,
  type PtyHostSpawnEnvironment,
} from './pty-host-provider-options.js'

/**
 * A spawn options check's refusal as the rejection `spawn()` answers, or `undefined` when it passed.
 * A check that throws (a Proxy whose traps throw) is a rejection all the same, never a throw from
 * `spawn()`.
 */
function spawnOptionsRejection(check: (options: ProviderSpawnOptions) => PtyHostError | undefined, options: ProviderSpawnOptions): Promise<never> | undefined {
  try {
    const refusal = check(options)
    return refusal === undefined ? undefined : Promise.reject(refusal)
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * Create a {@link PtyProvider} whose PTYs live in a pty host process (`ptykit-pty-host`), reached
 * over a private Unix domain socket. Sessions outlive the app; a new app lists them, attaches,
 * replays what it missed, and paints a snapshot of the screen.
 *
 * @example
 * ```ts
 * const provider = createPtyHostProvider()
 * provider.onData(({ data }) => process.stdout.write(data))
 * const { id } = await provider.spawn({ file: '/bin/sh' })
 * await provider.detach() // the shell keeps running in the host
 * ```
 *
 * @throws PtyHostError (`invalid_option`) when an option is malformed.
 */
export function createPtyHostProvider(options: PtyHostProviderOptions = {}): PtyHostProvider {
  validatePtyHostProviderOptions(options)
  const hostId = options.hostId ?? LOCAL_EXECUTION_HOST_ID
  const requestTimeoutMs = options.requestTimeoutMs ?? PTY_HOST_REQUEST_TIMEOUT_MS
  // Each spawn carries the app's environment and directory, read when it is sent (see addAppEnvironment).
  const spawnFromApp = (options.spawnEnvironment ?? 'app') === 'app'
  // The screen limit is checked here only for a resize: it is a one-way notify, so the host's own
  // refusal could not reach the caller. A spawn is a request: the host refuses it with the error.
  // The check uses the connected host's scrollback (from its welcome): a host started by another
  // app, or by hand, may keep another number than this provider's option.
  const ownScrollbackRows = options.scrollbackRows ?? PTY_HOST_DEFAULT_SCROLLBACK_ROWS
  const records = new ClientPtyRecords(() => link.updateHold())
  const { ptys } = records
  const paths = ptyHostPaths(options.socketPath ?? defaultPtyHostSocketPath())
  const link: PtyHostLink = new PtyHostLink(
    {
      paths,
      options,
      autoStart: options.autoStart ?? true,
      connectTimeoutMs: options.connectTimeoutMs ?? PTY_HOST_CONNECT_TIMEOUT_MS,
      requestTimeoutMs,
      reconnectAttempts: options.reconnectAttempts ?? PTY_HOST_RECONNECT_MAX_ATTEMPTS,
    },
    records,
  )
  let disposePromise: Promise<void> | null = null
  /** Set once `dispose()` has finished: the refusals then say "has been disposed", not "is being". */
  let disposed = false
  let detachPromise: Promise<void> | null = null
  /**
   * What a call refused once `detach()` began gets — a spawn or attach not yet sent, a stop, a
   * listing: `provider_detached`, naming the method and carrying the PTY the call named (as a
   * refusal after `dispose()` does). A probe or a query is not refused: it answers `null`.
   */
  const detachingError = (method: string, ptyId?: unknown, cause?: unknown): PtyHostError =>
    new PtyHostError('provider_detached', `Cannot call \`${method}\`: the pty host provider was detached (its sessions run on in the host)`, {
      ptyId: typeof ptyId === 'string' ? ptyId : undefined,
      cause,
    })
  /** Refuse a call once the provider is detached (see {@link detachingError}); nothing otherwise. */
  const refuseIfDetached = (method: string, ptyId?: string): void => {
    if (link.state === 'detached') throw detachingError(method, ptyId)
  }
  /**
   * What a call refused for `dispose()` gets — one cut off by the close, one made after it (see
   * `refuseCallsAfterDispose` below), and a spawn or attach asked for once it began (nothing may
   * outlive the dispose; one already on its way is in the records as `spawning`: the dispose stops
   * it, and the host's shutdown waits for a spawn of that id still starting): `provider_disposed`,
   * naming the method and carrying the PTY the call named, as a refusal for `detach()` does.
   */
  const disposedError = (method: string, ptyId?: unknown, cause?: unknown): PtyHostError =>
    new PtyHostError('provider_disposed', `Cannot call \`${method}\`: the pty host provider ${disposed ? 'has been' : 'is being'} disposed`, {
      ptyId: typeof ptyId === 'string' ? ptyId : undefined,
      cause,
    })
  /**
   * `method`'s refusal for the link's own refusal `error` once closed (see
   * {@link PtyHostLink.isClosedRefusal}): by `detach()` as {@link detachingError}, by `dispose()` as
   * {@link disposedError} — the one mapping from the link's words to the caller's.
   */
  const closedRefusal = (error: PtyHostError, method: string, ptyId?: unknown): PtyHostError =>
    error.code === 'provider_detached' ? detachingError(method, ptyId, error) : disposedError(method, ptyId, error)
  /**
   * A failure of `method`'s connect or request, as its caller gets it: the link's own refusal when
   * `detach()` or `dispose()` closed it under the call ("The pty host provider was disposed before
   * the host answered `list`": the wire's method, no PTY) becomes the call's refusal naming
   * `method` and the PTY (see {@link closedRefusal}), the link's kept as its `cause`. Any other
   * failure of a call that names a PTY names it too (see {@link namingPty}); of one that names
   * none (a spawn, a listing), it is passed on as it is.
   */
  const asClosedRefusal =
    (method: string, ptyId?: string) =>
    (error: unknown): never => {
      if (link.isClosedRefusal(error)) throw closedRefusal(error, method, ptyId)
      throw ptyId === undefined ? error : namingPty(error, method, ptyId)
    }
  /**
   * Spawns and attaches whose request went out, until they settle. `detach()` lets them finish
   * before it closes the connection: a spawn cut off by it was told `transport_lost` ("may
   * exist") while the host stopped the session for want of anyone to answer — or, its reply
   * already on the wire, kept a session nobody knew of. Once settled, a spawned session is the
   * app's and is left running like the others. A stop asked for while a detach waits is tracked
   * too: the one a caller sends on a spawn's answer (a controller rolls back a spawn whose commit
   * hook threw) must reach the host, and its answer the caller. (A stop asked for before is not
   * waited for: a detach does not wait out a stop's graces.)
   */
  const sessionRequestsSent = new Set<Promise<unknown>>()
  /** Attaches waiting for their reply, by the record they share (a failed one forgets it only alone). */
  const attachesInFlight = new Map<ClientPtyRecord, Set<Promise<unknown>>>()
  /**
   * Records an attach made (not a spawn's) that no attach was answered for yet: the last attach of
   * one to fail — refused, timed out, or cut off by a drop — forgets it.
   */
  const recordsOfAttaches = new WeakSet<ClientPtyRecord>()
  function trackSent<T>(request: Promise<T>): Promise<T> {
    sessionRequestsSent.add(request)
    const forget = (): void => void sessionRequestsSent.delete(request)
    request.then(forget, forget)
    return request
  }
  // Session ids this provider mints: a random prefix of its own (96 bits: unique among the apps of
  // a host, and across restarts) and a counter. Why not a `randomUUID()` per spawn: it was 7 % of
  // the app's spawn call (its text is built piece by piece), and nothing reads an id's shape.
  const sessionIdPrefix = `${randomBytes(12).toString('hex')}-`
  let sessionIdCount = 0

  async function attach(id: string, attachOptions: { replayFrom?: PtyHostReplayFrom | undefined; expectedIncarnationId?: PtyIncarnationId | undefined } = {}): Promise<PtySpawnResult> {
    if (disposePromise !== null) throw disposedError('attach', id)
    if (detachPromise !== null) throw detachingError('attach', id)
    if (typeof id !== 'string' || id.length === 0) throw invalidPtyHostOption('sessionId', 'a non-empty string', id)
    // `null` threw JavaScript's own TypeError, a number was read as no options.
    if (!isOptionsObject(attachOptions)) throw invalidPtyHostOption('options', 'an object', attachOptions, 'argument')
    // No session can have such an id (the host refuses it at a spawn): nothing to ask.
    const idProblem = sessionIdProblem(id)
    if (idProblem !== undefined) throw invalidPtyHostOption('sessionId', idProblem, id)
    const { replayFrom: asked } = attachOptions
    if (asked !== undefined && asked !== 'retained' && asked !== 'live' && !(typeof asked === 'number' && Number.isSafeInteger(asked) && asked >= 0)) {
      throw invalidPtyHostOption('replayFrom', "a non-negative integer (an output sequence), 'retained' or 'live'", asked)
    }
    // The fence of the attach: the host read one that is no string as none, and attached whatever
    // process holds the id now.
    assertIncarnationOption('expectedIncarnationId', attachOptions.expectedIncarnationId)
    // Where the output delivered for the id during this call begins: such output raced the reply
    // (another attach's replay, live output), and a caller that holds it meanwhile places it by the
    // sequence this call answers — which must then not already count it.
    const raced = records.watchDeliveries(id)
    try {
      return await attachWatched(id, attachOptions, raced)
    } finally {
      records.unwatchDeliveries(id, raced)
    }
  }

  async function attachWatched(id: string, attachOptions: { replayFrom?: PtyHostReplayFrom | undefined; expectedIncarnationId?: PtyIncarnationId | undefined }, raced: DeliveryWatch): Promise<PtySpawnResult> {
    // Asked for while connecting, detached meanwhile: nothing was sent, nothing is attached.
    const opened = await link.ensureConnected(true).catch(asClosedRefusal('attach', id))
    if (detachPromise !== null) throw detachingError('attach', id)
    const known = ptys.get(id)
    const knownLive = known !== undefined && known.state !== 'exited'
    const knownIncarnationId = known?.incarnationId
    const replayFrom = attachOptions.replayFrom ?? (knownLive ? known.lastSeq : 'retained')
    const params: Record<string, unknown> = { ptyId: id, fromSeq: replayFrom === 'retained' ? null : replayFrom }
    if (attachOptions.expectedIncarnationId !== undefined) params.expectedIncarnationId = attachOptions.expectedIncarnationId
    // Registered first: the replay follows the reply at once.
    const pty = records.recordForAttach(id, opened.hostInstanceId, attachOptions.expectedIncarnationId)
    const seededIncarnation = pty !== known ? attachOptions.expectedIncarnationId : undefined
    if (pty !== known) recordsOfAttaches.add(pty)
    let waiting = attachesInFlight.get(pty)
    if (waiting === undefined) attachesInFlight.set(pty, (waiting = new Set()))
    const request = trackSent(opened.request('attach', params, requestTimeoutMs).catch(asClosedRefusal('attach', id)))
    waiting.add(request)
    let reply: Record<string, unknown>
    try {
      reply = (await request) as Record<string, unknown>
      // Answered: the record is the app's now, whatever becomes of another attach of it.
      recordsOfAttaches.delete(pty)
    } catch (error) {
      // A record this app already had keeps what it said: a predecessor's PTY the successor never
      // held stays another host instance's (its absence there proves nothing). Nor is one forgotten
      // that another attach of the id still waits on (two restore paths, this one refused): that
      // one's reply and output would go to a record no longer in the table (its output dropped).
      // One that no attach was answered for is forgotten also when a drop cut the attach off (the
      // drop made it `unknown`): its caller was told it failed, yet the reconnect re-attached it —
      // its output and exit delivered, and the app's `dispose()` stopped the session.
      if ((pty.state === 'spawning' || pty.state === 'unknown') && recordsOfAttaches.has(pty)) {
        if (waiting.size === 1) records.forget(pty)
        // Kept for the other attach: the incarnation this one expected (the record was made with
        // it) is proven not the live one — a reconnect must not fence its re-attach to it.
        else if (seededIncarnation !== undefined && pty.incarnationId === seededIncarnation && isPtyHostError(error) && (error.code === 'pty_live_other_incarnation' || error.code === 'pty_absent')) {
          pty.incarnationId = undefined
        }
      }
      throw error
    } finally {
      waiting.delete(request)
      if (waiting.size === 0 && attachesInFlight.get(pty) === waiting) attachesInFlight.delete(pty)
    }
    const incarnationId = isPtyIncarnationId(reply.incarnationId) ? reply.incarnationId : undefined
    // Whether the record already follows this incarnation now: a concurrent attach of the same id
    // (two restore paths of a window) may have been answered while this one waited, and its replay
    // delivered; this one's replay must not go back over it.
    const followsNow = pty.state === 'live' && pty.incarnationId !== undefined && pty.incarnationId === incarnationId
    pty.incarnationId = incarnationId
    pty.hostInstanceId = opened.hostInstanceId
    pty.orphaned = false
    // A pause the app holds, on this connection too (idempotent on the host) — of the incarnation
    // it paused: another one under the id was never paused by this app.
    if (pty.appPaused) {
      if (knownIncarnationId === undefined || knownIncarnationId === incarnationId) opened.notify('pause', { ptyId: id })
      else pty.appPaused = false
    }
    const replayStart = typeof reply.replayFrom === 'number' ? reply.replayFrom : 0
    // Where the stream this app sees continues. Asked for no particular point, a re-attach to the
    // incarnation it already follows never goes back over output it delivered: the replay of an
    // earlier re-attach (the reconnect's own) or live output may have arrived since `lastSeq` was
    // read, and the replay of this one then overlaps it (its overlap is dropped on arrival).
    const continueFrom =
      attachOptions.replayFrom === undefined && ((knownLive && knownIncarnationId === incarnationId) || followsNow) ? Math.max(pty.lastSeq, replayStart) : replayStart
    pty.lastSeq = continueFrom
    if (pty.state !== 'exited') records.setState(pty, 'live')
    const result: PtySpawnResult = {
      id,
      pid: typeof reply.pid === 'number' ? reply.pid : null,
      isReattach: true,
      // Output delivered during the call (before this answer reaches the caller) that lies before
      // `continueFrom` — another attach's replay of this incarnation — is placed where it began.
      providerSequence: { value: raced.deliveredFrom === undefined ? continueFrom : Math.min(continueFrom, raced.deliveredFrom), generation: 'continued' },
    }
    if (incarnationId !== undefined) result.incarnationId = incarnationId
    if (typeof reply.cols === 'number') result.cols = reply.cols
    if (typeof reply.rows === 'number') result.rows = reply.rows
    return result
  }

  async function spawnFresh(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    // An open connection is used at once: a spawn's request is queued in the caller's turn.
    // Asked for while connecting, detached meanwhile: nothing was sent, nothing started.
    const opened = link.connection ?? (await link.ensureConnected(true).catch(asClosedRefusal('spawn')))
    if (detachPromise !== null) throw detachingError('spawn')
    // Tracked to its end, not only its request: a stop it makes (its commit hook threw) must go
    // out before a detach closes the connection.
    return trackSent(spawnOnConnection(opened, spawnOptions))
  }

  /** A fresh spawn's request on `opened`, and what its reply makes of it. */
  async function spawnOnConnection(opened: PtyHostConnection, spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    const { sessionId } = spawnOptions
    // A caller's id that is live here (running, starting, or ended on the host with its exit still
    // on the way) is refused, nothing sent, its PTY untouched — as the node-pty provider refuses it.
    // Before, the spawn took over the live PTY's record while the host answered: the PTY was
    // half-disconnected meanwhile (resize, pause, acks dropped), a drop or a timeout then stopped it
    // as an orphan, an overlapping attach replayed its output twice, and a refusal forgot it
    // (helper-100's and helper-101's reviews). (A record is live only on an open connection.)
    const held = sessionId === undefined ? undefined : ptys.get(sessionId)
    if (held !== undefined && isLive(held.state)) {
      throw new PtyHostError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(sessionId)}: a live PTY already has that id (or its exit is still being delivered)`, { ptyId: sessionId })
    }
    // Why the client mints the id: after a drop mid-spawn it still knows which session to stop.
    const id = sessionId ?? sessionIdPrefix + (sessionIdCount++).toString(36)
    const params = spawnRequestParams(id, spawnOptions)
    if (spawnFromApp) {
      const refusal = addAppEnvironment(params, spawnOptions, opened.hostInheritsAppEnvironment)
      if (refusal !== undefined) throw refusal
    }
    const pty = records.recordForSpawn(id, opened.hostInstanceId)
    records.setState(pty, 'spawning')
    pty.lastSeq = 0
    let reply: Record<string, unknown>
    try {
      reply = (await opened.request('spawn', params, requestTimeoutMs)) as Record<string, unknown>
    } catch (error) {
      // The host may have started it: stopped there when the reply could not be sent, and by
      // this provider once it is back (an orphan), so no session is left that nobody owns. Its
      // state is unknown (a dropped connection made it so already; a timeout does here).
      // Also when a `dispose()` or `detach()` closed the connection with the spawn in flight: its
      // refusal's code (`provider_disposed`, `provider_detached`) is kept, and still says the
      // process may exist — the spawn pipeline's rollback reads a spawn told nothing else as "not
      // started" (outcome `not_started`), a guess about a process the host may run.
      if (isPtyHostError(error) && (error.code === 'transport_lost' || error.code === 'provider_disposed' || error.code === 'provider_detached')) {
        pty.orphaned = true
        if (pty.state === 'spawning') records.setState(pty, 'unknown')
        // Timed out on a connection that stays open: no reconnect will come to stop it, so ask
        // now (the host's shutdown waits for a spawn still starting). Should this fail too, the
        // orphan is still stopped at the next reconnect. Its answer does not hold the app open.
        if (isRequestTimeout(error)) void link.stopOrphan(opened, pty, { holdsApp: false })
        // Said in the error: a caller told "not started" would be told a guess. A refusal of the
        // link closed under it names the method as every call's does.
        const told = link.isClosedRefusal(error) ? closedRefusal(error, 'spawn') : error
        throw new PtyHostError(told.code, told.message, { cause: error, ptyId: id, processMayExist: true })
      }
      records.forget(pty)
      throw error
    }
    const incarnationId = isPtyIncarnationId(reply.incarnationId) ? reply.incarnationId : undefined
    pty.incarnationId = incarnationId
    // The exit of a fast process may have arrived before the reply (state is mutated by events).
    const exitedEarly = (pty.state as ClientPtyState) === 'exited'
    if (!exitedEarly) {
      records.setState(pty, 'live')
    }
    const result: PtySpawnResult = {
      id,
      pid: typeof reply.pid === 'number' ? reply.pid : null,
      isReattach: false,
      providerSequence: { value: 0, generation: 'reset' },
    }
    if (incarnationId !== undefined) result.incarnationId = incarnationId
    if (typeof reply.hostReportsChildExitStatus === 'boolean') result.hostReportsChildExitStatus = reply.hostReportsChildExitStatus
    if (typeof reply.cols === 'number') result.cols = reply.cols
    if (typeof reply.rows === 'number') result.rows = reply.rows
    if (reply.exitedBeforeSpawnReply === true || exitedEarly) result.exitedBeforeSpawnReply = true
    try {
      spawnOptions.onPtySpawnCommitted?.()
    } catch (error) {
      // The caller never learns of this process: none may be left behind.
      await shutdown(id, { immediate: true }).catch(() => undefined)
      throw error
    }
    return result
  }

  /**
   * A refusal of the attach a spawn with a `sessionId` sends first, as the spawn's: a bad id names
   * `sessionId` (see asSessionIdRefusal), and a detach's or a dispose's refusal names `spawn`, the
   * method called, with no `ptyId` (as every refusal of a spawn) — it named `attach`, which the
   * caller never called.
   */
  function asSpawnRefusal(error: unknown): unknown {
    if (isPtyHostError(error) && error.code === 'provider_detached') return detachingError('spawn', undefined, error)
    if (isPtyHostError(error) && error.code === 'provider_disposed') return disposedError('spawn', undefined, error)
    return asSessionIdRefusal(error)
  }

  /** A known session id: attach to it when the host holds it live, else create it. */
  async function attachOrSpawn(sessionId: string, spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    try {
      return await attach(sessionId)
    } catch (error) {
      if (!(isPtyHostError(error) && error.code === 'pty_absent')) throw asSpawnRefusal(error)
    }
    // Other attaches of the id still waiting (another restore path of the window) keep its record
    // `spawning`, which a spawn reads as the id in use: their answers come first (a refusal forgets
    // the record, an acceptance makes the id truly live here).
    for (;;) {
      const held = ptys.get(sessionId)
      const others = held?.state === 'spawning' ? attachesInFlight.get(held) : undefined
      if (others === undefined) break
      await Promise.allSettled([...others])
    }
    // Looked at again after the attach's round trip: a dispose begun meanwhile has already taken
    // the table it stops, and a process started now would outlive it with nobody to stop it.
    if (disposePromise !== null) throw disposedError('spawn')
    return spawnFresh(spawnOptions)
  }

  // Not `async`: a fresh spawn answers with spawnFresh's own promise (no wrapping promise and its
  // turns per spawn); a refusal still arrives as a rejection.
  function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    if (disposePromise !== null) return Promise.reject(disposedError('spawn'))
    if (detachPromise !== null) return Promise.reject(detachingError('spawn'))
    if (!isOptionsObject(spawnOptions)) return Promise.reject(invalidPtyHostOption('options', 'an object', spawnOptions, 'argument'))
    const { sessionId } = spawnOptions
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) return Promise.reject(invalidPtyHostOption('sessionId', 'a non-empty string', sessionId))
    // An id the host's output frames cannot carry (see PTY_HOST_MAX_SESSION_ID_BYTES): refused as a
    // spawn option, nothing sent (the pipeline's `invalid_spawn_options`, nothing started).
    const idProblem = sessionId === undefined ? undefined : sessionIdProblem(sessionId)
    if (idProblem !== undefined) {
      return Promise.reject(new PtyHostError('invalid_spawn_option', `Expected the \`sessionId\` option to be ${idProblem}, got ${describeValue(sessionId)}`, { option: 'sessionId', value: sessionId }))
    }
    // What decides between attaching and starting a process: `attachOnly: 'yes'` started one.
    for (const option of ['attachOnly', 'isNewSession'] as const) {
      const value: unknown = spawnOptions[option]
      if (value !== undefined && typeof value !== 'boolean') {
        return Promise.reject(new PtyHostError('invalid_spawn_option', `Expected the \`${option}\` option to be a boolean, got ${describeValue(value)}`, { option, value }))
      }
    }
    if (spawnOptions.attachOnly === true) {
      const misspelt = spawnOptionsRejection(misspeltSpawnOptionRefusal, spawnOptions)
      if (misspelt !== undefined) return misspelt
      if (sessionId === undefined) return Promise.reject(new PtyHostError('pty_absent', 'Cannot attach: no session id given'))
      const attachOptions: { expectedIncarnationId?: PtyIncarnationId } = {}
      if (spawnOptions.expectedIncarnationId !== undefined) attachOptions.expectedIncarnationId = spawnOptions.expectedIncarnationId
      return attach(sessionId, attachOptions).catch((error: unknown) => {
        throw asSpawnRefusal(error)
      })
    }
    // Before connecting (or starting a host), and before the attach a known session id sends first.
    const refusal = spawnOptionsRejection(spawnOptionsRefusal, spawnOptions)
    if (refusal !== undefined) return refusal
    if (sessionId !== undefined && spawnOptions.isNewSession !== true) return attachOrSpawn(sessionId, spawnOptions)
    return spawnFresh(spawnOptions)
  }

  /**
   * The shutdowns sent to the host and not answered yet, by PTY id. A PTY's exit (its leader's) may
   * come while its stop still runs on the host — a member of its session that ignores the hang-up
   * is still being stopped —: a later `shutdown` of it still goes to the host (joining that stop),
   * and `dispose()` stops it too (immediately) and waits for the host's answer before it closes
   * the connection. Before, `dispose()` left such a PTY out (it had
   * exited) and cut the stop off: the stop was refused `provider_disposed` while a process of it
   * still ran, and a controller's `stopAndWait` of it, reading that refusal with the exit reported
   * as the disposal's stop done, answered `true` while the member lived on.
   */
  const stopsInFlight = new Map<string, number>()

  function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    return stopOnHost(id, shutdownOptions)
  }

  /**
   * {@link shutdown}, and the dispose's stops: an ended PTY whose stop the host has not answered
   * yet is stopped too (the stop joined, and escalated when `immediate`), not skipped.
   */
  async function stopOnHost(id: string, shutdownOptions: PtyShutdownOptions): Promise<void> {
    // Checked here, as every provider does (refused `invalid_option` naming the option, even for an unknown or
    // ended PTY): the host's own refusal would cross without `option`, after the stop was noted.
    assertPtyId(id)
    asPtyHostRefusal(() => assertShutdownOptions(shutdownOptions))
    const budget = wireBudget(shutdownOptions)
    const pty = ptys.get(id)
    // An ended PTY needs no stop — unless the host could not complete the last one (see
    // `stopUnfinished`), or one is still running there (see `stopsInFlight`): the leader's exit
    // does not prove that stop done, only the host's answer does. Before, any caller but the
    // dispose got `undefined` at once here: a controller's forced step taken while its graceful
    // stop still ran on the host (a `setsid` child the host could not look for, out of
    // descriptors) counted as done, and `stopAndWait` answered `true` with the child alive.
    if (pty?.state === 'exited' && !pty.stopUnfinished && !stopsInFlight.has(id)) return
    // Detached: nothing is sent, the session keeps running — refused naming the PTY.
    refuseIfDetached('shutdown', id)
    if (pty !== undefined) pty.stopAsked = true
    // Closed by a detach or a dispose while this waited for the connection.
    const opened = await link.ensureConnected(false).catch(asClosedRefusal('shutdown', id))
    // A detach closed the connection while this waited its turn (asked for in the same turn just
    // before it): nothing is sent and the session keeps running — said so, not `transport_lost`.
    refuseIfDetached('shutdown', id)
    // An ended PTY whose stop was left unfinished by a host that died: the host connected now (its
    // successor) never ran that stop, nor held the session — the dead host had seen the leader's
    // exit —, so its answer ("nothing of that id here") would prove nothing of what the stop left
    // running (a job that ignores the hang-up outlives its host). Refused, nothing sent. Before
    // (until 8 Dec) the successor's answer resolved the stop, and a controller's `stopAndWait`,
    // its probe answering `false` for the ended PTY, said `true` while the job lived.
    if (pty?.state === 'exited' && pty.stopUnfinished && pty.hostInstanceId !== undefined && pty.hostInstanceId !== opened.hostInstanceId) {
      throw new PtyHostError(
        'host_unavailable',
        "Cannot call `shutdown`: the pty host that ran the PTY's unfinished stop died, and the host that took its place never held the PTY (what that stop left running cannot be stopped or looked for through it)",
        { ptyId: id },
      )
    }
    const sentBudget = budget()
    const params: Record<string, unknown> = { ptyId: id, ...sentBudget }
    for (const key of ['immediate', 'expectedIncarnationId', 'keepHistory'] as const) {
      if (shutdownOptions[key] !== undefined) params[key] = shutdownOptions[key]
    }
    // A stop of a PTY this app holds is fenced to that incarnation even when the caller names none
    // (the controller always does): a process spawned since under the same id — another app's —
    // is never stopped by it.
    if (params['expectedIncarnationId'] === undefined && pty?.incarnationId !== undefined) params['expectedIncarnationId'] = pty.incarnationId
    // Bounded, as every provider call: a host stuck on the stop (alive, never answering) held the
    // caller for ever — and a spawn whose commit hook threw, which waits for its stop. The host
    // answers within the stop's budget (its own default when none is sent), after a spawn of the id
    // still starting; the request timeout on top covers that and the reply's way back.
    // (A host started with a longer default says so in its welcome.)
    const answerWithinMs = (sentBudget.timeoutMs ?? opened.hostShutdownDeadlineMs ?? NODE_PTY_SHUTDOWN_DEADLINE_MS) + requestTimeoutMs
    const stopping = opened.request('shutdown', params, answerWithinMs).then(
      (answer) => {
        if (pty !== undefined) pty.stopUnfinished = false
        return answer
      },
      (error: unknown) => {
        if (pty !== undefined && stopLeftUnfinished(error)) pty.stopUnfinished = true
        // Cut off by a detach or a dispose before the host answered: refused naming the PTY, as a
        // stop asked after it. Any other failure names the method and the PTY too (`namingPty`):
        // a stop in flight when the host died rejected `transport_lost` with no `ptyId`.
        return asClosedRefusal('shutdown', id)(error)
      },
    )
    stopsInFlight.set(id, (stopsInFlight.get(id) ?? 0) + 1)
    const answered = (): void => {
      const left = (stopsInFlight.get(id) ?? 1) - 1
      if (left === 0) stopsInFlight.delete(id)
      else stopsInFlight.set(id, left)
    }
    stopping.then(answered, answered)
    // Asked while a detach waits (a caller's rollback of a spawn it just got): waited for too.
    await (detachPromise !== null ? trackSent(stopping) : stopping)
    // A dead host's PTY, stopped by the host that took its place (from its journal): its shutdown
    // resolved once the process was gone, which a probe now proves and reports as the PTY's end.
    if (pty !== undefined && ofAnotherHostInstance(pty) && link.connection === opened) await link.probePredecessorPty(opened, pty)
  }

  /**
   * Whether a failed `shutdown` request leaves the PTY's stop unfinished (see
   * {@link ClientPtyRecord.stopUnfinished}): the host said it could not complete it
   * (`shutdown_timeout`, `shutdown_failed`), or the app never learnt how it ended — the request
   * timed out, the connection dropped or the host died before the answer, or a `dispose()` or
   * `detach()` cut it off. The host's stop may still be running then, or have given up with
   * processes of the session alive. Before (until 8 Dec), only the host's two answers marked it: a
   * stop cut off by the request timeout or a drop left no mark, and once nothing was in flight a
   * later `shutdown` of the ended PTY resolved at once — a controller's `stopAndWait` then found
   * the PTY unlisted (the host lists no ended session) and answered `true` while a `setsid` child
   * that ignores the hang-up lived on under the host. A refusal the host answered otherwise (a
   * malformed option, a deadline long past) stopped nothing and leaves the mark as it was.
   */
  function stopLeftUnfinished(error: unknown): boolean {
    if (!isPtyHostError(error)) return false
    if (error.hostCode !== undefined) return error.hostCode === 'shutdown_timeout' || error.hostCode === 'shutdown_failed'
    return error.code === 'transport_lost' || link.isClosedRefusal(error)
  }

  /**
   * A write: refused at once (synchronously) when it cannot be handed to a host — the PTY exited,
   * or no connection is open (the host died, or the provider is reconnecting) — else the host's
   * settlement. Why synchronous refusals: a caller's boolean `write` reads a pending settlement as
   * "handed over", so a refusal known before any I/O must not come back as a promise.
   */
  function write(id: string, data: string): WriteSettlement | Promise<WriteSettlement> {
    assertWriteData(data)
    assertPtyId(id)
    const target = writeTarget(id)
    if (!('connection' in target)) return target
    const { connection, incarnationId } = target
    const pieces = textPieces(data, writePieceCharsFor(connection.hostMaxFrameBytes, id.length))
    if (pieces.length === 1) return settleHostWrite(connection, 'write', id, { data }, incarnationId)
    // Every piece is requested now, in order, so no later write can come between two of them; each
    // is serialized as it is sent, a few a turn (a 50 MB paste in one turn blocked the app 216 ms).
    return Promise.all(pieces.map((piece) => settleHostWrite(connection, 'write', id, { data: piece }, incarnationId, true))).then(combinePieceSettlements)
  }

  /**
   * A write of raw bytes: as {@link write}, through the host's `writeBytes` (the bytes as base64,
   * encoded before this returns: the caller may reuse its buffer). A host that does not list
   * `writeBytes` in its welcome (one of an older ptykit, still running the users' sessions) is
   * sent nothing: refused `provider_cannot_write_bytes` at once — its `write` would take no bytes,
   * and a method it does not know would make it drop the connection. Its sessions still take text.
   */
  function writeBytes(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement> {
    assertWriteBytes(bytes)
    assertPtyId(id)
    const target = writeTarget(id)
    if (!('connection' in target)) return target
    const { connection, incarnationId } = target
    if (!connection.answers('writeBytes')) return refusedWrite('provider_cannot_write_bytes')
    const pieceBytes = writePieceBytesFor(connection.hostMaxFrameBytes, id.length)
    const base64 = (piece: Uint8Array): string => Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64')
    if (bytes.length <= pieceBytes) return settleHostWrite(connection, 'writeBytes', id, { bytes: base64(bytes) }, incarnationId)
    // A long write: its pieces encoded as they are sent, a few a turn (not all on this one); from a
    // copy of the caller's bytes, which it may reuse once this returns.
    const pieces = bytePieces(Buffer.from(bytes), pieceBytes)
    return Promise.all(pieces.map((piece) => settleHostWrite(connection, 'writeBytes', id, { bytes: () => base64(piece) }, incarnationId))).then(combinePieceSettlements)
  }

  /**
   * Where a write to `id` goes: the open connection and the incarnation to fence it by — or the
   * refusal known before any I/O (synchronous: a caller's boolean `write` reads a pending
   * settlement as "handed over").
   */
  function writeTarget(id: string): WriteSettlement | { connection: PtyHostConnection; incarnationId: PtyIncarnationId | undefined } {
    const pty = ptys.get(id)
    if (pty?.state === 'exited') return refusedWrite('pty_exited')
    // A PTY whose contact was lost (a drop not yet recovered, or its host died and this app reached
    // a successor) is not written to: the id may name another process by now — another app's,
    // spawned under the same id (helper-115's audit: the bytes went into it, `accepted`).
    if (pty !== undefined && pty.state === 'unknown') return refusedWrite('provider_refused_write')
    const connection = link.connection
    if (link.state !== 'open' || connection === null) return refusedWrite('provider_refused_write')
    // Fenced on the host too: it refuses the write when the id names another incarnation now.
    return { connection, incarnationId: pty?.incarnationId }
  }

  /**
   * Send one write request and settle it from the host's answer. Not an `async` function: its frame
   * would keep `payload` — the written text or bytes — until the answer, which for a write the host
   * holds (a program that does not read) comes only once their fate is known: a second copy of all
   * the input held for the PTY, in the app, beside the host's.
   */
  function settleHostWrite(
    connection: PtyHostConnection,
    method: 'write' | 'writeBytes',
    id: string,
    payload: { data: string } | { bytes: string | (() => string) },
    expectedIncarnationId: PtyIncarnationId | undefined,
    serializeWhenSent = false,
  ): Promise<WriteSettlement> {
    let answer: Promise<unknown>
    try {
      const params: Record<string, unknown> = { ptyId: id, ...payload }
      // A piece of a long write of bytes: its base64 made when it is sent (see writeBytes).
      const later = 'bytes' in payload && typeof payload.bytes === 'function' ? payload.bytes : undefined
      if (later !== undefined) {
        serializeWhenSent = true
        Object.defineProperty(params, 'bytes', { enumerable: true, get: later })
      }
      if (expectedIncarnationId !== undefined) params['expectedIncarnationId'] = expectedIncarnationId
      answer = connection.request(method, params, requestTimeoutMs, { serializeWhenSent })
    } catch (error) {
      answer = Promise.reject(error)
    }
    return answer.then(settlementOfHostAnswer, settlementOfFailedHostWrite)
  }

  /**
   * Ask the host `method` for the caller's `call` (the public method, which a refusal names); `null`
   * when it cannot be asked or does not answer — but a refusal `passOn` says is an answer rejects
   * with it (the PTY's id set): `history_released` for a snapshot.
   */
  async function ask<T>(
    call: 'getCwd' | 'getForegroundProcess' | 'hasChildProcesses' | 'getBufferSnapshot',
    method: 'cwd' | 'foreground' | 'children' | 'snapshot',
    params: Record<string, unknown>,
    passOn?: (error: unknown) => boolean,
    hostCanAnswer: (connection: PtyHostConnection) => boolean = () => true,
  ): Promise<T | null> {
    const connection = link.connection
    if (link.state !== 'open' || connection === null || !hostCanAnswer(connection)) return null
    try {
      return (await connection.request(method, params, requestTimeoutMs)) as T | null
    } catch (error) {
      // In flight when `dispose()` closed the connection: refused as a call after it is (naming `call`).
      if (link.isClosedRefusal(error) && error.code === 'provider_disposed') throw closedRefusal(error, call, params.ptyId)
      if (passOn?.(error) === true) {
        const refusal = error as PtyHostError
        throw new PtyHostError(refusal.code, refusal.message, { ptyId: params.ptyId as string, hostCode: refusal.hostCode, cause: refusal })
      }
      return null
    }
  }

  /**
   * Whether the PTY's process is alive — about `asked.incarnationId` when given, else about the
   * incarnation this app holds under the id (as a stop is fenced), else about the id. The id may
   * hold another app's process by now (one spawned under the same id after this app's ended while
   * its connection was down): the host is asked about the incarnation (`expectedIncarnationId`),
   * and a host that does not say it answers so (`probeFencesIncarnation`, an older ptykit) has its
   * `true` checked against its listing's row of the id.
   */
  async function probeLiveness(id: string, asked: PtyLivenessProbeOptions = {}): Promise<boolean | null> {
    assertPtyId(id)
    const record = ptys.get(id)
    const incarnationId = probedIncarnation(asked) ?? record?.incarnationId
    // This app's record speaks for the incarnation it holds (not for a later one under the id).
    const ofRecord = record !== undefined && (incarnationId === undefined || record.incarnationId === incarnationId)
    if (ofRecord && record.state === 'exited') return false
    const connection = link.connection
    if (link.state !== 'open' || connection === null) return null
    // A dead predecessor's PTY, asked of the host that took its place: `null` when that host cannot
    // tell (it read no journal of its predecessor, the probe timed out or the connection dropped:
    // the connected host never held the process, so nobody here can say) — but cut off by
    // `dispose()`, refused as a call after it is, as the probe of any other PTY is. Until 8 Dec it
    // answered `null` then, where the same probe of a PTY of the connected host rejected.
    if (ofRecord && ofAnotherHostInstance(record)) {
      return link.probePredecessorPty(connection, record, isDisposeCut).catch(asClosedRefusal('probeLiveness', id))
    }
    const params: Record<string, unknown> = { ptyId: id }
    if (incarnationId !== undefined) params['expectedIncarnationId'] = incarnationId
    try {
      const answer: unknown = await connection.request('probe', params, requestTimeoutMs)
      if (answer !== true || incarnationId === undefined || connection.hostFencesProbe) return typeof answer === 'boolean' ? answer : null
      // An older host answered by id: `true` only when the process it lists under the id is the one asked about.
      const rows: unknown = await connection.request('list', { membershipOnly: true }, requestTimeoutMs)
      const row = Array.isArray(rows) ? (rows as { id?: unknown; incarnationId?: unknown }[]).find((candidate) => candidate?.id === id) : undefined
      return row?.incarnationId === incarnationId ? true : null
    } catch (error) {
      // In flight when `dispose()` closed the connection: refused as a call after it is.
      if (isDisposeCut(error)) throw closedRefusal(error, 'probeLiveness', id)
      return null
    }
  }

  /** Whether `error` is the link's refusal of a request `dispose()` cut off (sent, not answered when it closed the connection). */
  function isDisposeCut(error: unknown): error is PtyHostError & { code: 'provider_disposed' } {
    return link.isClosedRefusal(error) && error.code === 'provider_disposed'
  }

  /**
   * Whether `record` is a PTY of another host instance than the connected one (one that died;
   * this app reconnected to its successor): the connected host never held its process, so its
   * "no such session" proves nothing — the process may outlive its host (docs/pty-host.md: such
   * PTYs stay unverifiable).
   */
  function ofAnotherHostInstance(record: ClientPtyRecord): boolean {
    return record.state !== 'exited' && record.hostInstanceId !== undefined && link.connection !== null && record.hostInstanceId !== link.connection.hostInstanceId
  }

  /** The open connection when `id` is live on it, else `null`. */
  function liveConnection(id: string): PtyHostConnection | null {
    return link.state === 'open' && ptys.get(id)?.state === 'live' ? link.connection : null
  }

  const provider: PtyHostProvider = {
    name: options.name ?? 'pty-host',
    // The host lists every session it holds, so a missing row proves absence — except of a PTY a
    // dead predecessor held, which no listing of the connected host can speak for (nor any
    // listing of a host that took over a dead host's lock).
    get authoritativeListings(): boolean {
      // A host that took over a dead host's lock cannot list what that host's sessions left
      // running — an app that restarted holds no record of them, and would read absence as proof.
      if (link.connection?.hostSucceedsDeadHost === true) return false
      for (const record of ptys.values()) {
        // Disconnected, no PTY the app holds is known to be one the next host it reaches holds.
        if (link.connection === null ? record.state !== 'exited' : ofAnotherHostInstance(record)) return false
      }
      return true
    },
    spawn,
    attach,
    write,
    writeBytes,
    resize(id: string, cols: number, rows: number): boolean {
      assertPtyId(id)
      for (const [option, value] of [['cols', cols], ['rows', rows]] as const) {
        // The limit every provider applies: past it the host's node-pty refused the notify, unheard, and this said `true`.
        if (!isPtyDimension(value)) throw invalidPtyHostOption(option, `an integer from 1 to ${MAX_PTY_DIMENSION}`, value, 'argument')
      }
      const connection = liveConnection(id)
      assertScreenWithinLimit({ cols, rows, scrollbackRows: connection?.hostScrollbackRows ?? ownScrollbackRows })
      connection?.notify('resize', { ptyId: id, cols, rows })
      return connection !== null
    },
    shutdown,
    pauseProducer(id: string): void {
      assertPtyId(id)
      // Kept, so a reconnect's re-attach asks for it again (the host drops a closed connection's pauses).
      const record = ptys.get(id)
      if (record !== undefined && record.state !== 'exited') record.appPaused = true
      liveConnection(id)?.notify('pause', { ptyId: id })
    },
    resumeProducer(id: string): void {
      assertPtyId(id)
      const record = ptys.get(id)
      if (record !== undefined) record.appPaused = false
      liveConnection(id)?.notify('resume', { ptyId: id })
    },
    acknowledgeData(id: string, chars: number): void {
      // Refused, as every provider does: a count of -1, NaN, 1.5 or '5' was dropped in silence,
      // and the PTY stayed paused on output its consumer had processed.
      assertPtyId(id)
      asPtyHostRefusal(() => assertAcknowledgedChars(chars))
      // The host pauses the PTY itself on unacknowledged output (no round trip per pause).
      if (chars > 0) liveConnection(id)?.notify('ack', { ptyId: id, chars })
    },
    async listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
      if (!isOptionsObject(listOptions)) throw invalidPtyHostOption('options', 'an object', listOptions, 'argument')
      // An option nobody reads (`membershipOnly: 'yes'`, a misspelt one) is refused, as the controller refuses it.
      asPtyHostRefusal(() => assertListProcessesOptions(listOptions))
      // Checked here, as the node-pty provider does (a TypeError naming the option): the host would
      // drop a `deadlineMs` that is no number in silence, and its own refusal crosses without `option`.
      const budget = wireBudget(listOptions)
      refuseIfDetached('listProcesses')
      // A host that cannot be reached rejects: never an empty (and falsely authoritative) list.
      // Cut off by a detach or a dispose (connecting, or waiting for the answer): refused naming this method.
      const refused = asClosedRefusal('listProcesses')
      const opened = await link.ensureConnected(false).catch(refused)
      const params: Record<string, unknown> = { ...budget() }
      // A host of ptykit 0.1.0 ignores the parameter (it is a hint) and reads every row in full.
      if (listOptions.membershipOnly === true) params.membershipOnly = true
      const rows: unknown = await opened.request('list', params, requestTimeoutMs).catch(refused)
      // Never an empty list for an answer that is not one: an authoritative "nothing runs" would
      // prove every PTY gone. Rows are checked by whoever reads them (`malformedListing`).
      if (!Array.isArray(rows)) {
        throw new PtyHostError('host_error', `The pty host answered \`list\` with something that is not a list of processes: ${describeValue(rows)}`)
      }
      return rows.map((row: PtyProcessInfo) => ({ ...row, hostId }))
    },
    async listExits(): Promise<PtyExitEvent[]> {
      refuseIfDetached('listExits')
      const refused = asClosedRefusal('listExits')
      const opened = await link.ensureConnected(false).catch(refused)
      if (!opened.answers('exits')) {
        // Why not just ask: a host that does not know a method drops the connection that calls it.
        throw new PtyHostError('protocol_mismatch', `The running pty host is of an older ptykit, which does not list exits; to use listExits, ${stopMismatchedHostAdvice(paths.socketPath)}`)
      }
      const messages = await opened.request('exits', {}, requestTimeoutMs).catch(refused)
      // Never an empty list for an answer that is not one: "nothing ended" would be a false verdict.
      if (!Array.isArray(messages) || !messages.every(isExitMessage)) {
        throw new PtyHostError('host_error', `The pty host answered \`exits\` with something that is not a list of exit messages: ${describeValue(messages)}`)
      }
      return messages.map((message) => exitEventOfMessage(message))
    },
    async forgetExits(exits: readonly PtyHostExitToForget[]): Promise<number> {
      const named = forgetExitsArgument(exits)
      // Refused after `detach()` as `listExits` is, an empty list too (before: 0, where every
      // other call answering with a promise rejects `provider_detached`).
      refuseIfDetached('forgetExits')
      link.assertOpen()
      if (named.length === 0) return 0
      const refused = asClosedRefusal('forgetExits')
      const opened = await link.ensureConnected(false).catch(refused)
      if (!opened.answers('forgetExits')) {
        // Why not just ask: a host that does not know a method drops the connection that calls it.
        throw new PtyHostError('protocol_mismatch', `The running pty host is of an older ptykit, which does not forget exits; to use forgetExits, ${stopMismatchedHostAdvice(paths.socketPath)}`)
      }
      const forgotten = await opened.request('forgetExits', { exits: named }, requestTimeoutMs).catch(refused)
      if (typeof forgotten !== 'number' || !Number.isSafeInteger(forgotten) || forgotten < 0) {
        throw new PtyHostError('host_error', `The pty host answered \`forgetExits\` with something that is not a count: ${describeValue(forgotten)}`)
      }
      return forgotten
    },
    hasPty(id: string): boolean | null {
      assertPtyId(id)
      if (ptys.get(id)?.state === 'exited') return false
      return liveConnection(id) !== null ? true : null
    },
    probeLiveness,
    // A bad id or option rejects, as with every provider: an id of `5` was answered `null`
    // ("unreadable"), and an option nobody reads was ignored.
    async getCwd(id: string, cwdOptions?: PtyCwdOptions): Promise<string | null> {
      assertPtyId(id)
      asPtyHostRefusal(() => assertCwdOptions(cwdOptions))
      if (cwdOptions?.of !== 'leader') return ask<string>('getCwd', 'cwd', { ptyId: id })
      // The leader's directory: `of` crosses the wire. A host of an older ptykit ignores it and
      // would answer the foreground process's — a wrong directory, silently —, so it is not asked:
      // the answer is `null` ("cannot be read"), as for any directory this provider cannot read.
      return ask<string>('getCwd', 'cwd', { ptyId: id, of: 'leader' }, undefined, (connection) => connection.hostReadsCwdOf)
    },
    async getForegroundProcess(id: string): Promise<string | null> {
      assertPtyId(id)
      return ask<string>('getForegroundProcess', 'foreground', { ptyId: id })
    },
    async hasChildProcesses(id: string): Promise<boolean | null> {
      assertPtyId(id)
      return ask<boolean>('hasChildProcesses', 'children', { ptyId: id })
    },
    async clearBuffer(id: string): Promise<void> {
      assertPtyId(id)
      // Once a detach began: refused naming the PTY, nothing sent — as a stop is after it. It acts
      // on the host, which keeps the session's screen for the next app: a clear that resolved (as
      // it did until 7 Dec) said the screen was cleared while the host still held it.
      if (detachPromise !== null) throw detachingError('clearBuffer', id)
      // A PTY whose contact was lost (a drop, its host dead): connected first, as a stop is (no host
      // is started) — the reconnect re-attaches it when its host lives, and the clear goes out. Its
      // host gone (none answers), refused as that stop is: `host_unavailable`, naming the method
      // and the PTY. Before, it resolved with nothing sent: "cleared", while the host kept the
      // screen for the next app (a brief drop), or nobody could clear it (a dead host).
      if (ptys.get(id)?.state === 'unknown' && link.connection === null) {
        await link.ensureConnected(false).catch(asClosedRefusal('clearBuffer', id))
        if (detachPromise !== null) throw detachingError('clearBuffer', id)
      }
      const record = ptys.get(id)
      // Still not followed (re-attached) on the connection: nothing is sent — the id may name
      // another process there by now (see `writeTarget`), whose screen is not this PTY's.
      if (record?.state === 'unknown') {
        const gone = ofAnotherHostInstance(record)
        throw new PtyHostError(
          gone ? 'host_unavailable' : 'transport_lost',
          gone
            ? 'Cannot call `clearBuffer`: the pty host that held the PTY\'s screen died (the connected host took its place and holds no screen of it)'
            : 'Cannot call `clearBuffer`: the connection to the pty host dropped, and the PTY is not re-attached yet',
          { ptyId: id },
        )
      }
      // In flight when `dispose()` closed the connection: refused as a call after it is (as a probe
      // or a query is), and when `detach()` did, refused as a clear after it is (the host may not
      // have cleared the screen). Any other failure (a drop, a timeout: the host may not have
      // cleared it) rejects too, naming the method and the PTY — until 8 Dec it resolved, "cleared".
      await liveConnection(id)?.request('clear', { ptyId: id }, requestTimeoutMs).catch(asClosedRefusal('clearBuffer', id))
    },
    async getBufferSnapshot(id: string, snapshotOptions: { scrollbackRows?: number | undefined } = {}): Promise<PtyHostBufferSnapshot | null> {
      assertPtyId(id)
      if (!isOptionsObject(snapshotOptions)) throw invalidPtyHostOption('options', 'an object', snapshotOptions, 'argument')
      // Checked here: the host's refusal (of -1, '5') came back as `null`, "no session under the
      // id", and a NaN crossed as JSON's `null`, read as "the host's default".
      assertIntegerOption('scrollbackRows', snapshotOptions.scrollbackRows, 0)
      const params: Record<string, unknown> = { ptyId: id }
      if (snapshotOptions.scrollbackRows !== undefined) params.scrollbackRows = snapshotOptions.scrollbackRows
      const snapshot = await ask<PtyHostBufferSnapshot>('getBufferSnapshot', 'snapshot', params, (error) => isPtyHostError(error) && error.code === 'history_released')
      if (snapshot === null || typeof snapshot.data !== 'string' || typeof snapshot.seq !== 'number') return null
      if (snapshot.incarnationId !== undefined && typeof snapshot.incarnationId !== 'string') return null
      return snapshot
    },
    onData: (listener) => records.data.add(listener),
    onExit: (listener) => records.exit.add(listener),
    onOutputLoss: (listener) => records.loss.add(listener),
    get connected() {
      return link.connection !== null
    },
    detach(): Promise<void> {
      if (detachPromise !== null) return detachPromise
      // A dispose begun stops the app's sessions ("nothing may outlive the dispose"): a detach
      // called meanwhile must not close the connection under its stops.
      if (disposePromise !== null) return disposePromise
      if (link.state !== 'open') return Promise.resolve()
      // Nothing sent is pending: closed in the caller's turn, as before any spawn was waited for.
      if (sessionRequestsSent.size === 0) {
        link.close('detached')
        detachPromise = Promise.resolve()
        return detachPromise
      }
      // New spawns and attaches are refused from now on; those already sent finish first, so a
      // session they made is the app's and stays running. Then a turn more, until nothing is
      // pending: what a caller did on an answer (a stop of a spawn it rolls back) goes out too.
      // Bounded by the request timeout, and a little more: the requests' own timeouts, armed when
      // they were sent (before this), must fire first — a spawn that times out sends its orphan's
      // stop, which goes out before the close — and a request's timer may fire a loop turn late
      // (it never expires early: see RequestDeadlines). Then the connection closes (which settles
      // what is left).
      const sentSettled = async (): Promise<void> => {
        while (sessionRequestsSent.size > 0) {
          await Promise.allSettled([...sessionRequestsSent])
          await new Promise<void>((resolve) => setImmediate(resolve))
        }
      }
      detachPromise = settleWithin(sentSettled(), requestTimeoutMs + DETACH_AFTER_REQUEST_TIMEOUT_MS, undefined).then(() => {
        if (link.state === 'open') link.close('detached')
      })
      return detachPromise
    },
    dispose(): Promise<void> {
      if (disposePromise !== null) return disposePromise
      disposePromise = (async () => {
        // A detach begun keeps the app's sessions running: the dispose after it stops none (as
        // after a detach that ended), and does not race its close with stops.
        if (detachPromise !== null) await detachPromise
        let connection: PtyHostConnection | null = null
        if (link.state === 'open') {
          try {
            // A brief drop (the host alive, this app between two connections) must not leave the
            // app's sessions running: connect (no new host is started) and stop them.
            connection = await link.ensureConnected(false)
          } catch {
            // No host to reach: its sessions died with it, and no other host ever held them.
          }
        }
        if (connection !== null) {
          const hostInstanceId = connection.hostInstanceId
          // An orphan of a timed-out spawn too: the host may run it, and this app started it; a
          // session of this host whose state the drop left unknown; and one of a host that died,
          // when this host read its journal: it stops such a process as its own (before, the
          // app's sessions that outlived their host — a shell that ignores the hang-up — kept
          // running after its dispose, though the host it was connected to could stop them).
          const successorOf = connection.hostReadsPredecessorJournal
          // And a PTY whose exit came while a stop of it still runs on the host (see `stopsInFlight`),
          // or whose last stop was left unfinished (see `stopUnfinished`: the host gave up on it, or
          // this app never heard its end) — its stop is joined or run again by the host, so a job
          // that ignores the hang-up does not outlive the dispose. Until 8 Dec such an ended PTY was
          // skipped: the dispose resolved while the job still ran under the host.
          const owned = [...ptys.values()].filter(
            (record) =>
              isLive(record.state) ||
              record.orphaned ||
              stopsInFlight.has(record.id) ||
              record.stopUnfinished ||
              (record.state === 'unknown' && (record.hostInstanceId === hostInstanceId || (successorOf && record.hostInstanceId !== undefined))),
          )
          // Stop the sessions this app owns; their exits cross the wire before each reply.
          await Promise.allSettled(owned.map((record) => stopOnHost(record.id, { immediate: true })))
        }
        link.close('disposed')
        records.data.clear()
        records.exit.clear()
        records.loss.clear()
        disposed = true
      })()
      return disposePromise
    },
    [Symbol.asyncDispose]: () => provider.dispose(),
  }
  // The rule of `PtyProvider.dispose`: once it resolved, every call but `dispose`, `detach` (which
  // answers with the dispose) and the `on*` subscriptions is refused `provider_disposed`, naming the
  // method. Before, a write was refused `provider_refused_write`, `hasPty` and a probe answered
  // `false` or `null`, `getCwd` `null` and a shutdown of an ended PTY resolved, while a listing
  // rejected: a disposed provider no longer knows what runs (the host's sessions outlive it).
  refuseCallsAfterDispose(
    provider,
    () => disposed,
    (method, ptyId) => disposedError(method, ptyId),
  )
  return provider
}

/**
 * The exits `forgetExits` was given, as the request names them (`{ ptyId, incarnationId? }`), or
 * throws `invalid_option` naming the first malformed part (`exits`, `exits[2].id`…) and its value.
 */
function forgetExitsArgument(exits: unknown): { ptyId: string; incarnationId?: string }[] {
  if (!Array.isArray(exits)) throw invalidPtyHostOption('exits', 'an array of exits (as listExits() gives them)', exits)
  if (exits.length > PTY_HOST_MAX_FORGET_EXITS) throw invalidPtyHostOption('exits', `an array of at most ${PTY_HOST_MAX_FORGET_EXITS} exits`, `an array of ${exits.length}`)
  return exits.map((exit: unknown, index) => {
    if (exit === null || typeof exit !== 'object' || Array.isArray(exit)) throw invalidPtyHostOption(`exits[${index}]`, 'an exit (an object with an `id`)', exit)
    const { id, incarnationId } = exit as Record<string, unknown>
    if (!isPtyIdArgument(id)) throw invalidPtyHostOption(`exits[${index}].id`, 'a non-empty string', id)
    if (incarnationId !== undefined && !isPtyIncarnationId(incarnationId)) throw invalidPtyHostOption(`exits[${index}].incarnationId`, 'an incarnation id, or absent', incarnationId)
    return incarnationId === undefined ? { ptyId: id } : { ptyId: id, incarnationId }
  })
}

/**
 * Refuse a PTY id that is no non-empty string (`invalid_option` naming `ptyId`), in every method
 * that takes one, as every provider does: the host refused a write's request, and the write
 * settled `unverifiable('transport_lost', true)` — "maybe written" — for bytes nothing wrote; a
 * liveness probe, `getCwd`, `getForegroundProcess` and `hasChildProcesses` answered `null`
 * ("unknown"), where node-pty and the fake answered about no PTY either.
 */
function assertPtyId(id: unknown): void {
  if (!isPtyIdArgument(id)) throw invalidPtyHostOption('ptyId', 'a non-empty string', id, 'argument')
}

/** Run a shared argument check (`ptykit/contracts`), its refusal thrown as this provider's: a {@link PtyHostOptionError} (a `TypeError`), the same message, option and value. */
function asPtyHostRefusal(check: () => void): void {
  try {
    check()
  } catch (error) {
    const refusal = error as { message: string; option?: string; value?: unknown }
    throw new PtyHostOptionError(refusal.message, refusal.option ?? 'options', refusal.value)
  }
}

/**
 * `error`, a failure of `method` about the PTY `ptyId`, as one that names them — as every refusal
 * of such a call does (a dispose's or a detach's: "Cannot call `shutdown`: …", `ptyId` set): the
 * same code, `hostCode` and `processMayExist`, the message saying which call failed, the error
 * itself its `cause`. Before, a stop of a PTY whose host was SIGKILLed rejected `host_unavailable`
 * ("No pty host answers on …") with no `ptyId`: a host that stopped 100 PTYs could not tell which
 * refusal was whose. An error that names a PTY already, a refused argument (a `TypeError`, kept as
 * it is) and anything that is no `PtyHostError` are passed on unchanged.
 */
function namingPty(error: unknown, method: string, ptyId: string): unknown {
  if (!isPtyHostError(error) || error.ptyId !== undefined || error.code === 'invalid_option') return error
  return new PtyHostError(error.code, `Cannot call \`${method}\`: ${error.message}`, {
    cause: error,
    ptyId,
    hostCode: error.hostCode,
    processMayExist: error.processMayExist,
    ...(error.option === undefined ? {} : { option: error.option, value: error.value }),
  })
}

/** Refuse an incarnation-id option that is present but no incarnation id, naming it and the value. */
function assertIncarnationOption(name: string, value: unknown): void {
  if (value !== undefined && !isPtyIncarnationId(value)) {
    throw invalidPtyHostOption(name, `an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters)`, value)
  }
}

/**
 * A caller's wait budget as it crosses to the host: checked here (a `TypeError` naming the option),
 * and always as a duration (`timeoutMs`). Why not `deadlineMs` as given: it was taken from this
 * process's `Date.now()`, and the host reads an epoch time against its own — the same clock in
 * production, but not under a test's mocked `Date` (`vi.setSystemTime`), where a deadline 5 s
 * ahead here was a deadline long past there (refused as a duration given as `deadlineMs`, or read
 * as "no grace"). A duration means the same on both sides (the controller's stops send one too).
 * Returns the parameters to send, made when the request goes out.
 */
function wireBudget(options: PtyWaitBudget | undefined): () => { timeoutMs?: number } {
  if (options?.deadlineMs === undefined && options?.timeoutMs === undefined) {
    resolveWaitDeadline(options, 0)
    return () => ({})
  }
  // Counted from the call, sent as what is left when the request goes out: a connect on the way
  // (a reconnect after a drop) is spent from the caller's budget, not added to it.
  const deadline = resolveWaitDeadline(options, 0)
  return () => ({ timeoutMs: Math.max(0, deadline - Date.now()) })
}

/** A write request's answer from the host, as a settlement (a malformed one: nobody can tell). */
function settlementOfHostAnswer(answer: unknown): WriteSettlement {
  const settlement = answer as WriteSettlement | null
  if (settlement?.kind === 'accepted' || settlement?.kind === 'refused' || settlement?.kind === 'unverifiable') return settlement
  return unverifiableWrite('provider_threw_after_handoff', true)
}

/** A write request that got no answer: the host did not answer in time, or the connection failed. */
function settlementOfFailedHostWrite(error: unknown): WriteSettlement {
  if (isRequestTimeout(error)) return unverifiableWrite('settlement_timeout', true)
  return unverifiableWrite('transport_lost', true)
}
