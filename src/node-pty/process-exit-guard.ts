import { isMainThread } from 'node:worker_threads'

/**
 * The signals whose default action ends a Node process and that an app commonly dies of without
 * running its own cleanup: Ctrl+C (`SIGINT`), a service manager's or `kill`'s stop (`SIGTERM`), the
 * app's own terminal closing (`SIGHUP`).
 */
export const PROCESS_EXIT_GUARD_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM'] as const

/**
 * Kills, synchronously, every process one provider still has running. Called while the process
 * ends, so it must not wait for anything and must not throw (the guard catches it all the same).
 */
export type ProcessExitKiller = () => void

/**
 * What one process holds for every provider in it: the killers of the providers that spawned and
 * were not disposed, and how to remove the listeners while any is registered.
 */
type ExitGuardRegistry = {
  readonly killers: Set<ProcessExitKiller>
  detach: (() => void) | null
}

/**
 * Where the registry lives: one per process (per thread), shared by every copy of ptykit loaded in
 * it (its ESM and CJS builds, or two versions under different packages), so there is one `'exit'`
 * listener and one listener per signal — and a signal is re-raised once, not once per copy. The
 * `v1` names the registry's shape; a copy with another shape would use another key.
 */
const REGISTRY_KEY = Symbol.for('ptykit.processExitGuard.v1')

function registry(): ExitGuardRegistry {
  const holder = globalThis as { [REGISTRY_KEY]?: ExitGuardRegistry }
  holder[REGISTRY_KEY] ??= { killers: new Set(), detach: null }
  return holder[REGISTRY_KEY]
}

function killAll(guard: ExitGuardRegistry): void {
  for (const killer of [...guard.killers]) {
    try {
      killer()
    } catch {
      // The process is ending: one provider's failure must not keep the others' processes alive.
    }
  }
}

function attach(guard: ExitGuardRegistry, platform: NodeJS.Platform): void {
  const onExit = (): void => killAll(guard)
  const onSignal = (signal: NodeJS.Signals): void => {
    // Another listener handles this signal: the app decides what it means (it may dispose, or
    // take Ctrl+C as "cancel" and go on). If it then exits, the 'exit' listener kills.
    if (process.listenerCount(signal) > 1) return
    killAll(guard)
    // Without a listener, Node restores the signal's default action: sent again, it ends the
    // process as it would have without ptykit (its exit status says which signal).
    guard.detach?.()
    process.kill(process.pid, signal)
  }
  // Signals reach only the main thread's listeners, and Windows has none of these to hear. Why no
  // check of an ignored disposition (`nohup node app`): Node resets every signal to its default
  // action at startup, so none of these is ignored when ptykit runs.
  const signals = platform === 'win32' || !isMainThread ? [] : PROCESS_EXIT_GUARD_SIGNALS
  process.on('exit', onExit)
  // First in line: an app's `process.once(signal, …)` listener removes itself before it runs, so
  // a guard that ran after it would count no other listener and end the app in the middle of its
  // own graceful stop (the getting-started guide's handler).
  for (const signal of signals) process.prependListener(signal, onSignal)
  guard.detach = () => {
    process.removeListener('exit', onExit)
    for (const signal of signals) process.removeListener(signal, onSignal)
    guard.detach = null
  }
}

/**
 * Register a provider's killer with the process-wide guard (see the node-pty provider's
 * `killOnProcessExit` option); answers the function that removes it. The guard listens for the
 * process's `'exit'` and for the signals in {@link PROCESS_EXIT_GUARD_SIGNALS} while at least one
 * killer is registered, and for nothing otherwise.
 *
 * - `'exit'` (`process.exit()`, an uncaught exception, the event loop running dry): every killer
 *   runs, synchronously, before the process is gone.
 * - A guarded signal nobody else listens for (its default action would end the process without an
 *   `'exit'` event): every killer runs, the guard removes its listeners, and the signal is sent
 *   again, so the process ends of it as it would have. A signal another listener handles is left to
 *   that listener.
 * - Nothing covers a `SIGKILL` of the app, `process.abort()` or a crash of Node itself: no code runs.
 */
export function guardProcessExit(killer: ProcessExitKiller, platform: NodeJS.Platform = process.platform): () => void {
  const guard = registry()
  guard.killers.add(killer)
  if (guard.detach === null) attach(guard, platform)
  return () => {
    if (!guard.killers.delete(killer)) return
    if (guard.killers.size === 0) guard.detach?.()
  }
}
