// What a spawn's `spawn_failed` says when node-pty throws. node-pty 1.1's `forkpty(3) failed.`
// drops errno, so the provider asks what ran out (fork-failure.ts) — but only a failed fork is a
// fork failure: another throw must not be blamed on a process limit.
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import type { NodePtyModule } from '../../src/node-pty/node-pty-module.js'

function providerWhoseSpawnThrows(error: Error) {
  const module = {
    spawn: () => {
      throw error
    },
  } as unknown as NodePtyModule
  return createNodePtyProvider({ platform: 'linux', loadNodePty: () => Promise.resolve(module), killOnProcessExit: false })
}

describe('spawn_failed when node-pty throws', () => {
  it('a failed fork says what it found right after (here: nothing ran out, so the fork itself)', async () => {
    const provider = providerWhoseSpawnThrows(new Error('forkpty(3) failed.'))
    const refused = await provider.spawn({ file: '/bin/sh' }).then(() => null, (error: unknown) => error as Error)
    expect(refused?.message).toMatch(/forkpty\(3\) failed\. \(.*the fork itself likely failed/)
    await provider.dispose()
  })

  it('a throw that is no fork failure is not blamed on a process limit', async () => {
    const provider = providerWhoseSpawnThrows(new TypeError('Cannot convert a Symbol value to a string'))
    const refused = await provider.spawn({ file: '/bin/sh' }).then(() => null, (error: unknown) => error as Error)
    expect(refused?.message).toContain('Cannot convert a Symbol value to a string')
    expect(refused?.message).not.toMatch(/fork itself|process limit|EAGAIN/)
    await provider.dispose()
  })
})
