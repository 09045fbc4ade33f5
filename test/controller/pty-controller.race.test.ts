/**
 * Race tests with fc.scheduler: the provider's spawn reply, its output and exit, and the host's kill
 * land in every order, and the controller's event stream must stay consistent; and stops, kills,
 * aborts and the provider's shutdowns of a PTY whose member outlives its leader land in every
 * order, and no `stopAndWait` answers `true` before a shutdown of it completed.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'

type Action = 'data' | 'exit' | 'kill'

describe('controller races', () => {
  // Without a `sessionId` the host cannot name the PTY before the reply: a `kill` until then
  // answers `false`. With one, a `kill` while the spawn is in flight answers `true` and stops the
  // process when it lands (unless it died first).
  for (const withSessionId of [false, true]) {
    const variant = withSessionId ? ' (spawn with a sessionId: a kill in flight stops it when it lands)' : ''
    it(`keeps spawn → data → exit order, and settles the exit by who came first, in every interleaving${variant}`, async () => {
      await raceProperty(withSessionId)
    })
  }
})

async function raceProperty(withSessionId: boolean): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc.scheduler(),
      fc.array(fc.constantFrom<Action>('data', 'data', 'exit', 'kill'), { minLength: 1, maxLength: 6 }),
      async (s, actions) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const provider: PtyProvider = {
          name: 'scheduled',
          authoritativeListings: true,
          spawn: (options) => s.schedule(fake.spawn(options), 'spawn reply'),
          write: (id, data) => fake.write(id, data),
          resize: (id, cols, rows) => fake.resize(id, cols, rows),
          shutdown: (id, options) => fake.shutdown(id, options),
          listProcesses: () => fake.listProcesses(),
          onData: (listener) => fake.onData(listener),
          onExit: (listener) => fake.onExit(listener),
        }
        const controller = createPtyController({ provider, clock: createManualClock() })
        const stream: string[] = []
        const exits: PtyControllerExitEvent[] = []
        controller.on('spawn', () => stream.push('spawn'))
        controller.on('data', () => stream.push('data'))
        controller.on('exit', (event) => {
          stream.push('exit')
          exits.push(event)
        })
        fake.scriptNextSpawn({ id: 'p' })
        let outcome: 'spawned' | 'rejected' | undefined
        const spawning = controller.spawn(withSessionId ? { sessionId: 'p' } : {}).then(
          () => {
            outcome = 'spawned'
          },
          (error: unknown) => {
            expect(isPtySpawnError(error) && error.code === 'exited_during_start').toBe(true)
            outcome = 'rejected'
          },
        )
        let emittedData = 0
        let stopMarkedBeforeExit = false
        let exitedByProvider = false
        /** A kill answered `true` before the spawn was published: the stop waits for it to land. */
        let killedInFlight = false
        /** The provider reported the exit before the spawn was published (held until then). */
        let exitedBeforePublished = false
        let killAnsweredTrue = false
        /** What each kill before the publication answered. */
        const answersBeforePublished: boolean[] = []
        const performed = actions.map((action) =>
          s.schedule(Promise.resolve(action), action).then(() => {
            const live = fake.getPty('p')?.live === true
            if (action === 'data' && live) {
              fake.emitData('p', 'x')
              emittedData += 1
            } else if (action === 'exit' && live) {
              if (!stream.includes('spawn')) exitedBeforePublished = true
              fake.emitExit('p', { exitCode: 0, signal: 9 })
              exitedByProvider = true
            } else if (action === 'kill') {
              const published = stream.includes('spawn')
              const answered = controller.kill('p')
              if (!published) answersBeforePublished.push(answered)
              if (answered) killAnsweredTrue = true
              if (answered && !exitedByProvider) {
                if (published) stopMarkedBeforeExit = true
                else killedInFlight = true
              }
            }
          }),
        )
        await s.waitAll()
        await Promise.all([spawning, ...performed])
        await fake.settle()

        if (outcome === 'rejected') {
          // The exit raced the reply: nothing of this PTY was published.
          expect(stream).toEqual([])
          return
        }
        // Before the publication the spawn was in flight: a kill then names a PTY only through the
        // spawn's `sessionId` — committed (`true`), or without one `false`.
        expect(answersBeforePublished.every((answered) => answered === withSessionId)).toBe(true)
        // A kill in flight is a stop when the spawn lands — unless the process died before that.
        if (killedInFlight && !exitedBeforePublished) stopMarkedBeforeExit = true
        // No kill answered `true` leaves the process running.
        if (killAnsweredTrue) expect(fake.getPty('p')?.live).toBe(false)
        expect(stream[0]).toBe('spawn')
        const exitAt = stream.indexOf('exit')
        expect(stream.filter((entry) => entry === 'exit').length).toBeLessThanOrEqual(1)
        if (exitAt >= 0) expect(stream.slice(exitAt + 1)).toEqual([])
        // Every chunk the process produced while it lived reached the consumer, before the exit.
        expect(stream.filter((entry) => entry === 'data')).toHaveLength(emittedData)
        if (exitedByProvider || stopMarkedBeforeExit) {
          expect(exits).toHaveLength(1)
          expect(exits[0]?.cause).toEqual(stopMarkedBeforeExit ? { kind: 'operator_close' } : { kind: 'signaled', signal: 9 })
        } else {
          expect(exits).toEqual([])
        }
      },
    ),
    { numRuns: 300 },
  )
}

type StopAction = 'stop' | 'kill' | 'abort'

describe('controller stop races: a member of the PTY outlives its leader', () => {
  // docs/controller.md, "stopAndWait: escalate and verify": `true` only when a shutdown completed and
  // the stop was verified — the provider's stop covers more than the leader. Here the leader dies of
  // the first stop's signal (its exit reported, and the fake no longer lists it), while a member of
  // the PTY (a `setsid` child that ignores the hang-up) lives until a shutdown of it completes; each
  // shutdown completes or gives up (`shutdown_timeout`), in every order with the stops, kills and
  // aborts. Until 8 Dec a `stopAndWait` that came once the leader's exit was in — after a stop that
  // answered `false`, a kill, or while another stop still escalated — answered `true` at once.
  it('answers stopAndWait true only once a shutdown of the PTY completed, in every interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom<StopAction>('stop', 'stop', 'kill', 'abort'), { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (s, actions, completions) => {
          const fake = createFakePtyProvider()
          let memberAlive = true
          let shutdowns = 0
          const provider: PtyProvider = {
            name: 'member-outlives-leader',
            authoritativeListings: true,
            spawn: (options) => fake.spawn(options),
            write: (id, data) => fake.write(id, data),
            resize: (id, cols, rows) => fake.resize(id, cols, rows),
            shutdown: (id, options) => {
              const completes = completions[shutdowns++ % completions.length]!
              // The leader dies of the signal at once (the fake reports its exit); the member only
              // when this shutdown completes.
              return s.schedule(fake.shutdown(id, options), `shutdown ${shutdowns} ${completes ? 'completes' : 'gives up'}`).then(() => {
                if (!completes) throw Object.assign(new Error('a member of the PTY is still alive'), { code: 'shutdown_timeout' })
                memberAlive = false
              })
            },
            listProcesses: () => fake.listProcesses(),
            onData: (listener) => fake.onData(listener),
            onExit: (listener) => fake.onExit(listener),
          }
          // A manual clock that is never advanced: no force delay, no deadline — stops end by a
          // shutdown's outcome or an abort.
          const controller = createPtyController({ provider, clock: createManualClock() })
          controller.on('error', () => undefined)
          fake.scriptNextSpawn({ id: 'p' })
          await controller.spawn({})
          const aborts: AbortController[] = []
          const verdicts: Promise<void>[] = []
          const trueWhileMemberAlive: number[] = []
          const performed = actions.map((action, index) =>
            s.schedule(Promise.resolve(action), action).then(() => {
              if (action === 'stop') {
                const abort = new AbortController()
                aborts.push(abort)
                verdicts.push(
                  controller.stopAndWait('p', { timeoutMs: 60_000, signal: abort.signal }).then((verdict) => {
                    if (verdict && memberAlive) trueWhileMemberAlive.push(index)
                  }),
                )
              } else if (action === 'kill') {
                controller.kill('p')
              } else {
                for (const abort of aborts.splice(0)) abort.abort()
              }
            }),
          )
          await s.waitAll()
          await Promise.all(performed)
          for (const abort of aborts.splice(0)) abort.abort()
          await s.waitAll()
          await Promise.all(verdicts)
          expect(trueWhileMemberAlive).toEqual([])
        },
      ),
      { numRuns: 300 },
    )
  })
})
