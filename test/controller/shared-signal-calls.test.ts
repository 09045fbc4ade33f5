/**
 * One long-lived signal (the app's, a window's) passed to every call that takes one: each call in
 * flight added an abort listener of its own to it — `stopAndWait`, `attach`, a spawn waiting for a
 * stop of its session, listings, renderer-serializer waits — so with eleven of them in flight at
 * once (an orchestrator stopping its agents, a window re-attaching its tabs) Node warned
 * `MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11 abort listeners
 * added to [AbortSignal]`, a false alarm. `output()` iterators already shared one listener per
 * signal (output-shared-signal.test.ts); every other wait on a caller's signal now does too.
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { maxListenersWarnings } from '../support/max-listeners-warnings.js'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

const CALLS = 30

const maxListeners = maxListenersWarnings()

/** A fake whose attach-only spawns and listings answer only at `answer()` (so the calls stay in flight until then). */
function slowProvider() {
  const fake = createFakePtyProvider()
  const held: (() => void)[] = []
  let holding = true
  const provider: PtyProvider = {
    ...fake,
    spawn: (options) => (holding && options.attachOnly === true ? new Promise((_, reject) => held.push(() => reject(new Error('absent')))) : fake.spawn(options)),
    listProcesses: (options) => (holding ? new Promise((resolve) => held.push(() => resolve([]))) : fake.listProcesses(options)),
  }
  const answer = (): void => {
    holding = false
    for (const release of held.splice(0)) release()
  }
  return { fake, provider, answer }
}

describe('calls in flight on one shared signal', () => {
  it('hold one abort listener between them, and each still ends at the abort', async () => {
    maxListeners.watch()
    const { fake, provider, answer } = slowProvider()
    const controller = createPtyController({ provider })
    const app = new AbortController()
    const { signal } = app
    const listeners = (): number => getEventListeners(signal, 'abort').length

    // Stops that nobody confirms: each `stopAndWait` waits for its deadline or the signal.
    const stopped = await Promise.all(Array.from({ length: CALLS }, () => controller.spawn({})))
    for (const { id } of stopped) fake.setShutdownBehaviour(id, 'never_confirm')
    const stops = stopped.map(({ id }) => controller.stopAndWait(id, { timeoutMs: 600_000, signal }))
    // A spawn of a session id whose PTY is being stopped waits for that stop to settle.
    const sessions = await Promise.all(Array.from({ length: CALLS }, (_, i) => controller.spawn({ sessionId: `session-${i}` })))
    for (const { id } of sessions) {
      fake.setShutdownBehaviour(id, 'never_confirm')
      controller.kill(id)
    }
    const respawns = sessions.map(({ id }) => controller.spawn({ sessionId: id, signal }))
    const attaches = Array.from({ length: CALLS }, (_, i) => controller.attach(`elsewhere-${i}`, { signal }))
    const listings = Array.from({ length: CALLS }, () => controller.listProcessesWithHostScope({ timeoutMs: 600_000, signal }))
    const renderers = stopped.map(({ id }) => controller.waitForRendererSerializer(id, 0, 600_000, signal))
    await new Promise((resolve) => setTimeout(resolve, 10))

    expect(listeners()).toBe(1)
    expect(await maxListeners.seen()).toEqual([])

    app.abort()
    expect(await Promise.all(stops)).toEqual(stops.map(() => false))
    for (const respawn of await Promise.allSettled(respawns)) expect(respawn).toMatchObject({ status: 'rejected', reason: { code: 'client_disconnected' } })
    expect(await Promise.all(attaches)).toEqual(attaches.map(() => false))
    // An aborted listing of the only host fails, naming the abort.
    for (const listing of await Promise.allSettled(listings)) expect(listing).toMatchObject({ status: 'rejected', reason: { code: 'listing_failed', message: expect.stringContaining('aborted') } })
    expect(await Promise.all(renderers)).toEqual(renderers.map(() => false))
    expect(listeners()).toBe(0)
    answer()
    for (const { id } of [...stopped, ...sessions]) fake.setShutdownBehaviour(id, 'confirm')
    await controller.dispose()
  })

  it('lets go of the signal as each call ends on its own', async () => {
    const fake = createFakePtyProvider()
    const controller = createPtyController({ provider: fake })
    const { signal } = new AbortController()
    const ptys = await Promise.all(Array.from({ length: CALLS }, () => controller.spawn({})))
    const stops = ptys.map(({ id }) => controller.stopAndWait(id, { timeoutMs: 600_000, signal }))
    const listings = Array.from({ length: CALLS }, () => controller.listProcessesWithHostScope({ signal }))
    expect(await Promise.all(stops)).toEqual(stops.map(() => true))
    await Promise.all(listings)
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    await controller.dispose()
  })
})
