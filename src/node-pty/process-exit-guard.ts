import { isMainThread } from 'node:worker_threads'

/**
 * Kills, synchronously, every process one provider still has running. Called while the process
 * ends, so it must not wait for anything and must not throw (the guard catches it all the same).
 */
export type ProcessExitKiller = () => void

/**
 * What one process holds for every provider in it: the killers of the providers that spawned and
 * were not disposed, and how to remove the `'exit'` listener while any is registered.
 */
type ExitGuardRegistry = {
  readonly killers: Set<ProcessExitKiller>
  detach: (() => void) | null
}

/**
 * Where the registry lives: one per process, shared by every copy of ptykit loaded in it (its ESM
 * and CJS builds, or two versions under different packages), so there is one `'exit'` listener
 * however many are loaded. The `v1` names the registry's shape; a copy with another shape would
 * use another key.
 */
const REGISTRY_KEY = Symbol.for('ptykit.processExitGuard.v1')

function registry(): ExitGuardRegistry {
  const holder = globalThis as { [REGISTRY_KEY]?: ExitGuardRegistry }
  holder[REGISTRY_KEY] ??= { killers: new Set(), detach: null }
  return holder[REGISTRY_KEY]
}

function attach(guard: ExitGuardRegistry): void {
  const onExit = (): void => {
    for (const killer of [...guard.killers]) {
      try {
        killer()
      } catch {
        // The process is ending: one provider's failure must not keep the others' processes alive.
      }
    }
  }
  process.on('exit', onExit)
  guard.detach = () => {
    process.removeListener('exit', onExit)
    guard.detach = null
  }
}

/**
 * Register a provider's killer to run when the process emits `'exit'` — `process.exit()`, an
 * uncaught exception or unhandled rejection, the event loop running dry — synchronously, before
 * the process is gone (see the node-pty provider's `killOnProcessExit` option). Answers the
 * function that removes it. One `'exit'` listener per process while any killer is registered,
 * none otherwise.
 *
 * **No signal is listened for.** A signal whose default action ends the process (an unhandled
 * `SIGINT`, `SIGTERM`, `SIGHUP`) emits no `'exit'`, and listening for one changes what it does for
 * the whole app: `signal-exit` (ora, execa, …) re-raises a signal only when every listener is its
 * own, so the two would each wait for the other and Ctrl+C would no longer end the app; Node's own
 * reset of the terminal's mode on `SIGINT`/`SIGTERM` is lost once a listener came and went; an app
 * that is PID 1 (a container without an init) does not die of a re-raised signal. An app that
 * wants its PTYs gone on a signal handles it: disposing then dying of it, or calling
 * `process.exit()`, which this guard then covers.
 *
 * **Not in a worker thread** (answers a no-op): killing a PTY while a worker is torn down races
 * node-pty 1.1's exit callback and aborts the whole process (`SIGABRT`, `Napi::Error`), and a
 * worker that ends with a PTY running waits for it (node-pty joins its waiting thread). The
 * provider refuses to be created there unless `killOnProcessExit` is `false`, so this answers a
 * no-op only as a last defence.
 */
export function guardProcessExit(killer: ProcessExitKiller): () => void {
  if (!isMainThread) return () => undefined
  const guard = registry()
  guard.killers.add(killer)
  if (guard.detach === null) attach(guard)
  return () => {
    if (!guard.killers.delete(killer)) return
    if (guard.killers.size === 0) guard.detach?.()
  }
}
