// A host's test of its controller after the provider's detach(), with the fake's own detach() —
// no hand-made imitation: every answer of docs/controller.md ("After a provider's detach()")
// holds, as it does over the pty host (test/controller/calls-after-provider-detach-pty-host.test.ts).
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError, type PtyControllerExitEvent } from 'ptykit/controller'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'

const STOP_UNVERIFIED = { kind: 'unknown', reason: 'stop_unverified' }

async function detachedWithPtys(count: number) {
  const provider = createFakePtyProvider({ scheduling: 'manual' })
  const clock = createManualClock()
  const controller = createPtyController({ provider, clock })
  const exits: PtyControllerExitEvent[] = []
  const errors: PtyControllerError[] = []
  controller.on('exit', (event) => exits.push(event))
  controller.on('error', (event) => errors.push(event))
  const ids: string[] = []
  for (let index = 0; index < count; index++) ids.push((await controller.spawn({})).id)
  await provider.detach()
  return { provider, clock, controller, exits, errors, ids }
}

describe('a controller over the fake, after fake.detach()', () => {
  it("answers every call as the controller guide's table says; the detach is reported once", async () => {
    const { provider, clock, controller: c, exits, errors, ids } = await detachedWithPtys(3)
    const [id, stopped, killed] = ids as [string, string, string]
    // Before the controller heard of the detach: blind, not broken.
    expect(await c.attach(id)).toBe(false)
    expect(c.write(id, 'x', 'driving')).toBe(false)
    expect(c.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(c.writeWithSettlement(id, new Uint8Array([0x78]), 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(c.resize(id, 100, 30)).toBe(false)
    expect(c.getSize(id)).toEqual({ cols: 80, rows: 24 })
    expect(c.acknowledgeData(id, 1)).toBeUndefined()
    expect(c.hasPty(id)).toBeNull()
    expect(await c.probePtyLiveness(id)).toBeNull()
    expect(await c.getCwd(id)).toBeNull()
    expect(await c.getForegroundProcess(id)).toBeNull()
    expect(await c.hasChildProcesses(id)).toBeNull()
    expect(await c.inspectProcess(id)).toEqual({ foregroundProcess: null, hasChildProcesses: null, unavailable: true })
    expect(await c.confirmForegroundProcess(id)).toBeNull()
    expect(await c.confirmShellForeground(id)).toBe(false)
    expect(await c.serializeProviderBuffer(id)).toBeNull()
    await expect(c.resetInputModes(id)).resolves.toBeUndefined()
    expect(await c.supportsForegroundProcessEvidence()).toBe(true)
    expect(errors).toEqual([])
    expect(c.inventory().allLivePtyIds.has(id)).toBe(true)
    // Refused: an answer would be a guess.
    await expect(c.listProcesses()).rejects.toMatchObject({ code: 'listing_failed', cause: { code: 'provider_detached' } })
    await expect(c.listProcessesWithHostScope()).rejects.toMatchObject({ code: 'listing_failed' })
    await expect(c.spawn({})).rejects.toMatchObject({ code: 'provider_spawn_failed', cause: { code: 'provider_detached', method: 'spawn' } })
    // A stop: false at the refusal (no exit will come), never at its deadline.
    const startedAt = clock.now()
    expect(await c.stopAndWait(stopped, { timeoutMs: 600_000 })).toBe(false)
    expect(clock.now()).toBe(startedAt)
    expect(c.kill(killed)).toBe(true)
    await provider.settle()
    expect(exits.map((exit) => [exit.ptyId, exit.cause])).toEqual([
      [stopped, STOP_UNVERIFIED],
      [killed, STOP_UNVERIFIED],
    ])
    expect(c.inventory().exitingPtyIds?.has(killed)).toBe(true)
    expect(await c.attach(killed)).toBe(false)
    // Reported once for the provider, not per call.
    expect(errors.map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['listing_failed', 'provider_detached']])
    // The provider refuses a clear (the host keeps the screen): the controller's resolves doing
    // nothing, the detach already said.
    await expect(c.clearBuffer(id)).resolves.toBeUndefined()
    expect(errors).toHaveLength(1)
    // The processes run on: the fake stopped none of them.
    expect(provider.livePtyIds().sort()).toEqual([...ids].sort())
    await c.dispose({ stopPtys: false })
    expect(errors).toHaveLength(1)
    expect(provider.livePtyIds().sort()).toEqual([...ids].sort())
  })

  it('a plain controller.dispose() stops each PTY: each stop refused, each published stop_unverified, one error', async () => {
    const { provider, controller, exits, errors, ids } = await detachedWithPtys(3)
    await controller.dispose()
    expect(exits.map((exit) => exit.cause)).toEqual(ids.map(() => STOP_UNVERIFIED))
    expect(errors.map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['shutdown_failed', 'provider_detached']])
    expect(provider.livePtyIds()).toHaveLength(3)
  })

  it('a PTY whose exit the controller saw before the detach stays exited; nothing the detached fake cannot see reaches the controller', async () => {
    const { provider, controller, exits, ids } = await (async () => {
      const provider = createFakePtyProvider({ scheduling: 'manual' })
      const controller = createPtyController({ provider, clock: createManualClock() })
      const exits: PtyControllerExitEvent[] = []
      controller.on('exit', (event) => exits.push(event))
      const ids = [(await controller.spawn({})).id, (await controller.spawn({})).id]
      return { provider, controller, exits, ids }
    })()
    const [ended, running] = ids as [string, string]
    provider.emitExit(ended, { exitCode: 0 })
    await provider.detach()
    expect(controller.hasPty(ended)).toBe(false)
    expect(controller.hasPty(running)).toBeNull()
    expect(exits.map((exit) => exit.ptyId)).toEqual([ended])
    expect(await controller.stopAndWait(ended, { timeoutMs: 1_000 })).toBe(true)
    await controller.dispose({ stopPtys: false })
  })
})
