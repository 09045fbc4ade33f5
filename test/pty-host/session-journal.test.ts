/**
 * The session journal's file: appended per spawn and exit, compacted when it grows, read back by a
 * successor as the sessions that were open — and, when it cannot tell, saying so (`unaccounted`).
 */
import { appendFileSync, chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { createNullInspector, createProcFsInspector } from '../../src/node-pty/process-inspector.js'
import { PTY_HOST_JOURNAL_COMPACT_LINES, readPredecessorJournal, SessionJournal } from '../../src/pty-host/session-journal.js'
import { makeSocketDir } from './pty-host-test-support.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function journalPath(): string {
  const { dir } = makeSocketDir()
  dirs.push(dir)
  return join(dir, 'host.sock.journal')
}

const lineCount = (path: string): number => readFileSync(path, 'utf8').split('\n').filter((line) => line.length > 0).length

it('records this process as a spawned session (its start time) and reads it back open until it ends', () => {
  const path = journalPath()
  // The journal records only a child of the host: this test process is its own "host" here, so a
  // child is needed — the test runner's own pid is not its child. Record an intent and read it.
  const journal = new SessionJournal(path, createProcFsInspector(), { open: [], unaccounted: false })
  const key = journal.intent('pty-a')
  journal.spawned(key, 'inc-a', process.pid) // not a child of itself: nothing recorded, the intent stays
  expect(readPredecessorJournal(path)).toEqual({ open: [{ id: 'pty-a' }], unaccounted: false })
  journal.ended(key)
  expect(readPredecessorJournal(path)).toEqual({ open: [], unaccounted: false })
  journal.close()
  expect(readPredecessorJournal(path)).toBe('absent')
})

it('stays proportional to the open sessions: compacted past PTY_HOST_JOURNAL_COMPACT_LINES, nothing open lost', () => {
  const path = journalPath()
  const journal = new SessionJournal(path, createNullInspector(), { open: [{ id: 'carried', process: { incarnationId: 'i0', pid: 4194305, startTime: '7', pgid: 4194305, sid: 4194305 } }], unaccounted: false })
  const kept = journal.intent('kept')
  for (let index = 0; index < PTY_HOST_JOURNAL_COMPACT_LINES; index++) journal.ended(journal.intent(`short-${index}`))
  expect(lineCount(path)).toBeLessThan(PTY_HOST_JOURNAL_COMPACT_LINES / 2)
  const read = readPredecessorJournal(path)
  expect(read).toEqual({ open: [{ id: 'carried', process: { incarnationId: 'i0', pid: 4194305, startTime: '7', pgid: 4194305, sid: 4194305 } }, { id: 'kept' }], unaccounted: false })
  journal.ended(kept)
  journal.close()
  // Something is left to account for (the carried session): kept for the next host, cut down.
  expect(lineCount(path)).toBe(3)
})

it('says what it cannot tell: a torn line, a foreign file, a private file of another mode', () => {
  const path = journalPath()
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false })
  journal.intent('a')
  appendFileSync(path, '{"t":"s","k":')
  expect(readPredecessorJournal(path)).toEqual({ open: [{ id: 'a' }], unaccounted: true })
  writeFileSync(path, 'not a journal\n')
  expect(readPredecessorJournal(path)).toBe('unreadable')
  writeFileSync(path, `${JSON.stringify({ ptykitJournal: 1, bootId: null, unaccounted: false })}\n`)
  chmodSync(path, 0o644)
  expect(readPredecessorJournal(path)).toBe('unreadable')
  journal.close()
})

it('a journal of another boot holds no running process', () => {
  const path = journalPath()
  writeFileSync(path, [JSON.stringify({ ptykitJournal: 1, bootId: 'another-boot', unaccounted: true }), JSON.stringify({ t: 'i', k: 1, id: 'x' }), ''].join('\n'), { mode: 0o600 })
  expect(readPredecessorJournal(path, 'this-boot')).toEqual({ open: [], unaccounted: false })
})
