/**
 * A `/proc/<pid>/stat` row in state `X` is read again, and the second read answers. `X` is a
 * process being reaped — or, for a moment, a live one whose non-main thread called `execve` (the
 * kernel releases its old main thread as `X`): one read cannot tell them apart. A fabricated
 * `/proc` whose stat file changes between two opens stands in for both; `node:fs` is wrapped so
 * that each open of a file first writes the next state the test queued for it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'

/** Per path, the contents its next opens find (`null`: the file is gone by then). */
const queued = vi.hoisted(() => new Map<string, (string | null)[]>())
const opens = vi.hoisted(() => new Map<string, number>())
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const nextState = (path: unknown): void => {
    const key = String(path)
    opens.set(key, (opens.get(key) ?? 0) + 1)
    const queue = queued.get(key)
    if (queue === undefined || queue.length === 0) return
    const content = queue.shift()!
    if (content === null) fs.rmSync(key, { force: true })
    else fs.writeFileSync(key, content)
  }
  const openSync = ((path: unknown, ...rest: unknown[]) => {
    nextState(path)
    return Reflect.apply(fs.openSync, fs, [path, ...rest])
  }) as typeof fs.openSync
  const open = ((path: unknown, ...rest: unknown[]) => {
    nextState(path)
    return Reflect.apply(fs.open, fs, [path, ...rest])
  }) as typeof fs.open
  return { ...fs, default: { ...fs, openSync, open }, openSync, open }
})

const { createProcFsInspector, isGoneBy } = await import('../../src/node-pty/process-inspector.js')

const root = mkdtempSync(join(tmpdir(), 'ptykit-proc-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const PID = 4000
const statPath = join(root, String(PID), 'stat')
// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
const statLine = (state: string, threads: number): string => `${PID} (prog) ${state} 1 ${PID} ${PID} 34817 ${PID} 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 777\n`

/** Queue the states the next opens of the pid's stat file find, and count its opens afresh. */
function states(...contents: (string | null)[]): void {
  mkdirSync(join(root, String(PID)), { recursive: true })
  queued.set(statPath, contents)
  opens.set(statPath, 0)
}

describe('the /proc inspector reads an X row again', () => {
  const inspector = createProcFsInspector(root)

  it('a live process whose thread called execve (X, then running): alive, in both reads', async () => {
    states(statLine('X', 0), statLine('R', 1))
    const seen = inspector.readNow(PID)
    expect(seen).toMatchObject({ state: 'R' })
    expect(isGoneBy(seen, '777')).toBe(false)
    expect(inspector.isGone(PID, '777')).toBe(false)
    states(statLine('X', 0), statLine('S', 3))
    expect(await inspector.read(PID)).toMatchObject({ state: 'S', threads: 3 })
    expect(opens.get(statPath)).toBe(2)
  })

  it('a process being reaped (X, then gone or X again): gone', async () => {
    states(statLine('X', 0), null)
    expect(inspector.readNow(PID)).toBe('absent')
    states(statLine('X', 1), statLine('X', 0))
    expect(inspector.isGone(PID, '777')).toBe(true)
    states(statLine('X', 0), null)
    expect(await inspector.read(PID)).toBeNull()
  })

  it('reads any other state once', async () => {
    for (const state of ['R', 'S', 'Z']) {
      states(statLine(state, 1), statLine('X', 0))
      expect(inspector.readNow(PID)).toMatchObject({ state })
      expect(opens.get(statPath)).toBe(1)
    }
    states(statLine('Z', 1), statLine('R', 1))
    expect(await inspector.read(PID)).toMatchObject({ state: 'Z' })
    expect(opens.get(statPath)).toBe(1)
  })
})
