import { setTimeout as settle } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, isAlive, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('detach() and dispose() overlapping', () => {
  // detach() began first: the sessions it keeps must not be stopped by a dispose() called while it
  // waits for the spawns in flight (as they are not by a dispose() after a detach that finished, and
  // as they were not before c7aadc4, whose detach closed the link in the caller's turn).
  it('a dispose() called while a detach waits for a spawn in flight stops nothing', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const kept = await app.spawn({ file: 'cat' })
    const spawning = app.spawn({ file: 'cat' })
    const detaching = app.detach()
    const disposing = app.dispose()
    const spawned = await spawning
    await Promise.all([detaching, disposing])
    await settle(500)
    expect({ kept: isAlive(kept.pid!), spawned: isAlive(spawned.pid!) }).toEqual({ kept: true, spawned: true })
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.detach())
    expect((await next.listProcesses()).map((row) => row.id).sort()).toEqual([kept.id, spawned.id].sort())
  }, 30_000)

  // The same calls with nothing in flight keep both sessions already (the detach's close wins by a
  // microtask): the outcome of `detach(); dispose()` must not depend on whether a spawn was in flight.
  it('control: a dispose() right after a detach() with nothing in flight stops nothing', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const kept = await app.spawn({ file: 'cat' })
    const detaching = app.detach()
    const disposing = app.dispose()
    await Promise.all([detaching, disposing])
    await settle(500)
    expect(isAlive(kept.pid!)).toBe(true)
  }, 30_000)

  // dispose() began first: "nothing may outlive the dispose" (its TSDoc). A detach() called while it
  // stops the app's sessions closes the connection under it (a microtask later, nothing in flight),
  // and the stops never go out.
  it('a detach() called while a dispose() stops the sessions does not keep them running', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const owned = await app.spawn({ file: 'cat' })
    const disposing = app.dispose()
    const detaching = app.detach()
    await Promise.all([detaching, disposing])
    // Gone within seconds (a hang-up ends `cat`); kept running, never.
    await waitFor(() => (isAlive(owned.pid!) ? undefined : true), 'the owned session to be stopped', 5_000)
  }, 30_000)
})
