// fc.commands model of the output feed behind `PtyTerminal.output()`: any interleaving of chunks,
// iterators created (some with a small `maxQueuedChars`), pulled, returned and the end. Checks what
// each iterator yields (every chunk pushed while it was active, in order, then done after the end),
// when one overruns (its unpulled chunks passed its bound: it lets go of everything, and its next
// pull rejects once) and what is acknowledged (a chunk exactly when the last iterator holding it
// asked for the next one or let go; nothing else).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtyControllerDataEvent } from '../../src/controller/index.js'
import { TerminalOutputFeed } from '../../src/controller/terminal-output.js'

type ModelIterator = {
  /** Chunks (by index into `Model.chunks`) this iterator received, in order. */
  received: number[]
  /** `next()` calls made. */
  calls: number
  finished: boolean
  /** A pull of this iterator was answered `done` (the end reached it, or it was returned or finished). */
  answeredDone: boolean
  /** Its `maxQueuedChars`, or `undefined` for the default (never reached here). */
  cap: number | undefined
  /** It overran and its consumer has not been told yet (its next pull rejects). */
  overrunPending: boolean
  /** Its pulls that rejected with `output_overrun`. */
  rejections: number
  /** It overran (its bound was passed), told or not. */
  overran: boolean
}

type Model = {
  chunks: { length: number; holders: number[] }[]
  iterators: ModelIterator[]
  ended: boolean
}

type Real = {
  feed: TerminalOutputFeed
  acknowledged: number[]
  iterators: { iterator: AsyncIterableIterator<string>; values: string[]; pending: Promise<void> | undefined; done: boolean; rejections: number }[]
  overruns: number
}

const MAX_ITERATORS = 3

/** The chars the model says are acknowledged: chunks whose every holder moved past them or let go. */
function expectedAcknowledged(model: Model): number {
  let total = 0
  for (const [index, chunk] of model.chunks.entries()) {
    if (chunk.holders.length === 0) continue
    const released = chunk.holders.every((holder) => {
      const it = model.iterators[holder]!
      return it.finished || it.calls >= it.received.indexOf(index) + 2
    })
    if (released) total += chunk.length
  }
  return total
}

const chunkText = (index: number, length: number): string => String.fromCharCode(97 + (index % 26)).repeat(length)

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve()
}

async function check(model: Model, real: Real): Promise<void> {
  await flush()
  expect(real.acknowledged.reduce((a, b) => a + b, 0)).toBe(expectedAcknowledged(model))
  for (const [i, it] of model.iterators.entries()) {
    const yielded = Math.min(it.calls, it.received.length)
    const expected = it.received.slice(0, yielded).map((index) => chunkText(index, model.chunks[index]!.length))
    expect(real.iterators[i]!.values).toEqual(expected)
    // A pull past what it received waits until a chunk or the end (then it is answered done).
    expect({ pending: real.iterators[i]!.pending !== undefined, done: real.iterators[i]!.done, rejections: real.iterators[i]!.rejections }).toEqual({
      pending: !it.finished && it.calls > it.received.length,
      done: it.answeredDone,
      rejections: it.rejections,
    })
  }
  expect(real.overruns).toBe(model.iterators.filter((it) => it.overran).length)
}

class CreateIterator implements fc.AsyncCommand<Model, Real> {
  constructor(readonly cap: number | undefined) {}
  check(model: Readonly<Model>): boolean {
    return model.iterators.length < MAX_ITERATORS
  }
  async run(model: Model, real: Real): Promise<void> {
    model.iterators.push({ received: [], calls: 0, finished: false, answeredDone: false, cap: this.cap, overran: false, overrunPending: false, rejections: 0 })
    const iterator = real.feed.iterate(this.cap === undefined ? {} : { maxQueuedChars: this.cap })
    real.iterators.push({ iterator, values: [], pending: undefined, done: false, rejections: 0 })
    await check(model, real)
  }
  toString(): string {
    return this.cap === undefined ? 'iterate' : `iterate(maxQueuedChars ${this.cap})`
  }
}

class Push implements fc.AsyncCommand<Model, Real> {
  constructor(readonly length: number) {}
  check(model: Readonly<Model>): boolean {
    return !model.ended
  }
  async run(model: Model, real: Real): Promise<void> {
    const index = model.chunks.length
    const holders = model.iterators.flatMap((it, i) => (it.finished ? [] : [i]))
    model.chunks.push({ length: this.length, holders })
    for (const i of holders) {
      const it = model.iterators[i]!
      it.received.push(index)
      // Queued (not handed to a waiting pull): past its bound it overruns, letting go of everything.
      const queued = it.received.slice(it.calls).reduce((sum, chunk) => sum + model.chunks[chunk]!.length, 0)
      if (it.cap !== undefined && queued > it.cap) {
        it.finished = it.overran = it.overrunPending = true
      }
    }
    const event: PtyControllerDataEvent = { ptyId: 'p', data: chunkText(index, this.length), seq: index }
    real.feed.push(event)
    await check(model, real)
  }
  toString(): string {
    return `push(${this.length})`
  }
}

class Pull implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check(model: Readonly<Model>): boolean {
    return model.iterators.length > 0
  }
  async run(model: Model, real: Real): Promise<void> {
    const i = this.which % model.iterators.length
    const entry = real.iterators[i]!
    const it = model.iterators[i]!
    await flush()
    if (entry.pending !== undefined || entry.done) return // one pull at a time, as for-await does
    if (it.overrunPending) {
      it.overrunPending = false
      it.rejections += 1
    } else if (!it.finished) it.calls += 1
    else it.answeredDone = true
    entry.pending = entry.iterator.next().then(
      (result) => {
        entry.pending = undefined
        if (result.done === true) entry.done = true
        else entry.values.push(result.value)
      },
      (error: unknown) => {
        entry.pending = undefined
        expect(error).toMatchObject({ code: 'output_overrun' })
        entry.rejections += 1
      },
    )
    await flush()
    // A pull past everything after the end finishes the iterator (it lets go of what it held).
    if (model.ended && it.calls > it.received.length) it.finished = it.answeredDone = true
    await check(model, real)
  }
  toString(): string {
    return `pull(${this.which})`
  }
}

class Return implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check(model: Readonly<Model>): boolean {
    return model.iterators.length > 0
  }
  async run(model: Model, real: Real): Promise<void> {
    const i = this.which % model.iterators.length
    const it = model.iterators[i]!
    // A pending pull gets nothing more: what it would have received is not "yielded"; it is answered done.
    if (!it.finished && it.calls > it.received.length) it.answeredDone = true
    it.calls = Math.min(it.calls, it.received.length)
    it.finished = true
    it.overrunPending = false // the consumer left: it is not told why the iterator had ended
    await real.iterators[i]!.iterator.return?.()
    await check(model, real)
    expect(real.iterators[i]!.pending).toBeUndefined()
  }
  toString(): string {
    return `return(${this.which})`
  }
}

class End implements fc.AsyncCommand<Model, Real> {
  check(model: Readonly<Model>): boolean {
    return !model.ended
  }
  async run(model: Model, real: Real): Promise<void> {
    model.ended = true
    for (const it of model.iterators) if (it.calls > it.received.length) it.finished = it.answeredDone = true
    real.feed.end()
    await check(model, real)
  }
  toString(): string {
    return 'end'
  }
}

describe('terminal output feed (model)', () => {
  it('yields every chunk to every active iterator and acknowledges each once its slowest holder moves on', async () => {
    const commands = [
      fc.constantFrom(undefined, 3, 8).map((cap) => new CreateIterator(cap)),
      fc.integer({ min: 1, max: 5 }).map((length) => new Push(length)),
      fc.nat(MAX_ITERATORS - 1).map((which) => new Pull(which)),
      fc.nat(MAX_ITERATORS - 1).map((which) => new Return(which)),
      fc.constant(new End()),
    ]
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const acknowledged: number[] = []
        const real: Real = {
          feed: new TerminalOutputFeed(
            (chars) => acknowledged.push(chars),
            () => undefined,
            (error) => {
              expect(error).toMatchObject({ code: 'output_overrun', ptyId: 'p' })
              real.overruns += 1
            },
          ),
          acknowledged,
          iterators: [],
          overruns: 0,
        }
        const model: Model = { chunks: [], iterators: [], ended: false }
        await fc.asyncModelRun(() => ({ model, real }), cmds)
        // Once everyone let go, every chunk that reached an iterator is acknowledged exactly once.
        for (const entry of real.iterators) await entry.iterator.return?.()
        const reached = model.chunks.filter((chunk) => chunk.holders.length > 0)
        expect(acknowledged).toHaveLength(reached.length)
        expect(acknowledged.reduce((a, b) => a + b, 0)).toBe(reached.reduce((a, c) => a + c.length, 0))
      }),
      { numRuns: 200 },
    )
  })
})
