/**
 * A handle's refused write names the true reason: `stale_incarnation` only when the id names
 * another process now; a handle whose PTY ended and that nothing replaced is refused `pty_exited`,
 * also once the controller has forgotten the id among more than EXITED_PTY_RECORDS_KEPT later exits.
 */
import { describe, expect, it } from 'vitest'
import { EXITED_PTY_RECORDS_KEPT } from '../../src/controller/pty-record.js'
import { createHarness } from './controller-harness.js'

describe("a terminal handle's write after its PTY ended", () => {
  it('is refused pty_exited, not stale_incarnation, after the controller forgot the ended id', async () => {
    const h = createHarness()
    const first = await h.controller.spawnTerminal({})
    h.provider.emitExit(first.id, { exitCode: 0 })
    expect(first.writeWithSettlement('late')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    for (let i = 0; i < EXITED_PTY_RECORDS_KEPT + 1; i++) {
      const { id } = await h.controller.spawn({})
      h.provider.emitExit(id, { exitCode: 0 })
    }
    expect(h.controller.hasPty(first.id), 'the controller forgot the first id').not.toBe(true)
    expect(first.writeWithSettlement('late')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(first.write('late')).toBe(false)
    await h.controller.dispose()
  })

  it('is refused stale_incarnation when the id names another process now', async () => {
    const h = createHarness()
    const first = await h.controller.spawnTerminal({ sessionId: 'reused' })
    h.provider.emitExit(first.id, { exitCode: 0 })
    const second = await h.controller.spawnTerminal({ sessionId: 'reused' })
    expect(second.id).toBe(first.id)
    expect(first.writeWithSettlement('late')).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
    expect(second.writeWithSettlement('mine')).toEqual({ kind: 'accepted' })
    await h.controller.dispose()
  })
})
