/**
 * How long `stopAndWait` waits after the graceful hang-up before it forces the stop
 * (`shutdown({ immediate: true })`). VS Code's `MaximumShutdownTime` and Orca's local
 * graceful-to-force timeout are both 5 s: long enough for a shell to run its exit traps.
 */
export const STOP_FORCE_AFTER_MS = 5_000

/**
 * How long after a stop was dispatched the controller waits for the provider to report the exit
 * before it publishes `unknown/stop_unverified` (code −1) and liveness `unverifiable`. Longer than
 * a provider's own escalation (5 s graceful, then up to 8 s for the physical exit in Orca's local
 * provider, minus the overlap), so a slow but working stop is not reported as unconfirmed.
 */
export const STOP_UNCONFIRMED_AFTER_MS = 10_000

/**
 * The deadline `stopAndWait` (and `dispose`, per PTY) uses when the caller gives none: the forced
 * stop plus the same margin a provider needs to observe the physical exit.
 */
export const STOP_DEFAULT_DEADLINE_MS = 10_000

/**
 * How long a process listing may take before its host is left out of the answer (a hung host
 * must not hang `listProcesses`). VS Code gives a pty-host request 5 s (`CreateProcessTimeout`).
 */
export const LIST_PROCESSES_DEFAULT_DEADLINE_MS = 5_000
