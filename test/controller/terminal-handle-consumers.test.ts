/**
 * Terminal handles from the consumer's side — found by a bug hunt (3 Dec): overlapping `next()`
 * calls leaked a hold; a replay over-credited flow control; a handle made after an unverified exit
 * never resolved `exited`; an iterator that broke out (or was opened with an aborted signal) left
 * flow control engaged, so later output nobody acknowledges paused the process.
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS } from '../../src/controller/index.js'
import { createHarness } from './controller-harness.js'

const CHUNK = 'x'.repeat(1_000)

describe('terminal handles: holds, replays and late handles', () => {
  // docs/controller.md: "`break`, `return()`, or an aborted `signal` ends one iterator and
  // **releases its hold**: what it held is acknowledged at once"
  it('return() after two overlapping next() calls releases both chunks', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    // The consumer also acknowledges on its own: flow control stays engaged after the iterator leaves.
    terminal.acknowledgeData(0)
    const output = terminal.output()
    const a = output.next()
    const b = output.next()
    h.provider.emitData(terminal.id, CHUNK)
    h.provider.emitData(terminal.id, CHUNK)
    expect((await a).value).toBe(CHUNK)
    expect((await b).value).toBe(CHUNK)
    await output.return?.()
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(0)
    await h.run(h.controller.dispose())
  })

  // docs/controller.md: "`exited` | `Promise` of the `exit` event: resolves once, never rejects; a
  // stop given up on resolves it with `unknown/stop_unverified` (code −1)" and PtyTerminal.exited:
  // "Resolves once — also when the exit came before anyone awaited it".
  it.each([
    ['a stop that went unverified', 'stop'],
    ['an exit whose death is not certified (a host that lost contact)', 'synthetic'],
  ] as const)('terminal(id) asked for after %s published its exit: exited resolves with it', async (_, how) => {
    const h = createHarness()
    if (how === 'stop') h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    if (how === 'stop') {
      expect(h.controller.kill(id)).toBe(true)
      h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    } else {
      h.provider.emitExit(id, { exitCode: -1, observed: 'synthetic' })
    }
    await h.settle()
    expect(h.exits()).toHaveLength(1)
    const terminal = h.controller.terminal(id)
    expect(terminal).not.toBeNull()
    let exited: unknown = null
    void terminal?.exited.then((event) => {
      exited = event
    })
    await h.settle()
    expect(exited).toEqual(h.exits()[0])
  })

  // docs/controller.md: "Opening it engages flow control for the PTY with nothing owed for output
  // that went by before (it will never be handed that output)" and "a chunk is acknowledged when
  // the last iterator holding it moves on".
  it('a replayed chunk does not credit output the iterator still holds', async () => {
    const h = createHarness({ controller: { flowControl: { highWatermarkChars: 1_000, lowWatermarkChars: 500 } } })
    h.provider.scriptNextSpawn({ hang: true })
    const pending = h.controller.spawnTerminal({})
    await h.settle()
    const [id] = h.provider.livePtyIds()
    if (id === undefined) throw new Error('no spawn')
    h.provider.emitData(id, 'p'.repeat(800)) // first prompt, during the in-flight spawn
    h.provider.releaseSpawn(id)
    const terminal = await pending
    const output = terminal.output()
    h.provider.emitData(id, 'y'.repeat(1_200)) // above the high watermark
    expect(h.provider.getPty(id)?.paused).toBe(true)
    expect((await output.next()).value).toBe('p'.repeat(800))
    expect((await output.next()).value).toBe('y'.repeat(1_200)) // held by the consumer now
    // The consumer holds 1 200 unacknowledged chars: above the high watermark, still paused.
    expect(h.controller.getFlowControlState(id)?.unacknowledgedChars).toBe(1_200)
    expect(h.provider.getPty(id)?.paused).toBe(true)
    await h.run(h.controller.dispose())
  })

  it('write after exit is refused; await using after exit resolves', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    h.provider.emitExit(terminal.id, { exitCode: 3 })
    await h.settle()
    expect(terminal.write('x')).toBe(false)
    expect(await terminal.writeWithSettlement('x')).toMatchObject({ kind: 'refused' })
    await h.run(Promise.resolve(terminal[Symbol.asyncDispose]()))
    expect((await terminal.exited).code).toBe(3)
    await h.run(h.controller.dispose())
  })
})

describe('terminal handles across dispose and an exit before the reply', () => {
  it('controller.dispose() ends a pending output() loop and resolves exited', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output()
    const pending = output.next()
    await h.run(h.controller.dispose())
    let done: unknown = 'pending'
    void pending.then((r) => {
      done = r.done
    })
    let exited = false
    void terminal.exited.then(() => {
      exited = true
    })
    await h.settle()
    expect(done).toBe(true)
    expect(exited).toBe(true)
  })

  // An extension's deactivate disposes the controller; a tab's close handler runs later.
  it('stop() after dispose answers true for a terminal whose end was proven, false for one left unverified', async () => {
    const h = createHarness()
    const stopped = await h.controller.spawnTerminal({})
    const ended = await h.controller.spawnTerminal({})
    const stuck = await h.controller.spawnTerminal({})
    h.provider.emitExit(ended.id, { exitCode: 3 })
    h.provider.setShutdownBehaviour(stuck.id, 'never_confirm')
    await h.run(h.controller.dispose())
    expect((await stopped.exited).cause).toEqual({ kind: 'operator_close' })
    expect((await ended.exited).cause).toEqual({ kind: 'exited', exitCode: 3 })
    expect((await stuck.exited).cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
    await expect(stopped.stop()).resolves.toBe(true)
    await expect(ended.stop()).resolves.toBe(true)
    await expect(stuck.stop()).resolves.toBe(false)
    await expect(stopped[Symbol.asyncDispose]()).resolves.toBeUndefined()
  })

  // A task leaves its `await using` scope while the extension's deactivate is disposing the controller.
  it('await using, left while the controller is being disposed, ends once the dispose decided the terminal\'s stop', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    // A process the stop never gets confirmed for: the dispose takes its whole deadline over it.
    h.provider.setShutdownBehaviour(terminal.id, 'never_confirm')
    const disposing = h.controller.dispose()
    let settled: unknown = 'not yet'
    void terminal.exited.then(({ cause }) => (settled = cause))
    await h.run(Promise.resolve(terminal[Symbol.asyncDispose]()))
    // Left as `stop()` leaves it: once the stop was decided, here given up on.
    expect(settled).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
    await h.run(disposing)
  })

  it('spawnTerminal whose process exits before the reply rejects exited_during_start', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ exitBeforeReply: { exitCode: 2 }, output: ['boom'] })
    const error: unknown = await h.run(h.controller.spawnTerminal({}).then(() => 'no error', (e: unknown) => e))
    expect(error).toMatchObject({ code: 'exited_during_start' })
  })
})

describe('terminal handles: a consumer that left', () => {
  // docs/controller.md: "`break`, `return()`, or an aborted `signal` ends one iterator and **releases
  // its hold**: what it held is acknowledged at once, so a consumer that left never holds the process
  // back." DESIGN §4: "Flow control only ever slows a producer for a consumer that takes part in it".
  it('after the only iterator broke out, later output is not paused', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output()
    h.provider.emitData(terminal.id, '$ ')
    for await (const chunk of output) {
      if (chunk.includes('$')) break // waited for the prompt, then left
    }
    for (let i = 0; i < 150; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false)
    await h.run(h.controller.dispose())
  })

  it('an output() opened with an already-aborted signal does not engage flow control', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output({ signal: AbortSignal.abort() })
    await expect(output.next()).resolves.toEqual({ done: true, value: undefined })
    for (let i = 0; i < 150; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false)
    await h.run(h.controller.dispose())
  })

  // An extension passes one signal (aborted at deactivate) to every output() it opens, reads a
  // little of each, and goes on without calling return().
  it('an iterator its consumer stopped pulling lets go of its signal once the terminal ended', async () => {
    const h = createHarness()
    const deactivate = new AbortController()
    const iterators: AsyncIterator<string>[] = []
    for (let i = 0; i < 12; i += 1) {
      const terminal = await h.controller.spawnTerminal({})
      const output = terminal.output({ signal: deactivate.signal })
      iterators.push(output)
      h.provider.emitData(terminal.id, '$ ')
      await expect(output.next()).resolves.toEqual({ done: false, value: '$ ' })
      // Output it never pulled: still yielded after the end, then done.
      if (i === 0) h.provider.emitData(terminal.id, 'bye')
      h.provider.emitExit(terminal.id, { exitCode: 0 })
      await terminal.exited
    }
    expect(getEventListeners(deactivate.signal, 'abort')).toHaveLength(0)
    await expect(iterators[0]!.next()).resolves.toEqual({ done: false, value: 'bye' })
    await expect(iterators[0]!.next()).resolves.toEqual({ done: true, value: undefined })
    await expect(iterators[1]!.next()).resolves.toEqual({ done: true, value: undefined })
    await h.run(h.controller.dispose())
  })

  it('an abort after the end still ends an iterator that holds output it did not pull', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const abort = new AbortController()
    const output = terminal.output({ signal: abort.signal })
    h.provider.emitData(terminal.id, 'one')
    h.provider.emitData(terminal.id, 'two')
    h.provider.emitExit(terminal.id, { exitCode: 0 })
    await terminal.exited
    await expect(output.next()).resolves.toEqual({ done: false, value: 'one' })
    abort.abort()
    await expect(output.next()).resolves.toEqual({ done: true, value: undefined })
    await h.run(h.controller.dispose())
  })
})
