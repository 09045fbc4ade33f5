import { clampTimerDelay, remainingWaitMs } from '../contracts/index.js'
import { probeRemotePid, probeRemotePids } from './remote-process.js'
import type { SshConnection } from './ssh-connection.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { SshPtySession } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { SessionLook, SSH_SIDE_COMMAND_TIMEOUT_MS, sshStopSteps, timeoutMessage, type SshStopOptions } from './ssh-stop.js'
import { onWaitClock, waitClockNow } from '../contracts/deadline.js'
import { settleWithin } from '../contracts/settle-within.js'

/**
 * How long after a connection drops the lost PTYs are looked up again on another open connection
 * (at once when a connection opens): the server hangs up a dropped connection's sessions when it
 * notices the drop, and their programs (most of them) end on that hang-up. While some stay lost,
 * the look is repeated at twice the delay, up to {@link SSH_LOST_RECHECK_MAX_DELAY_MS}.
 */
export const SSH_LOST_RECHECK_DELAY_MS = 1_000

/** The longest delay between two looks at the lost PTYs (one side-shell script per connection). */
export const SSH_LOST_RECHECK_MAX_DELAY_MS = 60_000

/** How often a stop of a lost PTY looks again whether the program is gone, and then what is left of its session. */
const LOST_STOP_POLL_MS = 100

/**
 * The connection that can tell what became of a lost PTY's program: its own, while that is open
 * (the channel closed without an exit status); else any open one, when the launch marker carries
 * the remote's boot id — the check then runs only where the boot id matches (see `LaunchMarker`).
 * `null` when nothing can tell (no marker: the program never reported its pid).
 */
export function judgeOfLostSession(session: SshPtySession, keeper: SshConnectionKeeper): SshConnection | null {
  if (session.marker === null) return null
  if (!session.connection.lost) return session.connection
  return session.marker.bootId === null ? null : keeper.openConnection()
}

/**
 * {@link judgeOfLostSession}, opening a connection on demand when none is open and the launch
 * marker carries the remote's boot id (so a connection to the same machine can judge it): the
 * background reconnects after a drop are bounded (`reconnectMaxAttempts`), and once they gave up a
 * server that came back would otherwise never be asked again — a stop or a liveness probe of a
 * lost PTY answered "unreachable" while its program ran on. Waits for the connect at most
 * `withinMs` (default: the connect's own timeouts); `null` when no connection could be opened.
 */
export async function judgeOfLostSessionConnecting(session: SshPtySession, keeper: SshConnectionKeeper, withinMs?: number): Promise<SshConnection | null> {
  const judge = judgeOfLostSession(session, keeper)
  if (judge !== null || session.marker === null || session.marker.bootId === null || keeper.isConnected()) return judge
  const connecting = keeper.connect().then(
    () => undefined,
    () => undefined,
  )
  await (withinMs === undefined ? connecting : settleWithin(connecting, Math.max(0, withinMs), undefined))
  return judgeOfLostSession(session, keeper)
}

/** The lost PTYs whose end is not proven yet (a proven one waits only for its channel to close). */
function unjudgedLostSessions(table: SshSessionTable): SshPtySession[] {
  return table.inState('lost').filter((session) => !session.endProven)
}

/**
 * Look up the lost PTYs whose programs an open connection can judge, and report the exit of each
 * one proven gone (`SshPtySession.settleGone`). One script per judging connection. Programs still
 * alive (they outlived their terminal's hang-up) stay lost: a probe answers `true` for them, and a
 * stop reaches them through {@link stopLostSession}.
 */
export async function recheckLostSessions(table: SshSessionTable, keeper: SshConnectionKeeper): Promise<void> {
  const byJudge = new Map<SshConnection, SshPtySession[]>()
  for (const session of unjudgedLostSessions(table)) {
    const judge = judgeOfLostSession(session, keeper)
    if (judge === null) continue
    const judged = byJudge.get(judge) ?? []
    judged.push(session)
    byJudge.set(judge, judged)
  }
  await Promise.all(
    [...byJudge].map(async ([judge, sessions]) => {
      const answers = await probeRemotePids(judge, sessions.map((session) => session.marker!), SSH_SIDE_COMMAND_TIMEOUT_MS)
      answers.forEach((alive, index) => {
        if (alive === false) sessions[index]!.settleGone()
      })
    }),
  )
}

/**
 * The provider's looks at its lost PTYs ({@link recheckLostSessions}) over time: after
 * `lookAgainAfter(delayMs)`, on whatever connection is open then, and while some stay lost again
 * after twice the delay, up to {@link SSH_LOST_RECHECK_MAX_DELAY_MS} (a server notices a dropped
 * link only when its own keepalive gives up, and hangs up its sessions then). One look is pending
 * at a time: an earlier one replaces a later one.
 */
export class LostSessionRechecks {
  readonly #table: SshSessionTable
  readonly #keeper: SshConnectionKeeper
  readonly #afterLook: () => void
  #pending: { timer: NodeJS.Timeout; at: number } | null = null
  #stopped = false

  /** `afterLook` runs after each look (the provider carries out the stops owed to lost PTYs then). */
  constructor(table: SshSessionTable, keeper: SshConnectionKeeper, afterLook: () => void = () => undefined) {
    this.#table = table
    this.#keeper = keeper
    this.#afterLook = afterLook
  }

  /** Look at the lost PTYs after `delayMs` (nothing when none is lost, or an earlier look is due). */
  lookAgainAfter(delayMs: number): void {
    const at = performance.now() + delayMs // monotonic: only compared with the pending look's
    if (this.#stopped || (this.#pending !== null && this.#pending.at <= at) || unjudgedLostSessions(this.#table).length === 0) return
    if (this.#pending !== null) clearTimeout(this.#pending.timer)
    const timer = setTimeout(() => {
      this.#pending = null
      if (this.#stopped) return
      void recheckLostSessions(this.#table, this.#keeper)
        .catch(() => undefined)
        .then(() => {
          if (!this.#stopped) this.#afterLook()
        })
        .catch(() => undefined)
        .then(() => this.lookAgainAfter(Math.min(Math.max(delayMs, SSH_LOST_RECHECK_DELAY_MS) * 2, SSH_LOST_RECHECK_MAX_DELAY_MS)))
    }, delayMs)
    timer.unref()
    this.#pending = { timer, at }
  }

  /** No more looks (the provider is being disposed). */
  stop(): void {
    this.#stopped = true
    if (this.#pending !== null) clearTimeout(this.#pending.timer)
    this.#pending = null
  }
}

/**
 * Whether a lost PTY's program lives, asked of a connection that can judge it: `true`, `false`
 * (proven gone: its exit follows, see `SshPtySession.settleGone`), or `null` when nothing can
 * tell. `false` without asking once its end is proven (`SshPtySession.endProven`: the server
 * reported it before the drop, or an earlier look found the program gone) — whether or not a
 * connection that could judge it is still open.
 */
export async function probeLostSession(session: SshPtySession, keeper: SshConnectionKeeper, timeoutMs: number = SSH_SIDE_COMMAND_TIMEOUT_MS): Promise<boolean | null> {
  if (session.endProven) {
    session.settleGone()
    return false
  }
  const judge = judgeOfLostSession(session, keeper)
  if (judge === null) return null
  const bound = Math.max(0, Math.min(timeoutMs, SSH_SIDE_COMMAND_TIMEOUT_MS))
  const alive = await settleWithin(probeRemotePid(judge, session.marker!, bound), bound, null)
  if (alive === false) {
    session.settleGone()
    return false
  }
  if (alive === true) session.noteSeenAlive()
  return session.state === 'exited' ? false : alive
}

/**
 * Stop a lost PTY's program and what runs in its session from a connection that can judge it, on
 * the provider's schedule (HUP → TERM → KILL): each step sends the signal to the leader's process
 * group, after the program's identity is checked, and to every other process of its session or
 * group found in the remote `/proc` — as a stop on a live connection does (`SessionLook`). Resolves
 * once the program is proven gone (its exit follows once its channel has handed over what it
 * received: `SshPtySession.settleGone`) **and** a look after that found nothing else of its session
 * alive (the remote cannot always show it: without `/proc`, or with no connection left to look
 * from, the program's proven end ends the stop). Rejects with `transport_lost` when nothing can
 * reach it, or when it was not proven gone by the deadline (the signals may not have landed); with
 * `shutdown_timeout` when it was, but members of its session survived (named) or no look answered.
 */
export async function stopLostSession(session: SshPtySession, keeper: SshConnectionKeeper, epochOptions: SshStopOptions): Promise<void> {
  // On the stop's monotonic clock from here on (see `waitClockNow`).
  const options: SshStopOptions = { ...epochOptions, deadlineEpochMs: onWaitClock(epochOptions.deadlineEpochMs) }
  const unreachable = (why: string): SshProviderError =>
    new SshProviderError('transport_lost', `Cannot stop PTY ${JSON.stringify(session.id)}: ${why}`, { ptyId: session.id })
  session.beginStop()
  const started = waitClockNow()
  const deadline = options.deadlineEpochMs
  const look = new SessionLook(session, () => judgeOfLostSession(session, keeper), deadline)
  // How it was lost, said as it was: until 7 Dec every refusal here said its connection dropped,
  // also of a PTY whose channel the server closed while the connection stayed open.
  const how = (): string => session.lossDescription ?? 'its SSH connection dropped'
  const alive = await probeLostSession(session, keeper, remainingWaitMs(deadline, waitClockNow()))
  if (alive === null) {
    throw unreachable(
      judgeOfLostSession(session, keeper) === null
        ? `${how()}, and no open connection to the same machine can tell whether its program runs`
        : `${how()}, and the look at whether its program runs did not answer by the stop's deadline (or the remote cannot tell)`,
    )
  }
  for (const step of sshStopSteps(options, started)) {
    if (await lostStopCompleteBy(look, keeper, started + step.atMs)) return
    if (!look.leaderEnded && judgeOfLostSession(session, keeper) === null) {
      throw unreachable(`${how()}, and no open connection to the same machine can reach its program`)
    }
    if (await look.look(step.signal)) return
  }
  if (await lostStopCompleteBy(look, keeper, deadline)) return
  const elapsed = Math.round(Math.max(deadline, waitClockNow()) - started)
  if (!look.leaderEnded) throw unreachable(`${how()}, and its program was not seen gone ${elapsed} ms after the stop began`)
  throw new SshProviderError('shutdown_timeout', timeoutMessage(look, elapsed), { ptyId: session.id })
}

/**
 * Wait until a lost PTY's stop is complete — its program proven gone, and a look after that found
 * nothing else of its session — or `untilEpochMs`; true when complete. Asks again every
 * {@link LOST_STOP_POLL_MS}: whether the program lives, then (once it is gone) what is left.
 */
async function lostStopCompleteBy(look: SessionLook, keeper: SshConnectionKeeper, untilEpochMs: number): Promise<boolean> {
  for (;;) {
    if (look.leaderEnded && (await look.look(null))) return true
    const wait = Math.min(LOST_STOP_POLL_MS, remainingWaitMs(untilEpochMs, waitClockNow()))
    if (wait <= 0) return false
    await new Promise((resolve) => setTimeout(resolve, clampTimerDelay(wait)))
    if (!look.leaderEnded) await probeLostSession(look.session, keeper, remainingWaitMs(look.deadline, waitClockNow()))
  }
}
