import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadHeadlessScreens } from '../../src/pty-host/headless-screen.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { SessionHistory } from '../../src/pty-host/session-history.js'

const openScreen = await loadHeadlessScreens()
/** No background parsing: the screen parses only on a snapshot (what these tests look at). */
const manual: ScreenScheduler = { schedule: (cursor) => cursor.markScheduled(true), forget: (cursor) => cursor.markScheduled(false) }

describe('session history (replay ring)', () => {
  it('replays exactly the retained suffix from any sequence, keeps at most the limit, and counts what it lost', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 0, maxLength: 40 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 120 }),
        fc.nat({ max: 1_500 }),
        (chunks, limitChars, askedRaw) => {
          const history = new SessionHistory(openScreen, manual, { cols: 20, rows: 5, limitChars, scrollbackRows: 10 })
          try {
            for (const chunk of chunks) history.append(chunk)
            const all = chunks.join('')
            expect(history.seq).toBe(all.length)
            expect(history.seq - history.retainedFrom).toBeLessThanOrEqual(limitChars)
            const asked = Math.min(askedRaw, all.length)
            const replay = history.replay(asked)
            expect(replay.replayFrom).toBe(Math.max(asked, history.retainedFrom))
            expect(replay.lostChars).toBe(replay.replayFrom - asked)
            expect(replay.data).toBe(all.slice(replay.replayFrom))
            expect(history.replay(null).data).toBe(all.slice(history.retainedFrom))
          } finally {
            history.dispose()
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('snapshots the screen at the sequence it reports', async () => {
    const history = new SessionHistory(openScreen, manual, { cols: 20, rows: 4, limitChars: 1_000, scrollbackRows: 10 })
    history.append('hello\r\n')
    const pending = history.snapshot(undefined)
    history.append('\x1b[2Jcleared')
    const snapshot = await pending
    expect(snapshot).toMatchObject({ seq: 'hello\r\n'.length, cols: 20, rows: 4, source: 'headless' })
    expect(snapshot.data).toContain('hello')
    const later = await history.snapshot(undefined)
    expect(later.seq).toBe(history.seq)
    expect(later.data).toContain('cleared')
    history.dispose()
  })
})
