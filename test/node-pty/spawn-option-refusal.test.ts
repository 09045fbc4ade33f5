import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, isNodePtyOptionError, type NodePtyProvider } from 'ptykit/node-pty'
import { isPtySpawnError } from 'ptykit/spawn'
import { expectNoChildLeftBehind } from './pty-test-support.js'

const provider: NodePtyProvider = createNodePtyProvider()
const controller: PtyController = createPtyController({ provider })

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

describe('options the provider refuses before starting a process', () => {
  it.each([
    ['file', { file: '/nonexistent/ptykit-no-such-shell' }],
    ['cwd', { cwd: '/nonexistent/ptykit-no-such-dir' }],
    ['cols', { cols: 70_000 }],
  ] as const)('a bad `%s` is invalid_spawn_options naming the option, not provider_spawn_failed', async (option, options) => {
    const error = await controller.spawn(options).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_spawn_options', outcome: 'not_started' })
    expect(String((error as Error).cause)).toContain(`\`${option}\``)
    if (option !== 'cols') {
      // Refused by the provider: the option's name is on the error, its refusal the cause.
      expect(error).toMatchObject({ option })
      expect(isNodePtyOptionError((error as Error).cause)).toBe(true)
    }
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
  })
})
