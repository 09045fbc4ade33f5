import { DEFAULT_MAX_PENDING_INPUT_BYTES } from '../contracts/write-settlement.js'
import {
  clampTimerDelay,
  refusedWrite,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyListProcessesOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyShutdownOptions,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import { assertCwdOptions, assertListProcessesOptions, assertShutdownOptions } from '../contracts/provider-arguments.js'
import { probedIncarnation } from '../contracts/liveness-probe-options.js'
import type { PtyCwdOptions } from '../contracts/cwd-options.js'
import { settleWithin } from '../contracts/settle-within.js'
import { assertSshDimension } from './remote-launch.js'
import {
  assertSshListener,
  assertSshPtyId,
  assertSshWriteBytes,
  assertSshWriteData,
  asSshRefusal,
} from './ssh-call-arguments.js'
import type { SshConnectionSettings } from './ssh-connection.js'
import { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { AbandonedLaunches } from './ssh-abandoned-launches.js'
import { LostSessionRechecks, SSH_LOST_RECHECK_DELAY_MS } from './ssh-lost-sessions.js'
import { refuseCallsAfterDispose } from '../contracts/disposed-provider.js'
import { SshProviderError } from './ssh-provider-error.js'
import {
  SSH_DEFAULT_CONNECT_TIMEOUT_MS,
  SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS,
  SSH_DEFAULT_KEEPALIVE_COUNT_MAX,
  SSH_DEFAULT_KEEPALIVE_INTERVAL_MS,
  SSH_DEFAULT_LAUNCH_TIMEOUT_MS,
  SSH_DEFAULT_TERMINAL_NAME,
  SSH_RECONNECT_MAX_ATTEMPTS,
  validateSshProviderOptions,
  type SshProviderOptions,
} from './ssh-provider-options.js'
import { createSshQueries } from './ssh-queries.js'
import { SshSessionTable } from './ssh-session-table.js'
import { finishOwedStops, shutdownSshPty, stopEverySession, type SshStopTimings } from './ssh-shutdown.js'
import { spawnSshPty } from './ssh-spawn.js'
import { SSH_HANGUP_GRACE_MS, SSH_SHUTDOWN_DEADLINE_MS, SSH_TERMINATE_GRACE_MS } from './ssh-stop.js'

// The provider is a facade over one session table: the connection and its reconnects live in
// ssh-connection-keeper.ts, spawning and attaching in ssh-spawn.ts, listings and the remote /proc
// reads in ssh-queries.ts, stopping in ssh-shutdown.ts (its escalation in ssh-stop.ts); writes,
// resizes and flow control, one line each, stay here.

/** The connection settings of the options: the `SSH_DEFAULT_*` where an option is absent. */
function connectionSettings(options: SshProviderOptions): SshConnectionSettings {
  const port = options.port ?? 22
  return {
    host: options.host,
    port,
    username: options.username,
    privateKey: options.privateKey,
    passphrase: options.passphrase,
    agent: options.agent,
    hostKey: {
      host: options.host,
      port,
      knownHostsPath: options.knownHostsPath,
      hostVerifier: options.hostVerifier,
      policy: options.hostKeyPolicy ?? 'strict',
    },
    // Clamped to what a timer holds (~24.8 days): a longer one (`Number.MAX_SAFE_INTEGER` for
    // "never") overflows Node's timers and fires at once — a keepalive every millisecond.
    connectTimeoutMs: clampTimerDelay(options.connectTimeoutMs ?? SSH_DEFAULT_CONNECT_TIMEOUT_MS),
    handshakeTimeoutMs: clampTimerDelay(options.handshakeTimeoutMs ?? SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS),
    keepaliveIntervalMs: clampTimerDelay(options.keepaliveIntervalMs ?? SSH_DEFAULT_KEEPALIVE_INTERVAL_MS),
    keepaliveCountMax: options.keepaliveCountMax ?? SSH_DEFAULT_KEEPALIVE_COUNT_MAX,
  }
}

/**
 * The queries with their arguments checked first (see ssh-call-arguments.ts): a malformed id or
 * option bag is refused as `invalid_option` — a synchronous query throws, an asynchronous one rejects.
 */
function checkedQueries(queries: ReturnType<typeof createSshQueries>): ReturnType<typeof createSshQueries> {
  return {
    ...queries,
    hasPty: (id) => (assertSshPtyId(id), queries.hasPty(id)),
    getPid: (id) => (assertSshPtyId(id), queries.getPid(id)),
    probeLiveness: async (id, probeOptions) => {
      assertSshPtyId(id)
      // The shared reading of a probe's options (the query reads them again), refused as this provider's error.
      asSshRefusal(() => probedIncarnation(probeOptions))
      return queries.probeLiveness(id, probeOptions)
    },
    getCwd: async (id, cwdOptions?: PtyCwdOptions) => {
      assertSshPtyId(id)
      asSshRefusal(() => assertCwdOptions(cwdOptions))
      return queries.getCwd(id, cwdOptions)
    },
    getForegroundProcess: async (id) => (assertSshPtyId(id), queries.getForegroundProcess(id)),
    hasChildProcesses: async (id) => (assertSshPtyId(id), queries.hasChildProcesses(id)),
    listProcesses: async (listOptions) => {
      // An option nobody reads (`membershipOnly: 'yes'`, a misspelt one) is refused, as every provider refuses it.
      asSshRefusal(() => assertListProcessesOptions(listOptions))
      return queries.listProcesses(listOptions)
    },
  }
}

/**
 * The SSH provider: a {@link PtyProvider} over one SSH connection, plus its connection state.
 * Listings are not authoritative: PTYs of a dropped connection may still run on the remote.
 */
export type SshProvider = Omit<PtyProvider, 'listProcesses'> &
  Required<
    Pick<
      PtyProvider,
      'writeBytes' | 'pauseProducer' | 'resumeProducer' | 'hasPty' | 'probeLiveness' | 'getCwd' | 'getForegroundProcess' | 'hasChildProcesses' | 'dispose'
    >
  > & {
    /** The PTYs this provider holds, each row exact: an optional field is absent, never `undefined` (see {@link PtyProvider.listProcesses}). */
    listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
    /** The remote pid of a live PTY; `null` when unknown. */
    getPid(id: string): number | null
    /** Whether the provider holds an open connection right now. */
    isConnected(): boolean
    /** Same as `dispose()`, for `await using provider = createSshProvider(…)`. */
    [Symbol.asyncDispose](): Promise<void>
  }

/**
 * Create a {@link PtyProvider} that runs PTYs on another machine over SSH, through the pure-JS
 * client `ssh2` (an optional peer, loaded on first use).
 *
 * - host key verification is required (`knownHostsPath` or `hostVerifier`); an unknown or changed
 *   key refuses to connect with a typed error naming its fingerprint;
 * - each PTY is a session channel with a pty request; exits keep their cause across the wire
 *   (`exit-status n` → `exited(n)`, `exit-signal NAME` → `signaled(N)`);
 * - PTYs share a connection until the server refuses another session on it (OpenSSH's
 *   `MaxSessions`, 10 by default); then another connection is opened, and closed after its last PTY;
 * - a channel closed with neither, or a dropped connection, is not an exit: the PTY is lost — its
 *   writes are refused (`provider_refused_write`: no channel to hand them to, nothing is sent),
 *   listings reject while no connection is open, and
 *   its liveness is unknown (`null`) until a connection to the same machine and boot is open
 *   again (a liveness probe or stop of it, and `dispose()`, open one when none is, the background
 *   reconnects being bounded); that connection's side shell then proves it gone (an exit,
 *   `unknown/cause_unreported`) or alive (and stoppable);
 * - stops escalate HUP → TERM → KILL through `signal` requests, verified, with a side-channel
 *   fallback for servers that ignore them (OpenSSH for root logins).
 *
 * @throws SshOptionError when an option is malformed.
 */
export function createSshProvider(options: SshProviderOptions): SshProvider {
  validateSshProviderOptions(options)
  const hostId = options.hostId ?? `ssh:${options.host}`
  const timings: SshStopTimings = {
    hangupGraceMs: options.hangupGraceMs ?? SSH_HANGUP_GRACE_MS,
    terminateGraceMs: options.terminateGraceMs ?? SSH_TERMINATE_GRACE_MS,
    shutdownDeadlineMs: options.shutdownDeadlineMs ?? SSH_SHUTDOWN_DEADLINE_MS,
  }
  // A PTY lost (its channel closed, its connection open; or its connection dropped): look at it.
  const table = new SshSessionTable(() => lookAtLostPtys())
  let disposed = false
  /** Set once `dispose()` has resolved: every call but `dispose`, `isConnected` and the subscriptions is refused from then on. */
  let disposeSettled = false
  let disposePromise: Promise<void> | null = null
  const keeper = new SshConnectionKeeper({
    settings: connectionSettings(options),
    loadSsh2: options.loadSsh2,
    reconnectMaxAttempts: options.reconnectMaxAttempts ?? SSH_RECONNECT_MAX_ATTEMPTS,
    isDisposed: () => disposed,
    onLost: (lost) => {
      table.markLost(lost)
      // Another connection may be open already; else the reconnect's `onOpened` looks.
      lostSessions.lookAgainAfter(SSH_LOST_RECHECK_DELAY_MS)
    },
    onOpened: () => {
      lostSessions.lookAgainAfter(0)
      abandonedLaunches.lookAgainAfter(0)
    },
  })
  // A stop owed (it could not reach its program) is carried out after the next look at the lost
  // PTYs: one is scheduled, whether or not a connection drops or opens later.
  const lookAtLostPtys = (): void => lostSessions.lookAgainAfter(SSH_LOST_RECHECK_DELAY_MS)
  const lostSessions = new LostSessionRechecks(table, keeper, () => finishOwedStops(table, keeper, timings, lookAtLostPtys))
  const launchTimeoutMs = options.launchTimeoutMs ?? SSH_DEFAULT_LAUNCH_TIMEOUT_MS
  // Launches given up before their marker arrived, which may run on the server (see ssh-spawn.ts).
  const abandonedLaunches = new AbandonedLaunches(keeper, launchTimeoutMs)

  function assertNotDisposed(method: string): void {
    if (disposed) throw new SshProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed SSH provider`)
  }

  /** Spawns' channel work that the disposal lets finish first (see `SshSpawnContext.holdConnection`). */
  const heldChannelWork = new Set<Promise<unknown>>()

  function holdConnection<T>(work: () => Promise<T>): Promise<T> {
    // Held before `work` starts: a disposal called from within it waits for it too.
    let done!: () => void
    const held = new Promise<void>((resolve) => (done = resolve)).then(() => void heldChannelWork.delete(held))
    heldChannelWork.add(held)
    // An async wrapper, so a `work` that throws at once rejects like one that rejects later.
    const result = (async () => work())()
    result.then(done, done)
    return result
  }

  const spawnContext = {
    hostId,
    table,
    keeper,
    abandonedLaunches,
    terminalName: options.terminalName ?? SSH_DEFAULT_TERMINAL_NAME,
    launchTimeoutMs,
    timings,
    assertNotDisposed,
    disposal: () => disposePromise,
    holdConnection,
  }

  async function dispose(): Promise<void> {
    if (disposePromise !== null) return disposePromise
    disposed = true
    disposePromise = (async () => {
      keeper.stopReconnecting()
      lostSessions.stop()
      // A spawn whose channel is opening has no session in the table yet: wait for it (its spawn
      // then rejects with `provider_disposed`), so its program is stopped below with the others,
      // not cut off by the close — but no longer than a stop may take: a server that never
      // answers the open does not hold the disposal up for good.
      await settleWithin(Promise.allSettled(heldChannelWork), timings.shutdownDeadlineMs, undefined)
      // PTYs lost with the last connection may run on a server that is back: with no connection
      // open, one is opened to stop them (no longer than a stop may take).
      const reachableOnceConnected = table.inState('lost').some((session) => !session.endProven && session.marker !== null && session.marker.bootId !== null)
      if (reachableOnceConnected && !keeper.isConnected()) await settleWithin(keeper.connectForDisposal(), timings.shutdownDeadlineMs, undefined)
      // Beside the stops: the launches given up before their marker arrived, and those of spawns
      // still starting (no pid yet to stop them by), looked for by their nonce and killed while a
      // connection is open.
      const starting = table.inState('starting', 'lost').filter((session) => session.marker === null)
      await Promise.all([
        stopEverySession(table, keeper, timings),
        abandonedLaunches.stopAtDisposal(
          Date.now() + timings.shutdownDeadlineMs,
          starting.map((session) => session.launch.nonce),
        ),
      ])
      // A stop asked for earlier may still look at what is left of its PTY's session (its leader
      // exited, so the disposal has nothing to stop there): closing its side shell under it would
      // leave that stop unverified. No longer than a stop may take.
      await settleWithin(keeper.stopsSettled(), timings.shutdownDeadlineMs, undefined)
      await keeper.close()
      table.dataListeners.clear()
      table.exitListeners.clear()
      disposeSettled = true
    })()
    return disposePromise
  }

  const maxPendingInputBytes = options.maxPendingInputBytes ?? DEFAULT_MAX_PENDING_INPUT_BYTES

  /** Hand `data` (text, sent as UTF-8, or bytes as they are) to a PTY's channel, and settle. */
  function writeToChannel(id: string, data: string | Buffer): WriteSettlement | Promise<WriteSettlement> {
    const session = table.get(id)
    if (session === undefined) return refusedWrite(table.exitedIds.has(id) ? 'pty_exited' : 'pty_not_found')
    return session.write(data, maxPendingInputBytes)
  }

  // The rule of `PtyProvider.dispose`: once it resolved, every call but `dispose`, `isConnected`
  // and the `on*` subscriptions is refused `provider_disposed` (a spawn and a listing already from
  // its start). Before, a write was refused `pty_not_found`, `hasPty` answered `false` and a
  // shutdown resolved — about PTYs whose programs may outlive the provider on the server.
  return refuseCallsAfterDispose(
    {
      name: options.name ?? 'ssh',
      authoritativeListings: false,
      spawn: (spawnOptions) => spawnSshPty(spawnContext, spawnOptions),
      write(id: string, data: string): WriteSettlement | Promise<WriteSettlement> {
        assertSshPtyId(id)
        assertSshWriteData(data)
        return writeToChannel(id, data)
      },
      writeBytes(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement> {
        assertSshPtyId(id)
        assertSshWriteBytes(bytes)
        // A Buffer of its own: the channel may hold a chunk until the remote's window opens, and the
        // caller may reuse its buffer once this returns.
        return writeToChannel(id, Buffer.from(bytes))
      },
      resize(id: string, cols: number, rows: number): boolean {
        assertSshPtyId(id)
        assertSshDimension('cols', cols, 'invalid_option')
        assertSshDimension('rows', rows, 'invalid_option')
        return table.get(id)?.resize(cols, rows) ?? false
      },
      shutdown: async (id: string, shutdownOptions: PtyShutdownOptions = {}) => {
        assertSshPtyId(id)
        asSshRefusal(() => assertShutdownOptions(shutdownOptions))
        return shutdownSshPty(table, keeper, timings, id, shutdownOptions, { onStopOwed: lookAtLostPtys, isDisposed: () => disposed })
      },
      pauseProducer(id: string): void {
        assertSshPtyId(id)
        table.live(id)?.pause()
      },
      resumeProducer(id: string): void {
        assertSshPtyId(id)
        table.get(id)?.resume()
      },
      ...checkedQueries(createSshQueries({ hostId, table, keeper, assertNotDisposed })),
      onData(listener: (event: PtyDataEvent) => void): Unsubscribe {
        assertSshListener(listener)
        return table.dataListeners.add(listener)
      },
      onExit(listener: (event: PtyExitEvent) => void): Unsubscribe {
        assertSshListener(listener)
        return table.exitListeners.add(listener)
      },
      isConnected: () => keeper.isConnected(),
      dispose,
      [Symbol.asyncDispose]: dispose,
    },
    () => disposeSettled,
    // The PTY id a call names, when it names one (as the shutdown of a lost PTY said it before).
    (method, ptyId) => new SshProviderError('provider_disposed', `Cannot call \`${method}\` on a disposed SSH provider`, { ptyId }),
  )
}
