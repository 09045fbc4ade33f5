/**
 * A lock holder caught as it dies. Linux answers the read of a process that died after its stat
 * file was opened with `ESRCH`, and shows a process being reaped in state `X` — as it shows, for a
 * moment, a live process whose non-main thread called `execve`. The first is gone, like one whose
 * file no longer exists; an `X` is read again, and the second read answers. `node:fs` is mocked so
 * that the reads fail or answer exactly so, which no real process can be timed to do.
 */
import { afterAll, describe, expect, it, vi } from 'vitest'

/** Per path, what its next reads do: fail with an error code, or answer a stat line. */
const reads = vi.hoisted(() => new Map<string, ({ code: string } | { text: string })[]>())
/** Descriptors whose read fails, with the error code it fails with (ESRCH: died after the open). */
const failingReads = vi.hoisted(() => new Map<number, string>())
/** The scratch directory the stand-in stat files are written in (made by the mock, removed after the file). */
const scratchDir = vi.hoisted(() => ({ path: undefined as string | undefined }))
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const { tmpdir } = await import('node:os')
  const scratch = fs.mkdtempSync(`${tmpdir()}/ptykit-lock-stat-`)
  scratchDir.path = scratch
  const fail = (code: string, path: unknown): never => {
    throw Object.assign(new Error(`${code}: read of ${String(path)}`), { code })
  }
  // An answer is served from a scratch file, opened in the stat file's place.
  const openSync = ((path: unknown, ...rest: unknown[]) => {
    const next = reads.get(String(path))?.shift()
    if (next === undefined) return Reflect.apply(fs.openSync, fs, [path, ...rest])
    if ('code' in next && next.code !== 'ESRCH') fail(next.code, path)
    const stand = `${scratch}/stat`
    fs.writeFileSync(stand, 'text' in next ? next.text : '')
    const fd = fs.openSync(stand, 'r')
    if ('code' in next) failingReads.set(fd, next.code)
    return fd
  }) as typeof fs.openSync
  const readSync = ((fd: number, ...rest: unknown[]) => {
    const code = failingReads.get(fd)
    if (code !== undefined) {
      failingReads.delete(fd)
      fail(code, `fd ${fd}`)
    }
    return Reflect.apply(fs.readSync, fs, [fd, ...rest])
  }) as typeof fs.readSync
  return { ...fs, default: { ...fs, openSync, readSync }, openSync, readSync }
})

const { isHolderAlive } = await import('../../src/pty-host/socket-security.js')
const { rmSync } = await import('node:fs')
afterAll(() => {
  if (scratchDir.path !== undefined) rmSync(scratchDir.path, { recursive: true, force: true })
})

const self = { pid: process.pid, startTime: null }
const statPath = `/proc/${process.pid}/stat`
// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
const statLine = (state: string, threads: number): string => `${process.pid} (node) ${state} 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 777\n`

/** Whether the holder counts as alive when its stat reads answer `answers` in turn. */
function aliveWhenReadsAnswer(...answers: ({ code: string } | { text: string })[]): boolean {
  reads.set(statPath, answers)
  try {
    return isHolderAlive(self)
  } finally {
    reads.clear()
  }
}

describe('isHolderAlive (Linux), on a stat read that fails or shows X', () => {
  it('counts a holder whose stat read answers ESRCH (it died after the open) or ENOENT as gone, and one it cannot read (EACCES) as holding', () => {
    expect(isHolderAlive(self)).toBe(true)
    expect(aliveWhenReadsAnswer({ code: 'ESRCH' })).toBe(false)
    expect(aliveWhenReadsAnswer({ code: 'ENOENT' })).toBe(false)
    expect(aliveWhenReadsAnswer({ code: 'EACCES' })).toBe(true)
  })

  it('reads an X holder again: running then (a thread called execve) holds the lock; gone or X again does not', () => {
    expect(aliveWhenReadsAnswer({ text: statLine('X', 0) }, { text: statLine('R', 1) })).toBe(true)
    expect(aliveWhenReadsAnswer({ text: statLine('X', 0) }, { code: 'ENOENT' })).toBe(false)
    expect(aliveWhenReadsAnswer({ text: statLine('X', 1) }, { text: statLine('X', 0) })).toBe(false)
    expect(aliveWhenReadsAnswer({ text: statLine('Z', 1) }, { text: statLine('R', 1) })).toBe(false)
  })
})
