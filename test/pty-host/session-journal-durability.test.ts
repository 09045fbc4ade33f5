/**
 * The journal's rewrite (a `forgetExits`, a compaction, the host's start and close) survives a
 * machine crash: the new file's data is synced before the rename names it, and the directory after
 * it — seen through the file calls the journal makes, in order. A directory that refuses its sync
 * does not fail the rewrite; a file whose sync fails does (nothing forgotten).
 */
import * as fs from 'node:fs'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { expect, it } from 'vitest'
import { createNullInspector } from '../../src/node-pty/process-inspector.js'
import { readPredecessorJournal, SessionJournal, type JournalExit, type JournalFileSystem } from '../../src/pty-host/session-journal.js'
import { useJournalPaths } from './pty-host-test-support.js'

const journalPath = useJournalPaths()

function exitNumber(n: number): JournalExit {
  return { id: `pty-${n}`, code: n, cause: { kind: 'exited', exitCode: n }, incarnationId: `inc-${n}`, stopRequestedBeforeDeath: false }
}

/** A failure as node:fs throws one. */
function errno(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} (injected)`), { code, syscall })
}

/**
 * `node:fs`'s calls, recorded by what they touch (`temp`, `journal`, `dir`), with failures
 * injected per call (`fail.fsync('dir')`: the directory's fsync throws `EINVAL`).
 */
function recordingFs(path: string, fail: { fsync?: 'temp' | 'dir'; code?: string } = {}): { fs: JournalFileSystem; calls: string[] } {
  const calls: string[] = []
  const kindOf = new Map<number, string>()
  const name = (file: fs.PathLike): string => {
    const text = String(file)
    if (text === path) return 'journal'
    if (text === dirname(path)) return 'dir'
    if (dirname(text) === dirname(path) && basename(text).startsWith(`${basename(path)}.`) && text.endsWith('.tmp')) return 'temp'
    return text
  }
  const recording: JournalFileSystem = {
    openSync: ((file: fs.PathLike, flags: fs.OpenMode, mode?: fs.Mode | null) => {
      const fd = fs.openSync(file, flags, mode)
      kindOf.set(fd, name(file))
      calls.push(`open ${name(file)}`)
      return fd
    }) as typeof fs.openSync,
    writeSync: ((fd: number, ...rest: unknown[]) => {
      calls.push(`write ${kindOf.get(fd)}`)
      return (fs.writeSync as (...args: unknown[]) => number)(fd, ...rest)
    }) as typeof fs.writeSync,
    fsyncSync: (fd) => {
      calls.push(`fsync ${kindOf.get(fd)}`)
      if (fail.fsync !== undefined && kindOf.get(fd) === fail.fsync) throw errno(fail.code ?? 'EINVAL', 'fsync')
      fs.fsyncSync(fd)
    },
    closeSync: (fd) => {
      calls.push(`close ${kindOf.get(fd)}`)
      fs.closeSync(fd)
    },
    renameSync: (from, to) => {
      calls.push(`rename ${name(from)} ${name(to)}`)
      fs.renameSync(from, to)
    },
    unlinkSync: (file) => {
      calls.push(`unlink ${name(file)}`)
      fs.unlinkSync(file)
    },
  }
  return { fs: recording, calls }
}

/** The calls with consecutive writes of one file folded into one (a write may be cut into several). */
const folded = (calls: readonly string[]): string[] => calls.filter((call, index) => !(call.startsWith('write ') && calls[index - 1] === call))

const temporaries = (path: string): string[] => readdirSync(dirname(path)).filter((entry) => entry.endsWith('.tmp'))

it("syncs a forgetExits rewrite: the file's data before the rename, the directory after it", () => {
  const path = journalPath()
  const { fs: recording, calls } = recordingFs(path)
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording })
  for (let n = 0; n < 3; n++) journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
  calls.length = 0
  journal.forgetExits([{ id: 'pty-1', incarnationId: 'inc-1' }])
  expect(folded(calls)).toEqual(['open temp', 'write temp', 'fsync temp', 'close temp', 'rename temp journal', 'open dir', 'fsync dir', 'close dir'])
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(0), exitNumber(2)] })
  journal.close()
})

it('syncs the other rewrites the same way: the journal created at the start, a compaction, the close that keeps exits', () => {
  const path = journalPath()
  const { fs: recording, calls } = recordingFs(path)
  const synced = ['open temp', 'write temp', 'fsync temp', 'close temp', 'rename temp journal', 'open dir', 'fsync dir', 'close dir']
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording, compactLines: 8 })
  expect(folded(calls)).toEqual(synced)
  calls.length = 0
  // Appends do not go through a rewrite (one write each, no sync): only the compaction they set off does.
  for (let n = 0; n < 4; n++) journal.ended(journal.intent(`short-${n}`)) // 9 lines: past 8
  expect(folded(calls)).toEqual(synced)
  calls.length = 0
  journal.ended(journal.intent('pty-0'), exitNumber(0))
  journal.close()
  expect(folded(calls)).toEqual(synced)
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(0)] })
})

it("does not fail a forgetExits when the directory refuses its sync (EINVAL): the rewrite stands, the directory closed, no temporary left", () => {
  const path = journalPath()
  const { fs: recording, calls } = recordingFs(path, { fsync: 'dir', code: 'EINVAL' })
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording })
  for (let n = 0; n < 2; n++) journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
  calls.length = 0
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).not.toThrow()
  expect(folded(calls)).toEqual(['open temp', 'write temp', 'fsync temp', 'close temp', 'rename temp journal', 'open dir', 'fsync dir', 'close dir'])
  expect(journal.exits).toEqual([exitNumber(1)])
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(1)] })
  expect(temporaries(path)).toEqual([])
  // Appended to the rewritten file from then on.
  journal.ended(journal.intent('pty-2'), exitNumber(2))
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(1), exitNumber(2)] })
  journal.close()
})

it("fails a forgetExits whose file sync fails (EIO): nothing forgotten, the journal as it was, the temporary removed and never renamed", () => {
  const path = journalPath()
  let failing = false
  const { fs: base, calls } = recordingFs(path)
  const recording: JournalFileSystem = {
    ...base,
    fsyncSync: (fd) => {
      if (failing) {
        calls.push('fsync (failing)')
        throw errno('EIO', 'fsync')
      }
      base.fsyncSync(fd)
    },
  }
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording })
  for (let n = 0; n < 2; n++) journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
  const before = readFileSync(path, 'utf8')
  calls.length = 0
  failing = true
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).toThrow(/EIO/)
  expect(folded(calls)).toEqual(['open temp', 'write temp', 'fsync (failing)', 'close temp', 'unlink temp'])
  expect(journal.exits).toEqual([exitNumber(0), exitNumber(1)])
  expect(readFileSync(path, 'utf8')).toBe(before)
  expect(temporaries(path)).toEqual([])
  failing = false
  journal.close()
  expect(existsSync(path)).toBe(true)
})

/**
 * The rewrite's failed syncs reach the host's log (the journal's `log` hook, the host's `log`
 * option): before, a directory that refused its sync was silent, and a compaction's or a close's
 * rewrite whose file sync failed too (no caller hears of those) — the journal's durability was
 * lost without a word. Each kind of failure (what failed, its code) is told once, with the path and
 * the error; a directory's failure still fails nothing.
 */
it('tells the log of a directory that refuses its sync — once per kind, with the path and the error — and the rewrite stands', () => {
  const path = journalPath()
  const { fs: recording } = recordingFs(path, { fsync: 'dir', code: 'EINVAL' })
  const logged: string[] = []
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording, log: (line) => void logged.push(line) })
  // The start's rewrite, then two forgetExits: three refused directory syncs, one line.
  for (let n = 0; n < 3; n++) journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).not.toThrow()
  expect(() => journal.forgetExits([{ id: 'pty-1', incarnationId: 'inc-1' }])).not.toThrow()
  expect(journal.exits).toEqual([exitNumber(2)])
  expect(logged).toHaveLength(1)
  expect(logged[0]).toContain(`directory ${dirname(path)}`)
  expect(logged[0]).toContain('EINVAL: fsync (injected)')
  expect(logged[0]).toContain('stands')
  journal.close()
  expect(logged).toHaveLength(1)
})

it("tells the log of a file sync that fails in a rewrite no caller hears of (the close's), once per error code", () => {
  const path = journalPath()
  let failWith: string | null = null
  const { fs: base } = recordingFs(path)
  const recording: JournalFileSystem = {
    ...base,
    fsyncSync: (fd) => {
      if (failWith !== null) throw errno(failWith, 'fsync')
      base.fsyncSync(fd)
    },
  }
  const logged: string[] = []
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { fs: recording, log: (line) => void logged.push(line) })
  journal.ended(journal.intent('pty-0'), exitNumber(0))
  journal.ended(journal.intent('pty-1'), exitNumber(1))
  failWith = 'EIO'
  // A forgetExits fails (its caller hears of it) and is logged; a second one of the same code is not.
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).toThrow(/EIO/)
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).toThrow(/EIO/)
  expect(logged).toHaveLength(1)
  expect(logged[0]).toMatch(new RegExp(`new journal file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\\d+\\.[0-9a-f]{12}\\.tmp failed \\(EIO: EIO: fsync \\(injected\\)\\)`))
  expect(logged[0]).toContain('was not made')
  // The close's rewrite fails with another code: told (no caller hears of it), and nothing thrown.
  failWith = 'ENOSPC'
  expect(() => journal.close()).not.toThrow()
  expect(logged).toHaveLength(2)
  expect(logged[1]).toContain('ENOSPC')
  expect(temporaries(path)).toEqual([])
})

it('a log that throws fails no rewrite', () => {
  const path = journalPath()
  const { fs: recording } = recordingFs(path, { fsync: 'dir', code: 'EINVAL' })
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, {
    fs: recording,
    log: () => {
      throw new Error('the log is gone')
    },
  })
  journal.ended(journal.intent('pty-0'), exitNumber(0))
  expect(() => journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }])).not.toThrow()
  expect(journal.exits).toEqual([])
  journal.close()
})
