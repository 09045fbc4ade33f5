/**
 * Race tests with fc.scheduler: the provider's spawn reply, its output and exit, and the host's kill
 * land in every order, and the controller's event stream must stay consistent.
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
  it('keeps spawn → data → exit order, and settles the exit by who came first, in every interleaving', async () => {
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
          const spawning = controller.spawn({}).then(
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
          const performed = actions.map((action) =>
            s.schedule(Promise.resolve(action), action).then(() => {
              const live = fake.getPty('p')?.live === true
              if (action === 'data' && live) {
                fake.emitData('p', 'x')
                emittedData += 1
              } else if (action === 'exit' && live) {
                fake.emitExit('p', { exitCode: 0, signal: 9 })
                exitedByProvider = true
              } else if (action === 'kill') {
                if (controller.kill('p') && !exitedByProvider) stopMarkedBeforeExit = true
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
  })
})
