/**
 * A hand-written provider whose `spawn` answers a malformed reply (helper-110's audit: `{ id: 42 }`
 * was published, and no call took that id again): the spawn fails `provider_spawn_failed`, naming
 * the field and the value, and whatever the provider started is stopped again.
 */
import { describe, expect, it } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { isPtySpawnError, type PtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/**
 * The fake, whose spawn replies are passed through `mangle` — and which, like a provider that
 * really uses such ids, takes the id it answered back in `shutdown`.
 */
function providerReplying(mangle: (reply: Record<string, unknown>) => unknown): { provider: PtyProvider; fake: ReturnType<typeof createFakePtyProvider> } {
  const fake = createFakePtyProvider()
  const ownIds = new Map<unknown, string>()
  const provider: PtyProvider = Object.create(fake) as PtyProvider
  ;(provider as { spawn: PtyProvider['spawn'] }).spawn = async (options) => {
    const reply = await fake.spawn(options)
    const answered = mangle({ ...reply })
    if (typeof answered === 'object' && answered !== null) ownIds.set((answered as { id?: unknown }).id, reply.id)
    return answered as never
  }
  ;(provider as { shutdown: PtyProvider['shutdown'] }).shutdown = (id, options) => fake.shutdown(ownIds.get(id) ?? id, options)
  return { provider, fake }
}

describe('a provider spawn reply the controller cannot build on', () => {
  it.each([
    ['a number id', (r: Record<string, unknown>) => ({ ...r, id: 42 }), '`id` to be a non-empty string, got 42 (number)'],
    ['a number incarnationId', (r: Record<string, unknown>) => ({ ...r, incarnationId: 5 }), '`incarnationId` to be absent, or a string of 1–128 characters, got 5 (number)'],
    ['a string pid', (r: Record<string, unknown>) => ({ ...r, pid: '123' }), '`pid` to be absent, null, or a positive integer, got "123" (string)'],
    ['a string isReattach', (r: Record<string, unknown>) => ({ ...r, isReattach: 'no' }), '`isReattach` to be absent, or a boolean, got "no" (string)'],
    ['cols 0', (r: Record<string, unknown>) => ({ ...r, cols: 0 }), '`cols` to be absent, or an integer from 1 to 65535, got 0 (number)'],
  ])('%s: the spawn fails naming the field, publishes nothing, and the started process is stopped', async (_name, mangle, message) => {
    const { provider, fake } = providerReplying(mangle)
    const controller = createPtyController({ provider })
    const spawned: unknown[] = []
    controller.on('spawn', (event) => spawned.push(event))
    const error = (await controller.spawn({}).catch((e: unknown) => e)) as PtySpawnError
    expect(isPtySpawnError(error)).toBe(true)
    expect(error.code).toBe('provider_spawn_failed')
    expect(error.message).toBe(`Provider "fake" answered spawn with a malformed reply: expected ${message}`)
    expect(error.outcome).toBe('rolled_back')
    expect(spawned).toEqual([])
    expect(fake.livePtyIds()).toEqual([])
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
    await controller.dispose()
  })

  it('an empty id: the spawn fails naming it, outcome unknown (nothing to stop the process by)', async () => {
    const { provider, fake } = providerReplying((r) => ({ ...r, id: '' }))
    const controller = createPtyController({ provider })
    const error = (await controller.spawn({}).catch((e: unknown) => e)) as PtySpawnError
    expect(error.code).toBe('provider_spawn_failed')
    expect(error.message).toContain('expected `id` to be a non-empty string, got "" (string)')
    expect(error.outcome).toBe('unknown')
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
    await controller.dispose({ stopPtys: false })
    await fake.dispose()
  })

  it('no reply at all (undefined): the spawn fails naming it, outcome unknown (nothing to stop by)', async () => {
    const { provider } = providerReplying(() => undefined)
    const controller = createPtyController({ provider })
    const error = (await controller.spawn({}).catch((e: unknown) => e)) as PtySpawnError
    expect(error.code).toBe('provider_spawn_failed')
    expect(error.message).toBe('Provider "fake" answered spawn with a malformed reply: expected the reply to be an object ({ id, … }), got undefined (undefined)')
    expect(error.outcome).toBe('unknown')
    await controller.dispose({ stopPtys: false })
  })

  it('attach() of a PTY whose provider answers with a malformed incarnation id is false: no proof of the process', async () => {
    const { provider, fake } = providerReplying((r) => ({ ...r, incarnationId: 5 }))
    const { id } = await fake.spawn({})
    const controller = createPtyController({ provider })
    await expect(controller.attach(id)).resolves.toBe(false)
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
    await controller.dispose({ stopPtys: false })
    await fake.dispose()
  })
})
