import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, lstatSync, openSync, readdirSync, readFileSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { endianness } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { exitCauseFromWire, isTerminalExitCause, type TerminalExitCause } from '../exit-cause/index.js'
import { isPtyIncarnationId } from '../contracts/incarnation.js'
import { isDefunct, type ProcessInspector } from '../node-pty/process-inspector.js'
import { PTY_HOST_EXITED_SESSION_MEMORY } from './host-sessions.js'
import { sessionIdProblem } from './protocol.js'

/**
 * The session journal (`<socket>.journal`): what a host writes, per session, so that a host that
 * takes its place after it died (SIGKILL, OOM, a crash) finds each session's process again — the
 * hang-up of a dead host's terminals ends most programs, not one that ignores it (`nohup`,
 * `trap '' HUP`, a daemonizing child) — and so that the exits it remembers outlive it (below).
 *
 * **Format.** UTF-8 lines, each one JSON object. The first line is the header, `{ "ptykitJournal":
 * 1, "bootId", "unaccounted" }` (`bootId`: `/proc/sys/kernel/random/boot_id`, `null` where there is
 * none; `unaccounted`: this host cannot account for every session its own predecessors left — see
 * {@link PredecessorJournal.unaccounted}). Then, appended per event, keyed by a number `k` unique
 * in the file:
 *
 * - `{ "t": "i", "k", "id" }` — a spawn of PTY `id` is about to fork (written **before** the fork:
 *   a host that dies after it leaves a session its successor knows of, even without a pid);
 * - `{ "t": "s", "k", "inc", "pid", "st", "pg", "sid", "at"? }` — the spawn's process: incarnation
 *   id, leader pid, its start time (`/proc/<pid>/stat` field 22, which with the pid names it for
 *   good), its process group and session (both its pid: a line with others is malformed), and
 *   `at`: a time (clock ticks since boot, as the start times are) at which the session held its
 *   number — its leader was seen alive then. Every process with that session id started before
 *   `at` is the session's (the kernel hands no pid number out while a process uses it as its
 *   pid, group or session id); see `predecessor-orphans.ts`;
 * - `{ "t": "e", "k" }` — that session ended (its spawn failed, or — a predecessor's orphan — its
 *   process was proven gone); and, when the host observed its exit, with the exit as the host
 *   remembers it (see {@link JournalExit}): `{ "t": "e", "k", "id", "code", "cause"?, "inc"?,
 *   "seq"?, "diedBeforeStopRequest": true | "stopRequestedBeforeDeath": true }` — the PTY id, the
 *   exit code, the cause as wire data (as the `exit` message carries it), the incarnation, the
 *   output sequence where its output ended, and exactly one of the two stop flags. Since 7 Dec
 *   (before, a bare `e` line: a successor learnt nothing of how the session ended).
 *
 * **Exits.** A host remembers the exits of its latest `exitedSessionMemory` ended sessions
 * (`listExits`, re-attaches, probes); so does its journal, so that they survive the host: its idle
 * exit, a close, its death. A compaction keeps the latest `exitedSessionMemory` exits (one per PTY
 * id, as the host keeps them), each as an `i` line and its `e` line — so a reader of the format
 * before exits (a host before 7 Dec) reads each as a session that began and ended, and nothing
 * else changes for it. A successor loads them into its own remembered exits, each validated as
 * untrusted input ({@link readPredecessorJournal}): an exit line that is not well formed is not
 * remembered (the session it ends still ends). Exits are facts of the past: a journal of another
 * boot still gives them. An app forgets those it dealt with (`forgetExits`): the file is then
 * rewritten at once without them ({@link SessionJournal.forgetExits}).
 *
 * **Cost.** One `write(2)` of one short line per spawn (two: before and after the fork) and per
 * exit, on a file opened once with `O_APPEND`; the start time is one read of `/proc/<pid>/stat`
 * per spawn. When the file holds more than {@link PTY_HOST_JOURNAL_COMPACT_LINES} lines and four
 * times as many as the open sessions and the remembered exits need, it is rewritten with only
 * those (a new file renamed over the old), so it stays proportional to the sessions that run and
 * the exits kept (~270 bytes an exit with UUID ids: ~270 KB for the default 1 024).
 *
 * **Durability.** A rewrite (the start, a compaction, a `forgetExits`, the close) survives a machine
 * crash once done: the new file is `fsync`ed before it is renamed into place, and the directory
 * after (a directory that refuses its sync does not fail it: a crash may then bring back the file
 * before it, never an empty one). A failed sync, of the file or of the directory, is told to the
 * host's log (the `log` option), once per kind of failure. An append is not synced: an `fdatasync`
 * per exit costs ~0.5–2 ms of the host's one thread on a disk (docs/pty-host.md, measured 7 Dec), so
 * a crash may lose the last moments' lines, or tear the last one (read as malformed).
 *
 * **Privacy.** It lives beside the lock, in the socket's private directory, created 0600 under a
 * temporary name and renamed into place; a journal that is not a regular file of this user with no
 * group/other bits is never read (its sessions count as unaccounted for). It holds PTY ids,
 * process identities and exits — never a session's output, arguments or environment.
 *
 * A host that closes (idle, or on request) removes it when nothing is left in it: no session it
 * cannot account for as ended (a predecessor's process still running), no remembered exit. Else
 * it keeps exactly those for the next host.
 */

/** The journal's format version (the header's `ptykitJournal`). */
const JOURNAL_VERSION = 1

/**
 * The fewest lines a journal holds before it is compacted (and only when it holds four times what
 * its open sessions need): large enough that a host running a few sessions rewrites its journal
 * rarely, small enough (~150 bytes a line: ~600 KiB) that a successor reads it in a few ms.
 */
export const PTY_HOST_JOURNAL_COMPACT_LINES = 4_096

/**
 * The largest journal a successor reads (bytes). A journal stays proportional to the sessions that
 * run (compaction); a larger file is not one a host wrote, and is answered as unreadable.
 */
export const PTY_HOST_JOURNAL_MAX_READ_BYTES = 64 * 1024 * 1024

/** The kernel's clock ticks per second (`getconf CLK_TCK`), read once: `null` where it cannot be. */
let clockTicksPerSecond: number | null | undefined

function readClockTicksPerSecond(): number | null {
  // The auxiliary vector's AT_CLKTCK (17), as libc's sysconf(_SC_CLK_TCK) reads it: no subprocess.
  try {
    const auxv = readFileSync('/proc/self/auxv')
    const little = endianness() === 'LE'
    for (let offset = 0; offset + 16 <= auxv.length; offset += 16) {
      const type = little ? auxv.readBigUInt64LE(offset) : auxv.readBigUInt64BE(offset)
      if (type === 0n) break
      if (type === 17n) {
        const value = Number(little ? auxv.readBigUInt64LE(offset + 8) : auxv.readBigUInt64BE(offset + 8))
        if (Number.isSafeInteger(value) && value > 0) return value
      }
    }
  } catch {
    // Not readable here: ask getconf.
  }
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return Number.isSafeInteger(value) && value > 0 ? value : null
  } catch {
    return null
  }
}

/**
 * Now, in the unit of the start times (`/proc/<pid>/stat` field 22: clock ticks since boot), never
 * later than the true time (`/proc/uptime` is cut down to hundredths, and so is this): a process
 * whose start time is below it started before it. `null` where it cannot be read (no `/proc`).
 */
export function bootTicksNow(): number | null {
  clockTicksPerSecond ??= readClockTicksPerSecond()
  if (clockTicksPerSecond === null) return null
  let text: string
  try {
    text = readFileSync('/proc/uptime', 'utf8')
  } catch {
    return null
  }
  const match = /^(\d+)\.(\d{2})\s/.exec(text)
  if (match === null) return null
  const hundredths = Number(match[1]) * 100 + Number(match[2])
  return Math.floor((hundredths * clockTicksPerSecond) / 100)
}

/**
 * The file calls a journal's rewrite makes (`node:fs`'s own by default; a test passes wrappers to
 * see their order: write, fsync, close, rename, then the directory's fsync).
 */
export type JournalFileSystem = Pick<typeof import('node:fs'), 'openSync' | 'writeSync' | 'fsyncSync' | 'closeSync' | 'renameSync' | 'unlinkSync'>

/** `node:fs`'s calls: what a host's journal uses. */
const NODE_JOURNAL_FILE_SYSTEM: JournalFileSystem = { openSync, writeSync, fsyncSync, closeSync, renameSync, unlinkSync }

/** A session's process as the journal records it. */
export type JournalProcess = {
  /** The PTY's incarnation id. */
  incarnationId: string
  /** The leader's pid. */
  pid: number
  /** The leader's start time (`/proc/<pid>/stat` field 22, clock ticks since boot, as text). */
  startTime: string
  /** The leader's process group. */
  pgid: number
  /** The leader's session id. */
  sid: number
  /**
   * A time (clock ticks since boot) at which the session was seen holding its number (a known
   * member alive): a process with its session id that started before it is the session's.
   */
  heldAt?: number
}

/**
 * An ended session's exit as a journal records it (the `e` line's fields): what the host's `exit`
 * message says of it, so that a successor answers `listExits`, re-attaches and probes with it.
 */
export type JournalExit = {
  /** The PTY id. */
  id: string
  /** The exit code the host's node-pty provider reported. */
  code: number
  /** The cause the host built from the real status (absent when it had none: an app resolves the code). */
  cause?: TerminalExitCause
  /** The incarnation that exited, when attested. */
  incarnationId?: string
  /** The output sequence (chars) where the session's output ended. */
  seq?: number
  /**
   * A stop of this incarnation reached the host while it lived (`stopRequestedBeforeDeath`: an
   * operator close); `false`: it ended before any did (`diedBeforeStopRequest`).
   */
  stopRequestedBeforeDeath: boolean
}

/** A session a journal shows open (spawned, or about to be, and not ended). */
export type JournalSession = {
  /** The PTY id. */
  id: string
  /** Its process; absent when the host died between the intent and the spawn's record. */
  process?: JournalProcess
}

/** What a successor reads in its predecessor's journal. */
export type PredecessorJournal = {
  /** The sessions that were open when the predecessor died (or closed leaving them). */
  open: JournalSession[]
  /**
   * The journal cannot tell of every session its host held: a predecessor of that host died
   * without a journal (an older ptykit) or with an unreadable one, or a line is malformed. An id
   * it does not name may then still belong to a running process.
   */
  unaccounted: boolean
  /**
   * The exits it remembers, oldest first, one per PTY id (the latest), at most the
   * `exitMemory` given to {@link readPredecessorJournal}; absent when none.
   */
  exits?: JournalExit[]
}

/** The current boot's id, or `null` where the OS has none to read. */
export function currentBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null
  } catch {
    return null
  }
}

/**
 * Read the journal at `path`: `'absent'` when there is none, `'unreadable'` when it is not this
 * user's private regular file or its header is not one this version reads, else its open
 * sessions and the exits it remembers (the latest `exitMemory`). A journal of another boot holds
 * no running process (a reboot ended them all): nothing open, nothing unaccounted — its exits
 * stay true.
 *
 * Each exit is read as untrusted input: an `e` line whose exit is not well formed (an id that is
 * not its `i` line's, or not a session id; a code that is not an integer; a cause that
 * `isTerminalExitCause` rejects, unless an `unknown` of a reason this version does not know; an
 * incarnation that is not one; a sequence that is not a count; both stop flags or neither) is not
 * remembered. The cause is read as an app reads one off the wire (`exitCauseFromWire`): a valid
 * one kept, an unknown reason read as `unknown/cause_unreported`, an absent one resolved from the
 * code.
 *
 * @param exitMemory - the most exits returned (the latest); default 1 024, `PTY_HOST_EXITED_SESSION_MEMORY`
 */
export function readPredecessorJournal(path: string, bootId: string | null = currentBootId(), exitMemory: number = PTY_HOST_EXITED_SESSION_MEMORY): PredecessorJournal | 'absent' | 'unreadable' {
  let text: string
  try {
    // Opened first, then judged by what is open (`fstat`): the file checked is the file read.
    // O_NOFOLLOW: no symlink; O_NONBLOCK: a FIFO put in its place cannot hold this host (and the
    // lock it holds) waiting for a writer.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      const stats = fstatSync(fd)
      const uid = process.getuid?.()
      if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0 || stats.size > PTY_HOST_JOURNAL_MAX_READ_BYTES) return 'unreadable'
      const buffer = Buffer.alloc(stats.size)
      let filled = 0
      while (filled < buffer.length) {
        const read = readSync(fd, buffer, filled, buffer.length - filled, null)
        if (read === 0) break
        filled += read
      }
      text = buffer.subarray(0, filled).toString('utf8')
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unreadable'
  }
  const lines = text.split('\n')
  const header = parseLine(lines[0] ?? '')
  if (header === null || header.ptykitJournal !== JOURNAL_VERSION) return 'unreadable'
  const otherBoot = typeof header.bootId === 'string' && bootId !== null && header.bootId !== bootId
  // A journal whose boot cannot be compared with this one's may be another boot's: its `at` times
  // (another boot's clock) are not trusted to prove membership.
  const sameBoot = typeof header.bootId === 'string' && bootId !== null
  let unaccounted = header.unaccounted === true
  const open = new Map<number, JournalSession>()
  /** The exits read, by PTY id, oldest first (a later one of an id replaces it, at the end). */
  const exits = new Map<string, JournalExit>()
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!
    // The file ends with a newline: the last piece is empty.
    if (line.length === 0 && index === lines.length - 1) break
    const entry = parseLine(line)
    const key = entry?.k
    if (entry === null || typeof key !== 'number') {
      // A torn or foreign line may have been a session's: say so rather than guess.
      unaccounted = true
      continue
    }
    if (entry.t === 'i' && typeof entry.id === 'string') {
      open.set(key, { id: entry.id })
      // A new session under the id: its host forgot the id's earlier exit (as it does at a spawn).
      exits.delete(entry.id)
    }
    else if (entry.t === 's' && isJournalProcess(entry)) {
      const session = open.get(key)
      // An `s` without its `i`: the journal lost a session's intent (it never writes one so):
      // whatever it names may run unnamed.
      if (session === undefined) unaccounted = true
      else {
        session.process = { incarnationId: entry.inc, pid: entry.pid, startTime: entry.st, pgid: entry.pg, sid: entry.sid }
        if (sameBoot && Number.isSafeInteger(entry.at) && (entry.at as number) >= 0) session.process.heldAt = entry.at as number
      }
    } else if (entry.t === 'e') {
      const session = open.get(key)
      // An `e` without its `i`: likewise.
      if (session === undefined) unaccounted = true
      else {
        open.delete(key)
        const exit = exitOfLine(entry, session.id)
        if (exit !== null) {
          exits.delete(exit.id)
          exits.set(exit.id, exit)
          // Bounded as it is read: the oldest go first.
          if (exits.size > exitMemory) exits.delete(exits.keys().next().value!)
        }
      }
    } else unaccounted = true
  }
  const read: PredecessorJournal = otherBoot ? { open: [], unaccounted: false } : { open: [...open.values()], unaccounted }
  if (exits.size > 0) read.exits = [...exits.values()]
  return read
}

/**
 * The exit an `e` line records, when it records one that is well formed (see
 * {@link readPredecessorJournal}): `null` for a bare `e` line (a failed spawn, an orphan proven
 * gone, a host before exits were journalled) and for one that is not well formed.
 */
function exitOfLine(entry: Record<string, unknown>, id: string): JournalExit | null {
  if (entry.id === undefined && entry.code === undefined) return null
  if (entry.id !== id || sessionIdProblem(id) !== undefined) return null
  const code = entry.code
  if (typeof code !== 'number' || !Number.isSafeInteger(code)) return null
  // A cause the guard rejects is not remembered — except an `unknown` of a reason this version does
  // not know (a newer host's), which stays unknown (`exitCauseFromWire`: never narrower).
  if (entry.cause !== undefined && !isTerminalExitCause(entry.cause) && !isUnknownOfAnyReason(entry.cause)) return null
  if (entry.inc !== undefined && !isPtyIncarnationId(entry.inc)) return null
  const seq = entry.seq
  if (seq !== undefined && !(typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0)) return null
  const died = entry.diedBeforeStopRequest === true
  const stopped = entry.stopRequestedBeforeDeath === true
  if (died === stopped || (entry.diedBeforeStopRequest !== undefined && !died) || (entry.stopRequestedBeforeDeath !== undefined && !stopped)) return null
  // The cause as an app reads one off the wire: a present one is kept (it passed the guard), an
  // absent one resolved from the code (never narrower than what the host could tell).
  const exit: JournalExit = { id, code, cause: exitCauseFromWire({ code, cause: entry.cause }), stopRequestedBeforeDeath: stopped }
  if (typeof entry.inc === 'string') exit.incarnationId = entry.inc
  if (typeof seq === 'number') exit.seq = seq
  return exit
}

/** Whether `cause` says `unknown`, with a reason that may be one this version does not know. */
function isUnknownOfAnyReason(cause: unknown): boolean {
  return typeof cause === 'object' && cause !== null && (cause as { kind?: unknown }).kind === 'unknown' && typeof (cause as { reason?: unknown }).reason === 'string'
}

/** The `e` line of a session that ended with `exit` (see the module comment). */
function exitLine(key: number, exit: JournalExit): Record<string, unknown> {
  const line: Record<string, unknown> = { t: 'e', k: key, id: exit.id, code: exit.code }
  if (exit.cause !== undefined) line.cause = exit.cause
  if (exit.incarnationId !== undefined) line.inc = exit.incarnationId
  if (exit.seq !== undefined) line.seq = exit.seq
  if (exit.stopRequestedBeforeDeath) line.stopRequestedBeforeDeath = true
  else line.diedBeforeStopRequest = true
  return line
}

function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

function isJournalProcess(entry: Record<string, unknown>): entry is { inc: string; pid: number; st: string; pg: number; sid: number; at?: unknown } {
  return (
    typeof entry.inc === 'string' &&
    Number.isSafeInteger(entry.pid) &&
    (entry.pid as number) > 1 &&
    typeof entry.st === 'string' &&
    /^\d+$/.test(entry.st) &&
    // A PTY's leader leads its session and group (node-pty's child calls setsid): a line that says
    // otherwise is not one this journal writes, and is not trusted to name what to signal.
    entry.pg === entry.pid &&
    entry.sid === entry.pid
  )
}

/**
 * The journal a host keeps (see the module comment): created when the host starts, with the
 * sessions and exits it carries over from its predecessor, appended to per spawn and exit,
 * compacted when it grows (to the open sessions and the latest `exitMemory` exits), removed (or
 * cut down to what is still unaccounted for and the exits it remembers) when the host closes.
 */
export class SessionJournal {
  readonly #path: string
  readonly #bootId: string | null
  readonly #inspector: ProcessInspector
  readonly #compactLines: number
  readonly #exitMemory: number
  readonly #fs: JournalFileSystem
  /** Where a failed sync is told (the host's log), or nothing. */
  readonly #log: ((message: string) => void) | undefined
  /** The failed syncs already told, by what failed (`file`, `directory`) and its error code: each is told once. */
  readonly #syncFailuresLogged = new Set<string>()
  #unaccounted: boolean
  #fd: number | null = null
  /** Closed by {@link close}: nothing is appended any more (else a lost descriptor is reopened). */
  #closed = false
  #lines = 0
  /** The file's length as this host wrote it: where a torn append is cut back to. */
  #bytes = 0
  #nextKey = 1
  /** The open sessions by key: what a compaction keeps. */
  readonly #open = new Map<number, JournalSession>()
  /** The keys given to the carried sessions, in the order given. */
  readonly #carriedKeys: number[]
  /** The exits remembered, by PTY id, oldest first, each with its key in the file (at most `exitMemory`). */
  readonly #exits = new Map<string, { key: number; exit: JournalExit }>()

  /**
   * Create the journal at `path` (replacing a predecessor's, already read), holding `carried`: the
   * sessions this host takes over from its predecessor, and the exits it remembers (the latest
   * `exitMemory` of them are kept). `unaccounted` is carried too.
   *
   * Temporary files a host of this journal left behind (its rewrite's, cut short by its death) are
   * removed first: this host holds the lock, so no other host is writing one.
   *
   * @param options.compactLines - the fewest lines before a compaction ({@link PTY_HOST_JOURNAL_COMPACT_LINES}; tests lower it)
   * @param options.exitMemory - how many exits it keeps (the host's `exitedSessionMemory`; default `PTY_HOST_EXITED_SESSION_MEMORY`)
   * @param options.fs - the file calls of a rewrite ({@link JournalFileSystem}; tests observe their order)
   * @param options.log - where a rewrite's failed `fsync` (of the new file, or of the directory) is
   * told, with the path and the error — once per kind of failure (what failed and its error code):
   * the host's log. Why: a compaction's and a close's rewrite fail without a caller to tell, and a
   * directory's failed sync fails no rewrite at all; without it the journal's durability was lost
   * without a word.
   * @throws when the file cannot be created (the host then refuses to start: its sessions would
   * outlive it untraceably).
   */
  constructor(
    path: string,
    inspector: ProcessInspector,
    carried: { open: readonly JournalSession[]; unaccounted: boolean; exits?: readonly JournalExit[] | undefined },
    bootId: string | null = currentBootId(),
    options: { compactLines?: number; exitMemory?: number; fs?: JournalFileSystem; log?: (message: string) => void } = {},
  ) {
    this.#path = path
    this.#bootId = bootId
    this.#inspector = inspector
    this.#compactLines = options.compactLines ?? PTY_HOST_JOURNAL_COMPACT_LINES
    this.#exitMemory = options.exitMemory ?? PTY_HOST_EXITED_SESSION_MEMORY
    this.#fs = options.fs ?? NODE_JOURNAL_FILE_SYSTEM
    this.#log = options.log
    this.#unaccounted = carried.unaccounted
    removeStaleTemporaries(path)
    for (const exit of carried.exits ?? []) this.#remember(this.#nextKey++, { ...exit })
    const keys: number[] = []
    for (const session of carried.open) {
      const key = this.#nextKey++
      this.#open.set(key, { ...session })
      keys.push(key)
    }
    this.#carriedKeys = keys
    this.#rewrite()
  }

  /** The exits this journal remembers (carried over, then recorded by {@link ended}), oldest first. */
  get exits(): JournalExit[] {
    return [...this.#exits.values()].map(({ exit }) => exit)
  }

  /** The key of each carried session (in the order given to the constructor), for {@link ended}. */
  get carriedKeys(): readonly number[] {
    return this.#carriedKeys
  }

  /**
   * A spawn of `id` is about to fork: record it first. Throws when the line cannot be written — the
   * spawn must then not happen (a process the journal does not know of could outlive this host
   * untraceably).
   */
  intent(id: string): number {
    const key = this.#nextKey++
    // Open before the append: a compaction the append sets off keeps it (it rewrites the open
    // sessions); undone when the line could not be written (the spawn does not happen).
    this.#open.set(key, { id })
    // The id's earlier exit is forgotten, as the host forgets it at the spawn (a reader of the
    // file forgets it at this line).
    this.#exits.delete(id)
    try {
      this.#append({ t: 'i', k: key, id })
    } catch (error) {
      this.#open.delete(key)
      throw error
    }
    return key
  }

  /**
   * The spawn of `key` started `pid`: read its identity (start time, group, session) and record it.
   * Nothing is recorded when the pid does not show the leader — no such process, a zombie, or a
   * process that is not this host's child (the leader already reaped and its pid given away): the
   * session stays an intent, which a successor answers as unknown.
   */
  spawned(key: number, incarnationId: string | undefined, pid: number | null): void {
    const session = this.#open.get(key)
    if (session === undefined || incarnationId === undefined || pid === null) return
    // Read before the row: the leader, seen alive after it, held its number at that time.
    const heldAt = bootTicksNow()
    const row = this.#inspector.readNow(pid)
    if (row === null || row === 'absent' || isDefunct(row) || row.startTime === undefined) return
    // A PTY leader is this host's child. Its group and session are its own pid by construction
    // (node-pty's child calls setsid before it execs) — not read here: right after the fork the
    // child may not have called it yet, and the row would show this host's.
    if (row.ppid !== process.pid) return
    const recorded: JournalProcess = { incarnationId, pid, startTime: row.startTime, pgid: pid, sid: pid }
    if (heldAt !== null) recorded.heldAt = heldAt
    session.process = recorded
    this.#tryAppend(processLine(key, recorded))
  }

  /**
   * The session of `key` ended: its exit was observed (`exit`: recorded with it, and remembered
   * among the latest `exitMemory`), its spawn failed, or its process was proven gone.
   */
  ended(key: number | undefined, exit?: JournalExit): void {
    if (key === undefined || !this.#open.delete(key)) return
    // Remembered before the append: a compaction the append sets off keeps it.
    if (exit !== undefined) this.#remember(key, exit)
    this.#tryAppend(exit === undefined ? { t: 'e', k: key } : exitLine(key, exit))
  }

  /**
   * Forget the remembered exits named (an app dealt with them: `forgetExits`), each only when the
   * exit the journal remembers under its id is of the incarnation named (`undefined`: one that
   * attests none) — never a later one's. The journal is rewritten at once without them (a new file
   * renamed over the old, as a compaction), so no host after this one lists them again.
   *
   * @throws when the rewrite fails: then nothing is forgotten (the file, and what this journal
   * remembers, stay as they were).
   */
  forgetExits(forgotten: readonly { id: string; incarnationId: string | undefined }[]): void {
    if (this.#closed) throw new Error('The session journal is closed')
    const before = [...this.#exits]
    let changed = false
    for (const { id, incarnationId } of forgotten) {
      const kept = this.#exits.get(id)
      if (kept === undefined || kept.exit.incarnationId !== incarnationId) continue
      this.#exits.delete(id)
      changed = true
    }
    if (!changed) return
    try {
      this.#writeWhole()
    } catch (error) {
      this.#exits.clear()
      for (const [id, kept] of before) this.#exits.set(id, kept)
      throw error
    }
    // Appended to from now on: the file renamed into place (a descriptor that cannot be reopened
    // now is reopened by the next append).
    this.#closeFd()
    try {
      this.#reopen()
    } catch {
      // The next append tries again.
    }
  }

  /** Remember `exit` (the latest of its id), forgetting the oldest past `exitMemory`. */
  #remember(key: number, exit: JournalExit): void {
    this.#exits.delete(exit.id)
    this.#exits.set(exit.id, { key, exit })
    while (this.#exits.size > this.#exitMemory) this.#exits.delete(this.#exits.keys().next().value!)
  }

  /** Sessions still open. */
  get openCount(): number {
    return this.#open.size
  }

  /**
   * The host closes (idle, or on request): remove the journal when nothing is left in it; else
   * keep only what is — a predecessor's process still running, the mark that some predecessor's
   * sessions are unaccounted for, the exits it remembers — for the next host.
   */
  close(): void {
    this.#closed = true
    this.#closeFd()
    if (this.#open.size === 0 && !this.#unaccounted && this.#exits.size === 0) {
      try {
        unlinkSync(this.#path)
      } catch {
        // Already gone.
      }
      return
    }
    try {
      this.#writeWhole()
    } catch {
      // The file as it stands still tells at least as much.
    }
  }

  /**
   * Append one line, whole or not at all: a write cut short (a full disk) is cut back off the file
   * and throws, so no torn line is left for a later line to be glued to — and the caller (a spawn)
   * learns the line is not there.
   */
  #append(entry: Record<string, unknown>): void {
    if (this.#closed) throw new Error('The session journal is closed')
    // A descriptor lost to a failed compaction is reopened here, at each append until it is.
    if (this.#fd === null) this.#reopen()
    const fd = this.#fd!
    const line = Buffer.from(`${JSON.stringify(entry)}\n`)
    let written = 0
    try {
      written = writeSync(fd, line)
    } catch (error) {
      this.#cutBack(fd)
      throw error
    }
    if (written !== line.length) {
      this.#cutBack(fd)
      throw new Error(`The session journal's line was cut short (${written} of ${line.length} bytes written: is the disk full?)`)
    }
    this.#bytes += line.length
    this.#lines += 1
    // Four times what the open sessions and the remembered exits need (two lines each, and the header).
    if (this.#lines > this.#compactLines && this.#lines > 4 * (2 * (this.#open.size + this.#exits.size) + 1)) this.#compact()
  }

  /** Cut a torn append back off the file (to what this host wrote before it). */
  #cutBack(fd: number): void {
    try {
      ftruncateSync(fd, this.#bytes)
    } catch {
      // Then the torn piece stays: a successor reads it as a malformed line (unaccounted).
    }
  }

  #reopen(): void {
    const fd = openSync(this.#path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW)
    try {
      this.#bytes = fstatSync(fd).size
    } catch (error) {
      closeSync(fd)
      throw error
    }
    this.#fd = fd
  }

  /** An append that may fail without failing its caller: the journal then says less, never something false. */
  #tryAppend(entry: Record<string, unknown>): void {
    try {
      this.#append(entry)
    } catch {
      // A lost `s` leaves an intent (unknown to a successor); a lost `e` a process the successor
      // finds gone. Neither makes it claim what is not so.
    }
  }

  #compact(): void {
    try {
      this.#rewrite()
    } catch {
      // Keep appending to the file in place (reopened by the next append when the descriptor was lost).
      if (this.#fd === null) {
        try {
          this.#reopen()
        } catch {
          // The next append tries again.
        }
      }
    }
  }

  /** Write the whole journal (header, remembered exits, open sessions) under a temporary name, rename it into place, and append to it from now on. */
  #rewrite(): void {
    this.#writeWhole()
    this.#closeFd()
    this.#reopen()
  }

  #writeWhole(): void {
    const lines = [JSON.stringify({ ptykitJournal: JOURNAL_VERSION, bootId: this.#bootId, unaccounted: this.#unaccounted })]
    // The exits first (oldest first), each as its session's `i` and `e` lines: an open session's
    // `i` line after them is a later session (no exit of an open session's id is remembered).
    for (const { key, exit } of this.#exits.values()) lines.push(JSON.stringify({ t: 'i', k: key, id: exit.id }), JSON.stringify(exitLine(key, exit)))
    for (const [key, session] of this.#open) {
      lines.push(JSON.stringify({ t: 'i', k: key, id: session.id }))
      if (session.process !== undefined) lines.push(JSON.stringify(processLine(key, session.process)))
    }
    const temporary = `${this.#path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
    const fs = this.#fs
    let fd: number | null = null
    try {
      const text = Buffer.from(`${lines.join('\n')}\n`)
      fd = fs.openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
      for (let written = 0; written < text.length; ) written += fs.writeSync(fd, text, written, text.length - written)
      // The data on disk before the name points at it: else a machine crash may leave the new name
      // on an empty file (the rename reached the disk, the data not) — a journal with no header,
      // read as unreadable: every exit lost, every session unaccounted for.
      try {
        fs.fsyncSync(fd)
      } catch (error) {
        this.#logSyncFailure('file', temporary, error, `the rewrite of ${this.#path} was not made (the journal stays as it was)`)
        throw error
      }
      const closing = fd
      fd = null
      fs.closeSync(closing)
      fs.renameSync(temporary, this.#path)
    } catch (error) {
      if (fd !== null) {
        try {
          fs.closeSync(fd)
        } catch {
          // Closed already.
        }
      }
      try {
        fs.unlinkSync(temporary)
      } catch {
        // Not created.
      }
      throw error
    }
    this.#lines = lines.length
    this.#syncDirectory()
  }

  /**
   * Make the rename durable: sync the journal's directory (the entry that names the new file).
   * Not synced, a machine crash may still show the old journal after the rewrite (exits forgotten
   * listed again, a compaction undone) — never an empty or partial one: the file's data was synced
   * before the rename. A directory that refuses it (some filesystems answer `EINVAL`) does not fail
   * the rewrite: it stands for every process at once, only its durability across a crash is then
   * the filesystem's own.
   */
  #syncDirectory(): void {
    const fs = this.#fs
    const directory = dirname(this.#path)
    const consequence = `the rewrite of ${this.#path} stands, but a machine crash may bring back the journal as it was before it`
    let fd: number
    try {
      fd = fs.openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY)
    } catch (error) {
      this.#logSyncFailure('directory', directory, error, consequence)
      return
    }
    try {
      fs.fsyncSync(fd)
    } catch (error) {
      // Refused (see above): the rewrite stands.
      this.#logSyncFailure('directory', directory, error, consequence)
    } finally {
      try {
        fs.closeSync(fd)
      } catch {
        // Closed already.
      }
    }
  }

  /**
   * Tell the log that the sync of `what` (`path`) failed with `error`, and what follows — once per
   * kind of failure (`what` and the error's code): a filesystem that refuses a directory's sync
   * refuses it at every rewrite, and the log is a diagnosis, not a stream of the same line.
   */
  #logSyncFailure(what: 'file' | 'directory', path: string, error: unknown, consequence: string): void {
    if (this.#log === undefined) return
    const code = (error as NodeJS.ErrnoException | null)?.code ?? 'no code'
    const kind = `${what}:${code}`
    if (this.#syncFailuresLogged.has(kind)) return
    this.#syncFailuresLogged.add(kind)
    const message = error instanceof Error ? error.message : String(error)
    try {
      this.#log(`session journal: fsync of the ${what === 'file' ? 'new journal file' : 'directory'} ${path} failed (${code}: ${message}): ${consequence} (told once for ${kind})`)
    } catch {
      // A log that throws must not fail the journal.
    }
  }

  #closeFd(): void {
    if (this.#fd === null) return
    try {
      closeSync(this.#fd)
    } catch {
      // Closed already.
    }
    this.#fd = null
  }
}

/** The `s` line of a session's process. */
function processLine(key: number, recorded: JournalProcess): Record<string, unknown> {
  const line: Record<string, unknown> = { t: 's', k: key, inc: recorded.incarnationId, pid: recorded.pid, st: recorded.startTime, pg: recorded.pgid, sid: recorded.sid }
  if (recorded.heldAt !== undefined) line.at = recorded.heldAt
  return line
}

/**
 * Remove the temporary files of this journal's rewrites that a host left (it died mid-rewrite):
 * only this user's regular files named as a rewrite names them (`<journal>.<pid>.<12 hex>.tmp`).
 */
function removeStaleTemporaries(path: string): void {
  const directory = dirname(path)
  const prefix = `${basename(path)}.`
  const pattern = /^\d+\.[0-9a-f]{12}\.tmp$/
  let names: string[]
  try {
    names = readdirSync(directory)
  } catch {
    return
  }
  const uid = process.getuid?.()
  for (const name of names) {
    if (!name.startsWith(prefix) || !pattern.test(name.slice(prefix.length))) continue
    const file = join(directory, name)
    try {
      const stats = lstatSync(file)
      if (stats.isFile() && (uid === undefined || stats.uid === uid)) unlinkSync(file)
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}
