/**
 * The table of calls after a provider's `detach()` (docs/controller.md), on a real pty host with
 * real PTYs (node-pty in the host process): each controller call answers what is still true, and
 * every session still runs for the next app. The same table over the fake provider, call by call:
 * calls-after-provider-detach.test.ts.
 */
import { createPtyController, type PtyControllerError, type PtyControllerExitEvent } from 'ptykit/controller'
import { describe, expect, it } from 'vitest'
import { hostFixture, isAlive, providerOn, useCleanups } from '../pty-host/pty-host-test-support.js'

const cleanups = useCleanups()

describe('a controller over a pty host provider after its detach()', () => {
  it('answers each call as documented: attach false (no output streams here), queries null, inspectProcess unavailable, stops refused, one error', async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose({ stopPtys: false }))
    const errors: PtyControllerError[] = []
    const exits: PtyControllerExitEvent[] = []
    controller.on('error', (error) => errors.push(error))
    controller.on('exit', (event) => exits.push(event))
    const [kept, killed] = await Promise.all([controller.spawn({ file: 'cat' }), controller.spawn({ file: 'cat' })])
    // Attached before the detach: the provider vouches for it.
    expect(await controller.attach(kept.id)).toBe(true)
    await provider.detach()

    // The first call after the detach: the controller has not heard of it yet, the provider's hasPty says "unknown".
    expect(await controller.attach(kept.id)).toBe(false)
    expect(await controller.attach('never-spawned')).toBe(false)
    expect(controller.writeWithSettlement(kept.id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(controller.resize(kept.id, 100, 30)).toBe(false)
    expect(controller.hasPty(kept.id)).toBeNull()
    expect([await controller.probePtyLiveness(kept.id), await controller.getCwd(kept.id), await controller.getForegroundProcess(kept.id), await controller.serializeProviderBuffer(kept.id)]).toEqual([null, null, null, null])
    expect(await controller.inspectProcess(kept.id)).toEqual({ foregroundProcess: null, hasChildProcesses: null, unavailable: true })
    expect(errors).toEqual([])
    // The provider refuses a clear after its detach (the host keeps the screen): the controller's
    // clearBuffer still resolves, and that refusal is the first to report the detach, once.
    await expect(controller.clearBuffer(kept.id)).resolves.toBeUndefined()
    expect(errors.map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['provider_threw', 'provider_detached']])
    await expect(controller.listProcesses()).rejects.toMatchObject({ code: 'listing_failed', cause: { code: 'provider_detached' } })
    await expect(controller.spawn({ file: 'cat' })).rejects.toMatchObject({ cause: { code: 'provider_detached' } })
    expect(controller.kill(killed.id)).toBe(true)
    expect(await controller.stopAndWait(kept.id, { deadlineMs: Date.now() + 600_000 })).toBe(false)
    expect(exits.map((exit) => [exit.ptyId, exit.cause.kind === 'unknown' ? exit.cause.reason : exit.cause.kind]).sort()).toEqual(
      [
        [kept.id, 'stop_unverified'],
        [killed.id, 'stop_unverified'],
      ].sort(),
    )
    expect(errors.map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['provider_threw', 'provider_detached']])
    // Nothing was stopped: the sessions run on for the next app.
    expect(isAlive(kept.pid!) && isAlive(killed.pid!)).toBe(true)
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    expect((await next.attach(kept.id)).pid).toBe(kept.pid)
  }, 30_000)
})
