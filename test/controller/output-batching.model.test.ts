// fc.commands model of `dataBatchMs` output coalescing (issue 18.4): any interleaving of provider
// chunks and clock advances, then an exit. Checked after every step: the first chunk after a quiet
// spell is published at once (leading edge); chunks inside a window go out as one event when it
// ends; nothing is lost, reordered or duplicated; `seq` is the running count; no output follows
// the exit, and what was held when the exit came is published right before it.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './controller-harness.js'

const WINDOW_MS = 5

type Model = {
  /** Chunks the provider emitted, in order. */
  emitted: string[]
  /** Chunks held in the open window (not yet published). */
  pending: string[]
  /** When the open window ends; `null` when no window is open. */
  windowEndsAt: number | null
  now: number
}

type Real = { h: Harness; id: string }

/** Every published chunk, concatenated, and the checks that hold after any step. */
function assertConsistent(model: Model, real: Real): void {
  const data = real.h.data()
  const published = data.map((event) => event.data).join('')
  const emitted = model.emitted.join('')
  const held = model.pending.join('')
  // Nothing lost, reordered or duplicated: what is out plus what is held is what came in.
  expect(published + held).toBe(emitted)
  let running = 0
  for (const event of data) {
    running += event.data.length
    expect(event.seq).toBe(running)
  }
}

class EmitChunk implements fc.Command<Model, Real> {
  constructor(readonly chunk: string) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    const before = real.h.data().length
    real.h.provider.emitData(real.id, this.chunk)
    model.emitted.push(this.chunk)
    if (model.windowEndsAt === null) {
      // Leading edge: published synchronously, whole, as its own event.
      expect(real.h.data().length).toBe(before + 1)
      expect(real.h.data().at(-1)?.data).toBe(this.chunk)
      model.windowEndsAt = model.now + WINDOW_MS
    } else {
      expect(real.h.data().length).toBe(before)
      model.pending.push(this.chunk)
    }
    assertConsistent(model, real)
  }
  toString = (): string => `emit(${JSON.stringify(this.chunk)})`
}

class Advance implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = (): boolean => true
  run(model: Model, real: Real): void {
    const before = real.h.data().length
    const target = model.now + this.ms
    const merged: string[] = []
    while (model.windowEndsAt !== null && model.windowEndsAt <= target) {
      if (model.pending.length === 0) {
        model.windowEndsAt = null
      } else {
        merged.push(model.pending.join(''))
        model.pending = []
        model.windowEndsAt += WINDOW_MS
      }
    }
    real.h.clock.advance(this.ms)
    model.now = target
    // One event per window that ended with chunks held, each the merge of that window's chunks.
    expect(real.h.data().slice(before).map((event) => event.data)).toEqual(merged)
    assertConsistent(model, real)
  }
  toString = (): string => `advance(${this.ms})`
}

describe('dataBatchMs (model)', () => {
  it('P-batch-1: leading edge, one merged event per window, lossless and in order, all of it before the exit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(
          [
            fc.string({ minLength: 1, maxLength: 6 }).map((chunk) => new EmitChunk(chunk)),
            fc.integer({ min: 0, max: 2 * WINDOW_MS }).map((ms) => new Advance(ms)),
          ],
          { maxCommands: 40 },
        ),
        async (commands) => {
          const h = createHarness({ controller: { dataBatchMs: WINDOW_MS } })
          const { id } = await h.controller.spawn({})
          const model: Model = { emitted: [], pending: [], windowEndsAt: null, now: h.clock.now() }
          const real: Real = { h, id }
          fc.modelRun(() => ({ model, real }), commands)
          // The exit: whatever is held goes out first, as one event, and nothing after it.
          const held = model.pending.join('')
          const before = h.data().length
          h.provider.emitExit(id, { exitCode: 0 })
          await h.settle()
          const types = h.events.map((entry) => entry.type)
          const exitAt = types.indexOf('exit')
          expect(exitAt).toBeGreaterThan(0)
          expect(types.slice(exitAt + 1)).not.toContain('data')
          expect(h.data().slice(before).map((event) => event.data)).toEqual(held.length > 0 ? [held] : [])
          h.clock.advance(10 * WINDOW_MS)
          expect(h.data().map((event) => event.data).join('')).toBe(model.emitted.join(''))
          expect(h.events.slice(exitAt + 1).map((entry) => entry.type)).not.toContain('data')
          await h.controller.dispose()
        },
      ),
    )
  })

  it("publishes a window's first chunk before it arms the window's timer (the echo does not wait for it)", async () => {
    const h = createHarness({ controller: { dataBatchMs: WINDOW_MS } })
    const { id } = await h.controller.spawn({})
    const timersSeenByListener: number[] = []
    h.controller.on('data', () => timersSeenByListener.push(h.clock.pendingTimerCount()))
    const before = h.clock.pendingTimerCount()
    h.provider.emitData(id, 'prompt$ ')
    // The listener ran with no window timer yet; the window is armed right after it.
    expect(timersSeenByListener).toEqual([before])
    expect(h.clock.pendingTimerCount()).toBe(before + 1)
    // The window works as before: a chunk inside it waits for its end, then the window closes.
    h.provider.emitData(id, 'held')
    expect(h.data().map((event) => event.data)).toEqual(['prompt$ '])
    h.clock.advance(WINDOW_MS)
    expect(h.data().map((event) => event.data)).toEqual(['prompt$ ', 'held'])
    h.clock.advance(WINDOW_MS)
    expect(h.clock.pendingTimerCount()).toBe(before)
    await h.run(h.controller.dispose())
  })

  it("keeps a listener's re-entry during a window's first chunk in order: its output waits in the window, its exit closes it", async () => {
    const h = createHarness({ controller: { dataBatchMs: WINDOW_MS } })
    const { id } = await h.controller.spawn({})
    const before = h.clock.pendingTimerCount()
    let reentered = false
    h.controller.on('data', (event) => {
      if (reentered) return
      reentered = true
      // Output the provider hands over while the first chunk is being delivered, then its exit.
      h.provider.emitData(id, ' caused')
      h.provider.emitExit(id, { exitCode: 0 })
      expect(event.data).toBe('first')
    })
    h.provider.emitData(id, 'first')
    await h.settle()
    expect(h.data().map((event) => event.data)).toEqual(['first', ' caused'])
    const types = h.events.map((entry) => entry.type)
    expect(types.lastIndexOf('data')).toBeLessThan(types.indexOf('exit'))
    // The exit flushed and closed the window: no batching timer is left behind.
    expect(h.clock.pendingTimerCount()).toBeLessThanOrEqual(before)
    h.clock.advance(10 * WINDOW_MS)
    expect(h.data().map((event) => event.data)).toEqual(['first', ' caused'])
    await h.run(h.controller.dispose())
  })

  it('is off by default: every provider chunk is its own event, at once', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    for (const chunk of ['a', 'b', 'c']) h.provider.emitData(id, chunk)
    expect(h.data().map((event) => event.data)).toEqual(['a', 'b', 'c'])
    await h.controller.dispose()
  })

  it('flushes held output on dispose, before the exit dispose publishes', async () => {
    const h = createHarness({ controller: { dataBatchMs: WINDOW_MS } })
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'first')
    h.provider.emitData(id, 'held')
    expect(h.data().map((event) => event.data)).toEqual(['first'])
    await h.run(h.controller.dispose())
    expect(h.data().map((event) => event.data)).toEqual(['first', 'held'])
    const types = h.events.map((entry) => entry.type)
    expect(types.lastIndexOf('data')).toBeLessThan(types.indexOf('exit') === -1 ? Infinity : types.indexOf('exit'))
  })

  it("publishes output a listener causes during dispose's flush, none of it left in a window whose timer dispose cancels", async () => {
    const h = createHarness({ controller: { dataBatchMs: WINDOW_MS } })
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'first')
    h.provider.emitData(id, 'held')
    h.controller.on('data', (event) => {
      // The flushed chunk's listener makes the provider hand over more (as from inside a resume).
      if (event.data !== 'held') return
      h.provider.emitData(id, ' a')
      h.provider.emitData(id, ' b')
    })
    await h.run(h.controller.dispose({ stopPtys: false }))
    h.clock.advance(10 * WINDOW_MS)
    expect(h.data().map((event) => event.data).join('')).toBe('firstheld a b')
    expect(h.data().at(-1)?.seq).toBe('firstheld a b'.length)
    expect(h.clock.pendingTimerCount()).toBe(0)
  })

  it('refuses a malformed dataBatchMs, naming the option and the value', async () => {
    expect(() => createHarness({ controller: { dataBatchMs: -1 } })).toThrow(/`dataBatchMs` option.*-1/)
    expect(() => createHarness({ controller: { dataBatchMs: Number.NaN } })).toThrow(/`dataBatchMs` option/)
    expect(() => createHarness({ controller: { dataBatchMs: '5' as unknown as number } })).toThrow(/`dataBatchMs` option.*'5'|"5"/)
  })
})
