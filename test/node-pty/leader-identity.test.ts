import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { isLeaderGoneNow, reapReported, recognizeLeader } from '../../src/node-pty/leader-identity.js'
import { LivenessScanner } from '../../src/node-pty/liveness-scanner.js'
import { NodePtySession } from '../../src/node-pty/node-pty-session.js'
import { createProcFsInspector, parseProcStat } from '../../src/node-pty/process-inspector.js'
import { createStopLoop } from '../../src/node-pty/stop-loop.js'
import { standInSession } from './pty-test-support.js'

// A private /proc whose stat lines the tests write: the leader's pid can be handed to "another
// process" (another start time) at will. The pids are past pid_max, so no real process has them.
const procRoot = mkdtempSync(join(tmpdir(), 'ptykit-leader-identity-'))
afterAll(() => rmSync(procRoot, { recursive: true, force: true }))
const PID_MAX = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))
let nextPid = PID_MAX + 100

/** Put a process at `pid` in the private /proc (`null`: no process there). */
function setProc(pid: number, proc: { startTime: string; state?: string } | null): void {
  const dir = join(procRoot, String(pid))
  rmSync(dir, { recursive: true, force: true })
  if (proc === null) return
  mkdirSync(dir)
  writeFileSync(join(dir, 'stat'), `${pid} (sh) ${proc.state ?? 'S'} 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 ${proc.startTime} 1000 2000\n`)
}

const inspector = createProcFsInspector(procRoot)
const ended: Array<() => void> = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const end of ended.splice(0)) end()
})

/** A session over a stand-in terminal at a fresh pid, its looks going to the private /proc. */
function leaderSession() {
  const pid = (nextPid += 1)
  const { session, terminal, exit: fireExit } = standInSession('leader', pid, (s) => isLeaderGoneNow(inspector, s))
  const exit = (signal?: number): void => fireExit({ exitCode: 0, ...(signal === undefined ? {} : { signal }) })
  ended.push(() => exit())
  return { session, terminal, pid, exit }
}

describe('leader identity: the start time is learnt by the first look, not at the spawn', () => {
  it('a session starts without it; the first look learns it; a pid reused later reads as gone', () => {
    const { session, pid } = leaderSession()
    setProc(pid, { startTime: '5000' })
    expect(session.leaderStartTime).toBeNull()
    session.checkLeader()
    expect(session.leaderStartTime).toBe('5000')
    expect(session.leaderGone).toBe(false)
    // Reaped, and the pid handed to another process: the same row, another start time.
    setProc(pid, { startTime: '9000' })
    session.checkLeader()
    expect(session.leaderGone).toBe(true)
    expect(session.leaderStartTime).toBe('5000')
  })

  it('a zombie leader is gone, and its row still teaches the start time', () => {
    const { session, pid } = leaderSession()
    setProc(pid, { startTime: '5000', state: 'Z' })
    session.checkLeader()
    expect(session.leaderGone).toBe(true)
    expect(session.leaderStartTime).toBe('5000')
  })

  it('no process at the pid proves the leader reaped (and teaches nothing)', () => {
    const { session, pid } = leaderSession()
    setProc(pid, null)
    session.checkLeader()
    expect(session.leaderGone).toBe(true)
    expect(session.leaderStartTime).toBeNull()
  })

  it('once node-pty reported the reap, a process at the pid is never taken for the leader', () => {
    const { session, terminal, pid } = leaderSession()
    // node-pty's exit callback ran (it reaped the pid) before anything looked; the pid is reused.
    terminal._boundClose = true
    expect(reapReported(session)).toBe(true)
    setProc(pid, { startTime: '9000' })
    expect(isLeaderGoneNow(inspector, session)).toBe(true)
    expect(session.leaderStartTime).toBeNull()
  })

  it('an asynchronous read teaches the start time only when the reap was unreported before it and after it', () => {
    const row = parseProcStat(`1 (sh) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5000 1 2\n`)!
    const before = leaderSession()
    // Issued after the reap was reported: not the leader.
    expect(recognizeLeader(before.session, row, false)).toBe(false)
    expect(before.session.leaderStartTime).toBeNull()
    // Reported while the read was in flight: not the leader either.
    const during = leaderSession()
    during.terminal._boundClose = true
    expect(recognizeLeader(during.session, row, true)).toBe(false)
    expect(during.session.leaderStartTime).toBeNull()
    // Unreported throughout: the leader, and now known.
    const quiet = leaderSession()
    expect(recognizeLeader(quiet.session, row, true)).toBe(true)
    expect(quiet.session.leaderStartTime).toBe('5000')
    expect(recognizeLeader(quiet.session, { ...row, startTime: '9000' }, true)).toBe(false)
  })
})

describe('leader identity: a stop knows the start time before it signals the pid', () => {
  /** Record every signal instead of sending it, with what the session knew at that moment. */
  function recordKills(session: NodePtySession) {
    const kills: Array<{ target: number; signal: string; knownStartTime: string | null }> = []
    let firstKill: () => void = () => {}
    const signalled = new Promise<void>((resolve) => {
      firstKill = resolve
    })
    const realKill = process.kill.bind(process)
    vi.spyOn(process, 'kill').mockImplementation((target: number, signal?: string | number) => {
      // Signal 0 only asks whether a pid exists: answer truthfully (these pids never do).
      if (signal === 0) return realKill(target, 0)
      kills.push({ target, signal: String(signal), knownStartTime: session.leaderStartTime })
      queueMicrotask(firstKill)
      return true
    })
    return { kills, signalled }
  }

  it('signals the leader only as the process it learnt at the stop’s first look, never the pid’s next owner', async () => {
    const { session, pid } = leaderSession()
    setProc(pid, { startTime: '5000' })
    const { kills, signalled } = recordKills(session)
    const scanner = new LivenessScanner(() => inspector.list())
    const stopSession = createStopLoop({ isWindows: false, sweepSession: false, inspector, scanner, hangupGraceMs: 100, terminateGraceMs: 100 })
    // HUP at once, TERM at 100 ms, KILL at 200 ms; the stand-in never exits, so the stop gives up
    // at its deadline, after every step.
    const stopped = stopSession(session, { deadlineAt: Date.now() + 600 })
    // The hang-up went to the leader's group and pid, with the start time already known.
    await signalled
    expect(kills).toEqual([
      { target: -pid, signal: 'SIGHUP', knownStartTime: '5000' },
      { target: pid, signal: 'SIGHUP', knownStartTime: '5000' },
    ])
    // Before the next step, the leader is reaped and its pid handed to another process.
    setProc(pid, { startTime: '9000' })
    await expect(stopped).rejects.toMatchObject({ code: 'shutdown_timeout' })
    // The TERM and KILL steps passed: nothing more was sent to the pid or its group.
    expect(session.leaderGone).toBe(true)
    expect(kills).toHaveLength(2)
    scanner.stop()
  })

  it('with a fresh table showing the leader as learnt, node-pty’s unreported reap lets the signal go without a /proc read', async () => {
    const { session, terminal, pid } = leaderSession()
    Object.assign(terminal, { _boundClose: false, _emittedClose: false }) // node-pty's terminal, reap unreported
    setProc(pid, { startTime: '5000' })
    const { kills, signalled } = recordKills(session)
    const scanner = new LivenessScanner(() => inspector.list())
    const stopSession = createStopLoop({ isWindows: false, sweepSession: true, inspector, scanner, hangupGraceMs: 50, terminateGraceMs: 50 })
    const stopped = stopSession(session, { deadlineAt: Date.now() + 300, immediate: true })
    // The stop's first look learns the start time; after it, note each read of the leader's pid
    // made on the way to a signal (the liveness looks between signals may read it: not counted).
    expect(session.leaderStartTime).toBe('5000')
    const readNow = inspector.readNow.bind(inspector)
    const readsForSignals: number[] = []
    vi.spyOn(inspector, 'readNow').mockImplementation((read: number) => {
      if (read === pid && /\bsignalSession\b/.test(new Error().stack ?? '')) readsForSignals.push(read)
      return readNow(read)
    })
    await signalled
    expect(kills.filter((kill) => Math.abs(kill.target) === pid)).toEqual([{ target: -pid, signal: 'SIGKILL', knownStartTime: '5000' }])
    expect(readsForSignals).toEqual([])
    await expect(stopped).rejects.toMatchObject({ code: 'shutdown_timeout' })
    scanner.stop()
  })

  it('a leader reaped and its pid handed on while the stop reads its table is never signalled, though node-pty has not reported the reap', async () => {
    const { session, terminal, pid } = leaderSession()
    Object.assign(terminal, { _boundClose: false, _emittedClose: false })
    setProc(pid, { startTime: '5000' })
    const { kills } = recordKills(session)
    let tables = 0
    const scanner = new LivenessScanner(() => {
      // The pid's next owner, in a group and session of its own, is what the stop's table shows.
      if ((tables += 1) === 1) setProc(pid, { startTime: '9000' })
      return inspector.list()
    })
    const stopSession = createStopLoop({ isWindows: false, sweepSession: true, inspector, scanner, hangupGraceMs: 50, terminateGraceMs: 50 })
    const stopped = stopSession(session, { deadlineAt: Date.now() + 300, immediate: true })
    expect(session.leaderStartTime).toBe('5000')
    await expect(stopped).rejects.toMatchObject({ code: 'shutdown_timeout' })
    expect(session.leaderGone).toBe(true)
    expect(kills.filter((kill) => Math.abs(kill.target) === pid)).toEqual([])
    scanner.stop()
  })

  it('a leader reaped before the stop’s first look is never signalled, nor swept, through its pid', async () => {
    const { session, terminal, pid } = leaderSession()
    // Reaped just before the stop: nothing at the pid at its first look.
    setProc(pid, null)
    const { kills } = recordKills(session)
    const scanner = new LivenessScanner(() => inspector.list())
    const stopSession = createStopLoop({ isWindows: false, sweepSession: true, inspector, scanner, hangupGraceMs: 50, terminateGraceMs: 50 })
    const stopped = stopSession(session, { deadlineAt: Date.now() + 500 })
    expect(session.leaderGone).toBe(true)
    // node-pty reports the reap; the pid goes to an unrelated process leading a session and group
    // of its own, which every later process table shows.
    terminal._boundClose = true
    setProc(pid, { startTime: '9000' })
    await expect(stopped).rejects.toMatchObject({ code: 'shutdown_timeout' })
    expect(kills.filter((kill) => Math.abs(kill.target) === pid)).toEqual([])
    scanner.stop()
  })
})
