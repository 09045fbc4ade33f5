import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

// One provider object registered under two host ids: every listing reported each of its PTYs twice,
// as running on both hosts (`listProcesses()` gave `[['p-1', 'local'], ['p-1', 'ssh:box']]` for one
// process). A registry of hosts needs one provider per host: refused as a TypeError naming the key.
describe('one provider under two host ids', () => {
  it('is refused when the controller is created', () => {
    const provider = createFakePtyProvider({ idPrefix: 'p-' })
    expect(() => createPtyController({ providers: { local: provider, 'ssh:box': provider } })).toThrow(
      'Expected `providers["ssh:box"]` to be a provider of its own, got the provider already registered as "local"',
    )
    expect(() => createPtyController({ providers: new Map([['local', provider], ['ssh:box', provider]]) })).toThrow(TypeError)
  })

  it('two providers of their own are fine, and each PTY is listed once', async () => {
    const local = createFakePtyProvider({ idPrefix: 'l-' })
    const remote = createFakePtyProvider({ idPrefix: 'r-' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    await controller.spawn({ hostId: 'ssh:box' })
    expect((await controller.listProcesses()).map((row) => [row.id, row.hostId])).toEqual([['r-1', 'ssh:box']])
    await controller.dispose()
  })
})
