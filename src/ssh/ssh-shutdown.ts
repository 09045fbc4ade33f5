import { remainingWaitMs, resolveWaitDeadline, type PtyShutdownOptions } from '../contracts/index.js'
import { onWaitClock, waitClockNow } from '../contracts/deadline.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { judgeOfLostSession, judgeOfLostSessionConnecting, stopLostSession } from './ssh-lost-sessions.js'
import { isSshProviderError, SshProviderError } from './ssh-provider-error.js'
import type { SshPtySession } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { stopSshSession } from './ssh-stop.js'

/** What {@link shutdownSshPty} asks of its provider. */
export type SshShutdownHooks = {
  /** A stop became owed (see {@link finishOwedStops}): the provider schedules a look at its lost PTYs. */
  onStopOwed?: (() => void) | undefined
  /** Whether the provider was disposed: a lost PTY not proven gone is then refused with `provider_disposed`. */
  isDisposed?: (() => boolean) | undefined
}

/** A provider's stop timings: its options, or the `SSH_*` defaults. */
export type SshStopTimings = {
  /** Grace after HUP before TERM. */
  hangupGraceMs: number
  /** Grace after TERM before KILL. */
  terminateGraceMs: number
  /** The deadline of a stop that names none (a duration). */
  shutdownDeadlineMs: number
}

/**
 * Stop one session with the provider's timings (HUP → TERM → KILL, or one KILL when `immediate`),
 * by `deadlineEpochMs` (default: the provider's shutdown deadline from now): through its channel,
 * or — a lost one, given the `keeper` — from a connection that can judge it (`stopLostSession`).
 * Given the `keeper`, the session's connection is held open until the stop settles
 * (`SshConnectionKeeper.holdForStop`): the stop looks at what is left of the session after its
 * channel closed, and an extra connection would otherwise close with that channel.
 */
export async function stopWithTimings(
  session: SshPtySession,
  timings: SshStopTimings,
  immediate: boolean,
  deadlineEpochMs: number = Date.now() + timings.shutdownDeadlineMs,
  keeper?: SshConnectionKeeper,
): Promise<void> {
  const schedule = { immediate, deadlineEpochMs, hangupGraceMs: timings.hangupGraceMs, terminateGraceMs: timings.terminateGraceMs }
  if (keeper === undefined) return stopSshSession(session, schedule)
  const release = keeper.holdForStop(session.connection)
  try {
    await (session.state === 'lost' ? stopLostSession(session, keeper, schedule) : stopSshSession(session, schedule))
  } finally {
    release()
  }
}

/**
 * The provider's `shutdown`: nothing for an unknown or other-incarnation PTY, nor for an exited one
 * whose stop is not running (one still running — members of the session outlived the leader — is
 * joined). A lost PTY
 * (its connection dropped, or its channel closed without an exit status) is stopped from a
 * connection that can judge it (`judgeOfLostSession`: the same machine and boot), and settles once
 * its program is proven gone and nothing else of its session is found alive (`stopLostSession`;
 * with no connection to look from, at once when its end is proven already: `SshPtySession.endProven`);
 * with none, `transport_lost` (it cannot be reached) — as from a stop during which the connection
 * dropped (not seen carried out). One stop per PTY, which a later call joins while it runs (once
 * it failed, a later call tries again) — except an `immediate` one, which starts its own KILL at
 * once. A stop that rejects `transport_lost`, or `shutdown_timeout` with its program not seen
 * gone, is owed (see {@link finishOwedStops}), and `hooks.onStopOwed` is called then: the provider schedules a look at its lost PTYs. Once the
 * provider is disposed (`hooks.isDisposed`), a lost PTY not proven gone rejects with
 * `provider_disposed`.
 */
export async function shutdownSshPty(
  table: SshSessionTable,
  keeper: SshConnectionKeeper,
  timings: SshStopTimings,
  id: string,
  options: PtyShutdownOptions,
  hooks: SshShutdownHooks = {},
): Promise<void> {
  const onStopOwed = hooks.onStopOwed ?? (() => undefined)
  // Checked first, as every provider does: a malformed deadline is a programmer error even for an
  // unknown or ended PTY.
  const deadlineEpochMs = resolveWaitDeadline(options, timings.shutdownDeadlineMs)
  // Ended: nothing to stop — unless its stop still runs (the leader died of the hang-up while a
  // member of its group or session that ignores it is still being stopped): that stop is joined,
  // as while the leader lived. Until 8 Dec this resolved at once, and a controller's `stopAndWait`
  // asked then answered `true` with the member alive (h245).
  const expected = options.expectedIncarnationId
  const candidates = [table.get(id), table.stoppingAfterExit.get(id)]
  const session = expected === undefined ? (candidates[0] ?? candidates[1]) : candidates.find((each) => each?.incarnationId === expected)
  if (session === undefined) return
  if (session.state === 'exited') {
    const running = table.runningStops.get(session)
    if (running !== undefined) await running
    return
  }
  // Disposed: no connection is opened any more, so a lost PTY not proven gone cannot be reached —
  // the call is refused as every call after the disposal is (until 7 Dec: `transport_lost`, as if
  // the link were down, which invited a retry that could never succeed).
  if (session.state === 'lost' && !session.endProven && hooks.isDisposed?.() === true) {
    // Requested all the same (as a stop nothing can reach, below): a look already on its way when
    // the disposal began may still prove the program gone, and its exit goes out while the
    // disposal runs — until 7 Dec it then said `diedBeforeStopRequest`, which nobody knew.
    session.noteStopRequested()
    throw new SshProviderError('provider_disposed', `Cannot call \`shutdown\` on a disposed SSH provider (PTY ${JSON.stringify(id)} was lost, and is not reached any more)`, { ptyId: id })
  }
  // A lost PTY whose end is proven (reported by the server before the drop, or found gone by an
  // earlier look) needs no judge: it is gone, its exit waits only for its channel to close.
  // With no connection open (the background reconnects gave up), one is opened for it, by the deadline.
  if (
    session.state === 'lost' &&
    !session.endProven &&
    (await judgeOfLostSessionConnecting(session, keeper, remainingWaitMs(onWaitClock(deadlineEpochMs), waitClockNow()))) === null
  ) {
    // Requested all the same: its program's end, proven later, did not come before this request.
    session.noteStopRequested()
    oweStop(session, onStopOwed)
    const how = session.lossDescription ?? 'its SSH connection dropped'
    const why = session.marker === null ? 'before its program reported its pid, so nothing can find it' : 'so it cannot be reached'
    throw new SshProviderError('transport_lost', `Cannot stop PTY ${JSON.stringify(id)}: ${how}, ${why}`, { ptyId: id })
  }
  if (session.stop === null || options.immediate === true) {
    const stop = stopWithTimings(session, timings, options.immediate === true, deadlineEpochMs, keeper)
    if (session.stop === null) trackStop(table, session, stop, onStopOwed)
    else stop.catch((error: unknown) => oweStopIfUnreached(session, error, onStopOwed))
    await stop
    return
  }
  await session.stop
}

/** `stop` as the session's running stop, joined by later calls while it runs. */
function trackStop(table: SshSessionTable, session: SshPtySession, stop: Promise<void>, onStopOwed: () => void): void {
  session.stopOwed = false
  session.stop = stop
  table.runningStops.set(session, stop)
  const settled = (): void => {
    if (table.runningStops.get(session) === stop) table.runningStops.delete(session)
    if (table.stoppingAfterExit.get(session.id) === session && !table.runningStops.has(session)) table.stoppingAfterExit.delete(session.id)
  }
  stop.then(settled, settled)
  // A stop that gave up is not joined by a later call: that one tries again.
  stop.catch((error: unknown) => {
    if (session.stop === stop) session.stop = null
    oweStopIfUnreached(session, error, onStopOwed)
  })
}

/**
 * A stop that gave up while its program's end was not proven is owed (see {@link finishOwedStops}):
 * one that could not reach its program (`transport_lost`: its connection dropped, or its channel
 * closed without an exit status), and one whose deadline passed first (`shutdown_timeout` with the
 * program not seen gone: its last step, the channel's close, was still on its way). Until 7 Dec only
 * the first was: which of the two a stop whose close landed around its deadline rejected with
 * depended on that timing, and a program that ignores the hang-up ran on after the late one
 * (nothing stopped it before the provider's disposal). A `shutdown_timeout` of a program proven
 * gone (members of its session survived, or no look answered) is not owed: nothing is left to reach.
 */
function oweStopIfUnreached(session: SshPtySession, error: unknown, onStopOwed: () => void): void {
  if (!isSshProviderError(error) || (error.code !== 'transport_lost' && error.code !== 'shutdown_timeout')) return
  if (session.state !== 'exited' && !session.endProven) oweStop(session, onStopOwed)
}

/**
 * Mark `session`'s stop owed and tell the provider (`onStopOwed`: it schedules a look at the lost
 * PTYs, after which {@link finishOwedStops} runs). Why tell it: a look is otherwise scheduled only
 * when a connection drops or opens — a PTY whose channel closed without an exit report while its
 * connection stayed open, whose stop could not reach its program (a deadline too short for the
 * look), had its stop owed for good: nothing dropped or opened any more (found by an audit).
 */
function oweStop(session: SshPtySession, onStopOwed: () => void): void {
  session.stopOwed = true
  onStopOwed()
}

/**
 * Carry out the stops owed ({@link SshPtySession.stopOwed}): asked for while a PTY's connection was
 * down, or given up at their deadline with the program not seen gone — they rejected with
 * `transport_lost` or `shutdown_timeout` (a controller then published `unknown/stop_unverified`), but
 * the program may run on — one that ignores the hang-up outlives its terminal — and nothing would
 * stop it before the provider's disposal unless the app asked again. Run after each look at the
 * lost PTYs, once a connection that can judge them is open; a stop that again cannot reach its
 * program stays owed. Its program's end is reported as any lost PTY's (a controller publishes it as
 * a second exit, confirming the death).
 */
export function finishOwedStops(table: SshSessionTable, keeper: SshConnectionKeeper, timings: SshStopTimings, onStopOwed: () => void = () => undefined): void {
  for (const session of table.inState('lost')) {
    if (!session.stopOwed || session.stop !== null || session.endProven || judgeOfLostSession(session, keeper) === null) continue
    trackStop(table, session, stopWithTimings(session, timings, false, undefined, keeper), onStopOwed)
  }
}

/**
 * The provider's disposal: stop every starting or live PTY (gracefully), and every lost one a
 * connection to its machine can still reach (it would be left running there), whatever each
 * stop's fate.
 */
export async function stopEverySession(table: SshSessionTable, keeper: SshConnectionKeeper, timings: SshStopTimings): Promise<void> {
  const reachableLost = table.inState('lost').filter((session) => judgeOfLostSession(session, keeper) !== null)
  await Promise.allSettled([...table.inState('live', 'starting'), ...reachableLost].map((session) => stopWithTimings(session, timings, false, undefined, keeper)))
}
