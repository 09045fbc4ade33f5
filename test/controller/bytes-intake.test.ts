// The controller's intake of a provider's `onBytes` output (issue 18.3): bytes are fenced, held
// for a spawn in flight and replayed after its `spawn` event, published as `bytes` (never `data`)
// with `seq` counted in bytes, coalesced by `dataBatchMs` as one merged chunk, and never after the
// incarnation's exit.
import { describe, expect, it } from 'vitest'
import {
  createListenerSet,
  toPtyIncarnationId,
  type PtyBytesEvent,
  type PtyIncarnationId,
  type PtyProvider,
} from '../../src/contracts/index.js'
import { createPtyController, type PtyControllerBytesEvent } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'

/** The fake provider plus an `onBytes` capability the test drives. */
function bytesCapableProvider() {
  const fake = createFakePtyProvider({ scheduling: 'manual' })
  const bytesListeners = createListenerSet<PtyBytesEvent>()
  const provider: PtyProvider = {
    ...fake,
    onData: (listener) => fake.onData(listener),
    onExit: (listener) => fake.onExit(listener),
    onBytes: (listener) => bytesListeners.add(listener),
    spawn: (options) => fake.spawn(options),
  }
  const emitBytes = (event: { id: string; bytes: Uint8Array; incarnationId: PtyIncarnationId | undefined }): void =>
    bytesListeners.fire(
      event.incarnationId === undefined ? { id: event.id, bytes: event.bytes } : { id: event.id, bytes: event.bytes, incarnationId: event.incarnationId },
    )
  return { fake, provider, emitBytes }
}

function record(controller: ReturnType<typeof createPtyController>) {
  const log: string[] = []
  const bytes: PtyControllerBytesEvent[] = []
  controller.on('spawn', () => log.push('spawn'))
  controller.on('data', () => log.push('data'))
  controller.on('bytes', (event) => {
    log.push('bytes')
    bytes.push(event)
  })
  controller.on('exit', () => log.push('exit'))
  return { log, bytes }
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

describe('bytes output through the controller', () => {
  it('holds bytes of a spawn in flight, replays them after `spawn`, counts seq in bytes, drops other incarnations', async () => {
    const { fake, provider, emitBytes } = bytesCapableProvider()
    const controller = createPtyController({ provider, clock: createManualClock() })
    const { log, bytes } = record(controller)
    fake.scriptNextSpawn({ id: 'p', hang: true })
    const spawning = controller.spawn({})
    await fake.settle()
    const incarnationId = fake.getPty('p')?.incarnationId
    emitBytes({ id: 'p', bytes: utf8('é€'), incarnationId }) // 5 bytes, 2 chars
    emitBytes({ id: 'p', bytes: utf8('x'), incarnationId: toPtyIncarnationId('someone-else') })
    expect(log).toEqual([])
    fake.releaseSpawn('p')
    await spawning
    emitBytes({ id: 'p', bytes: Uint8Array.of(0xf0, 0x9f), incarnationId }) // half an emoji: passed as is
    expect(log).toEqual(['spawn', 'bytes', 'bytes'])
    expect(bytes.map((event) => [...event.bytes])).toEqual([[...utf8('é€')], [0xf0, 0x9f]])
    expect(bytes.map((event) => event.seq)).toEqual([5, 7])
    fake.emitExit('p', { exitCode: 0 })
    await fake.settle()
    emitBytes({ id: 'p', bytes: utf8('late'), incarnationId })
    expect(log).toEqual(['spawn', 'bytes', 'bytes', 'exit'])
    await controller.dispose()
  })

  it('with dataBatchMs, merges a window of bytes into one Uint8Array and flushes it before the exit', async () => {
    const { fake, provider, emitBytes } = bytesCapableProvider()
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock, dataBatchMs: 5 })
    const { log, bytes } = record(controller)
    const { id, incarnationId } = await controller.spawn({})
    emitBytes({ id, bytes: Uint8Array.of(1), incarnationId })
    emitBytes({ id, bytes: Uint8Array.of(2, 3), incarnationId })
    emitBytes({ id, bytes: Uint8Array.of(4), incarnationId })
    expect(bytes.map((event) => [...event.bytes])).toEqual([[1]])
    clock.advance(5)
    expect(bytes.map((event) => [...event.bytes])).toEqual([[1], [2, 3, 4]])
    expect(bytes.map((event) => event.seq)).toEqual([1, 4])
    emitBytes({ id, bytes: Uint8Array.of(5), incarnationId })
    fake.emitExit(id, { exitCode: 0 })
    await fake.settle()
    expect(bytes.map((event) => [...event.bytes])).toEqual([[1], [2, 3, 4], [5]])
    expect(log.at(-1)).toBe('exit')
    expect(log.filter((entry) => entry === 'data')).toEqual([])
    await controller.dispose()
  })

  it('acknowledges in bytes: flow control counts the unit delivered', async () => {
    const { provider, emitBytes } = bytesCapableProvider()
    const controller = createPtyController({ provider, clock: createManualClock(), flowControl: { mode: 'always' } })
    const { id, incarnationId } = await controller.spawn({})
    emitBytes({ id, bytes: utf8('€€€'), incarnationId }) // 9 bytes, 3 chars
    expect(controller.getFlowControlState(id)?.unacknowledgedChars).toBe(9)
    controller.acknowledgeData(id, 9)
    expect(controller.getFlowControlState(id)?.unacknowledgedChars).toBe(0)
    await controller.dispose()
  })

  // docs/controller.md: the handles carry text only. An output() loop opened on a bytes PTY by
  // someone who did not read that gets nothing; it must not hold the process back either (DESIGN
  // §4: flow control only slows a producer for a consumer that takes part in it).
  it('an output() iterator of a bytes PTY holds nothing back: the producer is never paused for it', async () => {
    const { fake, provider, emitBytes } = bytesCapableProvider()
    const controller = createPtyController({ provider, clock: createManualClock() })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(error.code))
    const terminal = await controller.spawnTerminal({})
    const early = terminal.output()
    const incarnationId = fake.getPty(terminal.id)?.incarnationId
    for (let i = 0; i < 150; i += 1) emitBytes({ id: terminal.id, bytes: new Uint8Array(1_000), incarnationId })
    const late = terminal.output() // opened once the PTY is known to deliver bytes
    for (let i = 0; i < 150; i += 1) emitBytes({ id: terminal.id, bytes: new Uint8Array(1_000), incarnationId })
    expect(fake.getPty(terminal.id)?.paused).toBe(false)
    expect(controller.getFlowControlState(terminal.id)).toMatchObject({ paused: false, engaged: false })
    fake.emitExit(terminal.id, { exitCode: 0 })
    await fake.settle()
    await expect(early.next()).resolves.toEqual({ done: true, value: undefined })
    await expect(late.next()).resolves.toEqual({ done: true, value: undefined })
    expect(errors).toEqual([])
    await controller.dispose()
  })

  it('a consumer that acknowledges a bytes PTY itself keeps flow control, iterator or not', async () => {
    const { fake, provider, emitBytes } = bytesCapableProvider()
    const controller = createPtyController({ provider, clock: createManualClock() })
    const terminal = await controller.spawnTerminal({})
    terminal.acknowledgeData(0)
    terminal.output()
    const incarnationId = fake.getPty(terminal.id)?.incarnationId
    for (let i = 0; i < 150; i += 1) emitBytes({ id: terminal.id, bytes: new Uint8Array(1_000), incarnationId })
    expect(fake.getPty(terminal.id)?.paused).toBe(true)
    terminal.acknowledgeData(150_000)
    expect(fake.getPty(terminal.id)?.paused).toBe(false)
    await controller.dispose()
  })
})
