import type fc from 'fast-check'
import type { PtyProvider, PtySlotAdoption } from '../../src/contracts/index.js'
import { createPtyController, type PtyController, type PtyControllerOptions } from '../../src/controller/index.js'
import type { PtyControllerError } from '../../src/controller/index.js'
import type {
  PtyControllerDataEvent,
  PtyControllerExitEvent,
  PtyControllerLivenessEvent,
  PtyControllerSpawnEvent,
} from '../../src/controller/index.js'
import { createInMemorySlotStore, type PtySlotStore } from '../../src/spawn/index.js'
import { createFakePtyProvider, type FakePtyProvider, type FakePtyProviderOptions } from '../../src/testing/index.js'
import { createManualClock, type ManualClock } from '../../src/testing/manual-clock.js'

/** One recorded controller event, in emission order. */
export type RecordedEvent =
  | { type: 'spawn'; event: PtyControllerSpawnEvent }
  | { type: 'data'; event: PtyControllerDataEvent }
  | { type: 'exit'; event: PtyControllerExitEvent }
  | { type: 'liveness'; event: PtyControllerLivenessEvent }
  | { type: 'error'; event: PtyControllerError }

/** A controller over a fake provider and a manual clock, with every event recorded. */
export type Harness = {
  provider: FakePtyProvider
  clock: ManualClock
  controller: PtyController
  events: RecordedEvent[]
  exits: () => PtyControllerExitEvent[]
  data: () => PtyControllerDataEvent[]
  liveness: () => PtyControllerLivenessEvent[]
  errors: () => PtyControllerError[]
  /** Let microtasks run and deliver the fake's scheduled events. */
  settle: () => Promise<void>
  /** Drive the clock (timer by timer) and the microtask queue until `promise` settles. */
  run: <T>(promise: Promise<T>, maxMs?: number) => Promise<T>
}

/** Build a harness; the fake delivers scripted events only when the test settles. */
export function createHarness(
  options: {
    provider?: FakePtyProviderOptions
    controller?: Omit<PtyControllerOptions, 'provider' | 'providers' | 'clock'>
  } = {},
): Harness {
  const provider = createFakePtyProvider({ scheduling: 'manual', ...options.provider })
  const clock = createManualClock()
  const controller = createPtyController({ provider, clock, ...options.controller })
  const events: RecordedEvent[] = []
  controller.on('spawn', (event) => events.push({ type: 'spawn', event }))
  controller.on('data', (event) => events.push({ type: 'data', event }))
  controller.on('exit', (event) => events.push({ type: 'exit', event }))
  controller.on('liveness', (event) => events.push({ type: 'liveness', event }))
  controller.on('error', (event) => events.push({ type: 'error', event }))
  type EventOf<K extends RecordedEvent['type']> = Extract<RecordedEvent, { type: K }>['event']
  const pick =
    <K extends RecordedEvent['type']>(type: K) =>
    (): EventOf<K>[] =>
      events.filter((entry) => entry.type === type).map((entry) => entry.event as EventOf<K>)
  const settle = (): Promise<void> => provider.settle()
  const run = async <T>(promise: Promise<T>, maxMs = 60_000): Promise<T> => {
    let done = false
    const tracked = promise.finally(() => {
      done = true
    })
    tracked.catch(() => undefined)
    const start = clock.now()
    // A chain of awaits longer than one settle()'s microtask turns arms its next timer later:
    // a few more settles before "no timer" is taken for a promise that is stuck.
    let settlesWithoutTimer = 0
    for (;;) {
      await settle()
      if (done) break
      const next = clock.nextTimerAt()
      if (next === null && ++settlesWithoutTimer < 8) continue
      settlesWithoutTimer = 0
      if (next === null || next - start > maxMs) {
        throw new Error(`run(): the promise is stuck (next timer ${String(next)}, now ${clock.now()})`)
      }
      clock.advance(Math.max(0, next - clock.now()))
    }
    return tracked
  }
  return {
    provider,
    clock,
    controller,
    events,
    exits: pick('exit'),
    data: pick('data'),
    liveness: pick('liveness'),
    errors: pick('error'),
    settle,
    run,
  }
}

/**
 * What `promise` settled with, read at any moment: `undefined` while it is pending, else its value
 * or the error it rejected with — for a test that checks a call is still waiting, then lets it go.
 */
export function answerOf(promise: Promise<unknown>): () => unknown {
  let answer: unknown
  void promise.then(
    (value) => (answer = value),
    (error: unknown) => (answer = error),
  )
  return () => answer
}

/**
 * The slot `pane` owned by a PTY another controller (`other`) created over the same provider and
 * store — an earlier window of the app: this harness's controller does not track it, so `adoptSlot`
 * attaches it.
 */
export async function slotOwnedElsewhere(store: PtySlotStore = createInMemorySlotStore()) {
  const h = createHarness({ controller: { store } })
  const other = createPtyController({ provider: h.provider, store })
  const owner = await h.run(other.spawn({ slot: { key: 'pane' } }))
  await h.settle()
  return { h, owner, other }
}

/**
 * An `adoptSlot` of the slot `pane` queued behind a `claimSlotCreate` claim of it, settled: the
 * adoption waits for its turn (its store read done) until `release()` lets the claim go.
 */
export async function queueAdoption(h: Harness): Promise<{ release: () => void; adopting: Promise<PtySlotAdoption | null> }> {
  const release = h.controller.claimSlotCreate({ key: 'pane' })
  const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } })
  await h.settle()
  return { release, adopting }
}

/**
 * A harness whose slot `pane` is owned by a PTY a `kill` could not stop: the fake never confirms
 * its shutdown, the stop window (10 s) ran out, and `stop_unverified` was published while its host
 * still holds it. `stop` sets the controller's stop options.
 */
export async function slotOwnerWithUnverifiedStop(stop?: PtyControllerOptions['stop']) {
  const h = createHarness({ controller: { store: createInMemorySlotStore(), ...(stop === undefined ? {} : { stop }) } })
  const owner = await h.run(h.controller.spawn({ slot: { key: 'pane' } }))
  h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
  if (!h.controller.kill(owner.id)) throw new Error('the kill of the slot owner answered false')
  await h.settle()
  h.clock.advance(10_000)
  await h.settle()
  const causes = h.exits().map((exit) => exit.cause)
  if (causes.length !== 1 || causes[0]!.kind !== 'unknown' || causes[0]!.reason !== 'stop_unverified') {
    throw new Error(`expected one stop_unverified exit, got ${JSON.stringify(causes)}`)
  }
  return { h, owner }
}

/**
 * From now on the fake answers attach-only calls when the returned function is called (a host busy
 * restoring sessions); spawns are answered as usual.
 */
export function holdAttaches(h: Harness): () => void {
  let answer!: () => void
  const answered = new Promise<void>((resolve) => (answer = resolve))
  const spawn = h.provider.spawn.bind(h.provider)
  h.provider.spawn = async (options) => {
    if (options.attachOnly === true) await answered
    return spawn(options)
  }
  return answer
}

/**
 * The fake `fake` as a provider whose every shutdown is carried out when the fast-check scheduler
 * `s` says (the exit it causes comes then): for races of stops against kills, disposal and adoption.
 */
export function scheduledShutdowns(s: fc.Scheduler, fake: FakePtyProvider): PtyProvider {
  return {
    name: 'scheduled',
    authoritativeListings: true,
    spawn: (options) => fake.spawn(options),
    write: (id, data) => fake.write(id, data),
    resize: (id, cols, rows) => fake.resize(id, cols, rows),
    shutdown: (id, options) => s.schedule(Promise.resolve(), 'shutdown').then(() => fake.shutdown(id, options)),
    hasPty: (id) => fake.hasPty(id),
    listProcesses: () => fake.listProcesses(),
    onData: (listener) => fake.onData(listener),
    onExit: (listener) => fake.onExit(listener),
  }
}
