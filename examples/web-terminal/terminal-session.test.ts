// A terminal session under any interleaving of output, pages attaching and leaving, and acks
// (fast-check model test, real controller over the fake provider). It checks the two promises the
// web terminal's renderer side rests on:
//
//   - a page gets, after its snapshot, exactly the output that arrived after it attached: nothing
//     lost, nothing repeated; and the snapshot shows what arrived before;
//   - every char the controller delivered is acknowledged exactly once: once the mirror has caught
//     up, the controller's unacknowledged count is what the current page still owes, else zero.
import fc from 'fast-check'
import { createPtyController, type PtyTerminal } from 'ptykit/controller'
import { createFakePtyProvider } from 'ptykit/testing'
import { expect, it } from 'vitest'
import type { ServerMessage } from './protocol.js'
import { TerminalSession, type TerminalViewer } from './terminal-session.js'

class RecordingViewer implements TerminalViewer {
  messages: ServerMessage[] = []
  send(message: ServerMessage): void {
    this.messages.push(message)
  }
  /** Output received after the last `attached`, and that snapshot. */
  sinceAttach(): { snapshot: string | undefined; output: string } {
    const last = this.messages.findLastIndex((message) => message.type === 'attached')
    const attached = this.messages[last]
    const output = this.messages
      .slice(last + 1)
      .map((message) => (message.type === 'output' ? message.data : ''))
      .join('')
    return { snapshot: attached?.type === 'attached' ? attached.snapshot : undefined, output }
  }
  /** The `generation` of the last `attached` it got (0: none): its acks name it, as the page's do. */
  generation(): number {
    const attached = this.messages.findLast((message) => message.type === 'attached')
    return attached?.type === 'attached' ? attached.generation : 0
  }
}

type Model = {
  viewer: number | undefined
  /** Output emitted since the current viewer attached. */
  sinceAttach: string
  /** Output emitted before it attached (the snapshot must show its last line). */
  beforeAttach: string
  /** Chars sent to the current viewer it has not acknowledged. */
  owed: number
}

type Real = { session: TerminalSession; viewers: RecordingViewer[]; emit(data: string): void; unacknowledged(): number }

let line = 0
const output = fc.integer({ min: 1, max: 3 }).map((count) =>
  Array.from({ length: count }, () => `line-${++line}\r\n`).join(''),
)

class Output implements fc.AsyncCommand<Model, Real> {
  constructor(readonly data: string) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    real.emit(this.data)
    if (model.viewer === undefined) model.beforeAttach += this.data
    else {
      model.sinceAttach += this.data
      model.owed += this.data.length
    }
  }
  toString = (): string => `output(${JSON.stringify(this.data)})`
}

class Attach implements fc.AsyncCommand<Model, Real> {
  constructor(readonly viewer: number) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    real.session.attach(real.viewers[this.viewer] as RecordingViewer, false)
    model.beforeAttach += model.sinceAttach
    model.sinceAttach = ''
    model.viewer = this.viewer
    model.owed = 0 // the previous page's debt is settled by the server
  }
  toString = (): string => `attach(${this.viewer})`
}

class Detach implements fc.AsyncCommand<Model, Real> {
  constructor(readonly viewer: number) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    real.session.detach(real.viewers[this.viewer] as RecordingViewer)
    if (model.viewer !== this.viewer) return
    model.beforeAttach += model.sinceAttach
    model.sinceAttach = ''
    model.viewer = undefined
    model.owed = 0
  }
  toString = (): string => `detach(${this.viewer})`
}

class Acknowledge implements fc.AsyncCommand<Model, Real> {
  constructor(readonly viewer: number, readonly chars: number) {}
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    // A page acknowledges only output it drew, so after the `attached` it drew it under.
    await real.session.settled()
    const viewer = real.viewers[this.viewer] as RecordingViewer
    real.session.acknowledge(viewer, this.chars, viewer.generation())
    if (model.viewer === this.viewer) model.owed -= Math.min(this.chars, model.owed)
  }
  toString = (): string => `ack(${this.viewer}, ${this.chars})`
}

/** Let the mirror catch up (a snapshot is taken, coalesced output sent), then check. */
class Settle implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true
  async run(model: Model, real: Real): Promise<void> {
    await checkInvariants(model, real)
  }
  toString = (): string => 'settle'
}

/** After the mirror caught up: the page's view and the controller's count agree with the model. */
async function checkInvariants(model: Model, real: Real): Promise<void> {
  await real.session.settled()
  expect(real.unacknowledged()).toBe(model.owed)
  if (model.viewer === undefined) return
  const { snapshot, output } = (real.viewers[model.viewer] as RecordingViewer).sinceAttach()
  expect(output).toBe(model.sinceAttach)
  const lastBefore = model.beforeAttach.trimEnd().split('\r\n').at(-1) ?? ''
  expect(snapshot).toContain(lastBefore)
}

it('a page gets its snapshot then exactly the later output, and every char is acknowledged once', async () => {
  const viewer = fc.integer({ min: 0, max: 1 })
  const commands = fc.commands(
    [
      output.map((data) => new Output(data)),
      viewer.map((index) => new Attach(index)),
      viewer.map((index) => new Detach(index)),
      fc.tuple(viewer, fc.nat({ max: 40 })).map(([index, chars]) => new Acknowledge(index, chars)),
      fc.constant(new Settle()),
    ],
    { maxCommands: 25 },
  )
  await fc.assert(
    fc.asyncProperty(commands, async (sequence) => {
      const provider = createFakePtyProvider()
      const controller = createPtyController({ provider })
      const terminal = await controller.spawnTerminal({ cols: 40, rows: 10 })
      const session = new TerminalSession(terminal, 'test')
      const id = terminal.id
      const real: Real = {
        session,
        viewers: [new RecordingViewer(), new RecordingViewer()],
        emit: (data) => provider.emitData(id, data),
        unacknowledged: () => controller.getFlowControlState(id)?.unacknowledgedChars ?? -1,
      }
      const model: Model = { viewer: undefined, sinceAttach: '', beforeAttach: '', owed: 0 }
      try {
        // Commands run back to back, so output and acks race the snapshot of a fresh attach.
        for (const command of sequence) await command.run(model, real)
        await checkInvariants(model, real)
      } finally {
        session.dispose()
        await controller.dispose()
        await provider.dispose()
      }
    }),
    { numRuns: 40 },
  )
})

/**
 * `terminal` as a session sees it, counting the `onData` listeners subscribed on it and not yet
 * unsubscribed. (A Proxy: the handle's methods run on the handle itself, whose state is private.)
 */
function countingDataListeners(terminal: PtyTerminal): { terminal: PtyTerminal; listeners: () => number } {
  let listeners = 0
  const counted = new Proxy(terminal, {
    get(target, property) {
      if (property === 'onData') {
        return (listener: Parameters<PtyTerminal['onData']>[0]) => {
          const unsubscribe = target.onData(listener)
          listeners += 1
          let done = false
          return () => {
            if (!done) listeners -= 1
            done = true
            unsubscribe()
          }
        }
      }
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return { terminal: counted, listeners: () => listeners }
}

it('dispose() unsubscribes the mirror from the terminal: output after it reaches no listener of the session', async () => {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  try {
    const handle = await controller.spawnTerminal({ cols: 40, rows: 10 })
    const { terminal, listeners } = countingDataListeners(handle)
    const session = new TerminalSession(terminal, 'test')
    const viewer = new RecordingViewer()
    session.attach(viewer, false)
    await session.settled()
    expect(listeners()).toBe(1)
    session.dispose()
    // Why it matters: the server disposes its sessions before the controller stops the PTYs, and
    // their last output (a shell's `exit`) then reached a disposed mirror.
    expect(listeners()).toBe(0)
    provider.emitData(handle.id, 'after dispose\r\n')
    await new Promise((resolve) => setImmediate(resolve))
    expect(viewer.messages.filter((message) => message.type === 'output')).toEqual([])
  } finally {
    await controller.dispose()
    await provider.dispose()
  }
})

/** How long xterm.js parses (and calls write callbacks) in one turn before it yields (its WriteBuffer). */
const XTERM_WRITE_SLICE_MS = 12

it('a page attached twice before its first snapshot went out gets each snapshot followed by its own held output, in order', async () => {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  const terminal = await controller.spawnTerminal({ cols: 40, rows: 10 })
  const session = new TerminalSession(terminal, 'test')
  const id = terminal.id
  try {
    provider.emitData(id, 'before\r\n')
    const viewer = new RecordingViewer()
    // The page's `attach`, then a second one (its `open`'s terminal, a repeated `attach`) before the
    // mirror called the first snapshot's callback.
    session.attach(viewer, false)
    provider.emitData(id, 'between\r\n')
    session.attach(viewer, false)
    // Output that arrives while the first snapshot goes out, before the second one is taken: it is
    // held for the second snapshot, and comes right after it. The first send is slow (a large
    // snapshot to serialize and frame): xterm.js parses for at most 12 ms a turn, so the second
    // snapshot's callback comes a turn later, after the coalesced output was flushed.
    let sent = 0
    const send = viewer.send.bind(viewer)
    viewer.send = (message) => {
      send(message)
      if (message.type !== 'attached' || ++sent !== 1) return
      provider.emitData(id, 'during\r\n')
      const until = performance.now() + XTERM_WRITE_SLICE_MS + 3
      while (performance.now() < until) {
        // a send that takes longer than xterm.js's parse slice
      }
    }
    await session.settled()
    provider.emitData(id, 'after\r\n')
    await session.settled()
    const { snapshot, output } = viewer.sinceAttach()
    // What the page draws from its last `attached` on: every line once, in order.
    const screen = `${snapshot ?? ''}${output}`
    expect(screen).toContain('before')
    expect(screen).toContain('between')
    expect(output.indexOf('during')).toBeGreaterThanOrEqual(0)
    expect(output.indexOf('during')).toBeLessThan(output.indexOf('after'))
    expect(screen.split('during').length).toBe(2)
    expect(viewer.messages.map((message) => message.type)).toEqual(['attached', 'output', 'attached', 'output', 'output'])
  } finally {
    session.dispose()
    await controller.dispose()
    await provider.dispose()
  }
})

it("an ack of the superseded snapshot's output does not pay for output held for the newer one", async () => {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  const terminal = await controller.spawnTerminal({ cols: 40, rows: 10 })
  const session = new TerminalSession(terminal, 'test')
  const id = terminal.id
  try {
    const viewer = new RecordingViewer()
    session.attach(viewer, false)
    provider.emitData(id, 'between\r\n')
    // Attached again before the first snapshot went out: what the first attach held ('between') is
    // forgiven here (the newer snapshot shows it), so the page's ack of it must credit nothing.
    session.attach(viewer, false)
    const send = viewer.send.bind(viewer)
    viewer.send = (message) => {
      send(message)
      // Output arrives as the first snapshot goes out: held for the second one, and owed once sent.
      if (message.type === 'attached' && message.generation === 1) provider.emitData(id, 'during\r\n')
      // The page draws the first snapshot's output and acknowledges it at once, naming the
      // generation it drew it under.
      if (message.type === 'output' && message.data === 'between\r\n') session.acknowledge(viewer, message.data.length, viewer.generation())
    }
    await session.settled()
    expect(viewer.messages.map((message) => (message.type === 'output' ? message.data : message.type))).toEqual(['attached', 'between\r\n', 'attached', 'during\r\n'])
    // The page drew 'during' but has not acknowledged it: it is owed, exactly.
    expect(controller.getFlowControlState(id)?.unacknowledgedChars).toBe('during\r\n'.length)
  } finally {
    session.dispose()
    await controller.dispose()
    await provider.dispose()
  }
})
