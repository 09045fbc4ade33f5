import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { HeadlessScreen, HeadlessScreenFactory, ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import { loadHeadlessScreens } from '../../src/pty-host/headless-screen.js'
import { SCREEN_SKIP_CANCEL, type ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { SessionHistory } from '../../src/pty-host/session-history.js'

/** A screen that records exactly what it was handed; its snapshot is that text. */
class RecordingScreen implements HeadlessScreen {
  written = ''
  write(data: string): void {
    this.written += data
  }
  resize(): void {}
  clear(): void {}
  snapshot(): Promise<ScreenSnapshot> {
    return Promise.resolve({ data: this.written, cols: 10, rows: 2 })
  }
  heldBytes(): number {
    return 0
  }
  dispose(): void {}
}

/** The scheduler in these tests: remembers who asked, parses nothing by itself. */
class ManualScheduler implements ScreenScheduler {
  readonly scheduled = new Set<unknown>()
  schedule(cursor: Parameters<ScreenScheduler['schedule']>[0]): void {
    this.scheduled.add(cursor)
    cursor.markScheduled(true)
  }
  forget(cursor: Parameters<ScreenScheduler['forget']>[0]): void {
    this.scheduled.delete(cursor)
    cursor.markScheduled(false)
  }
}

/** The cursor's rules written plainly, over the whole stream. */
type Model = { stream: string; limit: number; parsed: number; skipped: number; cancel: boolean; screen: string }
type Real = { history: SessionHistory; screen: RecordingScreen; scheduler: ManualScheduler }

function checkInvariants(model: Model, real: Real): void {
  const { history } = real
  const cursor = history.screen
  expect(history.seq).toBe(model.stream.length)
  expect(history.retainedFrom).toBe(Math.max(0, model.stream.length - model.limit))
  // Never ahead of the ring, never behind what it still holds.
  expect(cursor.seq).toBeLessThanOrEqual(history.seq)
  expect(cursor.seq).toBeGreaterThanOrEqual(history.retainedFrom)
  expect(cursor.seq).toBe(model.parsed)
  expect(cursor.skippedChars).toBe(model.skipped)
  expect(cursor.pendingChars).toBe(history.seq - cursor.seq)
  // The screen got the stream minus the skipped parts, a CAN where each skip cut it.
  expect(real.screen.written).toBe(model.screen)
  // Whatever is pending, the cursor is on the scheduler's list.
  if (cursor.pendingChars > 0) expect(real.scheduler.scheduled.has(cursor)).toBe(true)
}

/** The model's view of the ring taking `chunk`: evict past the limit, skip the cursor forward. */
function modelAppend(model: Model, chunk: string): void {
  model.stream += chunk
  const retainedFrom = Math.max(0, model.stream.length - model.limit)
  if (model.parsed < retainedFrom) {
    model.skipped += retainedFrom - model.parsed
    model.parsed = retainedFrom
    model.cancel = true
  }
}

function modelFeed(model: Model, maxChars: number): void {
  const chars = Math.min(maxChars, model.stream.length - model.parsed)
  if (chars <= 0) return
  model.screen += (model.cancel ? SCREEN_SKIP_CANCEL : '') + model.stream.slice(model.parsed, model.parsed + chars)
  model.cancel = false
  model.parsed += chars
}

class Append implements fc.AsyncCommand<Model, Real> {
  constructor(readonly chunk: string) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    real.history.append(this.chunk)
    modelAppend(model, this.chunk)
    checkInvariants(model, real)
  }
  toString = (): string => `append(${JSON.stringify(this.chunk)})`
}

class Feed implements fc.AsyncCommand<Model, Real> {
  constructor(readonly maxChars: number) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    const handed = real.history.screen.feed(this.maxChars)
    const before = model.parsed
    modelFeed(model, this.maxChars)
    expect(handed).toBe(model.parsed - before)
    checkInvariants(model, real)
  }
  toString = (): string => `feed(${this.maxChars})`
}

class Snapshot implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    const pending = real.history.snapshot(undefined)
    // Output after the call is not in this snapshot: it is what the live stream continues with.
    real.history.append('late')
    const snapshot = await pending
    modelFeed(model, Infinity)
    const seqAtCall = model.stream.length
    expect(snapshot.seq).toBe(seqAtCall)
    expect(snapshot.skippedChars).toBe(model.skipped)
    expect(snapshot.data).toBe(model.screen)
    modelAppend(model, 'late')
    checkInvariants(model, real)
    // Snapshot seq, then the stream from it: every char after `seq` exactly once.
    expect(real.history.replay(snapshot.seq).data).toBe(model.stream.slice(Math.max(snapshot.seq, real.history.retainedFrom)))
  }
  toString = (): string => 'snapshot'
}

const chunk = fc.string({ unit: fc.constantFrom('a', 'b', '\x1b', '[', '2', 'J', '\r', '\n', 'é', '😀'), maxLength: 40 })

describe('screen cursor over the replay ring', () => {
  it('parses behind the stream: never ahead of the ring, never behind its oldest data, skips counted exactly, snapshot seq = parsed position', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 120 }),
        fc.commands(
          [
            chunk.map((data) => new Append(data)),
            fc.oneof(fc.integer({ min: 0, max: 80 }), fc.constant(Infinity)).map((n) => new Feed(n)),
            fc.constant(new Snapshot()),
          ],
          { maxCommands: 60 },
        ),
        async (limit, commands) => {
          const screen = new RecordingScreen()
          const scheduler = new ManualScheduler()
          const screens: HeadlessScreenFactory = () => screen
          const history = new SessionHistory(screens, scheduler, { cols: 10, rows: 2, limitChars: limit, scrollbackRows: 0 })
          const model: Model = { stream: '', limit, parsed: 0, skipped: 0, cancel: false, screen: '' }
          await fc.asyncModelRun(() => ({ model, real: { history, screen, scheduler } }), commands)
          history.dispose()
          expect(scheduler.scheduled.size).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('a skip cancels the escape sequence it cut and keeps the modes: the real screen shows the retained output on the earlier state', async () => {
    const history = new SessionHistory(await loadHeadlessScreens(), new ManualScheduler(), { cols: 20, rows: 3, limitChars: 20, scrollbackRows: 0 })
    // Bold on (a mode the skip must keep), then an OSC title the eviction cuts in the middle.
    const parsed = '\x1b[1mBOLD\r\n\x1b]0;tit'
    history.append(parsed)
    history.screen.feed(Infinity)
    expect(history.screen.skippedChars).toBe(0)
    history.append('le-that-is-far-too-long')
    history.append('\r\nlast line')
    expect(history.screen.skippedChars).toBeGreaterThan(0)
    const snapshot = await history.snapshot(0)
    expect(snapshot.seq).toBe(history.seq)
    expect(snapshot.skippedChars).toBe(history.retainedFrom - parsed.length)
    // Without the CAN, the retained text would still be inside the OSC string and never printed.
    expect(snapshot.data).toContain('last line')
    // Bold was kept: the serialized screen turns it on for the text after the skip.
    expect(snapshot.data).toMatch(/\x1b\[[0-9;]*1[0-9;]*m[^\x1b]*last line/)
    history.dispose()
  })
})
