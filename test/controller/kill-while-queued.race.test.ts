/**
 * Race tests with fc.scheduler: a `kill(id)` lands at any point of a spawn queued behind its slot's
 * turn (a `claimSlotCreate` claim released at any point), or of an `attach` in flight, among the
 * provider's reply and the process's own exit. A `kill` before the spawn or attach settled answers
 * `true`, and then no process is left under the id: `true` is the truth about the process.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime, createInMemorySlotStore, type PtySlotOwner, type PtySlotStore } from '../../src/spawn/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'
import { createManualClock, type ManualClock } from '../../src/testing/manual-clock.js'

/** The fake, with each spawn reply (attach-only too) delivered when the scheduler says. */
function scheduledProvider(s: fc.Scheduler, fake: FakePtyProvider): PtyProvider {
  return {
    name: 'scheduled',
    authoritativeListings: true,
    spawn: (options) => s.schedule(fake.spawn(options), 'spawn reply'),
    write: (id, data) => fake.write(id, data),
    resize: (id, cols, rows) => fake.resize(id, cols, rows),
    shutdown: (id, options) => fake.shutdown(id, options),
    hasPty: (id) => fake.hasPty(id),
    listProcesses: () => fake.listProcesses(),
    onData: (listener) => fake.onData(listener),
    onExit: (listener) => fake.onExit(listener),
  }
}

type Action = 'kill' | 'exit'

/**
 * Schedule each action against `id`: `exit` ends its live process on its own (one `mayExit`
 * allows), `kill` asks the controller — which must answer `true` while the spawn or attach under
 * test has not settled. Returns the scheduled actions and what they did.
 */
function scheduleActions(
  s: fc.Scheduler,
  actions: readonly Action[],
  fake: FakePtyProvider,
  controller: PtyController,
  id: string,
  settled: () => boolean,
  mayExit: (incarnationId: string | undefined) => boolean = () => true,
): { performed: Promise<void>[]; seen: { killedWhileComing: boolean; exitedOnItsOwn: Set<string | undefined> } } {
  const seen = { killedWhileComing: false, exitedOnItsOwn: new Set<string | undefined>() }
  const performed = actions.map((action) =>
    s.schedule(Promise.resolve(action), action).then(() => {
      if (action === 'exit') {
        const pty = fake.getPty(id)
        if (pty?.live === true && mayExit(pty.incarnationId)) {
          fake.emitExit(id, { exitCode: 7 })
          seen.exitedOnItsOwn.add(pty.incarnationId)
        }
        return
      }
      const answer = controller.kill(id)
      if (!settled()) {
        expect(answer).toBe(true)
        seen.killedWhileComing = true
      }
    }),
  )
  return { performed, seen }
}

describe('kill races with a queued spawn or an attach in flight', () => {
  it('a spawn queued behind its slot: a kill before it settled answers true, and nothing is left running', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom<Action>('kill', 'kill', 'exit'), { minLength: 1, maxLength: 4 }), async (s, actions) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const controller = createPtyController({
          provider: scheduledProvider(s, fake),
          clock: createManualClock(),
          store: createInMemorySlotStore(),
          runtime: createInMemoryPtyRuntime(),
        })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        const release = controller.claimSlotCreate({ key: 'pane' })
        let settled = false
        const spawning = controller.spawn({ sessionId: 'p', slot: { key: 'pane' } }).then(
          () => undefined,
          () => undefined,
        ).finally(() => {
          settled = true
        })
        const { performed, seen } = scheduleActions(s, actions, fake, controller, 'p', () => settled)
        const released = s.schedule(Promise.resolve('release'), 'release the slot claim').then(() => release())
        await s.waitFor(Promise.all([spawning, released, ...performed]))
        await settleRace(s, fake, 2)
        if (seen.killedWhileComing) {
          expect(fake.livePtyIds()).toEqual([])
          // Its exit is the stop's, unless it died on its own first.
          if (seen.exitedOnItsOwn.size === 0) expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
        }
      }),
      { numRuns: 150 },
    )
  })

  it('an attach in flight: a kill before it settled answers true, and the attached PTY is not left running', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom<Action>('kill', 'kill', 'exit'), { minLength: 1, maxLength: 4 }), async (s, actions) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const controller = createPtyController({ provider: scheduledProvider(s, fake), clock: createManualClock() })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        // A PTY an earlier run of the app left on the host.
        await fake.spawn({ sessionId: 'q' })
        let settled = false
        let attached: boolean | undefined
        const attaching = controller.attach('q').then((answer) => {
          attached = answer
          settled = true
        })
        const { performed, seen } = scheduleActions(s, actions, fake, controller, 'q', () => settled)
        await s.waitFor(Promise.all([attaching, ...performed]))
        await settleRace(s, fake, 1)
        if (seen.killedWhileComing) {
          expect(fake.livePtyIds()).toEqual([])
          if (attached === true && seen.exitedOnItsOwn.size === 0) expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
        }
      }),
      { numRuns: 150 },
    )
  })

  it('a restart queued behind the stop of the previous PTY: a kill before it settled answers true, and nothing is left running', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom<Action>('kill', 'kill', 'exit'), { minLength: 1, maxLength: 4 }), async (s, actions) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const controller = createPtyController({ provider: scheduledProvider(s, fake), clock: createManualClock() })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        // The previous PTY dies when the scheduler says, not at its hang-up.
        fake.scriptNextSpawn({ id: 'r', shutdown: 'never_confirm' })
        const old = await s.waitFor(controller.spawn({ sessionId: 'r' }))
        await fake.settle()
        expect(controller.kill('r')).toBe(true)
        let settled = false
        let restarted: string | undefined
        const restarting = controller
          .spawn({ sessionId: 'r' })
          .then(
            (reply) => {
              restarted = reply.incarnationId
            },
            () => undefined,
          )
          .finally(() => {
            settled = true
          })
        // Only the restarted process may end on its own: the previous one ends when scheduled.
        const { performed, seen } = scheduleActions(s, actions, fake, controller, 'r', () => settled, (incarnationId) => incarnationId !== old.incarnationId)
        const oldExits = s.schedule(Promise.resolve('old exits'), 'the previous PTY exits').then(() => fake.emitExit('r', { exitCode: 0, signal: 1 }))
        await s.waitFor(Promise.all([restarting, oldExits, ...performed]))
        await settleRace(s, fake, 2)
        if (seen.killedWhileComing) {
          expect(fake.livePtyIds()).toEqual([])
          if (restarted !== undefined && !seen.exitedOnItsOwn.has(restarted)) {
            expect(exits.filter((exit) => exit.incarnationId === restarted).map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
          }
        }
      }),
      { numRuns: 150 },
    )
  })
})

/**
 * Let a race run out: `rounds` times, every task the scheduler holds, then the fake's events (an
 * exit a stop causes can schedule more).
 */
async function settleRace(s: fc.Scheduler, fake: FakePtyProvider, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await s.waitAll()
    await fake.settle()
  }
}

/** Let the fake and the manual clock run until no timer is left: every stop dispatched is carried out. */
async function runDown(s: fc.Scheduler, fake: FakePtyProvider, clock: ManualClock): Promise<void> {
  for (let round = 0; round < 100; round++) {
    await s.waitAll()
    await fake.settle()
    const next = clock.nextTimerAt()
    if (next === null) return
    clock.advance(Math.max(0, next - clock.now()))
  }
}

describe('stopAndWait races with a queued spawn: its deadline passes at any point', () => {
  it("a spawn queued behind its slot's turn: whatever stopAndWait answers, no process is left running", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.boolean(), async (s, exitOnItsOwn) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const clock = createManualClock()
        const controller = createPtyController({
          provider: scheduledProvider(s, fake),
          clock,
          store: createInMemorySlotStore(),
          runtime: createInMemoryPtyRuntime(),
        })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        const release = controller.claimSlotCreate({ key: 'pane' })
        let spawned: string | undefined
        const spawning = controller.spawn({ sessionId: 's', slot: { key: 'pane' } }).then(
          (reply) => {
            spawned = reply.incarnationId
          },
          () => undefined,
        )
        // The job is cancelled before its spawn got its turn; the stop gives up after 1 s.
        const stopped = controller.stopAndWait('s', { timeoutMs: 1_000 })
        const released = s.schedule(Promise.resolve('release'), 'release the slot claim').then(() => release())
        const deadline = s.schedule(Promise.resolve('deadline'), 'the deadline passes').then(() => clock.advance(1_000))
        const diedAlone = exitOnItsOwn
          ? s.schedule(Promise.resolve('exit'), 'the process exits on its own').then(() => {
              if (fake.getPty('s')?.live === true) fake.emitExit('s', { exitCode: 7 })
            })
          : Promise.resolve()
        await s.waitFor(Promise.all([spawning, released, deadline, diedAlone]))
        await runDown(s, fake, clock)
        await s.waitFor(stopped)
        await runDown(s, fake, clock)
        expect(fake.livePtyIds()).toEqual([])
        // Stopped, unless it died on its own first: its exit is then its own.
        if (spawned !== undefined) {
          const causes = exits.filter((exit) => exit.incarnationId === spawned).map((exit) => exit.cause.kind)
          expect(causes.length).toBe(1)
          if (!exitOnItsOwn) expect(causes).toEqual(['operator_close'])
        }
      }),
      { numRuns: 150 },
    )
  })
})

describe('kill races with an adoptSlot that waits for its turn', () => {
  it("a kill of the slot's owner before the adoption settled answers true (unless the owner died first), and nothing is left running", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom<Action>('kill', 'kill', 'exit'), { minLength: 1, maxLength: 3 }), async (s, actions) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const store = createInMemorySlotStore()
        // The slot's owner: a PTY an earlier window of the app created over the same host and store.
        const other = createPtyController({ provider: fake, store })
        const owner = await other.spawn({ slot: { key: 'pane' } })
        await fake.settle()
        const controller = createPtyController({ provider: scheduledProvider(s, fake), clock: createManualClock(), store })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        const release = controller.claimSlotCreate({ key: 'pane' })
        let settled = false
        const adopting = controller
          .adoptSlot({ slot: { key: 'pane' } })
          .catch(() => null)
          .finally(() => {
            settled = true
          })
        let killedWhileComing = false
        let diedFirst = false
        const performed = actions.map((action) =>
          s.schedule(Promise.resolve(action), action).then(() => {
            if (action === 'exit') {
              if (fake.getPty(owner.id)?.live === true) {
                fake.emitExit(owner.id, { exitCode: 7 })
                diedFirst = true
              }
              return
            }
            const answer = controller.kill(owner.id)
            if (!settled && !diedFirst) {
              expect(answer).toBe(true)
              killedWhileComing = true
            }
          }),
        )
        const released = s.schedule(Promise.resolve('release'), 'release the slot claim').then(() => release())
        await s.waitFor(Promise.all([adopting, released, ...performed]))
        await settleRace(s, fake, 2)
        if (killedWhileComing) {
          expect(fake.livePtyIds()).toEqual([])
          if (!diedFirst) expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
        }
        await other.dispose({ stopPtys: false })
      }),
      { numRuns: 150 },
    )
  })
})

describe('kill races with an adoptSlot that is then refused for another reason', () => {
  it('the store views disagree (slot_owner_conflict) or the host refuses the attach: a kill before the adoption settled answers true, and the owner is not left running', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.constantFrom<'conflict' | 'attach_refused'>('conflict', 'attach_refused'),
        fc.array(fc.constantFrom<Action>('kill', 'kill', 'exit'), { minLength: 1, maxLength: 3 }),
        async (s, refusal, actions) => {
          const fake = createFakePtyProvider({ scheduling: 'manual' })
          const inner = createInMemorySlotStore()
          let persisted: PtySlotOwner | null = null
          const store: PtySlotStore = refusal === 'conflict' ? { ...inner, getPersistedOwner: () => persisted } : inner
          const other = createPtyController({ provider: fake, store })
          const owner = await other.spawn({ slot: { key: 'pane' } })
          const stale = await other.spawn({ sessionId: 'stale' })
          await fake.settle()
          persisted = { ptyId: stale.id, hostId: 'local', incarnationId: stale.incarnationId! }
          const scheduled = scheduledProvider(s, fake)
          const provider: PtyProvider =
            refusal === 'attach_refused'
              ? { ...scheduled, spawn: (options) => (options.attachOnly === true ? s.schedule(Promise.reject(new Error('host busy')), 'attach refused') : scheduled.spawn(options)) }
              : scheduled
          const controller = createPtyController({ provider, clock: createManualClock(), store })
          const release = controller.claimSlotCreate({ key: 'pane' })
          let settled = false
          const adopting = controller
            .adoptSlot({ slot: { key: 'pane' } })
            .catch(() => null)
            .finally(() => {
              settled = true
            })
          let killedWhileComing = false
          const performed = actions.map((action) =>
            s.schedule(Promise.resolve(action), action).then(() => {
              if (action === 'exit') {
                if (fake.getPty(owner.id)?.live === true) fake.emitExit(owner.id, { exitCode: 7 })
                return
              }
              const answer = controller.kill(owner.id)
              if (!settled && answer) killedWhileComing = true
            }),
          )
          const released = s.schedule(Promise.resolve('release'), 'release the slot claim').then(() => release())
          await s.waitFor(Promise.all([adopting, released, ...performed]))
          await settleRace(s, fake, 2)
          // Every `true` is kept: the owner it named runs no more (before: it ran on).
          if (killedWhileComing) expect(fake.getPty(owner.id)?.live).not.toBe(true)
          // Nobody killed the other PTY the persisted view names.
          expect(fake.getPty(stale.id)?.live).toBe(true)
          await other.dispose({ stopPtys: false })
        },
      ),
      { numRuns: 150 },
    )
  })
})

describe('dispose races with an adoptSlot and a kill of the owner', () => {
  it('an adoption dispose() overtook never answers (it rejects controller_disposed), a kill before it settled is kept, and an attach a kill marked stops its owner once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.boolean(), async (s, kills) => {
        const fake = createFakePtyProvider({ scheduling: 'manual' })
        const store = createInMemorySlotStore()
        const other = createPtyController({ provider: fake, store })
        const owner = await other.spawn({ slot: { key: 'pane' } })
        await fake.settle()
        const controller = createPtyController({ provider: scheduledProvider(s, fake), clock: createManualClock(), store })
        let disposeCalled = false
        let settled = false
        const adopting = controller
          .adoptSlot({ slot: { key: 'pane' } })
          .then(
            (adoption) => ({ adoption, disposedBefore: disposeCalled }),
            (error: unknown) => ({ error, disposedBefore: disposeCalled }),
          )
          .finally(() => (settled = true))
        let killedWhileComing = false
        const killed = kills
          ? s.schedule(Promise.resolve(), 'kill').then(() => {
              if (controller.kill(owner.id) && !settled) killedWhileComing = true
            })
          : Promise.resolve()
        const disposed = s.schedule(Promise.resolve(), 'dispose').then(() => {
          disposeCalled = true
          return controller.dispose()
        })
        await s.waitFor(Promise.all([adopting, killed, disposed]))
        await settleRace(s, fake, 1)
        const answer = await adopting
        // Disposed before it answered: refused (before: `null` when its attach was in flight).
        if (answer.disposedBefore) expect(answer).toMatchObject({ error: { code: 'controller_disposed', method: 'adoptSlot' } })
        if (killedWhileComing) expect(fake.getPty(owner.id)?.live).not.toBe(true)
        // No stop of the owner dispatched twice the same way (before: the attach's and the refused adoption's).
        const immediate = fake.calls.filter((call) => call.method === 'shutdown' && (call.args[1] as { immediate?: boolean } | undefined)?.immediate === true)
        expect(immediate.length).toBeLessThanOrEqual(1)
        await other.dispose({ stopPtys: false })
      }),
      { numRuns: 150 },
    )
  })
})
