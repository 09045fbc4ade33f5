import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from './pty-test-support.js'
import {
  createNullInspector,
  createProcFsInspector,
  createProcessInspector,
  createPsInspector,
  NODE_PTY_PROC_STAT_READ_BYTES,
  isDefunct,
  isGoneBy,
  parseLsofCwd,
  parseProcStat,
  parsePsLine,
} from '../../src/node-pty/process-inspector.js'

const started: number[] = []
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

/** The children of `pid`, read straight from /proc (independently of the code under test). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const text = readFileSync(`/proc/${entry}/stat`, 'utf8')
        return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]) === pid
      } catch {
        return false
      }
    })
    .map(Number)
}


describe('parseProcStat', () => {
  it('reads the fields after the last parenthesis, so names with spaces and parentheses survive', () => {
    const stat = parseProcStat('4242 (my (odd) name) S 10 4242 4242 34817 4250 4194560 0 0')
    expect(stat).toEqual({ pid: 4242, ppid: 10, pgid: 4242, sid: 4242, tpgid: 4250, state: 'S', name: 'my (odd) name' })
  })

  it('refuses malformed text', () => {
    expect(parseProcStat('')).toBeNull()
    expect(parseProcStat('12 (x)')).toBeNull()
    expect(parseProcStat('x (sh) S a b c d e')).toBeNull()
  })

  it('agrees with /proc for this process', () => {
    const stat = parseProcStat(readFileSync('/proc/self/stat', 'utf8'))
    expect(stat?.pid).toBe(process.pid)
    expect(stat?.ppid).toBe(process.ppid)
    // Node runs a thread pool and V8's helper threads besides its main thread.
    expect(stat?.threads).toBeGreaterThan(1)
  })
})

describe('isDefunct', () => {
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
  const row = (state: string, threads: number): string => `77 (mt) ${state} 1 77 77 34817 77 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 123456`

  it('counts a zombie as dead, and a process whose main thread exited while others run (Z with threads) as alive', () => {
    expect(parseProcStat(row('Z', 1))).toMatchObject({ state: 'Z', threads: 1, startTime: '123456' })
    expect(isDefunct(parseProcStat(row('Z', 1))!)).toBe(true)
    expect(isDefunct(parseProcStat(row('Z', 2))!)).toBe(false)
    expect(isDefunct(parseProcStat(row('S', 1))!)).toBe(false)
    // Where the thread count is unknown (ps), Z means dead.
    expect(isDefunct({ state: 'Z' })).toBe(true)
  })

  it('counts a process being reaped (X, x on older kernels) as dead, whatever its thread count', () => {
    // Between its parent's waitpid claiming the zombie and the pid being freed, stat reads X, with
    // the thread count already 0 (or still 1): the window in which a killed leader read as alive.
    expect(parseProcStat(row('X', 0))).toMatchObject({ state: 'X' })
    expect(isDefunct(parseProcStat(row('X', 0))!)).toBe(true)
    expect(isDefunct(parseProcStat(row('X', 1))!)).toBe(true)
    expect(isDefunct({ state: 'x' })).toBe(true)
    expect(isGoneBy(parseProcStat(row('X', 0)), '123456')).toBe(true)
  })

  it('decides isGoneBy: a Z leader with live threads is not gone', () => {
    expect(isGoneBy(parseProcStat(row('Z', 3)), '123456')).toBe(false)
    expect(isGoneBy(parseProcStat(row('Z', 1)), '123456')).toBe(true)
  })
})

describe('parsePsLine and parseLsofCwd', () => {
  it('parses a BSD/procps ps row and keeps only the base name of a command with spaces', () => {
    expect(parsePsLine('  501   1  501   -1 Ss   /Applications/Visual Studio Code.app/Contents/MacOS/Electron')).toEqual({
      pid: 501,
      ppid: 1,
      pgid: 501,
      sid: null,
      tpgid: -1,
      state: 'S',
      name: 'Electron',
    })
    expect(parsePsLine('  77  70  77  77 R+   -zsh')?.name).toBe('-zsh')
    expect(parsePsLine('garbage')).toBeNull()
  })

  it('reads the name line of lsof -Fn output', () => {
    expect(parseLsofCwd('p123\nfcwd\nn/Users/me/project dir\n')).toBe('/Users/me/project dir')
    expect(parseLsofCwd('p123\n')).toBeNull()
  })
})

describe('the inspectors on this machine', () => {
  it('procfs and ps agree on this process', async () => {
    const procfs = await createProcFsInspector().read(process.pid)
    const ps = await createPsInspector().read(process.pid)
    expect(procfs).not.toBeNull()
    expect(ps).toMatchObject({ pid: procfs?.pid, ppid: procfs?.ppid, pgid: procfs?.pgid })
    expect((await createPsInspector().list())?.some((row) => row.pid === process.pid)).toBe(true)
    expect(await createProcFsInspector().cwd(process.pid)).toBe(process.cwd())
  })

  it('isGone is true for a zombie and a missing pid, false for a live process', async () => {
    // `sleep 0 &` exits at once and stays a zombie: the exec'd `sleep 5` never reaps it.
    const parent = spawn('/bin/sh', ['-c', 'sleep 0 & exec sleep 5'], { stdio: 'ignore' })
    started.push(parent.pid!)
    const zombie = await waitFor(() => {
      const child = childrenOf(parent.pid!)[0]
      if (child === undefined) return undefined
      return parseProcStat(readFileSync(`/proc/${child}/stat`, 'utf8'))?.state === 'Z' ? child : undefined
    }, 'a zombie')
    const procfs = createProcFsInspector()
    expect(procfs.isGone(zombie)).toBe(true)
    expect(procfs.isGone(parent.pid!)).toBe(false)
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))
    expect(procfs.isGone(pidMax + 1)).toBe(true)
    // signal 0 cannot tell a zombie from a live process: the ps inspector stays conservative.
    expect(createPsInspector().isGone(zombie)).toBe(false)
    expect(createPsInspector().isGone(pidMax + 1)).toBe(true)
    // isReaped (the cheap SIGCHLD look) proves only a free pid: a zombie is not reaped yet.
    for (const inspector of [procfs, createPsInspector()]) {
      expect(inspector.isReaped(zombie)).toBe(false)
      expect(inspector.isReaped(parent.pid!)).toBe(false)
      expect(inspector.isReaped(pidMax + 1)).toBe(true)
    }
    expect(createNullInspector().isReaped(pidMax + 1)).toBe(false)
  })

  it('reads the start time, and isGone(pid, startTime) sees a pid that another process reused', async () => {
    const self = parseProcStat(readFileSync('/proc/self/stat', 'utf8'))
    // Field 22 of /proc/<pid>/stat, read independently.
    const text = readFileSync('/proc/self/stat', 'utf8')
    expect(self?.startTime).toBe(text.slice(text.lastIndexOf(')') + 2).split(' ')[19])
    expect(self?.startTime).toMatch(/^\d+$/)
    const procfs = createProcFsInspector()
    expect(procfs.isGone(process.pid, self!.startTime)).toBe(false)
    // The same pid with another start time is another process: the one we knew is gone.
    expect(procfs.isGone(process.pid, String(Number(self!.startTime) + 1))).toBe(true)
    expect(procfs.isGone(process.pid, null)).toBe(false)
    expect(procfs.readNow(process.pid)).toMatchObject({ pid: process.pid, startTime: self!.startTime })
    expect(procfs.readNow(Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1)).toBe('absent')
  })

  it('readNow reads a stat line of any length whole, says absent for no process and null for an unreadable one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ptykit-procfs-'))
    try {
      const line = (pid: number, name: string, tail: string): string =>
        `${pid} (${name}) S 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 ${tail}\n`
      const write = (pid: number, text: string): void => {
        mkdirSync(join(root, String(pid)))
        writeFileSync(join(root, String(pid), 'stat'), text)
      }
      write(10, line(10, 'sleep', '1000 2000'))
      // Longer than one read: the line must still be read whole (a name with ') ' in it would
      // otherwise be cut at the wrong parenthesis).
      const long = line(11, `a) S 1 2 3 ${'9'.repeat(NODE_PTY_PROC_STAT_READ_BYTES)}`, '1 2')
      expect(long.length).toBeGreaterThan(NODE_PTY_PROC_STAT_READ_BYTES)
      write(11, long)
      write(12, 'not a stat line')
      // A stat path that is a directory cannot be read: it proves nothing about the process.
      // (Its pid is this test's own, so signal 0 finds a live process on any machine.)
      mkdirSync(join(root, String(process.pid), 'stat'), { recursive: true })
      const procfs = createProcFsInspector(root)
      expect(procfs.readNow(10)).toMatchObject({ pid: 10, name: 'sleep', startTime: '987654' })
      expect(procfs.readNow(11)).toMatchObject({ pid: 11, startTime: '987654' })
      expect(procfs.readNow(12)).toBeNull()
      expect(procfs.readNow(13)).toBe('absent')
      // …unless signal 0 proves the pid free (this pid is past pid_max).
      const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))
      mkdirSync(join(root, String(pidMax + 1), 'stat'), { recursive: true })
      expect(procfs.readNow(pidMax + 1)).toBe('absent')
      expect(procfs.readNow(process.pid)).toBeNull()
      // The asynchronous reader agrees.
      expect((await procfs.read(11))?.startTime).toBe('987654')
      expect(await procfs.read(12)).toBeNull()
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('the null inspector never claims anything', async () => {
    const none = createNullInspector()
    expect(none.isGone(process.pid)).toBe(false)
    expect(none.readNow(process.pid)).toBeNull()
    expect(await none.read(process.pid)).toBeNull()
    expect(await none.list()).toBeNull()
    expect(await none.cwd(process.pid)).toBeNull()
  })

  it('picks /proc on Linux, ps on macOS, nothing on Windows', () => {
    expect(createProcessInspector('linux').kind).toBe('procfs')
    expect(createProcessInspector('darwin').kind).toBe('ps')
    expect(createProcessInspector('win32').kind).toBe('none')
  })
})
