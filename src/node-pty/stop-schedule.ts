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

// The plan itself is shared with the SSH provider; re-exported so node-pty callers and tests keep one import.
export { planStopSchedule, type StopScheduleOptions, type StopSignal, type StopStep } from '../contracts/stop-schedule.js'

/**
 * How long a provider that `dispose()` resolved still listens for the exits of the PTYs its
 * disposal signalled and whose exits had not been delivered by the disposal's deadline (a loaded
 * machine: ~100 killed PTYs' exits came after the 5 s deadline, and were dropped). Each exit
 * that comes within it is reported as usual; then (or once the last came) the provider lets go.
 * Why bounded: a process that never dies (stuck in the kernel) must not keep the provider alive.
 */
export const NODE_PTY_DISPOSE_LATE_EXIT_MS = 30_000

/**
 * How long `dispose()`, having SIGKILLed at its deadline what its stops left, waits for those
 * PTYs' exits before it resolves. A SIGKILL ends a process within milliseconds unless the kernel
 * holds it (an uninterruptible sleep); waiting for the exit means node-pty has reaped it — its
 * thread waiting for the child is done — when `dispose()` resolves. Why: a worker thread's app
 * ends its worker once the provider is disposed, and a PTY that dies while a worker is torn down
 * makes node-pty 1.1 abort the whole process (`SIGABRT`). Bounded: a process the kernel cannot kill
 * at once must not hold the disposal (its exit is still reported, {@link NODE_PTY_DISPOSE_LATE_EXIT_MS}).
 * Internal.
 */
export const NODE_PTY_DISPOSE_KILL_REAP_MS = 1_000
