import { randomBytes } from 'node:crypto'
import { closeSync, constants, lstatSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
import { isDefunct, type ProcessInspector } from '../node-pty/process-inspector.js'

/**
 * The session journal (`<socket>.journal`): what a host writes, per session, so that a host that
 * takes its place after it died (SIGKILL, OOM, a crash) finds each session's process again — the
 * hang-up of a dead host's terminals ends most programs, not one that ignores it (`nohup`,
 * `trap '' HUP`, a daemonizing child).
 *
 * **Format.** UTF-8 lines, each one JSON object. The first line is the header, `{ "ptykitJournal":
 * 1, "bootId", "unaccounted" }` (`bootId`: `/proc/sys/kernel/random/boot_id`, `null` where there is
 * none; `unaccounted`: this host cannot account for every session its own predecessors left — see
 * {@link PredecessorJournal.unaccounted}). Then, appended per event, keyed by a number `k` unique
 * in the file:
 *
 * - `{ "t": "i", "k", "id" }` — a spawn of PTY `id` is about to fork (written **before** the fork:
 *   a host that dies after it leaves a session its successor knows of, even without a pid);
 * - `{ "t": "s", "k", "inc", "pid", "st", "pg", "sid" }` — the spawn's process: incarnation id,
 *   leader pid, its start time (`/proc/<pid>/stat` field 22, which with the pid names it for good),
 *   its process group and session;
 * - `{ "t": "e", "k" }` — that session ended (its exit observed, or its spawn failed).
 *
 * **Cost.** One `write(2)` of one short line per spawn (two: before and after the fork) and per
 * exit, on a file opened once with `O_APPEND`; the start time is one read of `/proc/<pid>/stat`
 * per spawn. When the file holds more than {@link PTY_HOST_JOURNAL_COMPACT_LINES} lines and four
 * times as many as the open sessions need, it is rewritten with only those (a new file renamed
 * over the old), so it stays proportional to the sessions that run.
 *
 * **Privacy.** It lives beside the lock, in the socket's private directory, created 0600 under a
 * temporary name and renamed into place; a journal that is not a regular file of this user with no
 * group/other bits is never read (its sessions count as unaccounted for).
 *
 * A host that closes cleanly removes it — unless sessions it cannot account for as ended remain
 * (a predecessor's process still running): then it keeps exactly those for the next host.
 */

/** The journal's format version (the header's `ptykitJournal`). */
const JOURNAL_VERSION = 1

/**
 * The fewest lines a journal holds before it is compacted (and only when it holds four times what
 * its open sessions need): large enough that a host running a few sessions rewrites its journal
 * rarely, small enough (~150 bytes a line: ~600 KiB) that a successor reads it in a few ms.
 */
export const PTY_HOST_JOURNAL_COMPACT_LINES = 4_096

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
 * sessions. A journal of another boot holds no running process (a reboot ended them all):
 * nothing open, nothing unaccounted.
 */
export function readPredecessorJournal(path: string, bootId: string | null = currentBootId()): PredecessorJournal | 'absent' | 'unreadable' {
  let text: string
  try {
    const stats = lstatSync(path)
    const uid = process.getuid?.()
    if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0) return 'unreadable'
    // O_NOFOLLOW: the file checked is the file read.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      text = readFileSync(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unreadable'
  }
  const lines = text.split('\n')
  const header = parseLine(lines[0] ?? '')
  if (header === null || header.ptykitJournal !== JOURNAL_VERSION) return 'unreadable'
  if (typeof header.bootId === 'string' && bootId !== null && header.bootId !== bootId) return { open: [], unaccounted: false }
  let unaccounted = header.unaccounted === true
  const open = new Map<number, JournalSession>()
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
    if (entry.t === 'i' && typeof entry.id === 'string') open.set(key, { id: entry.id })
    else if (entry.t === 's' && isJournalProcess(entry)) {
      const session = open.get(key)
      if (session !== undefined) session.process = { incarnationId: entry.inc, pid: entry.pid, startTime: entry.st, pgid: entry.pg, sid: entry.sid }
    } else if (entry.t === 'e') open.delete(key)
    else unaccounted = true
  }
  return { open: [...open.values()], unaccounted }
}

function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

function isJournalProcess(entry: Record<string, unknown>): entry is { inc: string; pid: number; st: string; pg: number; sid: number } {
  return (
    typeof entry.inc === 'string' &&
    Number.isSafeInteger(entry.pid) &&
    (entry.pid as number) > 0 &&
    typeof entry.st === 'string' &&
    /^\d+$/.test(entry.st) &&
    Number.isSafeInteger(entry.pg) &&
    Number.isSafeInteger(entry.sid)
  )
}

/**
 * The journal a host keeps (see the module comment): created when the host starts, with the
 * sessions it carries over from its predecessor, appended to per spawn and exit, compacted when it
 * grows, removed (or cut down to what is still unaccounted for) when the host closes.
 */
export class SessionJournal {
  readonly #path: string
  readonly #bootId: string | null
  readonly #inspector: ProcessInspector
  #unaccounted: boolean
  #fd: number | null = null
  #lines = 0
  #nextKey = 1
  /** The open sessions by key: what a compaction keeps. */
  readonly #open = new Map<number, JournalSession>()
  /** The keys given to the carried sessions, in the order given. */
  readonly #carriedKeys: number[]

  /**
   * Create the journal at `path` (replacing a predecessor's, already read), holding `carried`: the
   * sessions this host takes over from its predecessor. `unaccounted` is carried too.
   *
   * @throws when the file cannot be created (the host then refuses to start: its sessions would
   * outlive it untraceably).
   */
  constructor(path: string, inspector: ProcessInspector, carried: { open: readonly JournalSession[]; unaccounted: boolean }, bootId: string | null = currentBootId()) {
    this.#path = path
    this.#bootId = bootId
    this.#inspector = inspector
    this.#unaccounted = carried.unaccounted
    const keys: number[] = []
    for (const session of carried.open) {
      const key = this.#nextKey++
      this.#open.set(key, { ...session })
      keys.push(key)
    }
    this.#carriedKeys = keys
    this.#rewrite()
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
    this.#append({ t: 'i', k: key, id })
    this.#open.set(key, { id })
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
    const row = this.#inspector.readNow(pid)
    if (row === null || row === 'absent' || isDefunct(row) || row.startTime === undefined) return
    // A PTY leader is this host's child. Its group and session are its own pid by construction
    // (node-pty's child calls setsid before it execs) — not read here: right after the fork the
    // child may not have called it yet, and the row would show this host's.
    if (row.ppid !== process.pid) return
    const recorded: JournalProcess = { incarnationId, pid, startTime: row.startTime, pgid: pid, sid: pid }
    session.process = recorded
    this.#tryAppend({ t: 's', k: key, inc: incarnationId, pid, st: recorded.startTime, pg: recorded.pgid, sid: recorded.sid })
  }

  /** The session of `key` ended (its exit was observed, its spawn failed, or its process was proven gone). */
  ended(key: number | undefined): void {
    if (key === undefined || !this.#open.delete(key)) return
    this.#tryAppend({ t: 'e', k: key })
  }

  /** Sessions still open. */
  get openCount(): number {
    return this.#open.size
  }

  /**
   * The host closes: remove the journal when nothing is left to account for; else keep only what
   * is (a predecessor's process still running, or the mark that some predecessor's sessions are
   * unaccounted for) for the next host.
   */
  close(): void {
    this.#closeFd()
    if (this.#open.size === 0 && !this.#unaccounted) {
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

  #append(entry: Record<string, unknown>): void {
    if (this.#fd === null) throw new Error('The session journal is closed')
    writeSync(this.#fd, `${JSON.stringify(entry)}\n`)
    this.#lines += 1
    // Four times what the open sessions need (two lines each, and the header).
    if (this.#lines > PTY_HOST_JOURNAL_COMPACT_LINES && this.#lines > 4 * (2 * this.#open.size + 1)) this.#compact()
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
      // Keep appending to the old file (still reopened when the rewrite failed before the rename).
      if (this.#fd === null) this.#fd = openSync(this.#path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW)
    }
  }

  /** Write the whole journal (header and open sessions) under a temporary name, rename it into place, and append to it from now on. */
  #rewrite(): void {
    this.#writeWhole()
    this.#closeFd()
    this.#fd = openSync(this.#path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW)
  }

  #writeWhole(): void {
    const lines = [JSON.stringify({ ptykitJournal: JOURNAL_VERSION, bootId: this.#bootId, unaccounted: this.#unaccounted })]
    for (const [key, session] of this.#open) {
      lines.push(JSON.stringify({ t: 'i', k: key, id: session.id }))
      const recorded = session.process
      if (recorded !== undefined) lines.push(JSON.stringify({ t: 's', k: key, inc: recorded.incarnationId, pid: recorded.pid, st: recorded.startTime, pg: recorded.pgid, sid: recorded.sid }))
    }
    const temporary = `${this.#path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
    try {
      writeFileSync(temporary, `${lines.join('\n')}\n`, { mode: 0o600, flag: 'wx' })
      renameSync(temporary, this.#path)
    } catch (error) {
      try {
        unlinkSync(temporary)
      } catch {
        // Not created.
      }
      throw error
    }
    this.#lines = lines.length
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
