import { isDefunct, type ProcessInspector, type ProcessStat } from '../node-pty/process-inspector.js'
import { NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS, NodePtyProviderError } from '../node-pty/index.js'
import { NODE_PTY_KILL_RESERVE_MS, planStopSchedule, type StopSignal } from '../node-pty/stop-schedule.js'
import type { JournalProcess, JournalSession, PredecessorJournal, SessionJournal } from './session-journal.js'

/**
 * How often an orphan's stop looks whether its session is gone (one read of the process table).
 * A predecessor's orphan is no child of this host: no exit is reported, so its end is looked for.
 */
export const PTY_HOST_ORPHAN_STOP_POLL_MS = 20

/** A process a dead predecessor host's session left running (it ignored its terminal's hang-up). */
type Orphan = {
  readonly id: string
  readonly process: JournalProcess
  /** Its key in this host's own journal (so a successor of this host finds it too). */
  readonly key: number
  /** Proven gone: its leader no longer runs as the process the journal recorded. */
  gone: boolean
  /** The stop in progress, if any (callers join it). */
  stop: { done: Promise<void>; escalate: () => void; waitUntil: (at: number) => void } | null
}

/** The sleep of a stop step, cut short by `wake`. */
function sleepUntil(at: number, wake: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1))))), wake.then(() => undefined)]).finally(() =>
    clearTimeout(timer),
  )
}

/**
 * What a host that took a dead host's place knows of that host's sessions, from its journal
 * (`session-journal.ts`): the processes still running (same pid, same start time) — the
 * **predecessor orphans** — which it answers `probe` and `shutdown` for; the sessions proven
 * ended; and what it cannot tell (a spawn the predecessor died in the middle of, or a journal
 * that was missing or unreadable).
 *
 * An orphan is no child of this host: it gets no exit status of it (its end is unknown/
 * `host_status_unavailable` to an app), and looks for its end in the process table.
 */
export class PredecessorOrphans {
  /** Whether this host read a journal of its predecessor (it then answers for its sessions). */
  readonly journalRead: boolean
  /**
   * Whether an id the journal does not name may still be a predecessor's running process: there
   * was no readable journal while a host died holding the lock, or the journal says its own
   * predecessors were not all accounted for.
   */
  readonly unaccounted: boolean
  readonly #byIncarnation = new Map<string, Orphan>()
  readonly #byId = new Map<string, Orphan[]>()
  /** Ids of spawns the predecessor died in the middle of (no process recorded): unknown. */
  readonly #unresolved = new Set<string>()
  readonly #inspector: ProcessInspector
  #journal: SessionJournal | null = null

  /**
   * Judge the predecessor's journal: each open session whose leader still runs with the recorded
   * start time is an orphan; one whose leader is gone is proven ended (and forgotten).
   *
   * @param journal - what {@link readPredecessorJournal} read (`'absent'` / `'unreadable'` included)
   * @param succeedsDeadHost - the lock was taken over from a host that died holding it
   */
  constructor(journal: PredecessorJournal | 'absent' | 'unreadable', succeedsDeadHost: boolean, inspector: ProcessInspector) {
    this.#inspector = inspector
    this.journalRead = typeof journal === 'object'
    this.unaccounted = typeof journal === 'object' ? journal.unaccounted : journal === 'unreadable' || succeedsDeadHost
    if (typeof journal !== 'object') return
    for (const session of journal.open) {
      if (session.process === undefined || inspector.kind !== 'procfs') {
        this.#unresolved.add(session.id)
        continue
      }
      if (this.#leaderRuns(session.process) !== false) {
        const orphan: Orphan = { id: session.id, process: session.process, key: 0, gone: false, stop: null }
        this.#byIncarnation.set(session.process.incarnationId, orphan)
        this.#byId.set(session.id, [...(this.#byId.get(session.id) ?? []), orphan])
      }
    }
  }

  /** What this host's own journal carries over: the orphans still running, and the unresolved spawns. */
  carried(): { open: JournalSession[]; unaccounted: boolean } {
    const open: JournalSession[] = [...this.#byIncarnation.values()].map((orphan) => ({ id: orphan.id, process: orphan.process }))
    for (const id of this.#unresolved) open.push({ id })
    return { open, unaccounted: this.unaccounted }
  }

  /** Attach this host's journal (created with {@link carried}): the orphans' keys in it, for their ends. */
  useJournal(journal: SessionJournal): void {
    this.#journal = journal
    const keys = journal.carriedKeys
    let index = 0
    for (const orphan of this.#byIncarnation.values()) (orphan as { key: number }).key = keys[index++] ?? 0
  }

  /**
   * Whether anything of the predecessor is still not accounted for: an orphan that may run, a
   * spawn it died in, or ids no journal names. While so, no listing of this host is authoritative.
   */
  get unsettled(): boolean {
    if (this.unaccounted || this.#unresolved.size > 0) return true
    for (const orphan of this.#byIncarnation.values()) if (this.#isGone(orphan) !== true) return true
    return false
  }

  /** Whether a predecessor may have held a process under `id` that this host cannot name: answer unknown for it. */
  mayHoldUnnamed(id: string): boolean {
    return this.unaccounted || this.#unresolved.has(id)
  }

  /**
   * The answer about a predecessor's incarnation: `true` while its orphan runs, `false` once it is
   * proven gone, `null` when its pid cannot be read now; `undefined` when the journal names no such
   * incarnation.
   */
  probeIncarnation(incarnationId: string): boolean | null | undefined {
    const orphan = this.#byIncarnation.get(incarnationId)
    return orphan === undefined ? undefined : negate(this.#isGone(orphan))
  }

  /**
   * Whether an orphan under `id` runs (`true`), every one is proven gone (`false`), or none is
   * known (`undefined`); `null` when none is seen running and one cannot be read now.
   */
  probeId(id: string): boolean | null | undefined {
    const orphans = this.#byId.get(id)
    if (orphans === undefined) return undefined
    const answers = orphans.map((orphan) => negate(this.#isGone(orphan)))
    return answers.includes(true) ? true : answers.includes(null) ? null : false
  }

  /** Whether `incarnationId` is one of the predecessor's orphans (running or proven gone). */
  hasIncarnation(incarnationId: string): boolean {
    return this.#byIncarnation.has(incarnationId)
  }

  /** The running orphans under `id`. */
  runningUnder(id: string): string[] {
    return (this.#byId.get(id) ?? []).filter((orphan) => this.#isGone(orphan) !== true).map((orphan) => orphan.process.incarnationId)
  }

  /**
   * Stop the orphan of `incarnationId` as the host stops its own sessions — hang-up, then SIGTERM,
   * then SIGKILL (`immediate`: SIGKILL at once), to every process group of its session — each
   * signal only after the leader's identity (pid with start time) or the session's is checked
   * again; resolves once no process of its session is left, rejects (`shutdown_timeout`) at the
   * deadline. A process that left the session (`setsid`) is not reached.
   */
  stop(incarnationId: string, options: { immediate?: boolean; deadlineAt?: number } = {}): Promise<void> {
    const orphan = this.#byIncarnation.get(incarnationId)
    if (orphan === undefined || orphan.gone) return Promise.resolve()
    const deadlineAt = options.deadlineAt ?? Date.now() + NODE_PTY_SHUTDOWN_DEADLINE_MS
    if (orphan.stop !== null) {
      orphan.stop.waitUntil(deadlineAt)
      if (options.immediate === true) orphan.stop.escalate()
      return orphan.stop.done
    }
    let escalate: () => void = () => undefined
    const escalated = new Promise<void>((resolve) => (escalate = resolve))
    let kill = options.immediate === true
    let waitUntil = deadlineAt
    const started = Date.now()
    const run = async (): Promise<void> => {
      const steps = planStopSchedule({
        immediate: kill,
        deadlineMs: Math.max(0, deadlineAt - started),
        hangupGraceMs: NODE_PTY_HANGUP_GRACE_MS,
        terminateGraceMs: NODE_PTY_TERMINATE_GRACE_MS,
        killReserveMs: NODE_PTY_KILL_RESERVE_MS,
      })
      for (const step of steps) {
        if (!kill) {
          const at = started + step.atMs
          while (Date.now() < at && !kill) {
            if (await this.#sessionGone(orphan)) return
            await sleepUntil(Math.min(at, Date.now() + PTY_HOST_ORPHAN_STOP_POLL_MS), escalated)
          }
        }
        if (await this.#signalSession(orphan, kill ? 'SIGKILL' : step.signal)) return
        if (kill) break
      }
      for (;;) {
        if (await this.#sessionGone(orphan)) return
        if (Date.now() >= waitUntil) break
        await sleepUntil(Math.min(waitUntil, Date.now() + PTY_HOST_ORPHAN_STOP_POLL_MS), new Promise(() => undefined))
      }
      throw new NodePtyProviderError('shutdown_timeout', `The predecessor host's PTY ${JSON.stringify(orphan.id)} (pid ${orphan.process.pid}) could not be stopped by its deadline`, {
        ptyId: orphan.id,
      })
    }
    const stop = {
      done: run().finally(() => {
        orphan.stop = null
      }),
      escalate: () => {
        kill = true
        escalate()
      },
      waitUntil: (at: number) => {
        waitUntil = Math.max(waitUntil, at)
      },
    }
    orphan.stop = stop
    stop.done.catch(() => undefined)
    return stop.done
  }

  /**
   * Stop every orphan still running (see `stop`): for a host that closes on request, which must
   * leave nothing of its own or of its predecessors running. Settles once each stop settled; an
   * orphan whose stop failed stays in the journal for the next host.
   */
  async stopAll(options: { deadlineAt?: number } = {}): Promise<void> {
    const running = [...this.#byIncarnation.values()].filter((orphan) => this.#isGone(orphan) !== true)
    await Promise.allSettled(running.map((orphan) => this.stop(orphan.process.incarnationId, options)))
  }

  /**
   * Whether the orphan's leader is gone (looked at now; once gone, for good — and its journal entry
   * ends); `null` when its pid cannot be read now.
   */
  #isGone(orphan: Orphan): boolean | null {
    if (orphan.gone) return true
    const runs = this.#leaderRuns(orphan.process)
    if (runs !== false) return runs === null ? null : false
    this.#markGone(orphan)
    return true
  }

  #markGone(orphan: Orphan): void {
    if (orphan.gone) return
    orphan.gone = true
    this.#journal?.ended(orphan.key)
  }

  /**
   * One look at the leader's pid: the recorded process, alive (not a zombie)? `false` when no
   * process, a zombie or another process (another start time) is there; `null` when the pid cannot
   * be read (it proves nothing).
   */
  #leaderRuns(recorded: JournalProcess): boolean | null {
    const row = this.#inspector.readNow(recorded.pid)
    if (row === 'absent') return false
    if (row === null) return null
    return row.startTime === recorded.startTime && !isDefunct(row)
  }

  /**
   * The live processes of the orphan's session, from a fresh read of the process table: those whose
   * session id is the recorded one. Trusted as the orphan's because its session id is in use by them:
   * the kernel hands no pid out while it is any process's session or group id. `null` when the table
   * cannot be read.
   */
  async #sessionMembers(orphan: Orphan): Promise<ProcessStat[] | null> {
    const table = await this.#freshTable()
    if (table === null) return null
    const members = table.filter((row) => row.sid === orphan.process.sid && !isDefunct(row))
    // The leader's pid counts only as the recorded process (its start time); another process at
    // that pid would be in another session anyway.
    return members.filter((row) => row.pid !== orphan.process.pid || row.startTime === orphan.process.startTime)
  }

  /** The next read of the process table, not yet begun, that callers of this turn share. */
  #nextTable: Promise<ProcessStat[] | null> | null = null

  /**
   * A read of the process table that begins after this call: the stops under way share one
   * (every read is of every process: a hundred stops each reading it every poll saturated a
   * loaded host). A caller joins only a read that has not begun, so what it reads is fresh.
   */
  #freshTable(): Promise<ProcessStat[] | null> {
    this.#nextTable ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#nextTable = null
      return this.#inspector.list()
    })
    return this.#nextTable
  }

  /** Whether no process of the orphan's session is left (the leader gone as well). */
  async #sessionGone(orphan: Orphan): Promise<boolean> {
    if (this.#isGone(orphan) !== true) return false
    const members = await this.#sessionMembers(orphan)
    return members !== null && members.length === 0
  }

  /**
   * Send `signal` to every process group of the orphan's session, as a table read right before
   * shows them (the leader among them only as the recorded process: its start time). `true` when
   * nothing was left to signal.
   */
  async #signalSession(orphan: Orphan, signal: StopSignal): Promise<boolean> {
    const members = await this.#sessionMembers(orphan)
    if (members === null) {
      // No table (not on Linux, where orphans are judged): the leader's group, its identity just checked.
      if (this.#isGone(orphan) !== false) return this.#isGone(orphan) === true
      signalTargets([-orphan.process.pgid], signal)
      return false
    }
    if (members.length === 0) return this.#isGone(orphan) === true
    signalTargets([...new Set(members.map((row) => -row.pgid))], signal)
    return false
  }
}

function negate(gone: boolean | null): boolean | null {
  return gone === null ? null : !gone
}

function signalTargets(targets: readonly number[], signal: StopSignal): void {
  for (const target of targets) {
    if (target === 0 || target === -process.pid) continue
    try {
      process.kill(target, signal)
    } catch {
      // Gone meanwhile (ESRCH), or not ours to signal: the next look tells.
    }
  }
}
