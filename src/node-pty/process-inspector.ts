import { execFile } from 'node:child_process'
import {
  close as closeCallback,
  closeSync,
  open as openCallback,
  openSync,
  read as readCallback,
  readFile as readFileCallback,
  readFileSync,
  readSync,
  readdirSync,
} from 'node:fs'
import { readdir, readlink } from 'node:fs/promises'
import { mapBounded, NODE_PTY_PROC_READS_IN_FLIGHT } from './bounded-map.js'
import { withoutStackTraces } from './without-stack-traces.js'

/**
 * How long one `ps` or `lsof` run may take before its answer counts as "cannot say". `ps -A` on a
 * busy macOS machine with thousands of processes takes ~100 ms; a wedged one must not hang a query.
 */
export const NODE_PTY_PROCESS_QUERY_TIMEOUT_MS = 2_000

/**
 * Bytes read from `/proc/<pid>/stat` at once. A stat line is ~300 bytes (52 numeric fields and a
 * name of at most 64 escaped bytes), so one read gets it whole; small enough to come from Node's
 * shared Buffer pool (under 4 KiB), so a read allocates nothing off-heap.
 */
export const NODE_PTY_PROC_STAT_READ_BYTES = 2_048

/** What the provider reads about one process. */
export type ProcessStat = {
  /** Process id. */
  pid: number
  /** Parent process id. */
  ppid: number
  /** Process group id. */
  pgid: number
  /** Session id; `null` where the platform does not expose it (macOS `ps`). */
  sid: number | null
  /** The foreground process group of the process's controlling terminal; `null` or ≤ 0 when none. */
  tpgid: number | null
  /**
   * The state letter (`R`, `S`, `Z`, `T`…) of the process's first thread. `Z` alone does not make
   * the process dead: see {@link isDefunct}.
   */
  state: string
  /**
   * How many threads the process has (Linux `num_threads`); absent where the platform does not
   * expose it cheaply (macOS `ps`).
   */
  threads?: number
  /** The process name (Linux `comm`, at most 15 characters; macOS the executable's base name). */
  name: string
  /**
   * When the process started (Linux: `starttime`, clock ticks since boot, as text). With the pid
   * it names one process for good: a pid is reused, a pid with its start time never is. Absent
   * where the platform does not expose it cheaply (macOS `ps`).
   */
  startTime?: string
}

/**
 * Reads processes from the OS. One implementation per way of reading: Linux `/proc`, `ps`+`lsof`
 * (macOS and other Unixes), and none (Windows), where every answer is "cannot say".
 */
export type ProcessInspector = {
  /** Which implementation this is. */
  readonly kind: 'procfs' | 'ps' | 'none'
  /** One process; `null` when it does not exist or cannot be read. */
  read(pid: number): Promise<ProcessStat | null>
  /**
   * Every visible process; `null` when this platform cannot list them, or when the table could not
   * be read whole now (the process ran out of descriptors): `null` never proves a process absent.
   */
  list(): Promise<ProcessStat[] | null>
  /** A process's working directory; `null` when it cannot be read. */
  cwd(pid: number): Promise<string | null>
  /**
   * One process, read now, synchronously (one small read, no thread pool): its row, `'absent'`
   * when it is proven not to exist (no such pid), or `null` when that cannot be said (unreadable,
   * or a platform that cannot read one process cheaply: there only absence is ever answered).
   * What the provider's looks at a leader use, so the start time read is the one they judge by.
   */
  readNow(pid: number): ProcessStat | 'absent' | null
  /**
   * Synchronous and conservative: `true` only when the process is proven gone — no such pid, a
   * zombie (dead, waiting to be reaped; see {@link isDefunct}), or, when `startTime` is given and
   * readable, a pid that now belongs to a process started at another time (the one we knew died
   * and its pid was reused). Any doubt answers `false`.
   */
  isGone(pid: number, startTime?: string | null): boolean
  /**
   * Synchronous, one syscall: `true` only when no process has this pid (signal 0 fails with
   * `ESRCH`), which proves the process we knew reaped. A zombie, a live or a reused pid answer
   * `false`. Where signals do not exist, always `false`.
   */
  isReaped(pid: number): boolean
}

/**
 * Parse the text of `/proc/<pid>/stat`. The name sits in parentheses and may itself contain spaces
 * and parentheses, so the fields are read after the *last* `)`. `null` for anything malformed.
 */
export function parseProcStat(text: string): ProcessStat | null {
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 1 || close < open) return null
  const pid = Number(text.slice(0, open).trim())
  const fields = text.slice(close + 2).split(' ')
  // fields: 0 state, 1 ppid, 2 pgrp, 3 session, 4 tty_nr, 5 tpgid, … 17 num_threads, … 19 starttime
  const [state, ppid, pgid, sid, , tpgid] = fields
  const numbers = [pid, Number(ppid), Number(pgid), Number(sid), Number(tpgid)]
  if (state === undefined || state.length === 0 || numbers.some((n) => !Number.isInteger(n))) return null
  const stat: ProcessStat = {
    pid,
    ppid: Number(ppid),
    pgid: Number(pgid),
    sid: Number(sid),
    tpgid: Number(tpgid),
    state: state.charAt(0),
    name: text.slice(open + 1, close),
  }
  const threads = Number(fields[17])
  if (Number.isInteger(threads) && threads > 0) stat.threads = threads
  const startTime = fields[19]?.trim()
  if (startTime !== undefined && /^\d+$/.test(startTime)) stat.startTime = startTime
  return stat
}

/**
 * Whether a process row shows a dead process whose pid is not yet free: a zombie (dead, waiting to
 * be reaped), or one being reaped right now. Linux shows a process whose main thread exited while
 * other threads run (`pthread_exit` in `main`) as `Z` as well — its first thread is the zombie —
 * yet the process lives on, printing and holding its PTY; its `threads` count says so. Where the
 * count is unknown, `Z` means dead.
 *
 * `X` (`x` on Linux 2.6.33–3.13) is mostly a process its parent is reaping at this moment:
 * `waitpid` has claimed the zombie and not yet freed its pid, so `/proc/<pid>/stat` still reads,
 * with 1 or 0 threads (a reader spinning on killed PTY leaders saw it in 20 of 500 deaths). But a
 * live process shows it too, for a moment, when a thread other than its main one calls `execve`:
 * the kernel gives that thread the process's pid and releases the old main thread as `X` (0 or 1
 * threads as a reader catches it, the same start time), and a read that reached the old thread
 * sees it (helper-105: 2–5 times in 130 000–190 000 reads of a program doing that in a loop). The
 * row alone cannot tell the two apart, so the `/proc` inspector reads a pid again when it sees `X`
 * ({@link showsStateX}) and answers the second read: the reaped process is gone or still `X`, the
 * exec'd one runs. A row that reaches this function with `X` has been read twice, and is dead.
 */
export function isDefunct(stat: Pick<ProcessStat, 'state' | 'threads'>): boolean {
  if (showsStateX(stat)) return true
  return stat.state === 'Z' && (stat.threads === undefined || stat.threads <= 1)
}

/**
 * Parse one line of `ps -o pid=,ppid=,pgid=,tpgid=,stat=,comm=`. The command is the last column
 * and may contain spaces; it is reduced to its base name. `null` for anything malformed.
 */
export function parsePsLine(line: string): ProcessStat | null {
  const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(.*?)\s*$/.exec(line)
  if (match === null) return null
  const [, pid, ppid, pgid, tpgid, stat, comm] = match as unknown as [string, string, string, string, string, string, string]
  const name = comm.split('/').filter((part) => part.length > 0).pop() ?? comm
  return {
    pid: Number(pid),
    ppid: Number(ppid),
    pgid: Number(pgid),
    sid: null,
    tpgid: Number(tpgid),
    state: stat.charAt(0),
    name,
  }
}

/** Parse `lsof -Fn` output: the first `n` line is the name (here the cwd). */
export function parseLsofCwd(output: string): string | null {
  for (const line of output.split('\n')) {
    if (line.startsWith('n') && line.length > 1) return line.slice(1)
  }
  return null
}

/** The pid {@link signalZeroToPid} signals: set right before each call. */
let signalledPid = 0

/**
 * Signal 0 to {@link signalledPid}. Shared, not a closure per look: a SIGCHLD burst looks at every
 * live session this way, between the forks of a burst of spawns (docs/performance.md).
 */
function signalZeroToPid(): boolean {
  return process.kill(signalledPid, 0)
}

/** `true` when signal 0 proves the pid absent (ESRCH); a zombie still answers, so it is not "gone" here. */
function signalZeroSaysGone(pid: number): boolean {
  try {
    // `ESRCH` is the answer looked for, not a fault: no stack trace for it.
    signalledPid = pid
    withoutStackTraces(signalZeroToPid)
    return false
  } catch (error) {
    return (error as { code?: unknown }).code === 'ESRCH'
  }
}

/**
 * Read a small `/proc` file (a `stat` line) through the callback API into one pooled buffer of
 * {@link NODE_PTY_PROC_STAT_READ_BYTES}; `null` when it cannot be read. Why not `readFile`: procfs
 * reports size 0, so `readFile` allocates a 64 KiB buffer per read (off V8's heap, through malloc);
 * hundreds of those per burst of reads (listings, queries) fragment the main malloc arena, and the freed pages stay
 * resident (~8 KiB of RSS per PTY measured). Why the callback API: `fs/promises` opens a
 * FileHandle per read, measurably dearer. A file that fills the buffer is read again whole.
 */
export function readSmallProcFile(path: string): Promise<string | null> {
  return readSmallProcFileOrError(path).then((read) => (typeof read === 'string' ? read : null))
}

/**
 * The errors of a `/proc` read that say nothing about the process but that this process ran out
 * of something (descriptors, kernel memory) right now: the read would have shown it. A table
 * with such a hole proves no process absent.
 */
const RESOURCE_ERROR_CODES: ReadonlySet<unknown> = new Set(['EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN'])

/** {@link readSmallProcFile}, with the error code of a failed read (`{ code }`) instead of `null`. */
function readSmallProcFileOrError(path: string): Promise<string | { code: unknown }> {
  return new Promise((resolveRead) => {
    openCallback(path, 'r', (openError, fd) => {
      if (openError !== null) {
        resolveRead({ code: openError.code })
        return
      }
      const buffer = Buffer.allocUnsafe(NODE_PTY_PROC_STAT_READ_BYTES)
      readCallback(fd, buffer, 0, buffer.length, 0, (readError, bytes) => {
        closeCallback(fd, () => {
          if (readError !== null) resolveRead({ code: readError.code })
          else if (bytes < buffer.length) resolveRead(buffer.toString('utf8', 0, bytes))
          // Filled to the brim: the line may be longer; read it whole the ordinary way.
          else readFileCallback(path, 'utf8', (error, text) => resolveRead(error === null ? text : { code: error.code }))
        })
      })
    })
  })
}

/** The buffer every synchronous stat read goes through (the event loop runs one at a time). */
const statReadBuffer = Buffer.allocUnsafe(NODE_PTY_PROC_STAT_READ_BYTES)

/**
 * Read a small `/proc` file synchronously into one reused buffer: `openSync`, one `readSync`,
 * `closeSync`. Why not `readFileSync`: procfs reports size 0, so it `fstat`s, reads into growing
 * buffers until a read returns 0, and decodes (measured: ~25–60 µs per stat line against ~12 µs
 * here). `'absent'` when the file does not exist (ENOENT, ESRCH: the process is gone); `null` when
 * it cannot be read for another reason (EACCES, EMFILE prove nothing).
 */
function readSmallProcFileNow(path: string): string | 'absent' | null {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return code === 'ENOENT' || code === 'ESRCH' ? 'absent' : null
  }
  try {
    const bytes = readSync(fd, statReadBuffer, 0, statReadBuffer.length, 0)
    if (bytes < statReadBuffer.length) return statReadBuffer.toString('utf8', 0, bytes)
  } catch (error) {
    // A process that died between the open and the read: its stat file reads ESRCH.
    return (error as { code?: unknown }).code === 'ESRCH' ? 'absent' : null
  } finally {
    closeSync(fd)
  }
  // Filled to the brim: the line may be longer; read it whole the ordinary way.
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/**
 * The verdict of {@link ProcessInspector.isGone} from one look (one read, or two when the first
 * showed `X`): `true` only when the process is proven gone — absent, a zombie, or a pid that now
 * names a process started at another time.
 */
export function isGoneBy(seen: ProcessStat | 'absent' | null, startTime?: string | null): boolean {
  if (seen === 'absent') return true
  if (seen === null) return false
  // Why: after a reap the pid may already name another process; ours is gone all the same.
  if (startTime !== undefined && startTime !== null && seen.startTime !== undefined && seen.startTime !== startTime) return true
  return isDefunct(seen)
}

/**
 * Whether a row shows state `X` (`x` on Linux 2.6.33–3.13): a process being reaped, or — for a
 * moment — a live one whose non-main thread called `execve`. Read the pid again to tell which
 * (see {@link isDefunct}).
 */
export function showsStateX(stat: Pick<ProcessStat, 'state'>): boolean {
  return stat.state === 'X' || stat.state === 'x'
}

/**
 * Every process in `/proc`, each read now; `null` when `/proc` cannot be listed, or when a process
 * listed could not be read (EACCES, EMFILE): a table missing a row proves no process absent — a
 * session's running member left out would read as "ended". With `skipUnreadable`, such a row is
 * left out instead: for choosing what to signal (the exit kill), where every row that could be read
 * is worth having, and nothing is concluded from a row's absence.
 */
export function scanProcNow(inspector: ProcessInspector, skipUnreadable = false): ProcessStat[] | null {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return null
  }
  const rows: ProcessStat[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const row = inspector.readNow(Number(entry))
    if (row === null && !skipUnreadable) return null
    if (row !== null && row !== 'absent') rows.push(row)
  }
  return rows
}

/** Linux: everything from `/proc`, no subprocess. */
export function createProcFsInspector(procRoot = '/proc'): ProcessInspector {
  // Reads go through readSmallProcFile (its TSDoc says why not `readFile`).
  // `'incomplete'`: the read failed for want of a resource (RESOURCE_ERROR_CODES), not because
  // the process is gone; a table missing that row would prove nothing.
  const readOnceOrIncomplete = async (pid: number): Promise<ProcessStat | 'incomplete' | null> => {
    const read = await readSmallProcFileOrError(`${procRoot}/${pid}/stat`)
    if (typeof read !== 'string') return RESOURCE_ERROR_CODES.has(read.code) ? 'incomplete' : null
    return parseProcStat(read)
  }
  const readOnce = async (pid: number): Promise<ProcessStat | null> => {
    const seen = await readOnceOrIncomplete(pid)
    return seen === 'incomplete' ? null : seen
  }
  const readNowOnce = (pid: number): ProcessStat | 'absent' | null => {
    const text = readSmallProcFileNow(`${procRoot}/${pid}/stat`)
    if (text === 'absent') return 'absent'
    // Why signal 0 on an unreadable file: only its ESRCH proves anything.
    if (text === null) return signalZeroSaysGone(pid) ? 'absent' : null
    return parseProcStat(text)
  }
  // An `X` row is read again, and the second read answers: gone or `X` again for a reaped
  // process, the running process for one whose thread exec'd (isDefunct says why).
  const read = async (pid: number): Promise<ProcessStat | null> => {
    const seen = await readOnce(pid)
    return seen !== null && showsStateX(seen) ? readOnce(pid) : seen
  }
  const readNow = (pid: number): ProcessStat | 'absent' | null => {
    const seen = readNowOnce(pid)
    return seen !== null && seen !== 'absent' && showsStateX(seen) ? readNowOnce(pid) : seen
  }
  return {
    kind: 'procfs',
    read,
    async list() {
      let entries: string[]
      try {
        entries = await readdir(procRoot)
      } catch {
        return null
      }
      const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number)
      const readRow = async (pid: number): Promise<ProcessStat | 'incomplete' | null> => {
        const seen = await readOnceOrIncomplete(pid)
        return seen !== null && seen !== 'incomplete' && showsStateX(seen) ? readOnceOrIncomplete(pid) : seen
      }
      const stats = await mapBounded(pids, NODE_PTY_PROC_READS_IN_FLIGHT, readRow)
      // Short of descriptors for the reads in flight: read the missing rows again one at a time,
      // which needs a single free descriptor.
      // A row missing for want of a descriptor would read as a process gone: no table at all
      // ("cannot say") rather than one that silently leaves a live process out — at the first
      // row that even a read on its own cannot get (the next look tries again).
      for (let index = 0; index < stats.length; index += 1) {
        if (stats[index] !== 'incomplete') continue
        stats[index] = await readRow(pids[index]!)
        if (stats[index] === 'incomplete') return null
      }
      return stats.filter((s): s is ProcessStat => s !== null && s !== 'incomplete')
    },
    async cwd(pid) {
      try {
        return await readlink(`${procRoot}/${pid}/cwd`)
      } catch {
        return null
      }
    },
    readNow,
    isGone: (pid, startTime) => isGoneBy(readNow(pid), startTime),
    isReaped: (pid) => signalZeroSaysGone(pid),
  }
}

/** Run a program and resolve with its stdout, or `null` on any failure or timeout. */
function run(file: string, args: string[]): Promise<string | null> {
  return new Promise((resolveRun) => {
    execFile(file, args, { timeout: NODE_PTY_PROCESS_QUERY_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout) => {
      resolveRun(error === null ? stdout : null)
    })
  })
}

/** The `ps` columns both BSD (macOS) and procps `ps` understand. */
const PS_COLUMNS = 'pid=,ppid=,pgid=,tpgid=,stat=,comm='

/** macOS and other Unixes: `ps` for the process table, `lsof` for working directories. */
export function createPsInspector(): ProcessInspector {
  return {
    kind: 'ps',
    async read(pid) {
      const out = await run('ps', ['-o', PS_COLUMNS, '-p', String(pid)])
      if (out === null) return null
      const row = out.split('\n').map(parsePsLine).find((s) => s !== null && s.pid === pid)
      return row ?? null
    },
    async list() {
      const out = await run('ps', ['-A', '-o', PS_COLUMNS])
      if (out === null) return null
      return out.split('\n').map(parsePsLine).filter((s): s is ProcessStat => s !== null)
    },
    async cwd(pid) {
      const out = await run('lsof', ['-a', '-p', String(pid), '-d', 'cwd', '-Fn'])
      return out === null ? null : parseLsofCwd(out)
    },
    // Why no row: `ps` is a subprocess, far too dear for a synchronous look; absence is one syscall.
    readNow: (pid) => (signalZeroSaysGone(pid) ? 'absent' : null),
    isGone: (pid) => signalZeroSaysGone(pid),
    isReaped: (pid) => signalZeroSaysGone(pid),
  }
}

/** Windows and anything unknown: every answer is "cannot say". */
export function createNullInspector(): ProcessInspector {
  return {
    kind: 'none',
    read: () => Promise.resolve(null),
    list: () => Promise.resolve(null),
    cwd: () => Promise.resolve(null),
    readNow: () => null,
    isGone: () => false,
    isReaped: () => false,
  }
}

/** The inspector for a platform: `/proc` on Linux, `ps`/`lsof` on macOS and the BSDs, none elsewhere. */
export function createProcessInspector(platform: NodeJS.Platform): ProcessInspector {
  if (platform === 'linux' || platform === 'android') return createProcFsInspector()
  if (platform === 'darwin' || platform === 'freebsd' || platform === 'openbsd' || platform === 'netbsd' || platform === 'sunos' || platform === 'aix') {
    return createPsInspector()
  }
  return createNullInspector()
}
