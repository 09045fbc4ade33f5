/**
 * The stop's graces count from when the previous signal actually went out (docs/node-pty-provider.md,
 * "each grace counts from when the previous signal went out"). A step's signal awaits a fresh read
 * of the process table; on a loaded machine that read comes late (the hang-up went out 10–224 ms after
 * the stop began at load ~6), and until 7 Dec SIGTERM and SIGKILL stayed timed from the stop's start:
 * a program saving state on the hang-up got much less than its grace before SIGTERM. Here the first
 * table read is held back, deterministically, over a stand-in terminal and a private /proc.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { isLeaderGoneNow } from '../../src/node-pty/leader-identity.js'
import { LivenessScanner } from '../../src/node-pty/liveness-scanner.js'
import { createProcFsInspector } from '../../src/node-pty/process-inspector.js'
import { createStopLoop } from '../../src/node-pty/stop-loop.js'
import { NODE_PTY_KILL_RESERVE_MS } from '../../src/node-pty/stop-schedule.js'
import { standInSession } from './pty-test-support.js'

// A private /proc: the leader lives there (it never dies, so every step is sent). The pids are
// past pid_max, so no real process has them, and every signal is recorded instead of sent.
const procRoot = mkdtempSync(join(tmpdir(), 'ptykit-stop-grace-'))
afterAll(() => rmSync(procRoot, { recursive: true, force: true }))
const PID_MAX = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))
let nextPid = PID_MAX + 300

const inspector = createProcFsInspector(procRoot)
const ended: Array<() => void> = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const end of ended.splice(0)) end()
})

/** A live leader (its own group and session) over a stand-in terminal, looked up in the private /proc. */
function liveLeaderSession() {
  const pid = (nextPid += 1)
  const dir = join(procRoot, String(pid))
  mkdirSync(dir)
  writeFileSync(join(dir, 'stat'), `${pid} (sh) S 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5000 1000 2000\n`)
  const { session, exit } = standInSession('grace', pid, (s) => isLeaderGoneNow(inspector, s))
  ended.push(() => exit({ exitCode: 0 }))
  return { session, pid }
}

/** Record when each signal to the leader (its pid or group) would have gone out, on the stop's clock. */
function recordSignals(pid: number) {
  const sent: Array<{ signal: string; at: number }> = []
  const realKill = process.kill.bind(process)
  vi.spyOn(process, 'kill').mockImplementation((target: number, signal?: string | number) => {
    if (signal === 0) return realKill(target, 0)
    if (Math.abs(target) === pid) sent.push({ signal: String(signal), at: performance.now() })
    return true
  })
  /** When `signal` last went out (a signal goes to the group and maybe the pid: the later call). */
  const lastAt = (signal: string): number | undefined => sent.filter((s) => s.signal === signal).at(-1)?.at
  return { sent, lastAt }
}

/** A scanner whose first pass over the process table (the hang-up's) takes `slowMs`. */
function slowFirstScanner(slowMs: number): LivenessScanner {
  let passes = 0
  return new LivenessScanner(async () => {
    if ((passes += 1) === 1) await new Promise((resolve) => setTimeout(resolve, slowMs))
    return inspector.list()
  })
}

describe('node-pty stop: each grace counts from when the previous signal went out', () => {
  it('a hang-up sent late still gets its whole grace before SIGTERM, and SIGTERM its own before SIGKILL', async () => {
    const { session, pid } = liveLeaderSession()
    const { sent, lastAt } = recordSignals(pid)
    const scanner = slowFirstScanner(150)
    const stopSession = createStopLoop({ isWindows: false, sweepSession: true, inspector, scanner, hangupGraceMs: 100, terminateGraceMs: 100 })
    const startedAt = performance.now()
    const deadlineAt = startedAt + 1_000
    // Planned: HUP at 0, TERM at 100, KILL at 200 ms; the hang-up goes out only after the slow read.
    await expect(stopSession(session, { deadlineAt: Date.now() + 1_000 })).rejects.toMatchObject({ code: 'shutdown_timeout' })
    scanner.stop()
    expect(sent.map((s) => s.signal).filter((signal, i, all) => all.indexOf(signal) === i)).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
    const hup = lastAt('SIGHUP')!
    const term = lastAt('SIGTERM')!
    const kill = lastAt('SIGKILL')!
    expect(hup - startedAt).toBeGreaterThanOrEqual(150) // the hang-up was late indeed
    expect(term - hup).toBeGreaterThanOrEqual(100)
    expect(kill - term).toBeGreaterThanOrEqual(100)
    expect(kill).toBeLessThan(deadlineAt)
  })

  it('the shift stops where the KILL would lose its reserve before the deadline; a TERM with no room left is dropped', async () => {
    const { session, pid } = liveLeaderSession()
    const { sent, lastAt } = recordSignals(pid)
    const scanner = slowFirstScanner(150)
    const stopSession = createStopLoop({ isWindows: false, sweepSession: true, inspector, scanner, hangupGraceMs: 100, terminateGraceMs: 100 })
    const startedAt = performance.now()
    const deadlineAt = startedAt + 500
    // Planned: HUP at 0, TERM at 100, KILL at 200 ms; the KILL may go as late as 500 − 250 = 250 ms.
    await expect(stopSession(session, { deadlineAt: Date.now() + 500 })).rejects.toMatchObject({ code: 'shutdown_timeout' })
    scanner.stop()
    const hup = lastAt('SIGHUP')!
    const kill = lastAt('SIGKILL')!
    expect(hup - startedAt).toBeGreaterThanOrEqual(150)
    // A TERM 100 ms after the hang-up would be at the KILL's latest time: none is sent.
    expect(sent.filter((s) => s.signal === 'SIGTERM')).toEqual([])
    // The hang-up got as much of its grace as the deadline allows, and the KILL still came in time.
    expect(kill - startedAt).toBeGreaterThanOrEqual(500 - NODE_PTY_KILL_RESERVE_MS - 1)
    expect(kill).toBeLessThan(deadlineAt)
  })
})
