/**
 * The session journal's file: appended per spawn and exit, compacted when it grows, read back by a
 * successor as the sessions that were open — and, when it cannot tell, saying so (`unaccounted`).
 */
import { execFileSync, spawn as spawnChild, spawnSync } from 'node:child_process'
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { expect, it } from 'vitest'
import { createNullInspector, createProcFsInspector } from '../../src/node-pty/process-inspector.js'
import { bootTicksNow, currentBootId, PTY_HOST_JOURNAL_COMPACT_LINES, PTY_HOST_JOURNAL_MAX_READ_BYTES, readPredecessorJournal, SessionJournal, type JournalExit } from '../../src/pty-host/session-journal.js'
import { procRow, waitFor } from '../node-pty/pty-test-support.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { useJournalPaths } from './pty-host-test-support.js'

const journalPath = useJournalPaths()

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

it('keeps the session whose own intent sets off the compaction (and its process line after it)', async () => {
  // Every position of the triggering intent among a handful of thresholds: before the fix the
  // session whose `i` line crossed the threshold was left out of the rewritten file, and its `s`
  // line, appended after, was then ignored — a successor answered "absent" while it ran.
  for (let compactLines = 40; compactLines <= 45; compactLines++) {
    const path = journalPath()
    const journal = new SessionJournal(path, createProcFsInspector(), { open: [], unaccounted: false }, null, { compactLines })
    journal.intent('long-lived')
    // Sessions that come and go (i, e) until the file holds exactly `compactLines` lines (with a
    // few open, so that it is more than four times what they need).
    while (lineCount(path) < compactLines - 1) journal.ended(journal.intent('short'))
    if (lineCount(path) === compactLines - 1) journal.intent('pad')
    expect(lineCount(path)).toBe(compactLines)
    const child = spawnChild('sleep', ['1000'], { stdio: 'ignore' })
    try {
      await waitFor(() => (child.pid !== undefined && procRow(child.pid) !== null ? true : undefined), 'the child')
      const key = journal.intent('victim') // the line past the threshold: compacts
      expect(lineCount(path)).toBeLessThan(10) // compacted
      journal.spawned(key, 'inc-victim', child.pid!)
      const read = readPredecessorJournal(path, null)
      expect(read).toMatchObject({ unaccounted: false })
      const victim = typeof read === 'object' ? read.open.find((session) => session.id === 'victim') : undefined
      expect(victim?.process).toMatchObject({ incarnationId: 'inc-victim', pid: child.pid, startTime: procRow(child.pid!)!.startTime })
    } finally {
      child.kill('SIGKILL')
      journal.close()
    }
  }
})

it('an `s` or `e` line whose `i` is missing makes the journal unaccounted', () => {
  const path = journalPath()
  const header = JSON.stringify({ ptykitJournal: 1, bootId: null, unaccounted: false })
  writeFileSync(path, [header, JSON.stringify({ t: 's', k: 7, inc: 'x', pid: 123, st: '5', pg: 123, sid: 123 }), ''].join('\n'), { mode: 0o600 })
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: true })
  writeFileSync(path, [header, JSON.stringify({ t: 'e', k: 7 }), ''].join('\n'), { mode: 0o600 })
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: true })
})

it('trusts no `s` line whose group or session is not its leader’s pid: the session stays unknown (an intent), the journal unaccounted', () => {
  const path = journalPath()
  writeFileSync(
    path,
    [
      JSON.stringify({ ptykitJournal: 1, bootId: null, unaccounted: false }),
      JSON.stringify({ t: 'i', k: 1, id: 'a' }),
      JSON.stringify({ t: 's', k: 1, inc: 'x', pid: 123, st: '5', pg: 456, sid: 456 }),
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  expect(readPredecessorJournal(path, null)).toEqual({ open: [{ id: 'a' }], unaccounted: true })
})

it('records when the session held its number (`at`, in boot clock ticks) and reads it back', async () => {
  const path = journalPath()
  const journal = new SessionJournal(path, createProcFsInspector(), { open: [], unaccounted: false }, currentBootId())
  const child = spawnChild('sleep', ['1000'], { stdio: 'ignore' })
  try {
    await waitFor(() => (child.pid !== undefined && procRow(child.pid) !== null ? true : undefined), 'the child')
    const before = bootTicksNow()!
    journal.spawned(journal.intent('a'), 'inc-a', child.pid!)
    const read = readPredecessorJournal(path, currentBootId())
    const heldAt = typeof read === 'object' ? read.open[0]?.process?.heldAt : undefined
    expect(heldAt).toBeGreaterThanOrEqual(before)
    expect(heldAt).toBeLessThanOrEqual(bootTicksNow()!)
    expect(Number(procRow(child.pid!)!.startTime)).toBeLessThanOrEqual(heldAt!)
  } finally {
    child.kill('SIGKILL')
    journal.close()
  }
})

it('a line cut short (a full disk: here a file-size limit) is cut back off and refuses its spawn: no torn line is left', () => {
  const path = journalPath()
  // `ulimit -f 4`: 2 048 bytes; SIGXFSZ ignored, so a write past it is cut short (then EFBIG).
  const result = spawnSync('/bin/sh', ['-c', `ulimit -f 4; trap '' XFSZ; exec "$0" "$@"`, process.execPath, ...nodeArgsFor(resolve(import.meta.dirname, 'fixtures/journal-fill.ts')), path], { encoding: 'utf8' })
  const report = JSON.parse(result.stdout) as { accepted: number; refusal: string | null; open: number }
  expect(report.refusal).not.toBeNull()
  // The refused intent is not counted open.
  expect(report.open).toBe(report.accepted)
  const text = readFileSync(path, 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  expect(readPredecessorJournal(path, null)).toMatchObject({ unaccounted: false })
  const read = readPredecessorJournal(path, null)
  expect(typeof read === 'object' ? read.open.length : -1).toBe(report.accepted)
})

it('never blocks on a FIFO in the journal’s place, and reads no file larger than a host writes', () => {
  const path = journalPath()
  execFileSync('mkfifo', ['-m', '600', path])
  expect(readPredecessorJournal(path, null)).toBe('unreadable')
  rmSync(path)
  writeFileSync(path, `${JSON.stringify({ ptykitJournal: 1, bootId: null, unaccounted: false })}\n`, { mode: 0o600 })
  truncateSync(path, PTY_HOST_JOURNAL_MAX_READ_BYTES + 1)
  expect(readPredecessorJournal(path, null)).toBe('unreadable')
})

it('removes the temporary files a dead host’s rewrite left — only its own kind', () => {
  const path = journalPath()
  const stale = `${path}.12345.0123456789ab.tmp`
  const foreign = `${path}.notes.tmp`
  writeFileSync(stale, 'x', { mode: 0o600 })
  writeFileSync(foreign, 'x', { mode: 0o600 })
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null)
  expect(existsSync(stale)).toBe(false)
  expect(existsSync(foreign)).toBe(true)
  journal.close()
})

// Found by review (helper-127): with either boot id unknown, a journal of another boot was trusted
// with its `at` — another boot's clock, which could make any process with the number a member.
it('trusts no `at` when the journal\'s boot cannot be compared with this one\'s', () => {
  const path = journalPath()
  const lines = [
    { ptykitJournal: 1, bootId: 'old-boot', unaccounted: false },
    { t: 'i', k: 1, id: 'pty-1' },
    { t: 's', k: 1, inc: 'inc-1', pid: 5_000_000, st: '1000', pg: 5_000_000, sid: 5_000_000, at: 50_000_000 },
  ]
  writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
  const read = readPredecessorJournal(path, null)
  expect(typeof read === 'object' ? read.open[0]?.process : undefined).toMatchObject({ pid: 5_000_000 })
  expect(typeof read === 'object' ? read.open[0]?.process?.heldAt : 'unread').toBeUndefined()
})

/** An exit as the journal records one: `pty-<n>` exited `n`, its stop flag alternating. */
function exitNumber(n: number): JournalExit {
  return { id: `pty-${n}`, code: n, cause: { kind: 'exited', exitCode: n }, incarnationId: `inc-${n}`, seq: 10 * n, stopRequestedBeforeDeath: n % 2 === 0 }
}

it('records each exit on its end line, and a compaction keeps only the latest exitMemory exits — each an `i` and `e` pair an older reader reads as a session that ended', () => {
  const path = journalPath()
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null, { compactLines: 20, exitMemory: 3 })
  const open = journal.intent('still-open')
  for (let n = 0; n < 40; n++) {
    journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
    // Compacted: never past four times what the open session and the 3 exits need.
    expect(lineCount(path)).toBeLessThanOrEqual(4 * (2 * 4 + 1) + 1)
  }
  // Between compactions the file holds more; read as the host remembers them: the latest.
  expect(readPredecessorJournal(path, null, 3)).toEqual({ open: [{ id: 'still-open' }], unaccounted: false, exits: [exitNumber(37), exitNumber(38), exitNumber(39)] })
  expect(readPredecessorJournal(path, null, 2)).toMatchObject({ exits: [exitNumber(38), exitNumber(39)] })
  expect(journal.exits).toEqual([exitNumber(37), exitNumber(38), exitNumber(39)])
  journal.ended(open)
  // The host closes (idle, or on request) with nothing open: the exits are kept, alone.
  journal.close()
  const lines = readFileSync(path, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>)
  expect(lines[0]).toMatchObject({ ptykitJournal: 1 })
  expect(lines.slice(1).map((line) => [line.t, line.id])).toEqual([['i', 'pty-37'], ['e', 'pty-37'], ['i', 'pty-38'], ['e', 'pty-38'], ['i', 'pty-39'], ['e', 'pty-39']])
  expect(lines[2]).toMatchObject({ k: lines[1]!.k, code: 37, cause: { kind: 'exited', exitCode: 37 }, inc: 'inc-37', seq: 370, diedBeforeStopRequest: true })
  expect(lines[4]).toMatchObject({ code: 38, stopRequestedBeforeDeath: true })
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(37), exitNumber(38), exitNumber(39)] })

  // A successor carries them on (the latest of its own memory), and forgets one at a new spawn of its id.
  const successor = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false, exits: [exitNumber(37), exitNumber(38), exitNumber(39)] }, null, { exitMemory: 2 })
  expect(successor.exits).toEqual([exitNumber(38), exitNumber(39)])
  successor.intent('pty-39')
  expect(successor.exits).toEqual([exitNumber(38)])
  expect(readPredecessorJournal(path, null)).toEqual({ open: [{ id: 'pty-39' }], unaccounted: false, exits: [exitNumber(38)] })
  successor.close()
})

it('remembers no exit from an end line that is not well formed (the session still ends), resolves an absent cause from the code, and keeps the exits of another boot', () => {
  const path = journalPath()
  const pair = (k: number, id: string, exit: Record<string, unknown>): string[] => [JSON.stringify({ t: 'i', k, id }), JSON.stringify({ t: 'e', k, ...exit })]
  const good = { code: 3, cause: { kind: 'exited', exitCode: 3 }, inc: 'inc-1', diedBeforeStopRequest: true }
  const lines = [
    JSON.stringify({ ptykitJournal: 1, bootId: 'another-boot', unaccounted: false }),
    ...pair(1, 'good', { id: 'good', ...good }),
    ...pair(2, 'bad-cause', { id: 'bad-cause', ...good, cause: { kind: 'signaled', signal: -9 } }),
    ...pair(3, 'bad-code', { id: 'bad-code', ...good, code: 1.5 }),
    ...pair(4, 'bad-code-text', { id: 'bad-code-text', ...good, code: '3' }),
    ...pair(5, 'not-its-id', { id: 'another', ...good }),
    ...pair(6, 'both-flags', { id: 'both-flags', ...good, stopRequestedBeforeDeath: true }),
    ...pair(7, 'no-flag', { id: 'no-flag', code: 3 }),
    ...pair(8, 'long-inc', { id: 'long-inc', ...good, inc: 'x'.repeat(500) }),
    ...pair(9, 'bad-seq', { id: 'bad-seq', ...good, seq: -1 }),
    ...pair(10, 'x'.repeat(70_000), { id: 'x'.repeat(70_000), ...good }),
    ...pair(11, 'bare', {}),
    ...pair(12, 'no-cause', { id: 'no-cause', code: 0, stopRequestedBeforeDeath: true }),
    ...pair(13, 'unknown-reason', { id: 'unknown-reason', code: 5, cause: { kind: 'unknown', reason: 'from_the_future' }, diedBeforeStopRequest: true }),
    '',
  ]
  writeFileSync(path, lines.join('\n'), { mode: 0o600 })
  expect(readPredecessorJournal(path, 'this-boot')).toEqual({
    open: [],
    unaccounted: false,
    exits: [
      { id: 'good', code: 3, cause: { kind: 'exited', exitCode: 3 }, incarnationId: 'inc-1', stopRequestedBeforeDeath: false },
      // No cause recorded: what an app resolves a bare code to (0 is no proof of a clean exit).
      { id: 'no-cause', code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' }, stopRequestedBeforeDeath: true },
      // A reason this version does not know stays unknown: never narrower than it was written.
      { id: 'unknown-reason', code: 5, cause: { kind: 'unknown', reason: 'cause_unreported' }, stopRequestedBeforeDeath: false },
    ],
  })
})

it('forgets the exits named (only of the incarnation named), rewriting the file at once; later lines go to the rewritten file', () => {
  const path = journalPath()
  const journal = new SessionJournal(path, createNullInspector(), { open: [], unaccounted: false }, null)
  for (let n = 0; n < 3; n++) journal.ended(journal.intent(`pty-${n}`), exitNumber(n))
  const open = journal.intent('pty-3')
  // Another incarnation than the one remembered: kept; an id it does not remember: nothing.
  journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-other' }, { id: 'pty-9', incarnationId: undefined }])
  expect(journal.exits).toEqual([exitNumber(0), exitNumber(1), exitNumber(2)])
  journal.forgetExits([{ id: 'pty-0', incarnationId: 'inc-0' }, { id: 'pty-2', incarnationId: 'inc-2' }])
  expect(journal.exits).toEqual([exitNumber(1)])
  expect(readPredecessorJournal(path, null)).toEqual({ open: [{ id: 'pty-3' }], unaccounted: false, exits: [exitNumber(1)] })
  // Appended to the new file (the descriptor follows the rename).
  journal.ended(open, exitNumber(3))
  expect(readPredecessorJournal(path, null)).toEqual({ open: [], unaccounted: false, exits: [exitNumber(1), exitNumber(3)] })
  journal.forgetExits([{ id: 'pty-1', incarnationId: 'inc-1' }, { id: 'pty-3', incarnationId: 'inc-3' }])
  // Nothing left: the host's close removes the file.
  journal.close()
  expect(existsSync(path)).toBe(false)
})
