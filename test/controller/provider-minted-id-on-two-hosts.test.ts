/**
 * Two hosts whose providers mint the same ids (two fakes without their own `idPrefix`, or two
 * providers of a host's own that count from 1): a spawn whose reply names an id the controller
 * tracks on the other host is refused `registration_refused` and rolled back — the process it
 * started stopped — and the other host's PTY stays tracked, so `dispose()` stops it. Before, the
 * reply took the id over: the first host's PTY ran on untracked, its events dropped, and
 * `dispose()` left it running.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

function twoHostsMintingTheSameIds() {
  const local = createFakePtyProvider()
  const remote = createFakePtyProvider({ hostId: 'ssh:box' })
  const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
  return { local, remote, controller }
}

describe('a provider-minted id the controller tracks on another host', () => {
  it('is refused registration_refused, the process it started is stopped, and the first host\'s PTY stays tracked and is stopped by dispose', async () => {
    const { local, remote, controller } = twoHostsMintingTheSameIds()
    const first = await controller.spawn({})
    const error = await controller.spawn({ hostId: 'ssh:box' }).catch((e: unknown) => e)
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'registration_refused', ptyId: first.id, outcome: 'rolled_back' })
    expect((error as Error).message).toBe(
      `Registration of PTY ${JSON.stringify(first.id)} on host "ssh:box" refused: a PTY under that id is tracked on host "local" (the providers of two hosts mint the same ids: give each its own id prefix)`,
    )
    expect(remote.getPty(first.id)?.live).toBe(false)
    expect(controller.terminal(first.id)?.hostId).toBe('local')
    expect(controller.hasPty(first.id)).toBe(true)
    await controller.dispose()
    expect(local.getPty(first.id)?.live).toBe(false)
  })

  it('once the first host\'s PTY ended, the id is the other host\'s to take', async () => {
    const { local, remote, controller } = twoHostsMintingTheSameIds()
    const first = await controller.spawn({})
    local.emitExit(first.id, { exitCode: 0 })
    await new Promise((resolve) => setImmediate(resolve))
    const second = await controller.spawn({ hostId: 'ssh:box' })
    expect(second.id).toBe(first.id)
    expect(controller.terminal(second.id)?.hostId).toBe('ssh:box')
    await controller.dispose()
    expect(remote.getPty(second.id)?.live).toBe(false)
  })
})
