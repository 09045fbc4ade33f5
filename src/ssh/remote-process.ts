import type { LaunchMarker } from './remote-launch.js'
import type { SshConnection } from './ssh-connection.js'

/**
 * Shell lines that set `alive` to `yes`/`no`/`exited`/`unknown` for the marker's pid: `no` only
 * when `/proc` exists and proves the pid gone or reused (another start time); `exited` when it
 * names the program, ended and not yet reaped (a zombie: nothing runs, but its process group may
 * still hold its children). With the marker's boot id, a shell on another boot or machine (a
 * reboot, a load balancer's other backend) answers `elsewhere`: the pid names nothing there, so
 * nothing may be signalled by it. Shell builtins only: a stop or a look at many lost PTYs runs it
 * once per PTY.
 */
function identityCheck(marker: LaunchMarker): string {
  const check = [
    `p=${marker.pid}`,
    `s=${marker.startTime ?? ''}`,
    // After `) `: state is field 1 and the start time field 20 (fields 3 and 22 of the whole line).
    'look() { st=; cur=; state=; read -r st 2>/dev/null </proc/$p/stat; if [ -n "$st" ]; then set -f; set -- ${st##*) }; state=$1; cur=${20}; set +f; fi; }',
    // X (x before Linux 3.14): being reaped right now, or — for a moment — a live program whose
    // thread other than its main one called execve. A second look tells: gone or X again for the
    // first, the running program for the second (process-inspector.ts isDefunct).
    'look; case $state in X|x) look;; esac',
    // Z, or X on both reads: ended, not yet reaped.
    'if [ -n "$cur" ]; then if [ -n "$s" ] && [ "$cur" != "$s" ]; then alive=no; else case $state in Z|X|x) alive=exited;; *) alive=yes;; esac; fi',
    'elif [ -d /proc/self ]; then alive=no',
    'elif kill -0 "$p" 2>/dev/null; then alive=yes; else alive=unknown; fi',
  ].join('\n')
  if (marker.bootId === null) return check
  return [
    'b=; read -r b 2>/dev/null </proc/sys/kernel/random/boot_id',
    `if [ "$b" != '${marker.bootId}' ]; then alive=elsewhere; else`,
    check,
    'fi',
  ].join('\n')
}

/**
 * Send `signal` to the remote process group led by the marker's pid (and the pid itself), from a
 * side exec channel, unless the pid is proven gone or reused. Best effort: the stop verifies the
 * outcome through the PTY's own channel.
 */
export async function signalRemoteProcessGroup(connection: SshConnection, marker: LaunchMarker, signal: string, timeoutMs: number): Promise<void> {
  const script = [
    identityCheck(marker),
    'if [ "$alive" = no ] || [ "$alive" = elsewhere ]; then exit 0; fi',
    `kill -s ${signal} -- -$p 2>/dev/null; kill -s ${signal} $p 2>/dev/null; exit 0`,
  ].join('\n')
  await connection.run(script, timeoutMs)
}

/**
 * Whether each marker's program is alive, from one script on `connection` — which may be another
 * connection than the one that started them, when the markers carry a boot id (see
 * {@link LaunchMarker}). `false` for a program gone, or ended and not yet reaped; `null` for a
 * program the remote cannot tell about, or all `null` when the script did not run.
 */
export async function probeRemotePids(connection: SshConnection, markers: readonly LaunchMarker[], timeoutMs: number): Promise<(boolean | null)[]> {
  if (markers.length === 0) return []
  const script = markers.map((marker) => `${identityCheck(marker)}\necho "$alive"`).join('\n')
  const lines = (await connection.run(script, timeoutMs))?.stdout.trim().split('\n') ?? []
  // One answer per marker, or none trusted.
  if (lines.length !== markers.length) return markers.map(() => null)
  return lines.map((line) => (line === 'yes' ? true : line === 'no' || line === 'exited' ? false : null))
}

/** The probes asked of a connection in this turn of the event loop, sent as one script at its end. */
type ProbeBatch = { markers: LaunchMarker[]; timeoutMs: number; answers: Promise<(boolean | null)[]> }
const probeBatches = new WeakMap<SshConnection, ProbeBatch>()

/**
 * Whether the remote pid is alive: `null` when the remote cannot tell. The probes asked of one
 * connection in the same turn of the event loop (the polls of many stops, a burst of liveness
 * questions) go out as one script, one subshell for all: each of its own cost a fork on the
 * remote, and 60 lost PTYs' stops polling every 100 ms kept a loaded remote busy past their stop
 * window (measured).
 */
export function probeRemotePid(connection: SshConnection, marker: LaunchMarker, timeoutMs: number): Promise<boolean | null> {
  let batch = probeBatches.get(connection)
  if (batch === undefined) {
    const markers: LaunchMarker[] = []
    const created: ProbeBatch = {
      markers,
      timeoutMs,
      answers: new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        probeBatches.delete(connection)
        return probeRemotePids(connection, markers, created.timeoutMs)
      }),
    }
    batch = created
    probeBatches.set(connection, batch)
  }
  batch.timeoutMs = Math.max(batch.timeoutMs, timeoutMs)
  const index = batch.markers.push(marker) - 1
  return batch.answers.then((answers) => answers[index] ?? null)
}

/** What a Linux remote's `/proc` says about a PTY's program. */
export type RemoteInspection = {
  /** The foreground process's working directory (else the program's); `null` when unreadable. */
  cwd: string | null
  /** The foreground process's name; `null` when unreadable. */
  foreground: string | null
  /** Whether the program has children; `null` when unreadable. */
  hasChildren: boolean | null
}

/** Read cwd, foreground process and children from the remote `/proc`; `null` when the remote cannot answer. */
export async function inspectRemoteProcess(connection: SshConnection, marker: LaunchMarker, timeoutMs: number): Promise<RemoteInspection | null> {
  const script = [
    identityCheck(marker),
    // Shell builtins only, and no `$(…)`: a listing runs this once per PTY, and with `sed`, `cut`,
    // `cat`, `readlink` and `tr` it cost ~35 ms of the remote's CPU.
    'if [ "$alive" != yes ] || ! read -r st 2>/dev/null </proc/$p/stat; then exit 3; fi',
    // After `) `: state ppid pgrp session tty_nr tpgid — the terminal's foreground group is field 6.
    'set -f',
    'set -- ${st##*) }',
    'fg=$6',
    'set +f',
    'c=; read -r c 2>/dev/null </proc/$fg/comm',
    'printf "fg=%s\\n" "$c"',
    // `cd -P` sets `$PWD` to the physical path, as `pwd -P` prints it, without the fork of a
    // `$(…)`. Where getcwd fails (a deleted directory) dash leaves `$PWD` empty and bash at the
    // link's own path under /proc: either is left out (unknown, never a wrong directory).
    'if cd -P /proc/$fg/cwd 2>/dev/null; then case $PWD in /proc/*) ;; /*) printf "fgcwd=%s\\n" "$PWD";; esac; fi',
    'if cd -P /proc/$p/cwd 2>/dev/null; then case $PWD in /proc/*) ;; /*) printf "cwd=%s\\n" "$PWD";; esac; fi',
    'if [ -r /proc/$p/task/$p/children ]; then k=; for f in /proc/$p/task/*/children; do c=; read -r c 2>/dev/null <"$f"; k="$k$c"; done; printf "children=%s\\n" "$k"; else echo "children=?"; fi',
  ].join('\n')
  const result = await connection.run(script, timeoutMs)
  if (result === null || result.code !== 0) return null
  const fields = new Map<string, string>()
  for (const line of result.stdout.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1))
  }
  const nonEmpty = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value)
  const children = fields.get('children')
  return {
    cwd: nonEmpty(fields.get('fgcwd')) ?? nonEmpty(fields.get('cwd')),
    foreground: nonEmpty(fields.get('fg')),
    hasChildren: children === undefined || children === '?' ? null : children.length > 0,
  }
}
