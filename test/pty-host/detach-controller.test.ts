import { setTimeout as settle } from 'node:timers/promises'
import { createPtyController } from 'ptykit/controller'
import type { PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { hostFixture, isAlive, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** Calls `whenSent` right after the provider's `count`-th spawn call returned (its request is queued then). */
function onSpawnCalls(provider: PtyHostProvider, count: number, whenSent: () => void): void {
  const spawn = provider.spawn.bind(provider)
  let calls = 0
  provider.spawn = (options) => {
    const pending = spawn(options)
    if (++calls === count) whenSent()
    return pending
  }
}

describe('detach during spawns through a controller', () => {
  it('the documented sequence (await detach, then dispose stopPtys:false) with spawns in flight: each published, none exited, all running', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const controller = createPtyController({ provider: app })
    const events: string[] = []
    controller.on('spawn', ({ ptyId }) => events.push(`spawn ${ptyId}`))
    controller.on('exit', ({ ptyId, cause }) => events.push(`exit ${ptyId} ${JSON.stringify(cause)}`))
    controller.on('error', (error) => events.push(`error ${error.code}`))
    const kept = await controller.spawn({ file: 'cat' })
    let detaching: Promise<void> | null = null
    onSpawnCalls(app, 5, () => (detaching = app.detach()))
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => controller.spawn({ file: 'cat' })))
    expect(detaching).not.toBeNull()
    await detaching
    await controller.dispose({ stopPtys: false })
    const spawned = outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))
    expect(spawned.every((reply) => typeof reply === 'object')).toBe(true)
    const replies = [kept, ...(spawned as (typeof kept)[])]
    expect(events.sort()).toEqual(replies.map((reply) => `spawn ${reply.id}`).sort())
    for (const reply of replies) expect(isAlive(reply.pid!)).toBe(true)
  }, 30_000)

  // The controller's own commit hook failure is rolled back by the controller (a shutdown) after
  // provider.spawn resolved; the detach closes the connection as soon as that promise settles, so
  // the rollback's stop never goes out: the caller is told commit_failed, the process runs on, and
  // no app knows of it.
  it('a controller spawn whose onPtySpawnCommitted throws while a detach waits leaves no process running', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose({ stopPtys: false }))
    await controller.spawn({ file: 'cat' })
    let detaching: Promise<void> | null = null
    onSpawnCalls(app, 1, () => (detaching = app.detach()))
    const failure = await controller
      .spawn({
        file: 'cat',
        onPtySpawnCommitted: () => {
          throw new Error('the app no longer wants it')
        },
      })
      .then(
        () => null,
        (error: { code?: string; ptyId?: string; shutdownOutcome?: string }) => error,
      )
    expect(detaching).not.toBeNull()
    await detaching
    expect(failure?.code).toBe('commit_failed')
    const ptyId = failure!.ptyId!
    await settle(500)
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.detach())
    const listed = (await next.listProcesses()).map((row) => row.id)
    expect({ orphanRunning: listed.includes(ptyId), failure: { code: failure?.code, outcome: (failure as Record<string, unknown>).outcome } }).toEqual({
      orphanRunning: false,
      failure: { code: 'commit_failed', outcome: 'rolled_back' },
    })
  }, 30_000)
})
