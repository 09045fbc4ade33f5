import { describe, expect, it } from 'vitest'
import { IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS } from '../../src/controller/in-flight-event-buffer.js'
import { createHarness } from './controller-harness.js'

describe('events of a PTY whose spawn is in flight', () => {
  it('are held and delivered after its `spawn` event, in order, exit last', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ hang: true, id: 'p' })
    const spawning = h.controller.spawn({})
    await h.settle()
    h.provider.emitData('p', 'a')
    h.provider.emitData('p', 'b')
    expect(h.events).toEqual([])
    h.provider.releaseSpawn('p')
    const { id } = await spawning
    h.provider.emitExit(id, { exitCode: 3 })
    expect(h.events.map((entry) => entry.type)).toEqual(['spawn', 'data', 'data', 'exit', 'liveness'])
    expect(h.data().map((event) => event.data)).toEqual(['a', 'b'])
  })

  it('never include output from before the spawn (here an attach) started, whatever else is in flight', async () => {
    const h = createHarness()
    const foreign = await h.provider.spawn({})
    h.provider.scriptNextSpawn({ hang: true, id: 'slow' })
    const slow = h.controller.spawn({})
    await h.settle()
    // Output of a PTY nobody tracks yet, while an unrelated spawn is in flight.
    h.provider.emitData(foreign.id, 'before attach')
    await expect(h.controller.attach(foreign.id)).resolves.toBe(true)
    h.provider.emitData(foreign.id, 'after attach')
    h.provider.releaseSpawn('slow')
    await slow
    expect(h.data().map((event) => event.data)).toEqual(['after attach'])
  })

  it(`are bounded: past IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS the oldest held output is dropped and reported`, async () => {
    const h = createHarness()
    const foreign = await h.provider.spawn({})
    h.provider.scriptNextSpawn({ hang: true, id: 'slow' })
    const slow = h.controller.spawn({})
    await h.settle()
    const chunk = 'x'.repeat(Math.ceil(IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS / 4))
    for (let index = 0; index < 6; index++) h.provider.emitData(foreign.id, chunk)
    h.provider.emitData('slow', 'mine')
    const dropped = h.errors().filter((error) => error.code === 'output_dropped')
    expect(dropped.length).toBeGreaterThan(0)
    expect(dropped[0]?.ptyId).toBe(foreign.id)
    h.provider.releaseSpawn('slow')
    await slow
    // The newest output, the spawn's own, was kept.
    expect(h.data().map((event) => [event.ptyId, event.data])).toEqual([['slow', 'mine']])
  })
})
