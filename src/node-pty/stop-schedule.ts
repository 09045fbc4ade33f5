/**
 * How long a hang-up gets before the stop escalates to SIGTERM. An interactive shell dies of
 * SIGHUP in ~1.3 ms (measured); programs that save state on hang-up (editors writing swap files,
 * shells writing history) need tens of ms. 500 ms covers them without making a stuck stop slow.
 */
export const NODE_PTY_HANGUP_GRACE_MS = 500

/**
 * How long SIGTERM gets before SIGKILL. Same reasoning as the hang-up grace: a process that handles
 * neither HUP nor TERM within half a second is not going to. (Interactive shells ignore TERM, but
 * they die of the HUP before it.)
 */
export const NODE_PTY_TERMINATE_GRACE_MS = 500

/**
 * Time kept before a shutdown's deadline for SIGKILL to land and its death to be reported: a
 * SIGKILLed process is reaped in ~1.3 ms (measured), but a loaded 2-core machine can take tens of
 * ms to schedule node-pty's waitpid thread and the event loop. When the deadline leaves less than
 * this after the graceful steps, they are shortened (or skipped) so the KILL still fits.
 */
export const NODE_PTY_KILL_RESERVE_MS = 250

/** The deadline of a shutdown that names none: the graceful steps, the KILL and a wide margin. */
export const NODE_PTY_SHUTDOWN_DEADLINE_MS = 5_000

/** A signal in a stop schedule. */
export type StopSignal = 'SIGHUP' | 'SIGTERM' | 'SIGKILL'

/** One step of a stop: send `signal` at `atMs` after the stop began (unless everything is gone). */
export type StopStep = {
  /** The signal. */
  signal: StopSignal
  /** When, in ms after the stop began. */
  atMs: number
}

/** The inputs of {@link planStopSchedule}. */
export type StopScheduleOptions = {
  /** Go straight to SIGKILL. */
  immediate: boolean
  /** The shutdown's deadline, in ms after it began. */
  deadlineMs: number
  /** Grace after SIGHUP. */
  hangupGraceMs: number
  /** Grace after SIGTERM. */
  terminateGraceMs: number
  /** Time kept before the deadline for the KILL. */
  killReserveMs: number
}

/**
 * The escalation of a stop: SIGHUP at once (what closing a terminal sends), SIGTERM after the
 * hang-up grace, SIGKILL after the terminate grace — compressed so that the KILL is sent at least
 * `killReserveMs` before the deadline. Steps that would coincide with the KILL are dropped (two
 * signals at the same instant only race each other). `immediate` is one SIGKILL at 0.
 *
 * Pure: the result is ordered by strictly increasing `atMs`, starts at 0 and ends with SIGKILL.
 */
export function planStopSchedule(options: StopScheduleOptions): StopStep[] {
  if (options.immediate) return [{ signal: 'SIGKILL', atMs: 0 }]
  const latestKill = Math.max(0, options.deadlineMs - options.killReserveMs)
  const killAt = Math.min(options.hangupGraceMs + options.terminateGraceMs, latestKill)
  const termAt = Math.min(options.hangupGraceMs, killAt)
  const steps: StopStep[] = []
  if (killAt > 0) steps.push({ signal: 'SIGHUP', atMs: 0 })
  if (termAt > 0 && termAt < killAt) steps.push({ signal: 'SIGTERM', atMs: termAt })
  steps.push({ signal: 'SIGKILL', atMs: killAt })
  return steps
}
