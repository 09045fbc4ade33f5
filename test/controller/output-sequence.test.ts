/**
 * The output sequence keeps step with the provider's own count on the paths where output reaches
 * nobody for a while — a stop that stood unverified until a re-attach revived it, an `attach` of a
 * PTY the controller did not track, output the in-flight buffer's cap dropped — found by a bug hunt
 * and a review from the host's side (3 Dec). The fake's count of `x`'s output is the sum of what
 * each test emits; the `seq` of every event is checked against it.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerOptions } from 'ptykit/controller'
import type { PtyProvider } from 'ptykit/contracts'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'
import { withoutIncarnations } from '../support/without-incarnations.js'

type Fake = ReturnType<typeof createFakePtyProvider>
type Controller = ReturnType<typeof createPtyController>

/** A fake provider (seen through `wrap`, if given), a manual clock, a controller and its event log. */
type World = { fake: Fake; clock: ReturnType<typeof createManualClock>; controller: Controller; log: string[] }

function world(wrap?: (fake: Fake) => PtyProvider, options: Omit<PtyControllerOptions, 'provider' | 'providers' | 'clock'> = {}): World {
  const fake = createFakePtyProvider({ scheduling: 'manual' })
  const clock = createManualClock()
  const controller = createPtyController({ ...options, provider: wrap === undefined ? fake : wrap(fake), clock })
  const log: string[] = []
  controller.on('spawn', (event) => log.push(`spawn${event.isReattach ? ' reattach' : ''}`))
  controller.on('exit', (event) => log.push(`exit ${event.cause.kind}`))
  controller.on('data', (event) => log.push(`data ${event.data} ${event.seq}`))
  controller.on('outputLoss', (event) => log.push(`loss ${event.fromSeq}-${event.toSeq}`))
  controller.on('error', () => undefined)
  return { fake, clock, controller, log }
}

/** Stop 'x' and let the stop go unverified (published exit `stop_unverified`; the process lives on). */
async function stopUnverified({ controller, fake, clock }: World): Promise<void> {
  fake.setShutdownBehaviour('x', 'never_confirm')
  expect(controller.kill('x')).toBe(true)
  await fake.settle()
  clock.advance(60_000)
  await fake.settle()
}

/** Spawn 'x' (with `options`), which prints `abc`; its stop goes unverified; it prints `lost!` (seq 3 → 8). */
async function printedWhileUnverified(w: World, options: Parameters<Controller['spawn']>[0] = { sessionId: 'x' }): Promise<void> {
  await w.controller.spawn(options)
  w.fake.emitData('x', 'abc')
  await stopUnverified(w)
  w.fake.emitData('x', 'lost!')
}

async function dispose({ controller, fake, clock }: World): Promise<void> {
  for (const id of fake.livePtyIds()) fake.setShutdownBehaviour(id, 'confirm')
  const disposed = controller.dispose()
  for (let i = 0; i < 50 && clock.nextTimerAt() !== null; i++) {
    await fake.settle()
    clock.advance(Math.max(0, (clock.nextTimerAt() ?? clock.now()) - clock.now()))
  }
  await disposed
}

/** The fake, as a provider whose fresh spawn names no `providerSequence` (it is optional in the contract). */
function withoutFreshSequence(provider: Fake): PtyProvider {
  return Object.assign(Object.create(provider) as Fake, {
    spawn: async (options: Parameters<Fake['spawn']>[0]) => {
      const result = await provider.spawn(options)
      if (result.isReattach !== true) delete (result as { providerSequence?: unknown }).providerSequence
      return result
    },
  })
}

/** The events from the unverified exit on (the spawn and `data abc 3` before it are the same in every test). */
const fromExit = (log: string[]): string[] => log.slice(log.indexOf('exit unknown'))

describe('output of an incarnation whose stop went unverified, at its revival', () => {
  // events.ts (outputLoss): printed "while the PTY's stop stood unverified and reached nobody
  // (reported right after the spawn event of the re-attach that revives it)".
  it.each([
    ['attach', { sessionId: 'x' }],
    ['a sessionId spawn', { sessionId: 'x' }],
    ['a claim spawn', { sessionId: 'x', claim: { key: 'k' } }],
    ['a slot spawn', { sessionId: 'x', slot: { key: 's' } }],
  ] as const)('is one gap right after the re-attach when %s revives it', async (via, options) => {
    const w = world()
    await printedWhileUnverified(w, options)
    if (via === 'attach') expect(await w.controller.attach('x')).toBe(true)
    else expect((await w.controller.spawn(options)).isReattach).toBe(true)
    w.fake.emitData('x', 'de')
    expect(fromExit(w.log)).toEqual(['exit unknown', 'spawn reattach', 'loss 3-8', 'data de 10'])
    await dispose(w)
  })

  it('is counted for a provider without incarnation ids too', async () => {
    const w = world(withoutIncarnations)
    await printedWhileUnverified(w)
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.emitData('x', 'de')
    expect(w.log).toEqual(['spawn', 'data abc 3', 'exit unknown', 'spawn reattach', 'loss 3-8', 'data de 10'])
    await dispose(w)
  })

  it('leaves output that arrives while the reviving attach is in flight to be delivered after it', async () => {
    // docs/controller.md, Ordering: "Output that arrived while the spawn was still in flight is held
    // and delivered right after `spawn`."
    const w = world()
    await printedWhileUnverified(w)
    const attaching = w.controller.attach('x')
    w.fake.emitData('x', 'mid')
    expect(await attaching).toBe(true)
    expect(fromExit(w.log)).toEqual(['exit unknown', 'spawn reattach', 'loss 3-8', 'data mid 11'])
    await dispose(w)
  })

  it('keeps its place with dataBatchMs', async () => {
    const w = world(undefined, { dataBatchMs: 5 })
    await printedWhileUnverified(w)
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.emitData('x', 'd')
    w.fake.emitData('x', 'e')
    w.clock.advance(5)
    expect(fromExit(w.log)).toEqual(['exit unknown', 'spawn reattach', 'loss 3-8', 'data d 9', 'data e 10'])
    await dispose(w)
  })

  it('is reported per revival when the stop goes unverified a second time', async () => {
    const w = world()
    await printedWhileUnverified(w)
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.emitData('x', 'de')
    await stopUnverified(w)
    w.fake.emitData('x', 'gone')
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.emitData('x', 'f')
    expect(w.log.slice(-4)).toEqual(['exit unknown', 'spawn reattach', 'loss 10-14', 'data f 15'])
    await dispose(w)
  })

  it('is counted when it was held for an unrelated spawn still in flight at the revival', async () => {
    const w = world()
    await w.controller.spawn({ sessionId: 'x' })
    w.fake.emitData('x', 'abc')
    await stopUnverified(w)
    w.fake.scriptNextSpawn({ hang: true, id: 'y' })
    const other = w.controller.spawn({ sessionId: 'y' })
    await w.fake.settle()
    // Held while y's spawn is in flight (a re-attach may revive x), yet y's spawn cannot claim it.
    w.fake.emitData('x', 'lost!')
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.releaseSpawn('y')
    await other
    w.fake.emitData('x', 'de')
    expect(w.log.filter((entry) => entry.startsWith('data') || entry.startsWith('loss'))).toEqual(['data abc 3', 'loss 3-8', 'data de 10'])
    await dispose(w)
  })

  it('is published once when two attaches revive the PTY at once', async () => {
    const w = world()
    await printedWhileUnverified(w)
    const first = w.controller.attach('x')
    const second = w.controller.attach('x')
    w.fake.emitData('x', 'mid')
    expect(await first).toBe(true)
    expect(await second).toBe(true)
    expect(fromExit(w.log)).toEqual(['exit unknown', 'spawn reattach', 'loss 3-8', 'data mid 11'])
    await dispose(w)
  })

  it.each(['attach', 'spawn'] as const)('is counted once through %s when the fresh spawn named no providerSequence', async (via) => {
    const w = world(withoutFreshSequence)
    await printedWhileUnverified(w)
    if (via === 'attach') expect(await w.controller.attach('x')).toBe(true)
    else await w.controller.spawn({ sessionId: 'x' })
    w.fake.emitData('x', 'de')
    expect(w.log.filter((entry) => entry.startsWith('data') || entry.startsWith('loss'))).toEqual(['data abc 3', 'loss 3-8', 'data de 10'])
    await dispose(w)
  })
})

describe('a PTY the controller did not track, re-attached', () => {
  // docs/pty-host.md, Attach: "the reply carries providerSequence: { value, generation: 'continued' }
  // ... the consumer's count stays the host's absolute sequence".
  it.each(['attach', 'spawn'] as const)('continues the provider’s count through %s', async (via) => {
    const w = world()
    await w.fake.spawn({ sessionId: 'x' })
    w.fake.emitData('x', 'before the app attached')
    if (via === 'attach') expect(await w.controller.attach('x')).toBe(true)
    else await w.controller.spawn({ sessionId: 'x' })
    w.fake.emitData('x', 'de')
    expect(w.log).toEqual(['spawn reattach', 'data de 25'])
    await dispose(w)
  })

  it('keeps the count when a spawn re-attaches what attach adopted', async () => {
    const w = world()
    await w.fake.spawn({ sessionId: 'x' })
    expect(await w.controller.attach('x')).toBe(true)
    w.fake.emitData('x', 'ab')
    await w.controller.spawn({ sessionId: 'x' })
    w.fake.emitData('x', 'c')
    expect(w.log).toEqual(['spawn reattach', 'data ab 2', 'spawn reattach', 'data c 3'])
    await dispose(w)
  })
})

describe('output the in-flight buffer’s cap dropped', () => {
  it('is reported as a gap where it stood when the spawn publishes, and seq stays the provider’s', async () => {
    // docs/controller.md, Ordering: past the cap "the oldest held output is dropped … the spawn that
    // then publishes the PTY reports what was dropped as an `outputLoss` where it stood".
    const w = world()
    w.fake.scriptNextSpawn({ hang: true, id: 'p' })
    const spawning = w.controller.spawn({})
    await w.fake.settle()
    const chunk = 'x'.repeat(100_000)
    for (let i = 0; i < 12; i++) w.fake.emitData('p', chunk)
    w.fake.releaseSpawn('p')
    await spawning
    w.fake.emitData('p', 'de')
    // Two of the twelve chunks were dropped (the oldest), ten delivered after the gap.
    expect(w.log.filter((entry) => entry.startsWith('loss'))).toEqual(['loss 0-200000'])
    expect(w.log.at(-1)).toBe('data de 1200002')
    await dispose(w)
  })
})
