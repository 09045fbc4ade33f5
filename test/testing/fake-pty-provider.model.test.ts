// Model-based test of the fake provider: random sequences of spawns, output, exits, pauses,
// stops, writes and resizes, checked against a tiny model after every step.
import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import type { PtyDataEvent, PtyExitEvent } from 'ptykit/contracts'
import { createFakePtyProvider, type FakePtyProvider, type FakeShutdownBehaviour } from 'ptykit/testing'

type ModelPty = {
  incarnationId: string
  live: boolean
  paused: boolean
  shutdown: FakeShutdownBehaviour
  produced: string
  exited: boolean
  cols: number
  rows: number
}

type Model = { ptys: Map<string, ModelPty>; order: string[] }

type Real = {
  provider: FakePtyProvider
  data: Map<string, string>
  exits: PtyExitEvent[]
  // Per incarnation: output delivered when its exit arrived (to prove data-before-exit).
  deliveredAtExit: Map<string, string>
}

const dataKey = (event: PtyDataEvent): string => String(event.incarnationId)

function pick(model: Model, index: number): [string, ModelPty] | undefined {
  const id = model.order[index % Math.max(1, model.order.length)]
  const pty = id === undefined ? undefined : model.ptys.get(id)
  return id === undefined || pty === undefined ? undefined : [id, pty]
}

// After every command: the real provider agrees with the model, and the ordering rules hold.
function checkInvariants(model: Model, real: Real): void {
  const live = [...model.ptys.entries()].filter(([, pty]) => pty.live).map(([id]) => id)
  expect(new Set(real.provider.livePtyIds())).toEqual(new Set(live))
  for (const [id, pty] of model.ptys) {
    const delivered = real.data.get(pty.incarnationId) ?? ''
    expect(pty.produced.startsWith(delivered)).toBe(true)
    const exits = real.exits.filter((exit) => exit.incarnationId === pty.incarnationId)
    expect(exits.length).toBeLessThanOrEqual(1)
    if (!pty.paused) {
      // Nothing is held for a PTY that is not paused: all output, then the exit, got through.
      expect(delivered).toBe(pty.produced)
      expect(exits).toHaveLength(pty.exited ? 1 : 0)
    }
    if (exits.length === 1) expect(real.deliveredAtExit.get(pty.incarnationId)).toBe(pty.produced)
    expect(real.provider.hasPty(id)).toBe(pty.live)
    expect(real.provider.getSize(id)).toEqual(pty.live ? { cols: pty.cols, rows: pty.rows } : null)
  }
}

class SpawnCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly reuse: number | null,
    readonly shutdown: FakeShutdownBehaviour,
  ) {}
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    const reused = this.reuse === null ? undefined : pick(model, this.reuse)
    const result = await real.provider.spawn({
      metadata: { fakeScript: { shutdown: this.shutdown, ...(reused === undefined ? {} : { id: reused[0] }) } },
    })
    if (reused !== undefined) {
      expect(result.id).toBe(reused[0])
      expect(result.incarnationId).not.toBe(reused[1].incarnationId)
    } else {
      model.order.push(result.id)
    }
    model.ptys.set(result.id, {
      incarnationId: String(result.incarnationId),
      live: true,
      paused: false,
      shutdown: this.shutdown,
      produced: '',
      exited: false,
      cols: 80,
      rows: 24,
    })
    checkInvariants(model, real)
  }
  toString(): string {
    return `spawn(${this.reuse ?? 'new'}, ${this.shutdown})`
  }
}

class EmitDataCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly data: string,
  ) {}
  check(model: Model): boolean {
    return pick(model, this.index)?.[1].live === true
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    real.provider.emitData(id, this.data)
    pty.produced += this.data
    checkInvariants(model, real)
  }
  toString(): string {
    return `emitData(${this.index}, ${JSON.stringify(this.data)})`
  }
}

class EmitExitCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check(model: Model): boolean {
    return pick(model, this.index)?.[1].live === true
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    real.provider.emitExit(id, { exitCode: 1 })
    pty.live = false
    pty.exited = true
    checkInvariants(model, real)
  }
  toString(): string {
    return `emitExit(${this.index})`
  }
}

class PauseCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly pause: boolean,
  ) {}
  check(model: Model): boolean {
    return pick(model, this.index) !== undefined
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    if (this.pause) real.provider.pauseProducer(id)
    else real.provider.resumeProducer(id)
    pty.paused = this.pause
    checkInvariants(model, real)
  }
  toString(): string {
    return `${this.pause ? 'pause' : 'resume'}(${this.index})`
  }
}

class ShutdownCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly immediate: boolean,
  ) {}
  check(model: Model): boolean {
    return pick(model, this.index) !== undefined
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    const outcome = await real.provider.shutdown(id, { immediate: this.immediate }).then(
      () => 'resolved',
      (error: unknown) => ((error as { code?: unknown }).code === 'shutdown_timeout' ? 'timed out' : 'rejected'),
    )
    if (pty.live) {
      // `time_out`: sent, not seen done by its deadline (`shutdown_timeout`), and the PTY lives on.
      expect(outcome).toBe(pty.shutdown === 'fail' ? 'rejected' : pty.shutdown === 'time_out' ? 'timed out' : 'resolved')
      if (pty.shutdown === 'confirm') {
        pty.live = false
        pty.exited = true
        const exit = real.exits.find((e) => e.incarnationId === pty.incarnationId)
        if (!pty.paused || exit !== undefined) {
          expect(exit?.cause).toEqual({ kind: 'signaled', signal: this.immediate ? 9 : 1 })
        }
      }
    } else {
      expect(outcome).toBe('resolved')
    }
    checkInvariants(model, real)
  }
  toString(): string {
    return `shutdown(${this.index}, immediate=${this.immediate})`
  }
}

class WriteCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check(model: Model): boolean {
    return pick(model, this.index) !== undefined
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    expect(real.provider.write(id, 'x')).toEqual(pty.live ? { kind: 'accepted' } : { kind: 'refused', reason: 'pty_exited' })
    checkInvariants(model, real)
  }
  toString(): string {
    return `write(${this.index})`
  }
}

class WriteBytesCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly bytes: Uint8Array,
  ) {}
  check(model: Model): boolean {
    return pick(model, this.index) !== undefined
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    const before = real.provider.getPty(id)?.writtenBytes.length ?? 0
    expect(real.provider.writeBytes(id, this.bytes)).toEqual(pty.live ? { kind: 'accepted' } : { kind: 'refused', reason: 'pty_exited' })
    const after = real.provider.getPty(id)?.writtenBytes
    // Exactly these bytes were added, after everything written before (nothing when refused).
    expect(after?.subarray(before)).toEqual(pty.live ? this.bytes : new Uint8Array(0))
    checkInvariants(model, real)
  }
  toString(): string {
    return `writeBytes(${this.index}, ${Buffer.from(this.bytes).toString('hex')})`
  }
}

class ResizeCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly cols: number,
    readonly rows: number,
  ) {}
  check(model: Model): boolean {
    return pick(model, this.index) !== undefined
  }
  async run(model: Model, real: Real): Promise<void> {
    const [id, pty] = pick(model, this.index) as [string, ModelPty]
    expect(real.provider.resize(id, this.cols, this.rows)).toBe(pty.live)
    if (pty.live) {
      pty.cols = this.cols
      pty.rows = this.rows
    }
    checkInvariants(model, real)
  }
  toString(): string {
    return `resize(${this.index}, ${this.cols}x${this.rows})`
  }
}

const index = fc.nat({ max: 7 })
const commands = [
  fc
    .tuple(fc.option(index, { nil: null }), fc.constantFrom<FakeShutdownBehaviour>('confirm', 'never_confirm', 'fail', 'time_out'))
    .map(([reuse, shutdown]) => new SpawnCommand(reuse, shutdown)),
  fc.tuple(index, fc.string({ minLength: 1, maxLength: 4 })).map(([i, data]) => new EmitDataCommand(i, data)),
  index.map((i) => new EmitExitCommand(i)),
  fc.tuple(index, fc.boolean()).map(([i, pause]) => new PauseCommand(i, pause)),
  fc.tuple(index, fc.boolean()).map(([i, immediate]) => new ShutdownCommand(i, immediate)),
  index.map((i) => new WriteCommand(i)),
  fc.tuple(index, fc.uint8Array({ minLength: 0, maxLength: 8 })).map(([i, bytes]) => new WriteBytesCommand(i, bytes)),
  fc
    .tuple(index, fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 100 }))
    .map(([i, cols, rows]) => new ResizeCommand(i, cols, rows)),
]

describe('createFakePtyProvider (model-based)', () => {
  it('should agree with the model and keep data before exit under any sequence of operations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const provider = createFakePtyProvider({ scheduling: 'manual' })
        const real: Real = { provider, data: new Map(), exits: [], deliveredAtExit: new Map() }
        provider.onData((event) => real.data.set(dataKey(event), (real.data.get(dataKey(event)) ?? '') + event.data))
        provider.onExit((event) => {
          real.exits.push(event)
          real.deliveredAtExit.set(String(event.incarnationId), real.data.get(String(event.incarnationId)) ?? '')
        })
        const model: Model = { ptys: new Map(), order: [] }
        await fc.asyncModelRun(() => ({ model, real }), cmds)

        // Whatever happened, dispose leaves nothing running and releases every listener.
        await provider.dispose()
        expect(provider.livePtyIds()).toEqual([])
        expect(provider.listenerCount()).toBe(0)
        const incarnations = new Set(real.exits.map((exit) => exit.incarnationId))
        expect(incarnations.size).toBe(real.exits.length)
      }),
      { numRuns: 150 },
    )
  })
})

describe('createFakePtyProvider (races)', () => {
  it('should keep exactly one exit, after all output, whatever order a hung spawn’s release, output, stop, exit and pause race in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const provider = createFakePtyProvider({ scheduling: 'manual' })
        const log: string[] = []
        provider.onData((event) => log.push(`data:${event.data}`))
        provider.onExit((event) => log.push(`exit:${event.code}`))
        provider.scriptNextSpawn({ hang: true, id: 'p', output: ['a', 'b'], exit: { exitCode: 0 } })
        const spawning = provider.spawn({})
        const whenLive = (action: () => void) => (): void => {
          if (provider.getPty('p')?.live === true) action()
        }
        const steps: Array<() => unknown> = [
          () => provider.releaseSpawn('p'),
          whenLive(() => provider.emitData('p', 'x')),
          () => provider.shutdown('p'),
          whenLive(() => provider.emitExit('p', { exitCode: 3 })),
          () => provider.pauseProducer('p'),
          () => provider.resumeProducer('p'),
          () => provider.settle(),
        ]
        const tasks = steps.map((step, i) => s.schedule(Promise.resolve(i)).then(() => step()))
        await s.waitAll()
        await Promise.all(tasks)
        provider.resumeProducer('p')
        await provider.settle()

        const result = await spawning
        expect(result.id).toBe('p')
        const exits = log.filter((entry) => entry.startsWith('exit:'))
        expect(exits).toHaveLength(1)
        expect(log.at(-1)).toMatch(/^exit:/)
        expect(provider.livePtyIds()).toEqual([])
        expect(provider.getPty('p')?.heldEventCount).toBe(0)
      }),
      { numRuns: 150 },
    )
  })
})
