import { SSH_LAUNCH_NONCE_VARIABLE, type LaunchMarker } from './remote-launch.js'
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

/** The shell lines that send `signal` to the group `$p` leads and to `$p` itself (after `identityCheck`). */
function signalLeaderAndGroup(signal: string): string {
  return `kill -s ${signal} -- -$p 2>/dev/null; kill -s ${signal} $p 2>/dev/null`
}

/** A process of a stopped PTY's session or group, other than its leader, still alive: its pid and start time. */
export type RemoteSurvivor = {
  /** The remote pid. */
  pid: number
  /** Its start time (`/proc/<pid>/stat` field 22): with the pid, it names one process for good. */
  startTime: string
}

/**
 * What a look at a PTY's session found: the processes of it still alive besides the leader
 * (`survivors`), or `unobservable` when the remote cannot show them (no `/proc`, or a shell on
 * another boot or machine: the pid names nothing there).
 */
export type RemoteSessionLook = { survivors: RemoteSurvivor[] } | 'unobservable'

/** One look asked of a connection: at the session of `marker`'s program, sending `signal` to what is found. */
type SweepRequest = { marker: LaunchMarker; signal: string | null }

/**
 * The script of {@link sweepRemoteSessions}. For each request, the leader's identity check; a
 * leader alive or not yet reaped gets the signal to its group and its pid. Then one pass over `/proc` for all of them: each
 * process whose session (field 6) or process group (field 5) is one of the leaders' pids gets
 * that leader's signals and is printed `m <leader> <pid> <start time>` — unless it is dead (a
 * zombie with one thread; `X`, read twice as `identityCheck` does). The leader itself is left to
 * its channel; pid 1, the script's own subshell, the side shell and its parent are never touched.
 * A leader's pid that another process now owns (another start time) is not looked up: the kernel
 * hands out a pid again only once no process has it as its session or group id, so nothing of the
 * old session can be left — and what has that id now is the new owner's. Each request then ends
 * with `r <index> ok` (looked), `r <index> none` (its pid reused) or `r <index> na` (the remote
 * cannot show its session).
 */
function sweepScript(requests: readonly SweepRequest[]): string {
  const lines = ["keys=' '"]
  requests.forEach(({ marker, signal }, index) => {
    // Never a session of pid 0 or 1 (a marker cannot name them; a malformed one is not obeyed).
    if (!Number.isSafeInteger(marker.pid) || marker.pid <= 1) {
      lines.push(`echo 'r ${index} na'`)
      return
    }
    const signalGroup = signal === null ? ':' : signalLeaderAndGroup(signal)
    // The leader's pid is a number (checked above): `g_<pid>` names its signals without an `eval`.
    const look = `keys="$keys$p "; g_${marker.pid}="\${g_${marker.pid}-}${signal === null ? '' : ` ${signal}`}"; echo 'r ${index} ok'`
    lines.push(
      identityCheck(marker),
      'case $alive in',
      `elsewhere) echo 'r ${index} na';;`,
      // No /proc: the group is signalled as before, the session cannot be looked at.
      `unknown) ${signalGroup}; echo 'r ${index} na';;`,
      // Gone: its session and group may outlive it. Reused: nothing of them is left.
      `no) if [ -e /proc/$p ]; then echo 'r ${index} none'; else ${look}; fi;;`,
      `*) ${signalGroup}; ${look};;`,
      'esac',
    )
  })
  lines.push(
    'if [ "$keys" != " " ]; then',
    'me=; read -r me 2>/dev/null </proc/self/stat; me=${me%% *}',
    'for d in /proc/[0-9]*; do',
    'q=${d#/proc/}',
    'case $q in 1|"$me"|"$$"|"$PPID") continue;; esac',
    'l=; read -r l 2>/dev/null <$d/stat || continue',
    // After `) `: state is field 1, pgrp 3, session 4, num_threads 18, start time 20.
    'set -f; set -- ${l##*) }; set +f',
    'case $keys in *" $4 "*) k=$4;; *) case $keys in *" $3 "*) k=$3;; *) continue;; esac;; esac',
    '[ "$q" = "$k" ] && continue',
    'z=$1; t=${18}; w=${20}',
    // X: being reaped, or a live program whose other thread called execve: read again.
    'case $z in X|x) l=; read -r l 2>/dev/null <$d/stat; [ -n "$l" ] || continue; set -f; set -- ${l##*) }; set +f; [ "${20}" = "$w" ] || continue; z=$1; t=${18};; esac',
    // Dead: X on both reads, or a zombie with one thread (with more, its other threads run).
    'case $z in X|x) continue;; Z) [ "$t" -gt 1 ] 2>/dev/null || continue;; esac',
    'eval "g=\\${g_$k-}"',
    'for sig in $g; do kill -s $sig $q 2>/dev/null; done',
    'echo "m $k $q $w"',
    'done',
    'fi',
    'echo end',
  )
  return lines.join('\n')
}

/**
 * Look at the sessions of `requests`' programs from one script on `connection`, sending each
 * request's signal (none: only look) to its leader's group and pid — unless the pid is proven gone
 * or reused — and to every other process of its session
 * or group found in `/proc`. One answer per request, in order: what it found alive (before its
 * signal), `unobservable`, or `null` each when the script did not answer.
 */
export async function sweepRemoteSessions(connection: SshConnection, requests: readonly SweepRequest[], timeoutMs: number): Promise<(RemoteSessionLook | null)[]> {
  if (requests.length === 0) return []
  const result = await connection.run(sweepScript(requests), timeoutMs)
  const lines = result?.stdout.split('\n') ?? []
  if (!lines.includes('end')) return requests.map(() => null)
  const found = new Map<number, RemoteSurvivor[]>()
  const status: (string | undefined)[] = []
  for (const line of lines) {
    const [kind, first, second, third] = line.trim().split(' ')
    if (kind === 'r') status[Number(first)] = second
    else if (kind === 'm' && third !== undefined) {
      const members = found.get(Number(first)) ?? []
      members.push({ pid: Number(second), startTime: third })
      found.set(Number(first), members)
    }
  }
  return requests.map(({ marker }, index) => {
    if (status[index] === 'na') return 'unobservable'
    // Its pid reused: nothing of its session is left (what has that id now is the new owner's).
    if (status[index] === 'none') return { survivors: [] }
    if (status[index] !== 'ok') return null
    return { survivors: found.get(marker.pid) ?? [] }
  })
}

/** What a look found of one abandoned launch. */
export type RemoteLaunchFinding = {
  /** The processes of its session or group, alive when found, that got the signal (before it). */
  signalled: RemoteSurvivor[]
  /**
   * The processes alive that hold its nonce and were left alone: in a session of their own (a
   * daemon it started with `setsid`), or its session could not be told (see `unreachable`).
   */
  leftAlone: RemoteSurvivor[]
  /**
   * Processes hold its nonce but the look could not tell its session (no holder names it, or the
   * process that has that pid now is not the launch's): nothing was signalled — seen, not stopped.
   */
  unreachable: boolean
}

/**
 * What a look for abandoned launches found, for each nonce asked; `unobservable` when the remote
 * cannot show them (no `/proc`, no `grep`, or a `grep` without `-a`, `-o`, `-H` and `-E`).
 */
export type RemoteLaunchLook = Map<string, RemoteLaunchFinding> | 'unobservable'

/** A `/proc/<pid>/stat` read into `z` (state), `t` (threads), `g` (pgrp), `o` (session), `w` (start time); `$1` the file, unset `l` when gone. */
const READ_STAT = [
  'rd() { l=; read -r l 2>/dev/null <"$1" || return 1; [ -n "$l" ] || return 1; set -f; set -- ${l##*) }; set +f; z=$1; g=$3; o=$4; t=${18}; w=${20}; }',
  // Alive: not X on two reads (being reaped, or for a moment a live program whose other thread
  // called execve), not a zombie with one thread (with more, its other threads run).
  'live() { rd "$1" || return 1; case $z in X|x) vv=$w; rd "$1" || return 1; [ "$w" = "$vv" ] || return 1; case $z in X|x) return 1;; esac;; esac; case $z in Z) [ "$t" -gt 1 ] 2>/dev/null || return 1;; esac; return 0; }',
].join('\n')

/**
 * Find the processes of launches that never reported a pid and send them `signal` (`null`: only
 * look), from one script on `connection`. A launch's processes hold `SSH_LAUNCH_NONCE_VARIABLE`
 * (`remote-launch.ts`): `<nonce>` in its preamble's shell, `<nonce>:<X>` in its program and what
 * that starts, X being the pid of the launch's shell — the leader of the session sshd made for it.
 * One `grep` over the remote `/proc/<pid>/environ` finds the holders; X is learned from a value
 * that names it, or from a holder of the bare nonce that leads its own session (the preamble's
 * shell). The signal then reaches only the launch's own session and group: the process with pid X
 * when it holds the nonce and is the oldest of its holders (it is the one every holder descends
 * from; a younger one has that pid by reuse), and every process whose session or process group is
 * X — while X is alive, or gone with no process owning its pid: the kernel hands out no pid that a
 * live process uses as its session or group id, so what has that id is the launch's. A holder in
 * a session of its own (a daemon the program started with `setsid`: a tmux server, and the panes
 * it starts for other clients) is left alone, as a stop's sweep leaves it. When holders show but
 * X is unknown, or pid X now belongs to another process, nothing is signalled
 * ({@link RemoteLaunchFinding.unreachable}). Before each signal the process's start time and
 * session or group are read again. As {@link sweepRemoteSessions}: the dead are left alone; pid 1,
 * the script's own subshell, the side shell and its parent are never touched; each one found is
 * named by pid and start time. Only the login's own processes (and, for root, all) can be read.
 * `null` when the script did not answer.
 */
export async function findLaunchesByNonce(connection: SshConnection, nonces: readonly string[], signal: string | null, timeoutMs: number): Promise<RemoteLaunchLook | null> {
  // A nonce is hex (remote-launch.ts); anything else is not put in a script.
  const asked = nonces.filter((nonce) => /^[0-9a-f]+$/.test(nonce))
  if (asked.length === 0) return new Map()
  const variable = SSH_LAUNCH_NONCE_VARIABLE
  const kill = signal === null ? ':' : `kill -s ${signal} $q 2>/dev/null`
  const script = [
    'if [ ! -d /proc/self ] || ! command -v grep >/dev/null 2>&1; then echo na; echo end; exit 0; fi',
    // A grep that refuses an option would find nothing: that is "cannot see", not "none".
    `case $(printf 'x${variable}=ab:12y\\n' | grep -aoH -E -e '${variable}=(ab|cd)(:[0-9]+)?' 2>/dev/null) in *:${variable}=ab:12) ;; *) echo na; echo end; exit 0;; esac`,
    READ_STAT,
    'me=; read -r me 2>/dev/null </proc/self/stat; me=${me%% *}',
    // Holders: `pid nonce value-pid session start` per line, in `$h`.
    'h=',
    // `-o -H`: one `/proc/<pid>/environ:<variable>=<value>` line per match; unreadable files are skipped.
    `for f in $(grep -aoH -E -e '${variable}=(${asked.join('|')})(:[0-9]+)?' /proc/[0-9]*/environ 2>/dev/null); do`,
    'q=${f#/proc/}; q=${q%%/*}; v=${f#*:}; v=${v#*=}; n=${v%%:*}; x=${v#"$n"}; x=${x#:}',
    'case $q in 1|"$me"|"$$"|"$PPID") continue;; esac',
    'live /proc/$q/stat || continue',
    // The bare nonce: the preamble's shell (X is its pid, it leads its session) or a child of it.
    '[ -z "$x" ] && [ "$o" = "$q" ] && x=$q',
    'h="$h$q $n ${x:--} $o $w',
    '"',
    'echo "a $n $q $w"',
    'done',
    // Each nonce's X: the value its holders name. Valid when pid X holds the nonce and is the
    // oldest holder, or when no process has pid X (its session and group outlive it).
    "keys=' '",
    `for n in ${asked.join(' ')}; do`,
    'xs=; oldest=; seen=',
    'while read -r q m x o w; do [ "$m" = "$n" ] || continue; seen=1; [ "$x" = - ] || case " $xs " in *" $x "*) ;; *) xs="$xs $x";; esac; if [ -z "$oldest" ] || [ "$w" -lt "$oldest" ]; then oldest=$w; fi; done <<EOF',
    '$h',
    'EOF',
    '[ -n "$seen" ] || continue',
    'ok=',
    'for x in $xs; do',
    'case $x in 0|1|"$me"|"$$"|"$PPID") continue;; esac',
    'if [ ! -e /proc/$x ]; then ok=1; keys="$keys$x "; eval "n_$x=$n"; continue; fi',
    'xw=',
    'while read -r q m y o w; do [ "$q" = "$x" ] && [ "$m" = "$n" ] && xw=$w; done <<EOF',
    '$h',
    'EOF',
    '[ -n "$xw" ] && [ "$xw" -le "$oldest" ] || continue',
    'ok=1; keys="$keys$x "; eval "n_$x=$n"',
    // pid X itself: read again right before the signal.
    `q=$x; if live /proc/$q/stat && [ "$w" = "$xw" ]; then ${kill}; echo "k $n $q $w"; fi`,
    'done',
    '[ -n "$ok" ] || echo "u $n"',
    'done',
    // One pass over /proc: every process whose session or group is a valid X.
    'if [ "$keys" != " " ]; then',
    'for d in /proc/[0-9]*; do',
    'q=${d#/proc/}',
    'case $q in 1|"$me"|"$$"|"$PPID") continue;; esac',
    'case $keys in *" $q "*) continue;; esac',
    'live $d/stat || continue',
    'case $keys in *" $o "*) k=$o;; *) case $keys in *" $g "*) k=$g;; *) continue;; esac;; esac',
    'eval "n=\\${n_$k}"',
    // Read again right before the signal: the same process, still of that session or group.
    `v=$w; live $d/stat && [ "$w" = "$v" ] && { [ "$o" = "$k" ] || [ "$g" = "$k" ]; } || continue`,
    kill,
    'echo "k $n $q $w"',
    'done',
    'fi',
    'echo end',
  ].join('\n')
  const result = await connection.run(script, timeoutMs)
  const lines = result?.stdout.split('\n').map((line) => line.trim()) ?? []
  if (!lines.includes('end')) return null
  if (lines.includes('na')) return 'unobservable'
  const seen = new Map<string, Map<number, string>>(asked.map((nonce) => [nonce, new Map()]))
  const signalled = new Map<string, Map<number, string>>(asked.map((nonce) => [nonce, new Map()]))
  const unreachable = new Set<string>()
  for (const line of lines) {
    const [kind, nonce, pid, startTime] = line.split(' ')
    if (nonce === undefined) continue
    if (kind === 'u') unreachable.add(nonce)
    else if (startTime !== undefined) (kind === 'a' ? seen : kind === 'k' ? signalled : undefined)?.get(nonce)?.set(Number(pid), startTime)
  }
  const list = (processes: Map<number, string>): RemoteSurvivor[] => [...processes].map(([pid, startTime]) => ({ pid, startTime }))
  return new Map(
    asked.map((nonce) => {
      const hit = signalled.get(nonce) ?? new Map<number, string>()
      const left = new Map([...(seen.get(nonce) ?? [])].filter(([pid]) => !hit.has(pid)))
      return [nonce, { signalled: list(hit), leftAlone: list(left), unreachable: unreachable.has(nonce) }]
    }),
  )
}

/** One sweep script per connection and turn of the event loop, for every sweep asked in it. */
const sweepPerTurn = batchedPerTurn(sweepRemoteSessions)

/**
 * Look at the session of `marker`'s program — its leader's group and every process whose session
 * or group is the leader's pid — sending `signal` to what is found (`null`: only look); see
 * {@link sweepRemoteSessions}. The sweeps asked of one connection in the same turn of the event
 * loop (the steps and looks of many stops) go out as one script with one pass over `/proc`: each
 * of its own would read every process's stat file, once per PTY.
 */
export function sweepRemoteSession(connection: SshConnection, marker: LaunchMarker, signal: string | null, timeoutMs: number): Promise<RemoteSessionLook | null> {
  return sweepPerTurn(connection, { marker, signal }, timeoutMs)
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

/** One probe script per connection and turn of the event loop, for every probe asked in it. */
const probePerTurn = batchedPerTurn(probeRemotePids)

/**
 * Whether the remote pid is alive: `null` when the remote cannot tell. The probes asked of one
 * connection in the same turn of the event loop (the polls of many stops, a burst of liveness
 * questions) go out as one script, one subshell for all: each of its own cost a fork on the
 * remote, and 60 lost PTYs' stops polling every 100 ms kept a loaded remote busy past their stop
 * window (measured).
 */
export function probeRemotePid(connection: SshConnection, marker: LaunchMarker, timeoutMs: number): Promise<boolean | null> {
  return probePerTurn(connection, marker, timeoutMs)
}

/** What a Linux remote's `/proc` says about a PTY's program. */
export type RemoteInspection = {
  /** The foreground process's working directory (else the program's); `null` when unreadable. */
  cwd: string | null
  /** The program's (the PTY's leader's, the shell's) working directory; `null` when unreadable. */
  leaderCwd: string | null
  /** The foreground process's name; `null` when unreadable. */
  foreground: string | null
  /** Whether the program has children; `null` when unreadable. */
  hasChildren: boolean | null
}

/** Read the foreground's and the leader's cwd, foreground process and children from the remote `/proc`; `null` when the remote cannot answer. */
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
    leaderCwd: nonEmpty(fields.get('cwd')),
    foreground: nonEmpty(fields.get('fg')),
    hasChildren: children === undefined || children === '?' ? null : children.length > 0,
  }
}

/**
 * `run` of a whole batch made per-request: the requests asked of one connection in the same turn of
 * the event loop go out as one `run` at its end (after `setImmediate`), with the longest timeout any
 * of them asked for; each gets its own answer, `null` when `run` gave none for it.
 */
function batchedPerTurn<Q, A>(
  run: (connection: SshConnection, requests: readonly Q[], timeoutMs: number) => Promise<readonly (A | null)[]>,
): (connection: SshConnection, request: Q, timeoutMs: number) => Promise<A | null> {
  type Batch = { requests: Q[]; timeoutMs: number; answers: Promise<readonly (A | null)[]> }
  const batches = new WeakMap<SshConnection, Batch>()
  return (connection, request, timeoutMs) => {
    let batch = batches.get(connection)
    if (batch === undefined) {
      const requests: Q[] = []
      const created: Batch = {
        requests,
        timeoutMs,
        answers: new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          batches.delete(connection)
          return run(connection, requests, created.timeoutMs)
        }),
      }
      batch = created
      batches.set(connection, batch)
    }
    batch.timeoutMs = Math.max(batch.timeoutMs, timeoutMs)
    const index = batch.requests.push(request) - 1
    return batch.answers.then((answers) => answers[index] ?? null)
  }
}

/**
 * Find the program a launch `exec`ed, by its nonce, from one script on `connection` — for a launch
 * whose marker did not come (a program that flushes its terminal's output as it starts, `tcflush`
 * with `TCOFLUSH`, discards on Linux the marker the server had not read yet: tmux's client does).
 * The program is the process whose pid is the one its {@link SSH_LAUNCH_NONCE_VARIABLE} names
 * (`<nonce>:<pid>`, exported by the preamble right before its `exec`, after it printed the marker):
 * the launch's own shell, turned program. Its `/proc/<pid>/environ` holds that value only once the
 * `exec` happened; the preamble's shell before it holds the bare nonce, and is not taken (its
 * marker is still to come). Answers what the marker would have said — pid, start time and the
 * remote's boot id — or `'none'` (no such program alive: not started yet, or ended), or `null`
 * when the remote cannot show it (no `/proc` or no `grep`) or the script did not answer.
 */
export async function findStartedLaunch(connection: SshConnection, nonce: string, timeoutMs: number): Promise<LaunchMarker | 'none' | null> {
  // A nonce is hex (remote-launch.ts); anything else is not put in a script.
  if (!/^[0-9a-f]+$/.test(nonce)) return null
  const script = [
    'if [ ! -d /proc/self ] || ! command -v grep >/dev/null 2>&1; then echo na; echo end; exit 0; fi',
    'b=; read -r b 2>/dev/null </proc/sys/kernel/random/boot_id',
    // `-o -H`: one `/proc/<pid>/environ:<variable>=<nonce>:<pid>` line per holder.
    `for f in $(grep -aoH -E -e '${SSH_LAUNCH_NONCE_VARIABLE}=${nonce}:[0-9]+' /proc/[0-9]*/environ 2>/dev/null); do`,
    'q=${f#/proc/}; q=${q%%/*}; x=${f##*:}',
    '[ "$q" = "$x" ] || continue',
    'st=; read -r st 2>/dev/null </proc/$q/stat; [ -n "$st" ] || continue',
    // After `) `: state is field 1 and the start time field 20. Ended (a zombie, being reaped): not taken.
    'set -f; set -- ${st##*) }; set +f',
    'case $1 in Z|X|x) continue;; esac',
    'echo "p $q ${20} $b"',
    'done',
    'echo end',
  ].join('\n')
  const result = await connection.run(script, timeoutMs)
  const lines = result?.stdout.split('\n').map((line) => line.trim()) ?? []
  if (!lines.includes('end') || lines.includes('na')) return null
  for (const line of lines) {
    const [kind, pid, startTime, bootId] = line.split(' ')
    if (kind !== 'p' || pid === undefined || !/^\d+$/.test(pid)) continue
    const optional = (field: string | undefined): string | null => (field === undefined || field === '' ? null : field)
    return { pid: Number(pid), startTime: optional(startTime), bootId: optional(bootId) }
  }
  return 'none'
}
