import { settleWithin } from '../contracts/settle-within.js'
import { remainingWaitMs } from '../contracts/index.js'
import { planStopSchedule, type StopScheduleOptions, type StopSignal } from '../contracts/stop-schedule.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { SshPtySession } from './ssh-pty-session.js'
import { signalRemoteProcessGroup } from './remote-process.js'

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
    deadlineMs: Math.max(0, options.deadlineEpochMs - startedEpochMs),
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
    const wait = remainingWaitMs(untilEpochMs)
    if (wait <= 0) return false
    await settleWithin(session.settled, wait, undefined)
    if (!settled()) return false
  }
  // Lost, but its end proven (the server reported it before the drop): the stop is carried out,
  // and its exit follows once the channel hands over what it received.
  if (session.state === 'lost' && !session.endProven) {
    throw new SshProviderError(
      'transport_lost',
      `The stop of remote PTY ${JSON.stringify(session.id)} was not seen carried out: its SSH connection dropped, or its channel closed without an exit status`,
      { ptyId: session.id },
    )
  }
  return true
}

/**
 * Stop a remote PTY: for each step, the SSH `signal` request; when no exit follows within
 * {@link SSH_SIGNAL_REQUEST_VERIFY_MS} (OpenSSH ignores the request for root), the same signal to
 * the remote process group from a side exec channel, after checking the pid still names the
 * program — for a PTY still starting, once its launch marker names the pid: a marker that comes
 * only after the KILL step (a login shell's slow rc files) still gets the group its KILL, before
 * the deadline's reserve; after the KILL, closing the channel. Resolves once the channel reported
 * the exit; rejects with `transport_lost` when the session was lost instead (see `settledBy`), and
 * with `shutdown_timeout` when it had not settled by `deadlineEpochMs`.
 */
export async function stopSshSession(session: SshPtySession, options: SshStopOptions): Promise<void> {
  session.beginStop()
  const started = Date.now()
  const deadline = options.deadlineEpochMs
  let groupKilled = false
  for (const step of sshStopSteps(options, started)) {
    if (await settledBy(session, started + step.atMs)) return
    try {
      session.channel.signal(step.signal)
    } catch {
      // The channel is closing; the side channel below still reaches the process.
    }
    if (await settledBy(session, Math.min(Date.now() + SSH_SIGNAL_REQUEST_VERIFY_MS, deadline))) return
    // Never trust the request: signal the group directly (the script checks the pid's identity).
    if (session.marker !== null) {
      await signalRemoteProcessGroup(session.connection, session.marker, step.signal, SSH_SIDE_COMMAND_TIMEOUT_MS)
      if (step.signal === 'KILL') groupKilled = true
    }
  }
  if (!groupKilled && session.marker === null) {
    // Still starting at the KILL step: its signals went only as requests, which a root login
    // ignores, and the close below only hangs up a program that may ignore that. Its marker may
    // yet come (`started` resolves then, or when the session settles): the group gets the KILL.
    const wait = remainingWaitMs(deadline - SSH_KILL_RESERVE_MS)
    if (wait > 0) await settleWithin(session.started, wait, undefined)
    if (session.marker !== null && session.state !== 'exited' && session.state !== 'lost') {
      await signalRemoteProcessGroup(session.connection, session.marker, 'KILL', SSH_SIDE_COMMAND_TIMEOUT_MS)
    }
  }
  // Leave half the reserve for the closed channel's own answer.
  if (await settledBy(session, deadline - SSH_KILL_RESERVE_MS / 2)) return
  try {
    session.channel.close()
  } catch {
    // Already closed.
  }
  if (await settledBy(session, deadline)) return
  throw new SshProviderError('shutdown_timeout', `Remote PTY ${JSON.stringify(session.id)} was still alive ${deadline - started} ms after its stop began`, {
    ptyId: session.id,
  })
}
