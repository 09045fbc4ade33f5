/**
 * A late `kill` of a PTY whose stop disposal already gave up on (both shutdowns failed:
 * `stop_unverified`) while disposal is still stopping another PTY. Before, it answered `false` and
 * dispatched nothing until every other stop of the disposal had settled too — the answer (and
 * whether the process was reached) hung on an unrelated PTY's stop; after that, the same `kill`
 * answered `true` with a forced shutdown.
 */
import { describe, expect, it } from 'vitest'
import { createHarness } from './controller-harness.js'

describe('kill after dispose() gave up on one stop while another is still under way', () => {
  it('dispatches a forced shutdown and answers true at once, not only once every stop of the disposal settled', async () => {
    const h = createHarness()
    const failing = await h.run(h.controller.spawn({}))
    const slow = await h.run(h.controller.spawn({}))
    h.provider.setShutdownBehaviour(failing.id, 'fail')
    h.provider.setShutdownBehaviour(slow.id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    // Disposal gave up on `failing` (its stop is over, unverified); `slow`'s stop still waits.
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause])).toEqual([[failing.id, { kind: 'unknown', reason: 'stop_unverified' }]])
    expect(h.controller.stopAndWait(slow.id) instanceof Promise).toBe(true)
    h.provider.setShutdownBehaviour(failing.id, 'confirm')
    const before = h.provider.calls.filter((call) => call.method === 'shutdown').length
    expect(h.controller.kill(failing.id)).toBe(true)
    await h.settle()
    expect(h.provider.calls.filter((call) => call.method === 'shutdown').slice(before).map((call) => [...call.args])).toEqual([
      [failing.id, { expectedIncarnationId: failing.incarnationId, immediate: true }],
    ])
    expect(h.provider.getPty(failing.id)?.live).toBe(false)
    h.provider.emitExit(slow.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
  })
})
