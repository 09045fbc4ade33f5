/**
 * A host that runs for days registers a renderer serializer (its view) for each PTY it spawns and
 * disposes it when the view unmounts. The generation the controller keeps per PTY id must not pile
 * up for every id that ever had a view: it is remembered for the latest ended ones, as the
 * controller remembers ended PTYs (EXITED_PTY_RECORDS_KEPT), not forever.
 */
import { describe, expect, it } from 'vitest'
import { EXITED_PTY_RECORDS_KEPT } from '../../src/controller/pty-record.js'
import { createHarness } from './controller-harness.js'

describe('renderer serializer generations over many PTY lifecycles', () => {
  it('are forgotten for ids whose views went away long ago, and kept for recent and live ones', async () => {
    const h = createHarness()
    const serializer = () => null
    const ids: string[] = []
    const lifecycles = EXITED_PTY_RECORDS_KEPT * 2 + 10
    for (let i = 0; i < lifecycles; i++) {
      const { id } = await h.controller.spawn({})
      ids.push(id)
      const view = h.controller.registerRendererSerializer(id, serializer)
      h.provider.emitExit(id, { exitCode: 0 })
      view.dispose()
    }
    const live = await h.controller.spawn({})
    h.controller.registerRendererSerializer(live.id, serializer)
    // The first PTYs ended and their views unmounted more than EXITED_PTY_RECORDS_KEPT lifecycles ago.
    expect(h.controller.hasPty(ids[0]!)).not.toBe(true)
    expect(h.controller.getRendererSerializerGeneration(ids[0]!)).toBe(0)
    expect(h.controller.getRendererSerializerGeneration(ids[lifecycles - EXITED_PTY_RECORDS_KEPT - 1]!)).toBe(0)
    // The latest ended ones, and a PTY whose view is registered, keep theirs.
    expect(h.controller.getRendererSerializerGeneration(ids[lifecycles - 1]!)).toBe(1)
    expect(h.controller.getRendererSerializerGeneration(ids[lifecycles - EXITED_PTY_RECORDS_KEPT]!)).toBe(1)
    expect(h.controller.getRendererSerializerGeneration(live.id)).toBe(1)
    await h.controller.dispose()
  })

  it('keeps the generation of an id someone waits on, so the wait still sees the next registration as newer', async () => {
    const h = createHarness()
    const serializer = () => null
    const { id } = await h.controller.spawn({})
    h.controller.registerRendererSerializer(id, serializer).dispose()
    h.controller.registerRendererSerializer(id, serializer).dispose()
    const waited = h.controller.waitForRendererSerializer(id, 2, 60_000)
    for (let i = 0; i < EXITED_PTY_RECORDS_KEPT + 5; i++) {
      h.controller.registerRendererSerializer(`other-${i}`, serializer).dispose()
    }
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(2)
    h.controller.registerRendererSerializer(id, serializer)
    await expect(waited).resolves.toBe(true)
    await h.controller.dispose()
  })
})
