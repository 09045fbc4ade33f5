import { settleWithin } from '../contracts/settle-within.js'
import { remainingWaitMs } from '../contracts/index.js'
import { onWaitClock, waitClockNow } from '../contracts/deadline.js'
import { planStopSchedule, type StopScheduleOptions, type StopSignal } from '../contracts/stop-schedule.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { SshConnection } from './ssh-connection.js'
import type { SshPtySession } from './ssh-pty-session.js'
import { sweepRemoteSession, type RemoteSurvivor } from './remote-process.js'

/** Grace after HUP before TERM: the node-pty provider's, for the same reasons (programs saving state on hang-up). */
export const SSH_HANGUP_GRACE_MS = 500
/** Grace after TERM before KILL: the node-pty provider's. */
export const SSH_TERMINATE_GRACE_MS = 500
/**
 * Time kept before a shutdown's deadline for the KILL to land, its `exit-signal` to cross the
 * wire, and, failing that, the channel to be closed. Wider than node-pty's 250 ms: a side channel
 * costs a round trip and a remote fork.
 */
export const SSH_KILL_RESERVE_MS = 750
/** The deadline of a shutdown that names none (a duration). */
export const SSH_SHUTDOWN_DEADLINE_MS = 5_000
/**
 * How long a `signal` request gets to show its effect before the side channel signals the process
 * group instead. OpenSSH 9.2 answers a non-root login's request with `exit-signal` ~50 ms later
 * (measured), and silently ignores it for a root login; 200 ms leaves room on a loaded machine.
 */
export const SSH_SIGNAL_REQUEST_VERIFY_MS = 200
/** How long a side command (a signal, a /proc read) may take before it counts as unanswered. */
export const SSH_SIDE_COMMAND_TIMEOUT_MS = 3_000
/**
 * How often a stop whose leader has exited looks again at what is left of its session (one pass
 * over the remote `/proc`). The looks fall on multiples of this on the clock, so the stops in
 * flight on one connection share one script per look (`sweepRemoteSession`).
 */
export const SSH_STOP_SWEEP_POLL_MS = 100

/** A signal of a stop, by the name an SSH `signal` request carries. */
export type SshStopSignal = 'HUP' | 'TERM' | 'KILL'

/** One step of a stop: `signal` at `atMs` after the stop began. */
export type SshStopStep = {
  /** The signal. */
  signal: SshStopSignal
  /** When, in ms after the stop began. */
  atMs: number
}

const SSH_SIGNAL_NAME: Record<StopSignal, SshStopSignal> = { SIGHUP: 'HUP', SIGTERM: 'TERM', SIGKILL: 'KILL' }

/**
 * The escalation of a stop: the node-pty provider's plan (`planStopSchedule`: HUP at once, TERM
 * after the hang-up grace, KILL after the terminate grace, compressed so the KILL is sent at least
 * `killReserveMs` before the deadline; `immediate` is one KILL at 0), with SSH's signal names.
 */
export function planSshStopSchedule(options: StopScheduleOptions): SshStopStep[] {
  return planStopSchedule(options).map(({ signal, atMs }) => ({ signal: SSH_SIGNAL_NAME[signal], atMs }))
}

/** When and how a stop runs: its escalation (see {@link planSshStopSchedule}) and its deadline. */
export type SshStopOptions = { immediate: boolean; deadlineEpochMs: number; hangupGraceMs: number; terminateGraceMs: number }

/** The steps of a stop that began at `startedEpochMs`, compressed to fit its deadline. */
export function sshStopSteps(options: SshStopOptions, startedEpochMs: number): SshStopStep[] {
  return planSshStopSchedule({
    immediate: options.immediate,
    deadlineAfterMs: Math.max(0, options.deadlineEpochMs - startedEpochMs),
    hangupGraceMs: options.hangupGraceMs,
    terminateGraceMs: options.terminateGraceMs,
    killReserveMs: SSH_KILL_RESERVE_MS,
  })
}

/**
 * Wait until the session settles or `untilEpochMs`; true when it exited. A session that settled
 * as `lost` — its connection dropped, or its channel closed without an exit status — rejects with
 * `transport_lost`: the stop was not seen carried out, and the program may still run.
 */
async function settledBy(session: SshPtySession, untilEpochMs: number): Promise<boolean> {
  const settled = () => session.state === 'exited' || session.state === 'lost'
  if (!settled()) {
    const wait = remainingWaitMs(untilEpochMs, waitClockNow())
    if (wait <= 0) return false
    await settleWithin(session.settled, wait, undefined)
    if (!settled()) return false
  }
  // Lost, but its end proven (the server reported it before the drop): the stop is carried out,
  // and its exit follows once the channel hands over what it received.
  if (session.state === 'lost' && !session.endProven) {
    throw new SshProviderError(
      'transport_lost',
      `The stop of remote PTY ${JSON.stringify(session.id)} was not seen carried out: ${session.lossDescription ?? 'its SSH connection dropped'}`,
      { ptyId: session.id },
    )
  }
  return true
}

/**
 * The connection whose side shell looks at a PTY's session during its stop: its own — `null` once
 * it dropped (the server hung the session up, and nothing can show more), but not once the
 * provider closed it itself: a look there goes unanswered, what is left of the session unknown.
 */
function ownConnectionToLookFrom(session: SshPtySession): SshConnection | null {
  const { connection } = session
  return connection.lost && !connection.closedOnPurpose ? null : connection
}

/**
 * What a stop knows of the rest of its PTY's session — the processes whose session or process
 * group is the leader's pid — from its last look through a side shell: by default its own
 * connection's; a lost PTY's stop looks from a connection that can judge it (`stopLostSession`).
 */
export class SessionLook {
  /** What the last answered look found alive besides the leader. */
  survivors: RemoteSurvivor[] = []
  /** A look after the leader's exit answered (or the remote cannot show the session): `survivors` is current. */
  lookedAfterEnd = false
  /** The last look went unanswered (the side shell timed out or could not run it). */
  unanswered = false

  constructor(
    readonly session: SshPtySession,
    /** Where to look from; `null` when nothing can (the leader's end then ends the stop). */
    readonly lookFrom: () => SshConnection | null = () => ownConnectionToLookFrom(session),
    /**
     * The stop's deadline on the wait clock (`waitClockNow`): no look is waited for past it.
     * Until 7 Dec each look got its full `SSH_SIDE_COMMAND_TIMEOUT_MS` whatever was left, and a
     * stop on a frozen link settled 9.2 s after its 2 s deadline (its message said 2 s).
     */
    readonly deadline: number = Number.POSITIVE_INFINITY,
  ) {}

  /** The leader's exit was reported (or, lost, its end proven). */
  get leaderEnded(): boolean {
    return this.session.state === 'exited' || (this.session.state === 'lost' && this.session.endProven)
  }

  /** The stop is complete: the leader's exit reported, and the last look after it found nothing else. */
  get done(): boolean {
    return this.leaderEnded && this.lookedAfterEnd && this.survivors.length === 0
  }

  /**
   * Look at the session, sending `signal` (none: only look) to the leader's group — the leader's
   * identity checked — and to every other member found. A PTY without a launch marker, or with
   * nothing to look from (its connection dropped), cannot be looked at: its stop ends with the
   * leader's exit, as the remote cannot show more. A connection the provider closed itself (its
   * disposal) is no such proof: the look goes unanswered. Returns {@link SessionLook.done}.
   */
  async look(signal: SshStopSignal | null): Promise<boolean> {
    const ended = this.leaderEnded
    const { marker } = this.session
    if (signal !== null) this.session.noteStopSignal(signal)
    const connection = marker === null ? null : this.lookFrom()
    if (marker === null || connection === null) {
      this.survivors = []
      this.lookedAfterEnd = ended
      return this.done
    }
    const within = Math.max(0, Math.min(SSH_SIDE_COMMAND_TIMEOUT_MS, remainingWaitMs(this.deadline, waitClockNow())))
    if (within === 0 && signal === null) {
      // No time left to wait for an answer: a look that only looks is not worth sending.
      this.unanswered = true
      return false
    }
    // A signal goes out all the same: it lands whether or not its answer is waited for.
    const found = await settleWithin(sweepRemoteSession(connection, marker, signal, within), within, null)
    this.unanswered = found === null
    if (found === null) return false
    this.survivors = found === 'unobservable' ? [] : found.survivors
    // Only a look begun after the exit vouches for the session after it.
    if (ended) this.lookedAfterEnd = true
    return this.done
  }
}

/**
 * Wait until the stop is complete — the leader's exit reported and a look after it found nothing
 * else of its session alive — or `untilEpochMs`; true when complete. Once the leader has exited,
 * looks every {@link SSH_STOP_SWEEP_POLL_MS}. Rejects like `settledBy` when the session was lost.
 */
async function completeBy(look: SessionLook, untilEpochMs: number): Promise<boolean> {
  if (!(await settledBy(look.session, untilEpochMs))) return false
  for (;;) {
    if (!look.lookedAfterEnd || look.unanswered) {
      if (await look.look(null)) return true
    } else if (look.done) return true
    const wait = Math.min(SSH_STOP_SWEEP_POLL_MS - (waitClockNow() % SSH_STOP_SWEEP_POLL_MS), remainingWaitMs(untilEpochMs, waitClockNow()))
    if (wait <= 0) return false
    await new Promise((resolve) => setTimeout(resolve, wait))
    if (await look.look(null)) return true
    if (remainingWaitMs(untilEpochMs, waitClockNow()) <= 0) return false
  }
}

/**
 * Stop a remote PTY and what runs in its session. For each step, the SSH `signal` request while
 * the leader runs (OpenSSH delivers it to the leader's process group, and ignores it for root),
 * then — never trusting it, nor that it reached more than that group — from the side shell the
 * same signal to the leader's group, after checking the pid still names the program, and to every
 * other process of the leader's session or group found in the remote `/proc` (background jobs in
 * groups of their own; members left after the leader died). For a PTY still starting, this waits
 * for its launch marker to name the pid: a marker that comes only after the KILL step (a login
 * shell's slow rc files) still gets the group its KILL, before the deadline's reserve. After the
 * KILL, the channel is closed. Resolves once the channel reported the leader's exit **and** a look
 * after it found nothing else of the session alive (the remote cannot always show it: without
 * `/proc`, or its connection dropped, the leader's exit ends the stop); rejects with
 * `transport_lost` when the session was lost instead (see `settledBy`), and with
 * `shutdown_timeout` when it was not complete by `deadlineEpochMs`, naming what survived.
 */
export async function stopSshSession(session: SshPtySession, epochOptions: SshStopOptions): Promise<void> {
  session.beginStop()
  // From here on, every time is on the stop's monotonic clock (see `waitClockNow`).
  const options: SshStopOptions = { ...epochOptions, deadlineEpochMs: onWaitClock(epochOptions.deadlineEpochMs) }
  const started = waitClockNow()
  const deadline = options.deadlineEpochMs
  const look = new SessionLook(session, undefined, deadline)
  let groupKilled = false
  for (const step of sshStopSteps(options, started)) {
    if (await completeBy(look, started + step.atMs)) return
    if (!look.leaderEnded) {
      session.noteStopSignal(step.signal)
      try {
        session.channel.signal(step.signal)
      } catch {
        // The channel is closing; the side shell below still reaches the process.
      }
      await settledBy(session, Math.min(waitClockNow() + SSH_SIGNAL_REQUEST_VERIFY_MS, deadline))
    }
    // Never trust the request, nor that it reached more than the leader's group: the side shell
    // signals the group (the script checks the pid's identity) and the rest of the session.
    if (session.marker !== null) {
      if (await look.look(step.signal)) return
      if (step.signal === 'KILL') groupKilled = true
    }
  }
  if (!groupKilled && session.marker === null) {
    // Still starting at the KILL step: its signals went only as requests, which a root login
    // ignores, and the close below only hangs up a program that may ignore that. Its marker may
    // yet come (`started` resolves then, or when the session settles): the group gets the KILL.
    const wait = remainingWaitMs(deadline - SSH_KILL_RESERVE_MS, waitClockNow())
    if (wait > 0) await settleWithin(session.started, wait, undefined)
    if (session.marker !== null && session.state !== 'exited' && session.state !== 'lost') {
      if (await look.look('KILL')) return
    }
  }
  // Leave half the reserve for the closed channel's own answer.
  if (await completeBy(look, deadline - SSH_KILL_RESERVE_MS / 2)) return
  if (!look.leaderEnded) {
    // The server hangs the terminal up: the program gets a HUP from it.
    session.noteStopSignal('HUP')
    session.closeChannel()
  }
  if (await completeBy(look, deadline)) return
  throw new SshProviderError('shutdown_timeout', timeoutMessage(look, Math.round(Math.max(deadline, waitClockNow()) - started)), { ptyId: session.id })
}

/** Why a stop did not complete: the leader alive, members of its session alive (named), or no look answered. */
export function timeoutMessage(look: SessionLook, elapsedMs: number): string {
  const id = JSON.stringify(look.session.id)
  if (!look.leaderEnded) return `Remote PTY ${id} was still alive ${elapsedMs} ms after its stop began`
  if (!look.lookedAfterEnd || look.unanswered) {
    return `Remote PTY ${id} exited, but what is left of its session could not be looked at (the side shell did not answer) ${elapsedMs} ms after its stop began`
  }
  const named = look.survivors.map(({ pid, startTime }) => `pid ${pid} (start time ${startTime})`).join(', ')
  return `Remote PTY ${id} exited, but ${look.survivors.length} process(es) of its session were still alive ${elapsedMs} ms after its stop began: ${named}`
}
