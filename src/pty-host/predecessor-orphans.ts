import { isDefunct, scanProcNow, type ProcessInspector, type ProcessStat } from '../node-pty/process-inspector.js'
import { NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS, NODE_PTY_TERMINATE_GRACE_MS, NodePtyProviderError } from '../node-pty/index.js'
import { NODE_PTY_KILL_RESERVE_MS, planStopSchedule, type StopSignal } from '../node-pty/stop-schedule.js'
import { readFileSync } from 'node:fs'
import { bootTicksNow, type JournalProcess, type JournalSession, type PredecessorJournal, type SessionJournal } from './session-journal.js'
import { onWaitClock, waitClockNow } from '../contracts/deadline.js'

/**
 * How often an orphan's stop looks whether its session is gone (one read of the process table).
 * A predecessor's orphan is no child of this host: no exit is reported, so its end is looked for.
 */
export const PTY_HOST_ORPHAN_STOP_POLL_MS = 20

/**
 * A dead predecessor host's session, as its journal recorded it: its leader (pid and start time),
 * its session id (the leader's pid), and what this host has learnt of its members since.
 *
 * **Who is a member.** The kernel hands no pid number out again while any process uses it as its
 * pid, group id or session id. So while one process known to be the session's is alive, every
 * process with the session id is the session's too; once none known is alive, the session may have
 * ended and its number been taken by a new session. A process with the id is proven a member when a
 * known member is alive in the same look and it started before the look began, or when it started
 * before a time the session was seen holding its number (`heldAt`). Anything else with the id is
 * *ambiguous*: never signalled, and while it is there the session is neither proven running nor
 * proven ended.
 */
type Orphan = {
  readonly id: string
  readonly process: JournalProcess
  /** Its key in this host's own journal (so a successor of this host finds it too). */
  readonly key: number
  /** Proven ended: no process of its session left (or its number taken by another process). */
  gone: boolean
  /** Processes proven its members (pid → start time), the leader first. */
  readonly known: Map<number, string>
  /** The latest time (boot clock ticks) the session was seen holding its number; `null`: never. */
  heldAt: number | null
  /** The stop in progress, if any (callers join it). */
  stop: { done: Promise<void>; escalate: () => void; waitUntil: (at: number) => void } | null
}

/** One look at the process table: when it began (boot clock ticks; `null`: unknown) and what it saw (`null`: unreadable). */
type Look = { ticks: number | null; table: ProcessStat[] | null }

/**
 * What one look tells of an orphan: ended; or its proven members (`held`: one known is alive) —
 * or, not held, the processes with its id that cannot be proven its (`ambiguous`) and whether the
 * look could not tell at all (`unreadable`).
 */
type Judgement = { gone: true } | { gone: false; held: boolean; members: ProcessStat[]; ambiguous: ProcessStat[]; unreadable: boolean }

/** Test seams: the process table read now, the clock, and the signal sent. */
export type PredecessorOrphansSeams = {
  /** Every process, read now (synchronously); `null` when it cannot be. Default: `/proc`. */
  scanNow?: () => ProcessStat[] | null
  /** Now in boot clock ticks ({@link bootTicksNow}). */
  ticksNow?: () => number | null
  /** Send a signal (`process.kill`). */
  kill?: (target: number, signal: StopSignal) => void
}

/**
 * How the host stops an orphan, as it stops its own sessions: the node-pty provider's graces and
 * its default deadline for a stop that names none (the host's welcome names that deadline, and an
 * app waits that long for the answer). Each defaults to node-pty's.
 */
export type OrphanStopTimings = {
  hangupGraceMs?: number | undefined
  terminateGraceMs?: number | undefined
  shutdownDeadlineMs?: number | undefined
}

/** Whether a row's start time is before `ticks`, by more than a tick (the clocks round down): `false` when either is unknown. */
function startedBefore(row: ProcessStat, ticks: number | null): boolean {
  if (ticks === null || row.startTime === undefined) return false
  return Number(row.startTime) + 1 < ticks
}

/** The sleep of a stop step (until `at` on the wait clock, `waitClockNow`), cut short by `wake`. */
function sleepUntil(at: number, wake: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(at - waitClockNow(), 2 ** 31 - 1))))), wake.then(() => undefined)]).finally(() =>
    clearTimeout(timer),
  )
}

/**
 * What a host that took a dead host's place knows of that host's sessions, from its journal
 * (`session-journal.ts`): the sessions not proven ended — the **predecessor orphans**, each
 * running (a process proven its member runs: see {@link Orphan}) or, while only processes that
 * cannot be proven its have its session id, neither proven running nor proven ended — which it
 * answers `probe` and `shutdown` for; the sessions proven ended; and what it cannot tell (a spawn
 * the predecessor died in the middle of, a record that does not match its process, or a journal
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
  /** Ids of spawns the predecessor died in the middle of (no process recorded), or whose record does not match its process: unknown. */
  readonly #unresolved = new Set<string>()
  readonly #inspector: ProcessInspector
  readonly #scanNow: () => ProcessStat[] | null
  readonly #ticksNow: () => number | null
  readonly #kill: (target: number, signal: StopSignal) => void
  readonly #stopTimings: Required<{ [K in keyof OrphanStopTimings]: number }>
  #journal: SessionJournal | null = null

  /**
   * Judge the predecessor's journal, with one look at the process table: a session whose leader
   * runs (same pid, start time, session and group) is an orphan, and its processes then are its
   * known members; one whose leader is gone is proven ended only when no process has its session
   * or group id (or its pid names another process now: its number was freed) — else it stays, and
   * what runs with its id is its only if provable (see {@link Orphan}), else unknown.
   *
   * @param journal - what {@link readPredecessorJournal} read (`'absent'` / `'unreadable'` included)
   * @param succeedsDeadHost - the lock was taken over from a host that died holding it
   * @param stopTimings - the host's own stop graces and default deadline (node-pty's by default)
   */
  constructor(
    journal: PredecessorJournal | 'absent' | 'unreadable',
    succeedsDeadHost: boolean,
    inspector: ProcessInspector,
    seams: PredecessorOrphansSeams = {},
    stopTimings: OrphanStopTimings = {},
  ) {
    this.#inspector = inspector
    this.#stopTimings = {
      hangupGraceMs: stopTimings.hangupGraceMs ?? NODE_PTY_HANGUP_GRACE_MS,
      terminateGraceMs: stopTimings.terminateGraceMs ?? NODE_PTY_TERMINATE_GRACE_MS,
      shutdownDeadlineMs: stopTimings.shutdownDeadlineMs ?? NODE_PTY_SHUTDOWN_DEADLINE_MS,
    }
    this.#scanNow = seams.scanNow ?? (() => (procHidesProcesses() ? null : scanProcNow(inspector)))
    this.#ticksNow = seams.ticksNow ?? bootTicksNow
    this.#kill = seams.kill ?? ((target, signal) => process.kill(target, signal))
    this.journalRead = typeof journal === 'object'
    this.unaccounted = typeof journal === 'object' ? journal.unaccounted : journal === 'unreadable' || succeedsDeadHost
    if (typeof journal !== 'object') return
    let look: Look | null = null
    for (const session of journal.open) {
      if (session.process === undefined || inspector.kind !== 'procfs') {
        this.#unresolved.add(session.id)
        continue
      }
      const recorded = session.process
      look ??= this.#lookNow()
      // The leader runs, but not as the leader of the recorded session: the record is not its.
      const leader = look.table?.find((row) => row.pid === recorded.pid)
      if (leader !== undefined && leader.startTime === recorded.startTime && !isDefunct(leader) && (leader.sid !== recorded.sid || leader.pgid !== recorded.pgid)) {
        this.#unresolved.add(session.id)
        continue
      }
      const orphan: Orphan = {
        id: session.id,
        process: recorded,
        key: 0,
        gone: false,
        known: new Map([[recorded.pid, recorded.startTime]]),
        heldAt: recorded.heldAt ?? null,
        stop: null,
      }
      if (this.#judge(orphan, look).gone) continue
      this.#byIncarnation.set(recorded.incarnationId, orphan)
      this.#byId.set(session.id, [...(this.#byId.get(session.id) ?? []), orphan])
    }
  }

  /**
   * What this host's own journal carries over: the orphans not proven ended (with the latest time
   * each was seen holding its number), and the unresolved spawns.
   */
  carried(): { open: JournalSession[]; unaccounted: boolean } {
    const open: JournalSession[] = [...this.#byIncarnation.values()].map((orphan) => ({
      id: orphan.id,
      process: { ...orphan.process, ...(orphan.heldAt === null ? {} : { heldAt: Math.max(orphan.heldAt, orphan.process.heldAt ?? 0) }) },
    }))
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
   * Whether anything of the predecessor is still not accounted for: an orphan not proven ended, a
   * spawn it died in, or ids no journal names. While so, no listing of this host is authoritative.
   */
  get unsettled(): boolean {
    if (this.unaccounted || this.#unresolved.size > 0) return true
    for (const orphan of this.#byIncarnation.values()) if (this.#runs(orphan) !== false) return true
    return false
  }

  /** Whether a predecessor may have held a process under `id` that this host cannot name: answer unknown for it. */
  mayHoldUnnamed(id: string): boolean {
    return this.unaccounted || this.#unresolved.has(id)
  }

  /**
   * The answer about a predecessor's incarnation: `true` while a process of its session is proven
   * to run, `false` once it is proven ended, `null` when neither can be proven now; `undefined`
   * when the journal names no such incarnation.
   */
  probeIncarnation(incarnationId: string): boolean | null | undefined {
    const orphan = this.#byIncarnation.get(incarnationId)
    return orphan === undefined ? undefined : this.#runs(orphan)
  }

  /**
   * Whether an orphan under `id` runs (`true`), every one is proven ended (`false`), or none is
   * known (`undefined`); `null` when none is proven running and one is not proven ended.
   */
  probeId(id: string): boolean | null | undefined {
    const orphans = this.#byId.get(id)
    if (orphans === undefined) return undefined
    const answers = orphans.map((orphan) => this.#runs(orphan))
    return answers.includes(true) ? true : answers.includes(null) ? null : false
  }

  /** Whether `incarnationId` is one of the predecessor's orphans (running or proven gone). */
  hasIncarnation(incarnationId: string): boolean {
    return this.#byIncarnation.has(incarnationId)
  }

  /** The orphans under `id` not proven ended. */
  runningUnder(id: string): string[] {
    return (this.#byId.get(id) ?? []).filter((orphan) => this.#runs(orphan) !== false).map((orphan) => orphan.process.incarnationId)
  }

  /**
   * Stop the orphan of `incarnationId` as the host stops its own sessions — hang-up, then SIGTERM,
   * then SIGKILL (`immediate`: SIGKILL at once) — to the process group of each of its proven
   * members, each signal after a fresh look at the process table; resolves once no process of its
   * session is left. Rejects (`shutdown_timeout`) at the deadline, and at once when processes with
   * its session id cannot be proven its (they are never signalled: the stop cannot be verified).
   * A process that left the session (`setsid`) is not reached.
   */
  stop(incarnationId: string, options: { immediate?: boolean; deadlineAt?: number } = {}): Promise<void> {
    const orphan = this.#byIncarnation.get(incarnationId)
    if (orphan === undefined || orphan.gone) return Promise.resolve()
    // The epoch deadline on the stop's monotonic clock (see `waitClockNow`).
    const deadlineAt = options.deadlineAt === undefined ? waitClockNow() + this.#stopTimings.shutdownDeadlineMs : onWaitClock(options.deadlineAt)
    if (orphan.stop !== null) {
      orphan.stop.waitUntil(deadlineAt)
      if (options.immediate === true) orphan.stop.escalate()
      return orphan.stop.done
    }
    let escalate: () => void = () => undefined
    const escalated = new Promise<void>((resolve) => (escalate = resolve))
    let kill = options.immediate === true
    let waitUntil = deadlineAt
    const started = waitClockNow()
    let signalled = false
    let last: Judgement | null = null
    /** A fresh look: `true` when the session is proven ended; throws when nothing of it can be proven and this stop has signalled nothing. */
    const ended = async (): Promise<boolean> => {
      last = this.#judge(orphan, await this.#freshLook())
      if (last.gone) return true
      if (!last.held && !signalled) throw this.#unverified(orphan, last)
      return false
    }
    const run = async (): Promise<void> => {
      const steps = planStopSchedule({
        immediate: kill,
        deadlineAfterMs: Math.max(0, deadlineAt - started),
        hangupGraceMs: this.#stopTimings.hangupGraceMs,
        terminateGraceMs: this.#stopTimings.terminateGraceMs,
        killReserveMs: NODE_PTY_KILL_RESERVE_MS,
      })
      for (const step of steps) {
        if (!kill) {
          const at = started + step.atMs
          while (waitClockNow() < at && !kill) {
            if (await ended()) return
            await sleepUntil(Math.min(at, waitClockNow() + PTY_HOST_ORPHAN_STOP_POLL_MS), escalated)
          }
        }
        if (await ended()) return
        const judged = last as Judgement | null
        if (judged !== null && !judged.gone && judged.held) {
          this.#signalGroups(judged.members, kill ? 'SIGKILL' : step.signal)
          signalled = true
        }
        if (kill) break
      }
      for (;;) {
        if (await ended()) return
        if (waitClockNow() >= waitUntil) break
        await sleepUntil(Math.min(waitUntil, waitClockNow() + PTY_HOST_ORPHAN_STOP_POLL_MS), new Promise(() => undefined))
      }
      const judged = last as Judgement | null
      if (judged !== null && !judged.gone && !judged.held) throw this.#unverified(orphan, judged)
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
   * Stop every orphan not proven ended (see `stop`): for a host that closes on request, which must
   * leave nothing of its own or of its predecessors running. Settles once each stop settled; an
   * orphan whose stop failed (or could not be verified) stays in the journal for the next host.
   */
  async stopAll(options: { deadlineAt?: number } = {}): Promise<void> {
    const running = [...this.#byIncarnation.values()].filter((orphan) => this.#runs(orphan) !== false)
    await Promise.allSettled(running.map((orphan) => this.stop(orphan.process.incarnationId, options)))
  }

  /** The refusal of a stop that cannot be verified: processes with the session's id not proven its. */
  #unverified(orphan: Orphan, judged: Extract<Judgement, { gone: false }>): NodePtyProviderError {
    const why = judged.unreadable
      ? 'the process table cannot be read'
      : `${judged.ambiguous.length} process(es) with its session id (${judged.ambiguous.map((row) => row.pid).join(', ')}) cannot be proven its: none known to be its runs (its session may have ended and its number been reused), so they are not signalled`
    return new NodePtyProviderError('shutdown_timeout', `The predecessor host's PTY ${JSON.stringify(orphan.id)} (session ${orphan.process.sid}) cannot be stopped verifiably: ${why}`, { ptyId: orphan.id })
  }

  /**
   * Whether the orphan runs now (`true`: a process of its session is proven to), is proven ended
   * (`false`; for good, and its journal entry ends), or neither can be told (`null`).
   */
  #runs(orphan: Orphan): boolean | null {
    if (orphan.gone) return false
    // The cheap look first: the leader, as recorded, alive (read after the clock: it held the number then).
    const ticks = this.#ticksNow()
    const leader = this.#inspector.readNow(orphan.process.pid)
    if (leader !== null && leader !== 'absent' && leader.startTime === orphan.process.startTime && !isDefunct(leader)) {
      if (ticks !== null) orphan.heldAt = Math.max(orphan.heldAt ?? 0, ticks)
      return true
    }
    const judged = this.#judge(orphan, this.#lookNow())
    if (judged.gone) return false
    return judged.held ? true : null
  }

  /**
   * Judge the orphan by one look (see {@link Orphan}): proven ended — marked gone, its journal
   * entry ended — or its proven members (recorded as known) or what cannot be proven.
   */
  #judge(orphan: Orphan, look: Look): Judgement {
    if (orphan.gone) return { gone: true }
    const recorded = orphan.process
    if (look.table === null) return { gone: false, held: false, members: [], ambiguous: [], unreadable: true }
    const atLeaderPid = look.table.find((row) => row.pid === recorded.pid)
    // Another process at the leader's pid: the number was freed (no process of the session was
    // left), and what has the id now is another session's.
    if (atLeaderPid?.startTime !== undefined && atLeaderPid.startTime !== recorded.startTime) return this.#markGone(orphan)
    const withId = look.table.filter((row) => (row.sid === recorded.sid || row.pgid === recorded.pgid) && !isDefunct(row))
    if (withId.length === 0) {
      // Nothing with its id in the table — unless the leader's own row could not be read.
      const leader = atLeaderPid ?? this.#inspector.readNow(recorded.pid)
      if (leader === null) return { gone: false, held: false, members: [], ambiguous: [], unreadable: true }
      if (leader === 'absent' || leader.startTime !== recorded.startTime || isDefunct(leader)) return this.#markGone(orphan)
      return { gone: false, held: false, members: [], ambiguous: [], unreadable: true }
    }
    // Only the session id proves membership: a process's session id is fixed from its fork (its
    // start time says since when it has had it); its group id is not (`setpgid`) — a process of
    // another session may have joined a group that reused the number. A row with only the group id
    // is never a member (it stays ambiguous: never signalled).
    const inSession = (row: ProcessStat): boolean => row.sid === recorded.sid
    const isKnown = (row: ProcessStat): boolean => inSession(row) && row.startTime !== undefined && orphan.known.get(row.pid) === row.startTime
    const held = withId.some((row) => isKnown(row) || (inSession(row) && startedBefore(row, orphan.heldAt)))
    if (!held) return { gone: false, held: false, members: [], ambiguous: withId, unreadable: false }
    // A known member alive at this look, which began at `look.ticks`: whatever had the id and had
    // started before that was alive together with it, so had its number. One started since (a
    // fork during the look) is proven at the next look.
    const members = withId.filter((row) => inSession(row) && (isKnown(row) || startedBefore(row, look.ticks) || startedBefore(row, orphan.heldAt)))
    const alive = new Map(members.map((row) => [row.pid, row.startTime!] as const))
    orphan.known.clear()
    for (const [pid, startTime] of alive) orphan.known.set(pid, startTime)
    if (look.ticks !== null) orphan.heldAt = Math.max(orphan.heldAt ?? 0, look.ticks)
    return { gone: false, held: true, members, ambiguous: [], unreadable: false }
  }

  #markGone(orphan: Orphan): { gone: true } {
    if (!orphan.gone) {
      orphan.gone = true
      orphan.known.clear()
      this.#journal?.ended(orphan.key)
    }
    return { gone: true }
  }

  /** A look at the process table now (synchronously), shared by the calls of this turn. */
  #lookNow(): Look {
    if (this.#currentLook === null) {
      const ticks = this.#ticksNow()
      this.#currentLook = { ticks, table: this.#scanNow() }
      setImmediate(() => (this.#currentLook = null))
    }
    return this.#currentLook
  }

  #currentLook: Look | null = null

  /** The next read of the process table, not yet begun, that callers of this turn share. */
  #nextLook: Promise<Look> | null = null

  /**
   * A look at the process table that begins after this call: the stops under way share one
   * (every read is of every process: a hundred stops each reading it every poll saturated a
   * loaded host). A caller joins only a read that has not begun, so what it reads is fresh. Its
   * time is read before the table.
   */
  #freshLook(): Promise<Look> {
    this.#nextLook ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.#nextLook = null
      const ticks = this.#ticksNow()
      // A /proc that hides other users' processes (hidepid) lists no proof of absence.
      return { ticks, table: procHidesProcesses() ? null : await this.#inspector.list() }
    })
    return this.#nextLook
  }

  /** Send `signal` to the process group of each proven member (never to this host's own group). */
  #signalGroups(members: readonly ProcessStat[], signal: StopSignal): void {
    for (const group of new Set(members.map((row) => row.pgid))) {
      if (group <= 1 || group === process.pid) continue
      try {
        this.#kill(-group, signal)
      } catch {
        // Gone meanwhile (ESRCH), or not ours to signal: the next look tells.
      }
    }
  }
}

let hidesProcesses: boolean | undefined

/**
 * Whether `/proc` may hide other users' processes from this one (mounted `hidepid=` other than 0,
 * or `subset=pid`, and this host is not root): then no table read here proves a process absent.
 * Read once; `true` when the mount table cannot be read.
 */
function procHidesProcesses(): boolean {
  if (hidesProcesses !== undefined) return hidesProcesses
  try {
    const procMount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((line) => line.split(' ')[4] === '/proc')
      .pop()
    const options = procMount?.split(' - ')[1]?.split(' ')[2] ?? ''
    const hidepid = /(?:^|,)hidepid=([^,]+)/.exec(options)?.[1]
    const hides = (hidepid !== undefined && hidepid !== '0' && hidepid !== 'off') || /(?:^|,)subset=pid(?:,|$)/.test(options)
    hidesProcesses = process.getuid?.() !== 0 && hides
  } catch {
    hidesProcesses = true
  }
  return hidesProcesses
}
