import { describe, expect, it, vi } from 'vitest'
import { PtyControllerError, STOP_UNCONFIRMED_AFTER_MS, createPtyController, type PtyControllerSpawnEvent, type PtyTerminal } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createHarness } from './controller-harness.js'
import { argumentRefusalOf } from '../support/bad-input.js'

const CHUNK = 'x'.repeat(1_000)

/** Pull `count` chunks from an iterator (each pull acknowledges the chunk before it). */
/** `spawnTerminal` whose PTY prints its first prompt (`$ `) while the spawn reply is still in flight. */
async function spawnTerminalWithPromptInFlight(h: ReturnType<typeof createHarness>): Promise<{ id: string; terminal: PtyTerminal }> {
  h.provider.scriptNextSpawn({ hang: true })
  const pending = h.controller.spawnTerminal({})
  await h.settle()
  const [id] = h.provider.livePtyIds()
  if (id === undefined) throw new Error('the spawn did not reach the provider')
  h.provider.emitData(id, '$ ')
  h.provider.releaseSpawn(id)
  return { id, terminal: await pending }
}

async function pull(iterator: AsyncIterator<string>, count: number): Promise<string[]> {
  const chunks: string[] = []
  for (let i = 0; i < count; i += 1) {
    const result = await iterator.next()
    if (result.done === true) break
    chunks.push(result.value)
  }
  return chunks
}

describe('PtyTerminal: identity and size', () => {
  it('carries the id, pid, incarnation, host and size, and follows resizes', async () => {
    const h = createHarness()
    const spawns: PtyControllerSpawnEvent[] = []
    h.controller.on('spawn', (event) => spawns.push(event))
    const terminal = await h.controller.spawnTerminal({ cols: 100, rows: 30 })
    const pty = h.provider.getPty(terminal.id)
    expect(terminal.pid).toBe(pty?.pid)
    expect(terminal.incarnationId).toBe(pty?.incarnationId)
    expect(terminal.hostId).toBe('local')
    expect([terminal.cols, terminal.rows]).toEqual([100, 30])
    expect(spawns).toEqual([expect.objectContaining({ ptyId: terminal.id, cols: 100, rows: 30 })])

    expect(terminal.resize(120, 40)).toBe(true)
    expect([terminal.cols, terminal.rows]).toEqual([120, 40])
    h.controller.resize(terminal.id, 90, 20) // through the id-keyed API: the handle sees it too
    expect([terminal.cols, terminal.rows]).toEqual([90, 20])
    expect(h.controller.terminal(terminal.id)).toBe(terminal)
    await h.run(h.controller.dispose())
  })

  it('answers null for an id the controller does not track', () => {
    const h = createHarness()
    expect(h.controller.terminal('nope')).toBeNull()
    expect(() => h.controller.terminal('')).toThrow(/`ptyId`/)
  })

  it.each([false, true])('answers a handle resolved with the exit for a PTY spawned with spawn() that exited (a handle asked for before: %s)', async (askedBefore) => {
    const h = createHarness()
    // Asking for any handle makes the registry that follows every spawn; before, that decided
    // whether an exited PTY's terminal(id) was null or a handle.
    if (askedBefore) h.controller.terminal('anything')
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 4 })
    const terminal = h.controller.terminal(id)
    expect(terminal).not.toBeNull()
    expect((await terminal!.exited).cause).toEqual({ kind: 'exited', exitCode: 4 })
    expect(h.controller.terminal(id)).toBe(terminal)
  })
})

describe('PtyTerminal: events fenced by incarnation', () => {
  it('a respawn under the same id is a new handle; the old one hears nothing and reaches nothing', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawnTerminal({})
    const firstData = vi.fn()
    const firstExit = vi.fn()
    first.onData(firstData)
    first.onExit(firstExit)
    const firstOutput = first.output()

    h.provider.scriptNextSpawn({ id: 'same' })
    const second = await h.controller.spawnTerminal({})
    expect(second).not.toBe(first)
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect(h.controller.terminal('same')).toBe(second)
    const secondData = vi.fn()
    second.onData(secondData)

    h.provider.emitData('same', 'for the new process')
    expect(secondData).toHaveBeenCalledWith(expect.objectContaining({ data: 'for the new process' }))
    expect(firstData).not.toHaveBeenCalled()
    await expect(firstOutput.next()).resolves.toEqual({ done: true, value: undefined })

    // Nothing sent through the old handle reaches the new process.
    expect(first.write('rm -rf build\r')).toBe(false)
    expect(first.writeWithSettlement('x')).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
    expect(first.resize(10, 10)).toBe(false)
    expect(first.kill()).toBe(false)
    await expect(first.stop()).resolves.toBe(false)
    expect(h.provider.getPty('same')?.writes).toEqual([])

    // The old incarnation's late exit reaches neither handle.
    const secondExit = vi.fn()
    second.onExit(secondExit)
    if (first.incarnationId === undefined) throw new Error('the fake attests incarnations')
    h.provider.emitExit('same', { exitCode: 0, incarnationId: first.incarnationId })
    expect(firstExit).not.toHaveBeenCalled()
    expect(secondExit).not.toHaveBeenCalled()
    expect(second.write('ls\r')).toBe(true)
    await h.run(h.controller.dispose())
  })

  it('hears the output loss of its own incarnation only; its output goes on after the gap', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawnTerminal({})
    const firstLoss = vi.fn()
    first.onOutputLoss(firstLoss)
    h.provider.scriptNextSpawn({ id: 'same' })
    const second = await h.controller.spawnTerminal({})
    const losses: unknown[] = []
    const off = second.onOutputLoss((event) => losses.push(event))
    const output = second.output()
    h.provider.emitData('same', 'ab')
    h.provider.emitOutputLoss('same', 500)
    h.provider.emitData('same', 'c')
    expect(losses).toEqual([{ ptyId: 'same', hostId: 'local', incarnationId: second.incarnationId, fromSeq: 2, toSeq: 502 }])
    expect(firstLoss).not.toHaveBeenCalled()
    expect(await output.next()).toEqual({ done: false, value: 'ab' })
    expect(await output.next()).toEqual({ done: false, value: 'c' })
    off()
    h.provider.emitOutputLoss('same', 1)
    expect(losses).toHaveLength(1)
    await h.run(h.controller.dispose())
  })

  it('unsubscribes are disposable and idempotent', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const seen: string[] = []
    {
      using _sub = terminal.onData(({ data }) => seen.push(`scoped:${data}`))
      h.provider.emitData(terminal.id, 'a')
    }
    const off = terminal.onData(({ data }) => seen.push(`manual:${data}`))
    h.provider.emitData(terminal.id, 'b')
    off()
    off()
    h.provider.emitData(terminal.id, 'c')
    expect(seen).toEqual(['scoped:a', 'manual:b'])
    await h.run(h.controller.dispose())
  })

  it('a listener that throws does not hide the chunk from the others; the controller reports it', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const other = vi.fn()
    terminal.onData(() => {
      throw new Error('boom')
    })
    terminal.onData(other)
    h.provider.emitData(terminal.id, 'a')
    expect(other).toHaveBeenCalledTimes(1)
    expect(h.errors().map((error) => error.code)).toEqual(['listener_threw'])
    await h.run(h.controller.dispose())
  })
})

describe('PtyTerminal: output of a respawn emitted from a host spawn listener', () => {
  // A host listener registered before the first handle (so before the handle registry's) makes the
  // provider emit the new process's first output at once, while the registry still holds the
  // replaced incarnation's handle (helper-114's audit: the old handle heard it, the new one never).
  it('reaches the new incarnation\'s handle and iterator, never the replaced one', async () => {
    const h = createHarness()
    h.controller.on('spawn', (event) => h.provider.emitData(event.ptyId, `hello from ${event.incarnationId}`))
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawnTerminal({})
    const firstHeard: string[] = []
    first.onData((event) => firstHeard.push(event.data))
    h.provider.emitExit('same', { exitCode: 0 })
    await first.exited
    firstHeard.length = 0
    h.provider.scriptNextSpawn({ id: 'same' })
    const second = await h.controller.spawnTerminal({})
    const secondHeard: string[] = []
    second.onData((event) => secondHeard.push(event.data))
    const iterator = second.output()
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect(secondHeard).toEqual([`hello from ${second.incarnationId}`])
    await expect(iterator.next()).resolves.toEqual({ done: false, value: `hello from ${second.incarnationId}` })
    expect(firstHeard).toEqual([])
    await iterator.return!()
    await h.run(h.controller.dispose())
  })
})

describe('PtyTerminal: async listeners', () => {
  it('a rejecting onData or onExit listener is reported as listener_threw, never an unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      const h = createHarness()
      const terminal = await h.controller.spawnTerminal({})
      const other = vi.fn()
      terminal.onData(async () => {
        throw new Error('data bug')
      })
      terminal.onData(other)
      terminal.onExit(async () => {
        throw new Error('exit bug')
      })
      h.provider.emitData(terminal.id, 'a')
      h.provider.emitExit(terminal.id, { exitCode: 0 })
      await h.settle()
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(other).toHaveBeenCalledTimes(1)
      expect(h.errors().map((error) => [error.code, (error.cause as Error).message])).toEqual([
        ['listener_threw', 'data bug'],
        ['listener_threw', 'exit bug'],
      ])
      await h.run(h.controller.dispose())
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(unhandled).toEqual([])
  })
})

describe('PtyTerminal: an async listener that never settles', () => {
  it('does not hold back the report of a sibling listener whose promise rejects', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    terminal.onExit(() => new Promise<void>(() => undefined))
    terminal.onExit(async () => {
      throw new Error('save failed')
    })
    h.provider.emitExit(terminal.id, { exitCode: 0 })
    await h.settle()
    expect(h.errors().map((error) => [error.code, (error.cause as Error).message])).toEqual([['listener_threw', 'save failed']])
    await h.run(h.controller.dispose())
  })
})

describe('PtyTerminal: malformed arguments', () => {
  // A handle that outlived its incarnation still gets the caller's bugs reported, as the controller
  // does after dispose: the fence answers a well-formed late call, not a malformed one.
  it.each(['live', 'replaced'] as const)('are TypeErrors naming the argument and the value, on a %s handle', async (state) => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const terminal = await h.controller.spawnTerminal({})
    if (state === 'replaced') {
      h.provider.scriptNextSpawn({ id: 'same' })
      await h.controller.spawnTerminal({})
    }
    const loose = terminal as unknown as Record<string, (...args: unknown[]) => unknown>
    expect(() => loose['write']!(42)).toThrow(argumentRefusalOf('Expected the `data` argument to be a string or a Uint8Array (a Buffer is one), got 42 (number)', 'data', 42))
    expect(() => loose['writeWithSettlement']!('ls', 'typing')).toThrow(/`inputKind` argument .* got "typing"/)
    expect(() => loose['resize']!(Number.NaN, 24)).toThrow(/`cols` argument .* got NaN/)
    await expect(loose['stop']!({ timeoutMs: -1 })).rejects.toThrow(/`timeoutMs` option .* got -1/)
    expect(() => loose['output']!({ signal: 'stop' })).toThrow(/`signal` option to be an AbortSignal, got "stop"/)
    expect(() => loose['output']!(null)).toThrow(/`options` argument to be an object, got null/)
    for (const bound of [0, -1, 1.5, Number.NaN, '100']) {
      expect(() => loose['output']!({ maxQueuedChars: bound })).toThrow(/`maxQueuedChars` option to be a positive integer or Infinity, got /)
    }
    for (const method of ['onData', 'onExit', 'onOutputLoss']) {
      expect(() => loose[method]!(undefined)).toThrow(/`listener` argument to be a function, got undefined/)
    }
    await h.run(h.controller.dispose())
  })
})

describe('PtyTerminal: exited', () => {
  it('resolves with the cause of an exit that came before anyone awaited it', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ output: ['building…\r\n'], exit: { exitCode: 3 } })
    const terminal = await h.controller.spawnTerminal({})
    await h.settle() // the exit is delivered now, with nobody awaiting
    expect(h.exits()).toHaveLength(1)
    await expect(terminal.exited).resolves.toEqual({
      ptyId: terminal.id,
      hostId: 'local',
      incarnationId: terminal.incarnationId,
      code: 3,
      cause: { kind: 'exited', exitCode: 3 },
    })
    await expect(terminal.stop()).resolves.toBe(true) // already gone
  })

  it('resolves with unknown/stop_unverified when a stop is given up on', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const terminal = await h.controller.spawnTerminal({})
    const onExit = vi.fn()
    terminal.onExit(onExit)
    expect(terminal.kill()).toBe(true)
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    await h.settle()
    const exit = await terminal.exited
    expect(exit).toMatchObject({ code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } })
    expect(onExit).toHaveBeenCalledWith(exit)
    expect(h.provider.livePtyIds()).toEqual([terminal.id]) // not dead: unverified
  })

  it('is operator_close after stop(), which passes its options through to the stop', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const signal = new AbortController().signal
    await expect(h.run(terminal.stop({ signal, keepHistory: true }))).resolves.toBe(true)
    // (The handle's stop is its incarnation's alone, not the controller's public `stopAndWait`, which
    // would also stop a respawn of the id still coming.) `keepHistory` reached the provider's shutdown:
    expect(h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => call.args)).toEqual([
      [terminal.id, { expectedIncarnationId: terminal.incarnationId, timeoutMs: 10_000, keepHistory: true }],
    ])
    await expect(terminal.exited).resolves.toMatchObject({ cause: { kind: 'operator_close' } })
    expect(h.provider.livePtyIds()).toEqual([])
  })
  it('stop({ signal }) aborted mid-wait answers false (not verified), never hangs or throws', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const terminal = await h.controller.spawnTerminal({})
    await expect(h.run(terminal.stop({ signal: AbortSignal.abort() }), 0)).resolves.toBe(false)
    const abort = new AbortController()
    const stopping = terminal.stop({ timeoutMs: 60_000, signal: abort.signal })
    await h.settle()
    abort.abort()
    await expect(h.run(stopping, 0)).resolves.toBe(false)
  })
})

describe('PtyTerminal: output delivered before the handle was handed over', () => {
  it('replays it to subscribers of that turn, and only to them', async () => {
    const h = createHarness()
    const { id, terminal } = await spawnTerminalWithPromptInFlight(h)

    const listener = vi.fn()
    terminal.onData(listener)
    const output = terminal.output()
    expect(listener).toHaveBeenCalledWith(expect.objectContaining({ data: '$ ' }))
    h.provider.emitData(id, 'ls\r\n')
    const late = vi.fn()
    terminal.onData(late)
    h.provider.emitData(id, 'done')
    h.provider.emitExit(id, { exitCode: 0 })
    const chunks: string[] = []
    for await (const chunk of output) chunks.push(chunk)
    expect(chunks).toEqual(['$ ', 'ls\r\n', 'done'])
    expect(late.mock.calls.map(([event]) => event.data)).toEqual(['done'])
  })

  // PtyTerminal.onData: "plus the output delivered before the handle was handed to you, when you
  // subscribe in that same turn". Before, the replay was kept until the next chunk: a view
  // re-subscribed to an idle shell drew the first prompt again, and an output() opened after a
  // command to wait for the next prompt was handed the first one at once.
  it('is not replayed again to a subscriber of a later turn, once a subscriber was handed it', async () => {
    const h = createHarness()
    const { id, terminal } = await spawnTerminalWithPromptInFlight(h)
    const view: string[] = []
    const first = terminal.onData(({ data }) => view.push(data))
    expect(view).toEqual(['$ '])
    expect(terminal.write('make\r')).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 5)) // a later turn: the shell is idle, nothing came
    first() // the tab moves to another panel: the same view, subscribed again
    terminal.onData(({ data }) => view.push(data))
    const waitForPrompt = terminal.output()
    const next = waitForPrompt.next()
    h.provider.emitData(id, 'make: done\r\n$ ')
    await expect(next).resolves.toEqual({ done: false, value: 'make: done\r\n$ ' })
    expect(view).toEqual(['$ ', 'make: done\r\n$ '])
    await waitForPrompt[Symbol.asyncDispose]()
    await h.run(h.controller.dispose())
  })

  it('is replayed to the first subscriber of a later turn when nobody was handed it yet', async () => {
    const h = createHarness()
    const { terminal } = await spawnTerminalWithPromptInFlight(h)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const listener = vi.fn()
    terminal.onData(listener)
    const output = terminal.output() // subscribed in the same turn as the listener: handed it too
    expect(listener.mock.calls.map(([event]) => event.data)).toEqual(['$ '])
    await expect(output.next()).resolves.toEqual({ done: false, value: '$ ' })
    await output[Symbol.asyncDispose]()
    await h.run(h.controller.dispose())
  })

  it('a listener that throws on the replay is not left subscribed: onData throws, and nothing can leak', async () => {
    const h = createHarness()
    const { id, terminal } = await spawnTerminalWithPromptInFlight(h)
    const listener = vi.fn(() => {
      throw new Error('view not ready')
    })
    expect(() => terminal.onData(listener)).toThrow('view not ready')
    h.provider.emitData(id, 'later')
    expect(listener).toHaveBeenCalledTimes(1) // the replay only: the caller got no unsubscribe
    expect(h.errors()).toEqual([])
    await h.run(h.controller.dispose())
  })

  it('replays it also when a spawn listener asked for the handle before spawnTerminal handed it over', async () => {
    const h = createHarness()
    // An extension that tracks every terminal, subscribed before its first spawnTerminal.
    const tracked: (PtyTerminal | null)[] = []
    h.controller.on('spawn', ({ ptyId }) => tracked.push(h.controller.terminal(ptyId)))
    const { id, terminal } = await spawnTerminalWithPromptInFlight(h)

    expect(tracked).toEqual([terminal])
    const listener = vi.fn()
    terminal.onData(listener)
    const output = terminal.output()
    expect(listener.mock.calls.map(([event]) => event.data)).toEqual(['$ '])
    h.provider.emitData(id, 'ls\r\n')
    h.provider.emitExit(id, { exitCode: 0 })
    const chunks: string[] = []
    for await (const chunk of output) chunks.push(chunk)
    expect(chunks).toEqual(['$ ', 'ls\r\n'])
  })
})

describe('PtyTerminal: output() drives flow control', () => {
  it('a consumer that does not pull pauses the producer; pulling resumes it, with nothing lost', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output()
    for (let i = 0; i < 150; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true)

    const firstHalf = await pull(output, 60)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true) // still far above the low watermark
    const rest = await pull(output, 40)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false) // acks brought it below
    h.provider.emitExit(terminal.id, { exitCode: 0 })
    const tail: string[] = []
    for await (const chunk of output) tail.push(chunk)
    expect([...firstHalf, ...rest, ...tail].join('')).toBe(CHUNK.repeat(150))
    expect(h.provider.calls.filter((call) => call.method.endsWith('Producer')).map((call) => call.method)).toEqual([
      'pauseProducer',
      'resumeProducer',
    ])
  })

  it('the slowest active iterator sets the pace; a break releases its hold', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const fast = terminal.output()
    const slow = terminal.output()
    const listener = vi.fn()
    terminal.onData(listener)
    for (let i = 0; i < 101; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true)

    expect((await pull(fast, 101)).join('')).toBe(CHUNK.repeat(101))
    expect(await pull(fast, 0)).toEqual([])
    void fast.next() // the fast consumer asks for more: it let go of all 101
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true) // the slow one still holds them
    expect(listener).toHaveBeenCalledTimes(101) // and a listener got every chunk too

    expect(await pull(slow, 2)).toEqual([CHUNK, CHUNK])
    await slow.return?.()
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false)
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(0)
    await h.run(h.controller.dispose())
  })

  it('a handle with listeners only acknowledges nothing (the host keeps its own acks)', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    terminal.onData(() => undefined)
    for (let i = 0; i < 3; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(3 * CHUNK.length)
    expect(h.provider.calls.filter((call) => call.method === 'acknowledgeData')).toEqual([])
    await h.run(h.controller.dispose())
  })

  it('acknowledgeData credits this incarnation only: a late ack never credits the replacement', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawnTerminal({})
    for (let i = 0; i < 3; i += 1) h.provider.emitData('same', CHUNK)
    first.acknowledgeData(CHUNK.length)
    expect(h.controller.getFlowControlState('same')?.unacknowledgedChars).toBe(2 * CHUNK.length)
    expect(() => first.acknowledgeData(-1)).toThrow(TypeError)
    expect(() => first.acknowledgeData(Number.NaN)).toThrow('`chars` argument')

    h.provider.scriptNextSpawn({ id: 'same' })
    const second = await h.controller.spawnTerminal({})
    second.acknowledgeData(0)
    h.provider.emitData('same', CHUNK)
    first.acknowledgeData(CHUNK.length) // a late renderer callback of the old process
    expect(h.controller.getFlowControlState('same')?.unacknowledgedChars).toBe(CHUNK.length)
    second.acknowledgeData(CHUNK.length)
    expect(h.controller.getFlowControlState('same')?.unacknowledgedChars).toBe(0)
    await h.run(h.controller.dispose())
    expect(() => second.acknowledgeData(1)).not.toThrow()
  })

  it('opening an iterator opts the terminal into flow control, owing nothing for the output before it', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const acknowledge = vi.spyOn(h.controller, 'acknowledgeData')
    terminal.onData(() => undefined)
    h.provider.emitData(terminal.id, CHUNK)
    expect(h.controller.getFlowControlState(terminal.id)).toMatchObject({ engaged: false })
    terminal.output()
    // Engaged from here on: the iterator will never be handed what went by before it.
    expect(h.controller.getFlowControlState(terminal.id)).toMatchObject({ engaged: true, unacknowledgedChars: 0 })
    expect(acknowledge).not.toHaveBeenCalled()
    await h.run(h.controller.dispose())
  })

  it('an aborted signal ends the iteration and releases its hold', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const abort = new AbortController()
    const output = terminal.output({ signal: abort.signal })
    h.provider.emitData(terminal.id, CHUNK)
    expect(await pull(output, 1)).toEqual([CHUNK])
    const waiting = output.next()
    abort.abort()
    await expect(waiting).resolves.toEqual({ done: true, value: undefined })
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(0)
    const already = terminal.output({ signal: abort.signal })
    await expect(already.next()).resolves.toEqual({ done: true, value: undefined })
    await h.run(h.controller.dispose())
  })

  it('an iterator created after the exit ends at once', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ exit: { exitCode: 0 } })
    const terminal = await h.controller.spawnTerminal({})
    await h.settle()
    await expect(terminal.output().next()).resolves.toEqual({ done: true, value: undefined })
  })
})

describe('PtyTerminal: output() iterators nobody pulls are bounded (maxQueuedChars)', () => {
  const SMALL_WINDOW = { highWatermarkChars: 10 * CHUNK.length, lowWatermarkChars: CHUNK.length }
  /** Resolves at the first `consumer_not_acknowledging`: the forced resume that forgives the debt. */
  const forgiven = (h: ReturnType<typeof createHarness>): Promise<void> =>
    h.run(new Promise<void>((resolve) => h.controller.on('error', (error) => error.code === 'consumer_not_acknowledging' && resolve())))
  /** `spawnTerminal` whose PTY prints `chunks` while the spawn reply is in flight: the handle's replay. */
  async function spawnTerminalWithReplay(h: ReturnType<typeof createHarness>, chunks: string[]): Promise<PtyTerminal> {
    h.provider.scriptNextSpawn({ hang: true })
    const pending = h.controller.spawnTerminal({})
    await h.settle()
    const [id] = h.provider.livePtyIds()
    if (id === undefined) throw new Error('the spawn did not reach the provider')
    for (const chunk of chunks) h.provider.emitData(id, chunk)
    h.provider.releaseSpawn(id)
    return pending
  }

  it('one opened and never pulled, once flow control forgave it, drops its queue and ends with output_overrun', async () => {
    const h = createHarness({ controller: { flowControl: { ...SMALL_WINDOW, pauseMaxHoldMs: 50 } } })
    const terminal = await h.controller.spawnTerminal({})
    const forgotten = terminal.output({ maxQueuedChars: 20 * CHUNK.length })
    for (let i = 0; i < 11; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true) // paced while it could still pull
    await forgiven(h)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false) // the program runs on

    // Without the bound every later chunk would stay queued for the forgotten iterator.
    for (let i = 0; i < 1_000; i += 1) h.provider.emitData(terminal.id, CHUNK)
    await h.settle() // decided once the delivery that passed the bound is over
    const overruns = h.errors().filter((error) => error.code === 'output_overrun')
    expect(overruns).toHaveLength(1)
    expect(overruns[0]).toMatchObject({ ptyId: terminal.id })
    expect(overruns[0]?.message).toMatch(/queued more than 20000 chars .*\(`maxQueuedChars`\) and was ended: it dropped 1011000 chars of output up to seq 1011000\b/)
    // It let go of what it held (the 11 chunks of the pause included) and left: flow control, which
    // only iterators had engaged, is off again (the model test counts the acknowledgements).
    expect(h.controller.getFlowControlState(terminal.id)).toMatchObject({ engaged: false, paused: false })

    // Its consumer, if it comes back, is told once — never handed output that skips a gap.
    const told = forgotten.next()
    await expect(told).rejects.toBeInstanceOf(PtyControllerError)
    await expect(told).rejects.toMatchObject({ code: 'output_overrun', ptyId: terminal.id, message: overruns[0]?.message })
    await expect(forgotten.next()).resolves.toEqual({ done: true, value: undefined })
    // A new iterator follows the output from where it is.
    const fresh = terminal.output()
    h.provider.emitData(terminal.id, 'after')
    await expect(fresh.next()).resolves.toEqual({ done: false, value: 'after' })
    await h.run(h.controller.dispose())
  })

  it('a paced iterator never overruns; one whose consumer returned or aborted is not told', async () => {
    const h = createHarness({ controller: { flowControl: SMALL_WINDOW } })
    const terminal = await h.controller.spawnTerminal({})
    const paced = terminal.output({ maxQueuedChars: 12 * CHUNK.length })
    const left = terminal.output({ maxQueuedChars: 5 * CHUNK.length })
    const received: string[] = []
    for (let round = 0; round < 20; round += 1) {
      // The program writes while it may (the test stops at the pause), then the consumer reads it all.
      let written = 0
      for (; h.provider.getPty(terminal.id)?.paused !== true; written += 1) h.provider.emitData(terminal.id, CHUNK)
      received.push(...(await pull(paced, written)))
      if (round === 0) await expect(left.next()).rejects.toMatchObject({ code: 'output_overrun' })
    }
    expect(received.join('')).toBe(CHUNK.repeat(received.length))
    expect(h.errors().filter((error) => error.code === 'output_overrun')).toHaveLength(1) // `left`'s only

    await paced.return?.() // the last iterator left: the program runs free again
    const abort = new AbortController()
    const returned = terminal.output({ maxQueuedChars: 1 })
    const aborted = terminal.output({ maxQueuedChars: 1, signal: abort.signal })
    h.provider.emitData(terminal.id, CHUNK)
    await h.settle()
    expect(h.errors().filter((error) => error.code === 'output_overrun')).toHaveLength(3)
    await expect(returned.return?.()).resolves.toEqual({ done: true, value: undefined })
    await expect(returned.next()).resolves.toEqual({ done: true, value: undefined })
    abort.abort()
    await expect(aborted.next()).resolves.toEqual({ done: true, value: undefined })
    await h.run(h.controller.dispose())
  })

  it('one whose replay passes the bound overruns right after it opened, and leaves flow control as it found it', async () => {
    const h = createHarness({ controller: { flowControl: SMALL_WINDOW } })
    const terminal = await spawnTerminalWithReplay(h, ['$ ', 'motd\r\n'])
    const output = terminal.output({ maxQueuedChars: 1 })
    await h.settle()
    expect(h.errors().map((error) => error.code)).toEqual(['output_overrun'])
    await expect(output.next()).rejects.toMatchObject({ code: 'output_overrun' })
    // It was the only iterator: its leaving disengaged flow control again, so a flood runs free.
    expect(h.controller.getFlowControlState(terminal.id)).toMatchObject({ engaged: false, unacknowledgedChars: 0 })
    const unbounded = terminal.output({ maxQueuedChars: Number.POSITIVE_INFINITY })
    expect(await pull(unbounded, 2)).toEqual(['$ ', 'motd\r\n'])
    await unbounded.return?.()
    for (let i = 0; i < 11; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false)
    await h.run(h.controller.dispose())
  })

  it('after the forgiveness, one forgotten iterator overrunning does not hold the program for another', async () => {
    const h = createHarness({ controller: { flowControl: { ...SMALL_WINDOW, pauseMaxHoldMs: 50 } } })
    const terminal = await h.controller.spawnTerminal({})
    terminal.output({ maxQueuedChars: 20 * CHUNK.length })
    h.provider.emitData(terminal.id, CHUNK) // held by the first alone: its release would be an acknowledgement
    terminal.output({ maxQueuedChars: 1_000 * CHUNK.length })
    for (let i = 0; i < 10; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true)
    await forgiven(h)
    for (let i = 0; i < 30; i += 1) h.provider.emitData(terminal.id, CHUNK) // the first overruns on the way
    await h.settle()
    expect(h.errors().map((error) => error.code)).toEqual(['consumer_not_acknowledging', 'output_overrun'])
    // A wedged consumer costs at most one hold: what the overrun let go of unread engages nothing.
    expect(h.controller.getFlowControlState(terminal.id)).toMatchObject({ engaged: false, paused: false })
    for (let i = 0; i < 30; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(false)
    await h.run(h.controller.dispose())
  })

  it('an error listener that opens a new iterator at the overrun: it follows from the next chunk, holding nothing of the others', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const slow = terminal.output()
    terminal.output({ maxQueuedChars: 5 })
    let fresh: AsyncIterableIterator<string> | undefined
    h.controller.on('error', (error) => {
      if (error.code === 'output_overrun') fresh = terminal.output()
    })
    h.provider.emitData(terminal.id, 'abcdef')
    await h.settle()
    h.provider.emitData(terminal.id, 'ghi')
    expect(await fresh?.next()).toEqual({ done: false, value: 'ghi' })
    void fresh?.next() // moves past 'ghi'
    await h.settle()
    // `slow` pulled nothing: both chunks are still owed.
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(9)
    expect(h.provider.getPty(terminal.id)?.acknowledgedChars).toBe(0)
    expect(await slow.next()).toEqual({ done: false, value: 'abcdef' })
    await h.run(h.controller.dispose())
  })

  it('an overrun during the output a forced resume hands over keeps every listener in seq order', async () => {
    const h = createHarness({ controller: { flowControl: { ...SMALL_WINDOW, pauseMaxHoldMs: 50 } } })
    const terminal = await h.controller.spawnTerminal({})
    const handleSeqs: number[] = []
    const controllerSeqs: number[] = []
    terminal.onData((event) => handleSeqs.push(event.seq))
    h.controller.on('data', (event) => controllerSeqs.push(event.seq)) // after the handle registry's listener
    terminal.output({ maxQueuedChars: 15 * CHUNK.length })
    for (let i = 0; i < 11; i += 1) h.provider.emitData(terminal.id, CHUNK)
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true)
    for (let i = 0; i < 10; i += 1) h.provider.emitData(terminal.id, CHUNK) // held by the paused producer
    await forgiven(h)
    await h.settle()
    expect(h.errors().map((error) => error.code)).toContain('output_overrun')
    const ascending = (seqs: number[]): number[] => [...seqs].sort((a, b) => a - b)
    expect(controllerSeqs).toHaveLength(21)
    expect(controllerSeqs).toEqual(ascending(controllerSeqs))
    expect(handleSeqs).toEqual(controllerSeqs)
    await h.run(h.controller.dispose())
  })

  it('the default bound follows a raised high watermark, so a paced iterator is never ended before the pause', async () => {
    const big = 'y'.repeat(1024 * 1024)
    const h = createHarness({ controller: { flowControl: { highWatermarkChars: 16 * 1024 * 1024 } } })
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output()
    for (let i = 0; i < 17; i += 1) h.provider.emitData(terminal.id, big)
    await h.settle()
    expect(h.provider.getPty(terminal.id)?.paused).toBe(true)
    expect(h.errors()).toEqual([])
    await expect(output.next()).resolves.toEqual({ done: false, value: big })
    await h.run(h.controller.dispose())
  })

  it('a consumer that stalled past the forgiveness while the program flooded: its for-await loop throws output_overrun', async () => {
    const h = createHarness({ controller: { flowControl: { ...SMALL_WINDOW, pauseMaxHoldMs: 50 } } })
    const terminal = await h.controller.spawnTerminal({})
    let unstall: () => void = () => undefined
    const stalled = new Promise<void>((resolve) => (unstall = resolve))
    let received = 0
    const loop = (async () => {
      for await (const chunk of terminal.output({ maxQueuedChars: 100 * CHUNK.length })) {
        received += chunk.length
        await stalled // a view whose write never returns (a blocked pipe, a wedged socket)
      }
    })()
    for (let i = 0; i < 11; i += 1) h.provider.emitData(terminal.id, CHUNK)
    await forgiven(h)
    for (let i = 0; i < 101; i += 1) h.provider.emitData(terminal.id, CHUNK)
    unstall()
    await expect(loop).rejects.toMatchObject({ code: 'output_overrun' })
    expect(received).toBe(CHUNK.length) // it had the first chunk; the rest it would have had with a gap
    await h.run(h.controller.dispose())
  })
})

describe('PtyTerminal: await using', () => {
  it('stops the terminal (verified) at the end of the scope', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    let id = ''
    {
      await using terminal = await controller.spawnTerminal({})
      id = terminal.id
      expect(provider.livePtyIds()).toEqual([id])
    }
    expect(provider.livePtyIds()).toEqual([])
    expect(controller.hasPty(id)).toBe(false)
    await controller.dispose()
  })
})

describe('attach(id, { signal })', () => {
  it('answers false at once for an aborted signal, and when the host never answers', async () => {
    const provider = createFakePtyProvider()
    const owner = createPtyController({ provider })
    const { id } = await owner.spawn({})
    let hung = 0
    const hanging = new Proxy(provider, {
      get(target, key) {
        if (key === 'spawn') {
          return () => {
            hung += 1
            return new Promise(() => undefined)
          }
        }
        const value: unknown = Reflect.get(target, key)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const other = createPtyController({ provider: hanging })
    await expect(other.attach(id, { signal: AbortSignal.abort() })).resolves.toBe(false)
    expect(hung).toBe(0) // never asked

    const abort = new AbortController()
    const attached = other.attach(id, { signal: abort.signal })
    abort.abort()
    await expect(attached).resolves.toBe(false)
    expect(hung).toBe(1)
    expect(other.terminal(id)).toBeNull() // nothing is tracked
    await expect(other.attach(id, { signal: 'soon' as unknown as AbortSignal })).rejects.toThrow(/`signal` option/)
    await other.dispose()
    await owner.dispose()
  })

  it('gives a handle for an attached PTY, which hears its output', async () => {
    const provider = createFakePtyProvider()
    const owner = createPtyController({ provider })
    const { id } = await owner.spawn({ cols: 132, rows: 43 })
    const other = createPtyController({ provider })
    await expect(other.attach(id, { signal: new AbortController().signal })).resolves.toBe(true)
    const terminal = other.terminal(id)
    expect(terminal).toMatchObject({ id, cols: 132, rows: 43, pid: provider.getPty(id)?.pid })
    const seen: string[] = []
    terminal?.onData(({ data }) => seen.push(data))
    provider.emitData(id, 'hello')
    expect(seen).toEqual(['hello'])
    await other.dispose()
    await owner.dispose()
  })
})
