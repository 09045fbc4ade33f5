// fc.commands model of the output feed behind `PtyTerminal.output()`: any interleaving of chunks,
// iterators created (some with a small `maxQueuedChars`), pulled, returned, a replay kept and
// dropped, and the end; in some runs an `error` listener opens a new iterator at each overrun (as
// the docs advise). Checks what each iterator yields (the replay, then every chunk pushed while it
// was active, in order, then done after the end), when one overruns (its unpulled chunks passed its
// bound: it lets go of everything, and its next pull rejects once) and what is acknowledged (a chunk
// exactly when the last iterator holding it asked for the next one or let go; nothing else).
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

type ModelChunk = { length: number; holders: number[]; acknowledged: boolean }

type Model = {
  /** `acknowledged`: set once every holder let go; a replay hands it to later iterators all the same. */
  chunks: ModelChunk[]
  iterators: ModelIterator[]
  ended: boolean
  /** The chunks kept for replay (by index), or `null` when none is kept. */
  replay: number[] | null
  /** An `error` listener opens a new iterator at each overrun (up to `MAX_ALL_ITERATORS`). */
  reopenOnOverrun: boolean
}

type Real = {
  feed: TerminalOutputFeed
  acknowledged: number[]
  iterators: { iterator: AsyncIterableIterator<string>; values: string[]; pending: Promise<void> | undefined; done: boolean; rejections: number }[]
  overruns: number
}

const MAX_ITERATORS = 3
/** With the iterators opened at overruns. */
const MAX_ALL_ITERATORS = MAX_ITERATORS + 2

/**
 * A new iterator in the model: handed the replay first (holding each chunk), overrunning at once if
 * that alone passes its bound; an overrun opens another when the run's listener does so.
 */
function openModelIterator(model: Model, cap: number | undefined): void {
  const index = model.iterators.length
  const it: ModelIterator = { received: [], calls: 0, finished: false, answeredDone: false, cap, overran: false, overrunPending: false, rejections: 0 }
  model.iterators.push(it)
  for (const chunk of model.replay ?? []) {
    const replayed = model.chunks[chunk]!
    // Acknowledged before this iterator came: it is handed the chunk, and owes nothing for it.
    if (released(model, replayed, chunk)) replayed.acknowledged = true
    it.received.push(chunk)
    replayed.holders.push(index)
  }
  overrunIfPastBound(model, [index])
}

/**
 * Iterators (by index, in the order the feed delivers to them) whose queue passed their bound
 * overrun — each once the delivery is over, one after the other: it lets go, is reported, and the
 * report may open an iterator (handed the replay) before the next one lets go.
 */
function overrunIfPastBound(model: Model, indices: readonly number[]): void {
  for (const i of indices) {
    const it = model.iterators[i]!
    if (it.finished || it.cap === undefined) continue
    const queued = it.received.slice(it.calls).reduce((sum, chunk) => sum + model.chunks[chunk]!.length, 0)
    if (queued <= it.cap) continue
    it.finished = it.overran = it.overrunPending = true
    if (model.reopenOnOverrun && model.iterators.length < MAX_ALL_ITERATORS) openModelIterator(model, undefined)
  }
}

/** Whether every holder of a chunk that reached an iterator moved past it or let go. */
function released(model: Model, chunk: ModelChunk, index: number): boolean {
  if (chunk.holders.length === 0) return false
  return chunk.holders.every((holder) => {
    const it = model.iterators[holder]!
    return it.finished || it.calls >= it.received.indexOf(index) + 2
  })
}

/** The chars the model says are acknowledged: chunks whose every holder moved past them or let go. */
function expectedAcknowledged(model: Model): number {
  let total = 0
  for (const [index, chunk] of model.chunks.entries()) if (chunk.acknowledged || released(model, chunk, index)) total += chunk.length
  return total
}

function openRealIterator(real: Real, cap: number | undefined): void {
  const iterator = real.feed.iterate(cap === undefined ? {} : { maxQueuedChars: cap })
  real.iterators.push({ iterator, values: [], pending: undefined, done: false, rejections: 0 })
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
    openModelIterator(model, this.cap)
    openRealIterator(real, this.cap)
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
    model.chunks.push({ length: this.length, holders: [...holders], acknowledged: false })
    model.replay?.push(index)
    for (const i of holders) model.iterators[i]!.received.push(index)
    // Queued (not handed to a waiting pull): past its bound it overruns, letting go of everything.
    overrunIfPastBound(model, holders)
    const event: PtyControllerDataEvent = { ptyId: 'p', hostId: 'local', data: chunkText(index, this.length), seq: index }
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

class StartReplay implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    model.replay = []
    real.feed.startReplay()
    await check(model, real)
  }
  toString(): string {
    return 'startReplay'
  }
}

class DropReplay implements fc.AsyncCommand<Model, Real> {
  check(model: Readonly<Model>): boolean {
    return model.replay !== null
  }
  async run(model: Model, real: Real): Promise<void> {
    model.replay = null
    real.feed.dropReplay()
    await check(model, real)
  }
  toString(): string {
    return 'dropReplay'
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
  // 3 000 runs are seconds of CPU, and several times that in wall time on a loaded machine (9 s
  // once). The timeout guards against a hang, not speed.
  it('yields every chunk to every active iterator and acknowledges each once its slowest holder moves on', async () => {
    const commands = [
      fc.constantFrom(undefined, 3, 8).map((cap) => new CreateIterator(cap)),
      fc.integer({ min: 1, max: 5 }).map((length) => new Push(length)),
      fc.nat(MAX_ALL_ITERATORS - 1).map((which) => new Pull(which)),
      fc.nat(MAX_ALL_ITERATORS - 1).map((which) => new Return(which)),
      fc.constant(new End()),
      fc.constant(new StartReplay()),
      fc.constant(new DropReplay()),
    ]
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), fc.boolean(), async (cmds, reopenOnOverrun) => {
        const acknowledged: number[] = []
        const real: Real = {
          feed: new TerminalOutputFeed(
            (chars) => acknowledged.push(chars),
            () => undefined,
            (error) => {
              expect(error).toMatchObject({ code: 'output_overrun', ptyId: 'p' })
              real.overruns += 1
              if (reopenOnOverrun && real.iterators.length < MAX_ALL_ITERATORS) openRealIterator(real, undefined)
            },
          ),
          acknowledged,
          iterators: [],
          overruns: 0,
        }
        const model: Model = { chunks: [], iterators: [], ended: false, replay: null, reopenOnOverrun }
        await fc.asyncModelRun(() => ({ model, real }), cmds)
        // Once everyone let go, every chunk that reached an iterator is acknowledged exactly once.
        for (const entry of real.iterators) await entry.iterator.return?.()
        const reached = model.chunks.filter((chunk) => chunk.holders.length > 0)
        expect(acknowledged).toHaveLength(reached.length)
        expect(acknowledged.reduce((a, b) => a + b, 0)).toBe(reached.reduce((a, c) => a + c.length, 0))
      }),
      { numRuns: 3_000 },
    )
  }, 120_000)
})
