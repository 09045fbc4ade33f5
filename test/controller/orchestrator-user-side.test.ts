/**
 * An AI-agent orchestrator written the way a hurried host author writes one, without the docs: 200
 * agents at once over the default controller (`createPtyController` from the package root) and the
 * real node-pty provider — spawns not awaited, ids reused while and right after the old agent exits,
 * restarts (`kill` then `spawn` of the id), `stopAndWait` of many at once with short and past
 * deadlines, writes to agents that are exiting, resizes after the exit, listeners added and removed
 * inside listeners, calls with the shapes a JavaScript caller passes (strings for numbers, missing
 * fields), terminal handles used the same way, and `dispose()` while spawns and stops are in flight.
 *
 * Every answer is checked against what docs/controller.md and the TSDoc promise, and every verdict
 * against what happened to the process: an exit is `operator_close` exactly when a stop of that
 * incarnation landed, the program's own `exit 3` / `kill -TERM $$` otherwise; a `true` from a stop
 * means the process is gone from /proc; nothing runs, listens, ticks or stays registered after the
 * dispose. The same orchestrator then runs over the fake provider (`ptykit/testing`), and its
 * verdicts must be node-pty's.
 */
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  createPtyController,
  isPtyControllerDisposedError,
  type PtyControllerExitEvent,
  type PtyProvider,
  type PtySpawnOptions,
  type TerminalExitCause,
} from 'ptykit'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createInMemoryPtyRuntime } from 'ptykit/spawn'
import { createFakePtyProvider, fakeScriptMetadata, type FakePtyProvider } from 'ptykit/testing'
import type { PtyClock } from 'ptykit/controller'
import { isDead, procRow, waitFor } from '../node-pty/pty-test-support.js'

const AGENTS = 200
const kinds = ['node-pty', 'fake'] as const
type Kind = (typeof kinds)[number]

/** What an agent does: end on its own when told (`go`), or run until it is stopped. */
type Behaviour = 'exits-3' | 'terminates-itself' | 'sleeps'
const behaviourOf = (index: number): Behaviour => (['exits-3', 'terminates-itself', 'sleeps', 'sleeps'] as const)[index % 4]!
const OWN_END: Record<Exclude<Behaviour, 'sleeps'>, TerminalExitCause> = {
  'exits-3': { kind: 'exited', exitCode: 3 },
  'terminates-itself': { kind: 'signaled', signal: 15 },
}
const OPERATOR_CLOSE: TerminalExitCause = { kind: 'operator_close' }

/** A provider, how an agent of each behaviour is launched on it, how it is told to end, and what runs. */
type World = {
  kind: Kind
  provider: PtyProvider & { dispose(): Promise<void> }
  agent(behaviour: Behaviour): PtySpawnOptions
  /** After the orchestrator wrote `go`: a real agent reads it and ends; the fake is ended as the program would. */
  endsOnItsOwn(id: string, behaviour: Behaviour): void
  /** Whether the agent whose spawn answered `pid` (node-pty) or `id` (fake) still runs. */
  runs(id: string, pid: number | undefined, incarnationId: string | undefined): boolean
  /** Every agent process still running, whoever started it. */
  leftovers(): string[]
}

function nodePtyWorld(): World {
  const provider = createNodePtyProvider()
  const script: Record<Behaviour, string> = {
    'exits-3': 'echo ready; read line; exit 3',
    'terminates-itself': 'echo ready; read line; kill -TERM $$',
    sleeps: 'echo ready; exec sleep 300',
  }
  return {
    kind: 'node-pty',
    provider,
    agent: (behaviour) => ({ file: '/bin/sh', args: ['-c', script[behaviour]] }),
    endsOnItsOwn: () => {},
    runs: (_id, pid) => pid !== undefined && !isDead(pid),
    leftovers: () =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map((name) => procRow(Number(name)))
        .filter((row) => row !== null && row.ppid === process.pid && !isDead(row.pid))
        .map((row) => `pid ${row!.pid}`),
  }
}

function fakeWorld(): World {
  const provider: FakePtyProvider = createFakePtyProvider()
  return {
    kind: 'fake',
    provider,
    agent: () => ({ metadata: fakeScriptMetadata({ output: ['ready\r\n'] }) }),
    // A moment later, as the real agent reads `go` and ends.
    endsOnItsOwn: (id, behaviour) => void setTimeout(() => provider.emitExit(id, behaviour === 'exits-3' ? { exitCode: 3 } : { exitCode: 0, signal: 15 }), 1),
    runs: (id, _pid, incarnationId) => provider.livePtyIds().includes(id) && provider.getPty(id)?.incarnationId === incarnationId,
    leftovers: () => provider.livePtyIds(),
  }
}

/** The system clock, counting the timers the controller has armed and not yet seen fire or cleared. */
function countingClock(): PtyClock & { pending(): number } {
  const pending = new Set<unknown>()
  return {
    now: () => performance.now(),
    setTimeout: (callback, ms) => {
      const handle: NodeJS.Timeout = setTimeout(() => {
        pending.delete(handle)
        callback()
      }, ms)
      pending.add(handle)
      return handle
    },
    clearTimeout: (handle) => {
      pending.delete(handle)
      clearTimeout(handle as NodeJS.Timeout)
    },
    pending: () => pending.size,
  }
}

/** Counts the provider subscriptions the controller holds (onData, onExit…), as a host's wrapper would. */
function countSubscriptions(provider: PtyProvider): () => number {
  let live = 0
  const record = provider as unknown as Record<string, unknown>
  for (const name of ['onData', 'onBytes', 'onExit', 'onOutputLoss'] as const) {
    const original = record[name]
    if (typeof original !== 'function') continue
    record[name] = (listener: unknown) => {
      const unsubscribe = (original as (listener: unknown) => () => void).call(provider, listener)
      live++
      let done = false
      return () => {
        if (!done) live--
        done = true
        unsubscribe()
      }
    }
  }
  return () => live
}


/** The promise, its rejection marked handled now (it is looked at later, with `allSettled`). */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

const settledShape = (outcome: PromiseSettledResult<unknown>): unknown =>
  outcome.status === 'fulfilled' ? { value: outcome.value } : { code: (outcome.reason as { code?: unknown }).code, name: (outcome.reason as Error).name }

/** What a call threw (synchronously or as a rejection): its name, `code` and `option`. */
async function refusal(call: () => unknown): Promise<unknown> {
  try {
    await call()
  } catch (error) {
    const { code, option } = error as { code?: unknown; option?: unknown }
    return { name: (error as Error).name, code, option }
  }
  return 'answered'
}

/** The verdicts of one run, compared across providers. */
const verdicts = new Map<Kind, Record<string, unknown>>()

describe.each(kinds)(`an orchestrator of ${AGENTS} agents over %s`, (kind) => {
  it('every answer is the documented one and every verdict is what happened to the process', { timeout: 60_000 }, async () => {
    const world = kind === 'node-pty' ? nodePtyWorld() : fakeWorld()
    const subscriptions = countSubscriptions(world.provider)
    const clock = countingClock()
    const runtime = createInMemoryPtyRuntime()
    const controller = createPtyController({ provider: world.provider, clock, runtime })
    const childrenBefore = world.leftovers()
    const summary: Record<string, unknown> = {}
    const errors: string[] = []
    controller.on('error', (error) => errors.push(`${error.code}${error.ptyId === undefined ? '' : ` ${error.ptyId}`}: ${error.message}`))
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    /** Which incarnation each stop the orchestrator asked for was meant for, and when. */
    const stopsAsked = new Set<string>()
    /** Agents the orchestrator closes from inside its `data` listener, on their first output. */
    const killOnFirstOutput = new Set<string>()
    const killedFromListener: boolean[] = []
    const ready = new Set<string>()
    controller.on('data', ({ ptyId, incarnationId, data }) => {
      controller.acknowledgeData(ptyId, data.length)
      const key = `${ptyId}/${incarnationId}`
      if (ready.has(key) || !data.includes('ready')) return
      ready.add(key)
      if (killOnFirstOutput.delete(ptyId)) killedFromListener.push(controller.kill(ptyId))
    })
    const exitOf = (id: string, incarnationId: string | undefined) =>
      waitFor(() => exits.find((event) => event.ptyId === id && event.incarnationId === incarnationId), `the exit of ${id} (${kind})`, 20_000)

    const ids = Array.from({ length: AGENTS }, (_, index) => `agent-${String(index).padStart(3, '0')}`)
    const behaviour = new Map(ids.map((id, index) => [id, behaviourOf(index)]))
    for (const [index, id] of ids.entries()) {
      if (index % 20 === 11) {
        killOnFirstOutput.add(id)
        stopsAsked.add(id)
      }
    }

    // 1. Spawn every agent without awaiting; half through terminal handles.
    const spawned = ids.map((id, index) =>
      index % 8 < 4
        ? controller.spawn({ sessionId: id, cols: 80, rows: 24, ...world.agent(behaviourOf(index)) })
        : controller.spawnTerminal({ sessionId: id, cols: 80, rows: 24, ...world.agent(behaviourOf(index)) }),
    )
    // A job's timeout fires while the burst is in flight: kill and stopAndWait of ids still spawning.
    const killedEarly = ids.filter((_, index) => index % 20 === 3)
    const stoppedEarly = ids.filter((_, index) => index % 20 === 7)
    summary.killWhileSpawning = killedEarly.map((id) => controller.kill(id))
    for (const id of killedEarly) stopsAsked.add(id)
    const earlyStops = stoppedEarly.map((id) => controller.stopAndWait(id, { timeoutMs: 30_000 }))
    for (const id of stoppedEarly) stopsAsked.add(id)
    const replies = await Promise.all(spawned)
    const incarnation = new Map(replies.map((reply) => [reply.id, reply.incarnationId as string | undefined]))
    const pid = new Map(replies.map((reply) => [reply.id, reply.pid ?? undefined]))
    summary.replies = replies.map((reply, index) => ({ id: reply.id === ids[index], isReattach: 'isReattach' in reply ? reply.isReattach : 'handle', incarnation: reply.incarnationId !== undefined }))
    summary.stopWhileSpawning = await Promise.all(earlyStops)
    for (const id of stoppedEarly) expect(world.runs(id, pid.get(id), incarnation.get(id)), `${id}: stopAndWait answered true`).toBe(false)
    for (const id of [...killedEarly, ...stoppedEarly]) expect((await exitOf(id, incarnation.get(id))).cause, id).toEqual(OPERATOR_CLOSE)
    // Closed from inside the data listener on their first output.
    const closedFromListener = ids.filter((_, index) => index % 20 === 11)
    for (const id of closedFromListener) expect((await exitOf(id, incarnation.get(id))).cause, id).toEqual(OPERATOR_CLOSE)
    summary.killFromDataListener = killedFromListener
    // Every agent still meant to run has said it is ready.
    await waitFor(() => (ids.every((id) => stopsAsked.has(id) || ready.has(`${id}/${incarnation.get(id)}`)) ? true : undefined), 'every agent ready', 20_000)

    // 2. Wrong shapes, as plain JavaScript passes them, on a live agent: refused, nothing changed.
    const live = ids.find((id, index) => behaviourOf(index) === 'sleeps' && !stopsAsked.has(id))!
    const anyController = controller as unknown as Record<string, (...args: unknown[]) => unknown>
    const terminal = controller.terminal(live)!
    const anyTerminal = terminal as unknown as Record<string, (...args: unknown[]) => unknown>
    summary.wrongShapes = {
      resizeStrings: await refusal(() => anyController.resize!(live, '100', '30')),
      resizeMissingRows: await refusal(() => anyController.resize!(live, 100)),
      writeNumber: await refusal(() => anyController.write!(live, 42, 'driving')),
      writeNoKind: await refusal(() => anyController.write!(live, 'x')),
      killNumber: await refusal(() => anyController.kill!(123)),
      killNothing: await refusal(() => anyController.kill!()),
      stopTimeoutString: await refusal(() => anyController.stopAndWait!(live, { timeoutMs: '5000' })),
      stopDeadlineString: await refusal(() => anyController.stopAndWait!(live, { deadlineMs: String(Date.now() + 5_000) })),
      stopOptionsString: await refusal(() => anyController.stopAndWait!(live, 'fast')),
      ackString: await refusal(() => anyController.acknowledgeData!(live, '10')),
      spawnColsString: await refusal(() => controller.spawn({ cols: '80' as unknown as number, ...world.agent('sleeps') })),
      spawnSessionNumber: await refusal(() => controller.spawn({ sessionId: 42 as unknown as string, ...world.agent('sleeps') })),
      spawnNothing: await refusal(() => anyController.spawn!('bash')),
      terminalResizeStrings: await refusal(() => anyTerminal.resize!('100', '30')),
      terminalWriteNumber: await refusal(() => anyTerminal.write!(42)),
      terminalStopTimeoutString: await refusal(() => anyTerminal.stop!({ timeoutMs: '5000' })),
      terminalAckString: await refusal(() => anyTerminal.acknowledgeData!('10')),
    }
    expect(controller.hasPty(live)).toBe(true)
    expect(world.runs(live, pid.get(live), incarnation.get(live))).toBe(true)
    expect(controller.getSize(live)).toEqual({ cols: 80, rows: 24 })

    // 3. Listeners added and removed inside listeners.
    let nestedExits = 0
    const outer = (): void => {
      controller.off('exit', outer)
      const inner = (): void => {
        nestedExits++
        controller.off('exit', inner)
        controller.on('exit', outer)
      }
      controller.on('exit', inner)
    }
    controller.on('exit', outer)

    // 4. The agents end on their own; the orchestrator writes and resizes as they exit, and reuses
    //    ids — while the old agent is exiting, and from inside the exit listener.
    const ending = ids.filter((id) => behaviour.get(id) !== 'sleeps' && !stopsAsked.has(id))
    const respawnedFromListener = new Map<string, Promise<unknown>>()
    const respawnFromListener = new Set(ending.filter((_, index) => index % 4 === 0))
    controller.on('exit', (event) => {
      if (!respawnFromListener.has(event.ptyId) || respawnedFromListener.has(event.ptyId)) return
      respawnedFromListener.set(event.ptyId, handled(controller.spawn({ sessionId: event.ptyId, ...world.agent('sleeps') })))
    })
    // Terminal handles' listeners, added and removed inside their own listeners.
    let handleExits = 0
    let handleData = 0
    const handles = ending.map((id) => controller.terminal(id)).filter((handle) => handle !== null)
    for (const handle of handles) {
      const first = handle.onData(() => {
        first()
        handle.onData(() => handleData++)()
      })
      const once = handle.onExit(() => {
        handleExits++
        once()
        handle.onExit(() => handleExits++)
        handle.onData(() => handleData++)
      })
    }
    const writesAsExiting: Array<Promise<unknown>> = []
    const spawnsAsExiting = new Map<string, Promise<{ id: string; incarnationId?: unknown; isReattach: boolean }>>()
    for (const [index, id] of ending.entries()) {
      expect(controller.write(id, 'go\r', 'driving'), id).toBe(true)
      // A hurried restart: the same id again while the agent is on its way out.
      if (index % 4 === 1) spawnsAsExiting.set(id, handled(controller.spawn({ sessionId: id, ...world.agent('sleeps') })))
      world.endsOnItsOwn(id, behaviour.get(id)!)
      writesAsExiting.push(Promise.resolve(controller.writeWithSettlement(id, 'more\r', 'driving')))
    }
    const ownExits = await Promise.all(ending.map((id) => exitOf(id, incarnation.get(id))))
    summary.ownEnds = ownExits.map((event) => event.cause)
    for (const event of ownExits) expect(event.cause, event.ptyId).toEqual(OWN_END[behaviour.get(event.ptyId) as 'exits-3'])
    for (const settlement of await Promise.all(writesAsExiting)) {
      expect([{ kind: 'accepted' }, { kind: 'refused', reason: 'pty_exited' }]).toContainEqual(settlement)
    }
    // After the exit: writes refused, resizes false, handles answer as ended.
    const reused = new Set([...respawnFromListener, ...spawnsAsExiting.keys()])
    const afterExit = ending.filter((id) => !reused.has(id)).map((id) => ({
      write: controller.write(id, 'late\r', 'driving'),
      resize: controller.resize(id, 100, 30),
      kill: controller.kill(id),
    }))
    summary.afterExit = afterExit.every((answer) => answer.write === false && answer.resize === false && answer.kill === false)
    // The ended agents' handles — also those whose id runs a new agent now — answer as ended.
    summary.endedHandles = await Promise.all(
      handles.map(async (handle) => [handle.resize(100, 30), handle.write('x'), handle.kill(), await handle.stop({ timeoutMs: 1 })]),
    ).then((answers) => answers.every(([resize, write, kill, stop]) => resize === false && write === false && kill === false && stop === true))
    const asExiting = await Promise.allSettled([...spawnsAsExiting.values()])
    summary.spawnWhileExiting = asExiting.map((outcome, index) => {
      const id = [...spawnsAsExiting.keys()][index]!
      // Which one a spawn meets is a race: the agent still running (attached: that agent, whose exit
      // follows), already gone (a fresh agent), gone while the spawn started (exited_during_start), or
      // gone with its exit not yet delivered (node-pty: pty_id_in_use, a provider_spawn_failed).
      if (outcome.status === 'rejected') {
        const error = outcome.reason as { code?: unknown; cause?: { code?: unknown } }
        const code = error.code === 'provider_spawn_failed' ? `provider_spawn_failed/${String(error.cause?.code)}` : error.code
        expect(['exited_during_start', 'provider_spawn_failed/pty_id_in_use'], id).toContain(code)
        return 'documented'
      }
      const reply = outcome.value
      expect(reply.isReattach ? reply.incarnationId === incarnation.get(id) : reply.incarnationId !== incarnation.get(id), id).toBe(true)
      return 'documented'
    })
    summary.handleListeners = { exits: handleExits, data: handleData >= 0 }
    const respawned = await Promise.allSettled([...respawnedFromListener.values()])
    summary.respawnFromExitListener = respawned.map(settledShape).map((shape) => ('value' in (shape as object) ? 'spawned' : shape))
    summary.nestedListeners = nestedExits > 0

    // 5. Restarts: kill then spawn of the same id, and stopAndWait then spawn, neither awaited.
    const sleepers = ids.filter((id) => behaviour.get(id) === 'sleeps' && !stopsAsked.has(id))
    const restarted = sleepers.slice(0, 20)
    const restarts = restarted.map((id, index) => {
      stopsAsked.add(id)
      const stop = index % 2 === 0 ? controller.kill(id) : controller.stopAndWait(id, { timeoutMs: 30_000 })
      return Promise.all([stop, controller.spawn({ sessionId: id, ...world.agent('sleeps') })])
    })
    const restartAnswers = await Promise.all(restarts)
    summary.restarts = restartAnswers.map(([stop, reply]) => ({ stop, isReattach: reply.isReattach, fresh: reply.incarnationId !== incarnation.get(reply.id) }))
    for (const id of restarted) {
      expect((await exitOf(id, incarnation.get(id))).cause, id).toEqual(OPERATOR_CLOSE)
      expect(world.runs(id, pid.get(id), incarnation.get(id)), `${id}: the old agent`).toBe(false)
    }
    const restartedReplies = new Map(restartAnswers.map(([, reply]) => [reply.id, reply]))
    for (const id of restarted) {
      expect(controller.hasPty(id), id).toBe(true)
      expect(controller.terminal(id)?.incarnationId, id).toBe(restartedReplies.get(id)!.incarnationId)
    }

    // 5b. The same id spawned twice at once, then restarted twice in one turn.
    const twins = Array.from({ length: 10 }, (_, index) => `twin-${index}`)
    const twinReplies = await Promise.all(
      twins.map((id) => Promise.all([controller.spawn({ sessionId: id, ...world.agent('sleeps') }), controller.spawn({ sessionId: id, ...world.agent('sleeps') })])),
    )
    summary.twinSpawns = twinReplies.map(([first, second]) => [first.isReattach, second.isReattach, second.incarnationId === first.incarnationId])
    const doubleRestarts = await Promise.all(
      twins.map((id) => Promise.all([controller.kill(id), controller.spawn({ sessionId: id, ...world.agent('sleeps') }), controller.kill(id), controller.spawn({ sessionId: id, ...world.agent('sleeps') })])),
    )
    summary.doubleRestarts = doubleRestarts.map(([firstKill, first, secondKill, second]) => [firstKill, secondKill, first.incarnationId !== second.incarnationId])
    for (const [index, id] of twins.entries()) {
      const [, first, , second] = doubleRestarts[index]!
      expect((await exitOf(id, twinReplies[index]![0].incarnationId)).cause, id).toEqual(OPERATOR_CLOSE)
      expect((await exitOf(id, first.incarnationId)).cause, id).toEqual(OPERATOR_CLOSE)
      expect(controller.terminal(id)?.incarnationId, `${id}: the second restart runs on`).toBe(second.incarnationId)
      expect(world.runs(id, second.pid ?? undefined, second.incarnationId), id).toBe(true)
    }

    // 6. stopAndWait of many at once, with short and past deadlines; then resize the stopped ones.
    const rushed = sleepers.slice(20, 60)
    const rushedAnswers = await Promise.all(
      rushed.map((id, index) => {
        stopsAsked.add(id)
        return index % 2 === 0 ? controller.stopAndWait(id, { timeoutMs: 1 }) : controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 })
      }),
    )
    for (const [index, id] of rushed.entries()) {
      if (rushedAnswers[index] === true) expect(world.runs(id, pid.get(id), incarnation.get(id)), `${id}: stopAndWait answered true`).toBe(false)
    }
    // Whatever the rushed answers, the stop that landed ends each one as an operator close.
    const rushedExits = await Promise.all(rushed.map((id) => exitOf(id, incarnation.get(id))))
    summary.rushedCauses = rushedExits.map((event) => event.cause)
    for (const id of rushed) await waitFor(() => (world.runs(id, pid.get(id), incarnation.get(id)) ? undefined : true), `${id} gone`, 20_000)
    summary.resizeAfterStop = rushed.map((id) => controller.resize(id, 120, 40))
    // A second stopAndWait of a stopped agent: its death is proven.
    summary.stopAgain = await Promise.all(rushed.map((id) => controller.stopAndWait(id, { timeoutMs: 5_000 })))

    // 7. Dispose while spawns and stops are in flight.
    const lastSleepers = sleepers.slice(60)
    const lateSpawns = Array.from({ length: 30 }, (_, index) => controller.spawn({ sessionId: `late-${index}`, ...world.agent('sleeps') }))
    const lateStops = lastSleepers.slice(0, 5).map((id) => controller.stopAndWait(id, { timeoutMs: 30_000 }))
    const lateKills = lastSleepers.slice(5).map((id) => controller.kill(id))
    for (const id of lastSleepers) stopsAsked.add(id)
    // Restarts of the restarted agents, in flight too: kill, then the same id again.
    const lateRestarts = restarted.slice(0, 10).map((id) => [controller.kill(id), handled(controller.spawn({ sessionId: id, ...world.agent('sleeps') }))] as const)
    const disposed = controller.dispose()
    const disposedRefusal = (outcome: PromiseSettledResult<unknown>): unknown =>
      outcome.status === 'rejected' && isPtyControllerDisposedError(outcome.reason) ? 'controller_disposed' : settledShape(outcome)
    summary.disposedAnswers = {
      spawns: (await Promise.allSettled(lateSpawns)).map(disposedRefusal),
      stops: await Promise.all(lateStops),
      kills: lateKills,
      restarts: await Promise.all(lateRestarts.map(async ([kill, spawn]) => [kill, disposedRefusal((await Promise.allSettled([spawn]))[0]!)])),
    }
    // Every call after the dispose answers as the table in docs/controller.md says.
    const someId = ids[0]!
    summary.afterDispose = {
      write: controller.write(someId, 'x', 'driving'),
      settlement: await controller.writeWithSettlement(someId, 'x', 'driving'),
      resize: controller.resize(someId, 100, 30),
      kill: controller.kill(someId),
      hasPty: controller.hasPty(someId),
      stop: await controller.stopAndWait('never-spawned', { timeoutMs: 1_000 }),
      spawn: await refusal(() => controller.spawn({ ...world.agent('sleeps') })),
      wrongShape: await refusal(() => anyController.kill!(123)),
    }
    await disposed
    await world.provider.dispose()

    // Every agent that ran is gone; every sleeper's exit was an operator close; every self-ender's its own.
    const everyIncarnation = new Map<string, string | undefined>()
    for (const event of exits) everyIncarnation.set(`${event.ptyId}/${event.incarnationId}`, event.cause.kind)
    for (const id of ids) {
      expect(world.runs(id, pid.get(id), incarnation.get(id)), `${id} still runs`).toBe(false)
      const exit = exits.filter((event) => event.ptyId === id && event.incarnationId === incarnation.get(id))
      expect(exit.length, `${id}: one exit`).toBe(1)
      expect(exit[0]!.cause, id).toEqual(behaviour.get(id) === 'sleeps' || stopsAsked.has(id) ? OPERATOR_CLOSE : OWN_END[behaviour.get(id) as 'exits-3'])
    }
    // Every later incarnation (restarts, respawns from the exit listener) was stopped by the dispose.
    const laterExits = exits.filter((event) => event.incarnationId !== incarnation.get(event.ptyId))
    summary.laterCauses = [...new Set(laterExits.map((event) => JSON.stringify(event.cause)))]
    expect(world.leftovers().filter((entry) => !childrenBefore.includes(entry))).toEqual([])
    // Nothing listens, ticks or stays registered.
    expect(controller.eventNames().filter((name) => name !== 'error' && name !== 'exit')).toEqual([])
    controller.removeAllListeners()
    expect(subscriptions()).toBe(0)
    expect(clock.pending()).toBe(0)
    const left = runtime.inspect()
    expect({ pending: left.pendingRegistrations, leases: left.heldLeases, registered: left.registeredPtys, fences: left.earlyExitFences }).toEqual({
      pending: [],
      leases: [],
      registered: [],
      fences: [],
    })
    summary.errors = errors
    // The answers docs/controller.md promises (the fake's are compared with these below).
    const all = <T>(list: unknown, value: T): boolean => Array.isArray(list) && list.length > 0 && list.every((entry) => JSON.stringify(entry) === JSON.stringify(value))
    const typeError = (option: string) => ({ name: 'TypeError', code: 'invalid_option', option })
    const spawnRefusal = (option: string) => ({ name: 'PtySpawnError', code: 'invalid_spawn_options', option })
    expect({
      killWhileSpawning: all(summary.killWhileSpawning, true),
      stopWhileSpawning: all(summary.stopWhileSpawning, true),
      killFromDataListener: all(summary.killFromDataListener, true),
      afterExit: summary.afterExit,
      endedHandles: summary.endedHandles,
      restarts: all(summary.restarts, { stop: true, isReattach: false, fresh: true }),
      twinSpawns: all(summary.twinSpawns, [false, true, true]),
      doubleRestarts: all(summary.doubleRestarts, [true, true, true]),
      rushedCauses: all(summary.rushedCauses, OPERATOR_CLOSE),
      resizeAfterStop: all(summary.resizeAfterStop, false),
      stopAgain: all(summary.stopAgain, true),
      disposedSpawns: all((summary.disposedAnswers as Record<string, unknown>).spawns, 'controller_disposed'),
      disposedStops: all((summary.disposedAnswers as Record<string, unknown>).stops, true),
      disposedKills: all((summary.disposedAnswers as Record<string, unknown>).kills, true),
      disposedRestarts: all((summary.disposedAnswers as Record<string, unknown>).restarts, [true, 'controller_disposed']),
      laterCauses: summary.laterCauses,
      errors: summary.errors,
    }).toEqual({
      killWhileSpawning: true,
      stopWhileSpawning: true,
      killFromDataListener: true,
      afterExit: true,
      endedHandles: true,
      restarts: true,
      twinSpawns: true,
      doubleRestarts: true,
      rushedCauses: true,
      resizeAfterStop: true,
      stopAgain: true,
      disposedSpawns: true,
      disposedStops: true,
      disposedKills: true,
      disposedRestarts: true,
      laterCauses: [JSON.stringify(OPERATOR_CLOSE)],
      errors: [],
    })
    expect(summary.wrongShapes).toEqual({
      resizeStrings: typeError('cols'),
      resizeMissingRows: typeError('rows'),
      writeNumber: typeError('data'),
      writeNoKind: typeError('inputKind'),
      killNumber: typeError('ptyId'),
      killNothing: typeError('ptyId'),
      stopTimeoutString: typeError('timeoutMs'),
      stopDeadlineString: typeError('deadlineMs'),
      stopOptionsString: typeError('options'),
      ackString: typeError('chars'),
      spawnColsString: spawnRefusal('cols'),
      spawnSessionNumber: spawnRefusal('sessionId'),
      spawnNothing: spawnRefusal('options'),
      terminalResizeStrings: typeError('cols'),
      terminalWriteNumber: typeError('data'),
      terminalStopTimeoutString: typeError('timeoutMs'),
      terminalAckString: typeError('chars'),
    })
    expect(summary.afterDispose).toEqual({
      write: false,
      settlement: { kind: 'refused', reason: 'controller_disposed' },
      resize: false,
      kill: false,
      hasPty: null,
      stop: false,
      spawn: { name: 'PtyControllerDisposedError', code: 'controller_disposed', option: undefined },
      wrongShape: typeError('ptyId'),
    })
    verdicts.set(kind, summary)
  })
})

/** What the orchestrator saw of agents whose consumer acknowledged once and then forgot, per provider. */
const forgetfulVerdicts = new Map<Kind, Record<string, unknown>>()

// The two providers' runs at once (`concurrent`): each has its own provider and controller, and
// most of each run is the exiters' 3 s pause cap, waited for on the clock.
describe.each(kinds)('an orchestrator whose view acknowledges once and forgets, over %s', { concurrent: true }, (kind) => {
  it('a paused agent still stops as an operator close, and one that exits behind held output keeps its own cause after all of it', { timeout: 30_000 }, async () => {
    const CHUNKS = 75
    const CHUNK = 4_000
    const provider = kind === 'node-pty' ? createNodePtyProvider() : createFakePtyProvider()
    // node-pty: 300 000 chars then sleep or exit 5; the fake: the same output in 4 000-char chunks.
    const agent = (exitCode: number | undefined): PtySpawnOptions =>
      kind === 'node-pty'
        ? { file: '/bin/sh', args: ['-c', `head -c ${CHUNKS * CHUNK} /dev/zero | tr '\\0' x; ${exitCode === undefined ? 'exec sleep 300' : `exit ${exitCode}`}`] }
        : { metadata: fakeScriptMetadata({ output: Array.from({ length: CHUNKS }, () => 'x'.repeat(CHUNK)), ...(exitCode === undefined ? {} : { exit: { exitCode } }) }) }
    const controller = createPtyController({ provider, flowControl: { pauseMaxHoldMs: 3_000 } })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(error.code))
    const received = new Map<string, number>()
    const receivedAtExit = new Map<string, number>()
    const exits = new Map<string, TerminalExitCause>()
    controller.on('data', ({ ptyId, data }) => {
      // The view acknowledges its first chunk (opting in to flow control) and never again.
      if (!received.has(ptyId)) controller.acknowledgeData(ptyId, 1)
      received.set(ptyId, (received.get(ptyId) ?? 0) + data.length)
    })
    controller.on('exit', ({ ptyId, cause }) => {
      exits.set(ptyId, cause)
      receivedAtExit.set(ptyId, received.get(ptyId) ?? 0)
    })
    const sleepers = await Promise.all(Array.from({ length: 10 }, () => controller.spawn(agent(undefined))))
    const exiters = await Promise.all(Array.from({ length: 10 }, () => controller.spawn(agent(5))))
    await waitFor(() => (sleepers.every(({ id }) => controller.getFlowControlState(id)?.paused === true) ? true : undefined), 'every sleeper paused', 20_000)
    const answers = await Promise.all(sleepers.map(({ id }) => controller.stopAndWait(id, { timeoutMs: 10_000 })))
    await waitFor(() => (exiters.every(({ id }) => exits.has(id)) ? true : undefined), 'every exiter ended', 20_000)
    for (const { id, pid } of sleepers) expect(kind === 'fake' || isDead(pid!), id).toBe(true)
    const verdict = {
      stopAnswers: answers,
      sleeperCauses: sleepers.map(({ id }) => exits.get(id)),
      exiterCauses: exiters.map(({ id }) => exits.get(id)),
      exiterOutputBeforeExit: exiters.map(({ id }) => receivedAtExit.get(id)),
      errors: errors.sort(),
    }
    expect(verdict).toEqual({
      stopAnswers: sleepers.map(() => true),
      sleeperCauses: sleepers.map(() => OPERATOR_CLOSE),
      exiterCauses: exiters.map(() => ({ kind: 'exited', exitCode: 5 })),
      exiterOutputBeforeExit: exiters.map(() => CHUNKS * CHUNK),
      // Each exiter's pause reached its cap once; each sleeper's stop released its own first.
      errors: exiters.map(() => 'consumer_not_acknowledging'),
    })
    forgetfulVerdicts.set(kind, verdict)
    await controller.dispose()
    await provider.dispose()
  })
})

it('the fake provider agrees with node-pty on every verdict', () => {
  expect([...verdicts.keys()].sort()).toEqual([...kinds].sort())
  expect([...forgetfulVerdicts.keys()].sort()).toEqual([...kinds].sort())
  expect(forgetfulVerdicts.get('fake')).toEqual(forgetfulVerdicts.get('node-pty'))
  expect(verdicts.get('fake')).toEqual(verdicts.get('node-pty'))
})
