/**
 * Internal (not exported from `ptykit/contracts`): the escalation plan every provider that stops
 * processes by signal shares (the node-pty provider locally, the SSH provider remotely), so a stop
 * escalates the same way wherever the process runs. Each provider keeps its own grace constants.
 */

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
  /**
   * The shutdown's deadline as a duration: ms after the stop began (not an epoch time — the
   * callers subtract the stop's start from their absolute `deadlineMs`).
   */
  deadlineAfterMs: number
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
  const latestKill = Math.max(0, options.deadlineAfterMs - options.killReserveMs)
  const killAt = Math.min(options.hangupGraceMs + options.terminateGraceMs, latestKill)
  const termAt = Math.min(options.hangupGraceMs, killAt)
  const steps: StopStep[] = []
  if (killAt > 0) steps.push({ signal: 'SIGHUP', atMs: 0 })
  if (termAt > 0 && termAt < killAt) steps.push({ signal: 'SIGTERM', atMs: termAt })
  steps.push({ signal: 'SIGKILL', atMs: killAt })
  return steps
}
