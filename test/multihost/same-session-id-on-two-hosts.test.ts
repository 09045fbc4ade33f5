import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

// A terminal app with a local tab and a remote tab that reuse one `sessionId`: the controller keeps
// one record per id, so a second live PTY under that id on another host must be refused — not
// silently replace the first host's record, which orphaned a running process (untracked, never
// stopped by `dispose()`, every later call routed to the other host).
function twoHosts() {
  const local = createFakePtyProvider({ idPrefix: 'l-' })
  const remote = createFakePtyProvider({ idPrefix: 'r-', hostId: 'ssh:box' })
  const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
  return { local, remote, controller }
}

describe('one sessionId on two hosts', () => {
  it('refuses a spawn of a sessionId live on another host, and leaves the first PTY tracked', async () => {
    const { local, remote, controller } = twoHosts()
    await controller.spawn({ sessionId: 'same' })
    const refused = await controller.spawn({ sessionId: 'same', hostId: 'ssh:box' }).catch((error: unknown) => error)
    expect(isPtySpawnError(refused) && [refused.code, refused.outcome, refused.ptyId]).toEqual(['invalid_spawn_options', 'not_started', 'same'])
    expect(remote.livePtyIds()).toEqual([])
    expect(controller.inventory().terminalIdentityByPtyId.get('same')?.hostId).toBe('local')
    expect(controller.write('same', 'x', 'driving')).toBe(true)
    expect(local.getPty('same')?.written).toBe('x')
    await controller.dispose()
    expect(local.livePtyIds()).toEqual([])
  })

  it('refuses the second of two concurrent spawns of one sessionId on two hosts', async () => {
    const { local, remote, controller } = twoHosts()
    const results = await Promise.allSettled([
      controller.spawn({ sessionId: 'same' }),
      controller.spawn({ sessionId: 'same', hostId: 'ssh:box' }),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected'])
    expect(local.livePtyIds()).toEqual(['same'])
    expect(remote.livePtyIds()).toEqual([])
    await controller.dispose()
    expect(local.livePtyIds()).toEqual([])
  })

  it('a restart on another host (kill, then spawn the id there) is allowed once the stop settled', async () => {
    const { local, remote, controller } = twoHosts()
    await controller.spawn({ sessionId: 'same' })
    controller.kill('same')
    const reply = await controller.spawn({ sessionId: 'same', hostId: 'ssh:box' })
    expect(reply.hostId).toBe('ssh:box')
    expect(local.livePtyIds()).toEqual([])
    expect(remote.livePtyIds()).toEqual(['same'])
    await controller.dispose()
    expect(remote.livePtyIds()).toEqual([])
  })

  it('a restart on another host waits for the first host\'s stop to settle (never two live records)', async () => {
    const { local, remote, controller } = twoHosts()
    await controller.spawn({ sessionId: 'same' })
    local.setShutdownBehaviour('same', 'never_confirm')
    controller.kill('same')
    let settled = false
    const respawn = controller.spawn({ sessionId: 'same', hostId: 'ssh:box' }).finally(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(settled).toBe(false)
    expect(remote.livePtyIds()).toEqual([])
    local.emitExit('same', { exitCode: 0 })
    await expect(respawn).resolves.toMatchObject({ id: 'same', hostId: 'ssh:box' })
    expect(controller.inventory().terminalIdentityByPtyId.get('same')?.hostId).toBe('ssh:box')
    await controller.dispose()
    expect(remote.livePtyIds()).toEqual([])
  })

  it('an attach of an id being spawned on another host answers false', async () => {
    const { remote, controller } = twoHosts()
    await remote.spawn({ sessionId: 'same' })
    const spawning = controller.spawn({ sessionId: 'same' })
    await expect(controller.attach('same', { hostId: 'ssh:box' })).resolves.toBe(false)
    await expect(spawning).resolves.toMatchObject({ hostId: 'local' })
    expect(controller.inventory().terminalIdentityByPtyId.get('same')?.hostId).toBe('local')
    await controller.dispose()
  })
})
