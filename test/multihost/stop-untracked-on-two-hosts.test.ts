import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

// `stopAndWait(id)` of an id this controller does not track asks every host. When two hosts hold a
// PTY under that id (another app's tabs, one local and one remote), it stopped only the first
// host that listed it and answered `true` while the second still ran it: `hasPty(id)` said `true`
// right after a verified stop.
describe('stopAndWait of an untracked id held by two hosts', () => {
  it('stops it on every host that holds it before answering true', async () => {
    const local = createFakePtyProvider({ idPrefix: 'l-' })
    const remote = createFakePtyProvider({ idPrefix: 'r-', hostId: 'ssh:box' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    await local.spawn({ sessionId: 'tab-1' })
    await remote.spawn({ sessionId: 'tab-1' })
    await expect(controller.stopAndWait('tab-1', { timeoutMs: 2_000 })).resolves.toBe(true)
    expect(local.livePtyIds()).toEqual([])
    expect(remote.livePtyIds()).toEqual([])
    expect(controller.hasPty('tab-1')).toBe(false)
    await controller.dispose()
  })

  it('answers false when one of the two hosts cannot stop it, and still stops the other', async () => {
    const local = createFakePtyProvider({ idPrefix: 'l-' })
    const remote = createFakePtyProvider({ idPrefix: 'r-', hostId: 'ssh:box' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    controller.on('error', () => undefined)
    await local.spawn({ sessionId: 'tab-1' })
    await remote.spawn({ sessionId: 'tab-1' })
    local.setShutdownBehaviour('tab-1', 'fail')
    await expect(controller.stopAndWait('tab-1', { timeoutMs: 2_000 })).resolves.toBe(false)
    expect(local.livePtyIds()).toEqual(['tab-1'])
    expect(remote.livePtyIds()).toEqual([])
    await controller.dispose()
  })
})
