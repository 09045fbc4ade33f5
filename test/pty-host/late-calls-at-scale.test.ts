/**
 * An app that calls every public method of the pty host provider late, at the scale of 100
 * sessions: from exit listeners (its own stops, and the dispose's), in the turn `dispose()` began
 * and the turn after, after it, and after the host was SIGKILLed. Every answer is typed (a
 * `PtyHostError` whose code the phase allows, a refusal for the dispose naming the method called
 * and the PTY it named) and true of what runs; nothing is left behind (no unhandled rejection, no
 * process, no session in the host, no timer). Found here: a request the dispose cut off named the
 * wire's method (`list`, `probe`, `cwd`…) and no PTY, and a spawn or attach asked once the dispose
 * began said "Cannot spawn: …", naming no method — where every other refusal names both.
 * (After `detach()`: test/pty-host/calls-after-detach-audit.test.ts, 200 sessions.)
 */
import { isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, isAlive, killHost, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const unhandled = recordUnhandledRejections()

const SESSIONS = 100

type Answer = { sync: boolean } & ({ value: unknown } | { error: unknown })

/** What `run` answered: a value or a failure, and whether synchronously (a throw, or a value that is no promise). */
async function answerOf(run: () => unknown): Promise<Answer> {
  let returned: unknown
  try {
    returned = run()
  } catch (error) {
    return { sync: true, error }
  }
  const sync = !(returned instanceof Promise)
  try {
    return { sync, value: await returned }
  } catch (error) {
    return { sync, error }
  }
}

const isSettlement = (value: unknown): boolean => typeof value === 'object' && value !== null && ['accepted', 'refused', 'unverifiable'].includes((value as { kind?: unknown }).kind as string)
const orNull = (check: (value: unknown) => boolean) => (value: unknown) => value === null || check(value)
const isBoolean = (value: unknown): boolean => typeof value === 'boolean'
const isString = (value: unknown): boolean => typeof value === 'string'
const isNothing = (value: unknown): boolean => value === undefined

/** Each public call about `id`: how it is made, whether it names the PTY, and the type of its answer. */
function lateCalls(app: PtyHostProvider, id: string): { method: string; call: () => unknown; namesPty: boolean; typed: (value: unknown) => boolean }[] {
  return [
    { method: 'spawn', call: () => app.spawn({ file: 'cat' }), namesPty: false, typed: (value) => typeof (value as { id?: unknown })?.id === 'string' },
    { method: 'attach', call: () => app.attach(id), namesPty: true, typed: (value) => (value as { id?: unknown })?.id === id },
    { method: 'write', call: () => app.write(id, 'x'), namesPty: true, typed: isSettlement },
    { method: 'writeBytes', call: () => app.writeBytes(id, new Uint8Array([120])), namesPty: true, typed: isSettlement },
    { method: 'resize', call: () => app.resize(id, 90, 30), namesPty: true, typed: isBoolean },
    { method: 'shutdown', call: () => app.shutdown(id), namesPty: true, typed: isNothing },
    { method: 'pauseProducer', call: () => app.pauseProducer(id), namesPty: true, typed: isNothing },
    { method: 'resumeProducer', call: () => app.resumeProducer(id), namesPty: true, typed: isNothing },
    { method: 'acknowledgeData', call: () => app.acknowledgeData(id, 5), namesPty: true, typed: isNothing },
    { method: 'listProcesses', call: () => app.listProcesses(), namesPty: false, typed: Array.isArray },
    { method: 'listExits', call: () => app.listExits(), namesPty: false, typed: Array.isArray },
    { method: 'forgetExits', call: () => app.forgetExits([{ id }]), namesPty: false, typed: Number.isSafeInteger },
    { method: 'hasPty', call: () => app.hasPty(id), namesPty: true, typed: orNull(isBoolean) },
    { method: 'probeLiveness', call: () => app.probeLiveness(id), namesPty: true, typed: orNull(isBoolean) },
    { method: 'getCwd', call: () => app.getCwd(id), namesPty: true, typed: orNull(isString) },
    { method: 'getForegroundProcess', call: () => app.getForegroundProcess(id), namesPty: true, typed: orNull(isString) },
    { method: 'hasChildProcesses', call: () => app.hasChildProcesses(id), namesPty: true, typed: orNull(isBoolean) },
    { method: 'clearBuffer', call: () => app.clearBuffer(id), namesPty: true, typed: isNothing },
    { method: 'getBufferSnapshot', call: () => app.getBufferSnapshot(id), namesPty: true, typed: orNull((value) => typeof (value as { data?: unknown })?.data === 'string') },
  ]
}

/** The methods answering with a promise (a refusal rejects); every other refuses with a throw. */
const PROMISE_METHODS = new Set(['spawn', 'attach', 'shutdown', 'listProcesses', 'listExits', 'forgetExits', 'probeLiveness', 'getCwd', 'getForegroundProcess', 'hasChildProcesses', 'clearBuffer', 'getBufferSnapshot'])

/**
 * Every late call about `id`, each answer checked typed: a value of the method's type, or a
 * `PtyHostError` whose code `allowed` lists — a refusal for the dispose naming the method and the
 * PTY (none for a spawn or a listing) — delivered as the method delivers refusals. Returns each
 * answer by method, for the phase's own checks of what is true.
 */
async function callEveryMethod(phase: string, app: PtyHostProvider, id: string, allowed: readonly string[], skip: readonly string[] = []): Promise<Record<string, Answer>> {
  const calls = lateCalls(app, id).filter(({ method }) => !skip.includes(method))
  const answers = await Promise.all(calls.map(({ call }) => answerOf(call)))
  const byMethod: Record<string, Answer> = {}
  calls.forEach(({ method, namesPty, typed }, index) => {
    const answer = answers[index]!
    byMethod[method] = answer
    const where = `${phase}: ${method}(${JSON.stringify(id)})`
    if ('value' in answer) {
      expect(typed(answer.value), `${where} answered ${JSON.stringify(answer.value)}`).toBe(true)
      return
    }
    const error = answer.error
    expect(isPtyHostError(error), `${where} failed with ${String(error)}`).toBe(true)
    if (!isPtyHostError(error)) return
    expect(allowed, `${where} failed ${error.code}: ${error.message}`).toContain(error.code)
    expect(answer.sync, `${where}: a refusal of a method answering with a promise rejects; of any other, throws`).toBe(!PROMISE_METHODS.has(method))
    if (error.code === 'provider_disposed') {
      expect(/`(\w+)`/.exec(error.message)?.[1], `${where}'s refusal (${error.message}) names the method`).toBe(method)
      expect(error.ptyId, `${where}'s refusal names the PTY`).toBe(namesPty ? id : undefined)
    }
    // Whatever the refusal (a dead host's `host_unavailable` too: until 8 Dec a stop's had no
    // `ptyId`), a call about a PTY names it.
    if (namesPty) expect(error.ptyId, `${where}'s ${error.code} (${error.message}) names the PTY`).toBe(id)
  })
  return byMethod
}

/** The ids and pids of `SESSIONS` long-running PTYs spawned by `app`. */
async function sessions(app: PtyHostProvider): Promise<{ ids: string[]; pids: number[] }> {
  const replies = await Promise.all(Array.from({ length: SESSIONS }, () => app.spawn({ file: 'cat' })))
  return { ids: replies.map((reply) => reply.id), pids: replies.map((reply) => reply.pid!) }
}

const timers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length

/** The sessions the host of `socketPath` runs, as another app sees them. */
async function sessionsInHost(socketPath: string): Promise<string[]> {
  const other = providerOn(socketPath, { autoStart: false })
  try {
    return (await other.listProcesses()).map((row) => row.id)
  } finally {
    await other.dispose()
  }
}

describe('late calls to the pty host provider, 100 sessions', () => {
  it('from exit listeners, in the turn the dispose began and the turn after, and after it: typed and true, nothing left', async () => {
    const timersBefore = timers()
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const { ids, pids } = await sessions(app)
    const fromListeners: Promise<void>[] = []
    const exited = new Set<string>()
    app.onExit(({ id }) => {
      exited.add(id)
      // Skipped: a spawn or an attach per exit would start what the check then has to stop.
      const skip = ['spawn', 'attach']
      fromListeners.push(
        callEveryMethod(`exit listener of ${id}`, app, id, ['provider_disposed', 'history_released'], skip).then((answers) => {
          // Its exit heard: known gone, whatever else is under way.
          expect(answers.write).toMatchObject({ sync: true, value: { kind: 'refused', reason: 'pty_exited' } })
          expect(answers.hasPty).toEqual({ sync: true, value: false })
          expect(answers.probeLiveness).toEqual({ sync: false, value: false })
          expect(answers.shutdown).toEqual({ sync: false, value: undefined })
          const listed = answers.listProcesses!
          if ('value' in listed) expect((listed.value as { id: string }[]).map((row) => row.id)).not.toContain(id)
        }),
      )
    })
    // Half stopped by the app (each exit listener calls every method)…
    await Promise.all(ids.slice(0, SESSIONS / 2).map((id) => app.shutdown(id)))
    // …the other half by the dispose, with every method called in the turn it began and the turn after.
    const disposing = app.dispose()
    const duringDispose = ids.slice(SESSIONS / 2).map((id) => callEveryMethod('the turn dispose() began', app, id, ['provider_disposed', 'history_released']))
    await new Promise((resolve) => setImmediate(resolve))
    const turnAfter = ids.slice(SESSIONS / 2).map((id) => callEveryMethod('the turn after dispose() began', app, id, ['provider_disposed', 'history_released']))
    await disposing
    await Promise.all([...duringDispose, ...turnAfter])
    await Promise.all(fromListeners)
    expect(exited.size).toBe(SESSIONS)
    // After it: every call refused `provider_disposed`, naming the method and the PTY.
    for (const id of ids.slice(0, 10)) {
      const answers = await callEveryMethod('after dispose()', app, id, ['provider_disposed'])
      for (const [method, answer] of Object.entries(answers)) expect('error' in answer, `after dispose(): ${method} refused`).toBe(true)
    }
    expect(await app.detach()).toBeUndefined()
    // Nothing left: no process, no session, no unhandled rejection, no timer.
    await waitFor(() => (pids.every((pid) => !isAlive(pid)) ? true : undefined), 'every session’s process to be gone')
    expect(await sessionsInHost(socketPath)).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled).toEqual([])
    expect(timers()).toBeLessThanOrEqual(timersBefore)
  }, 120_000)

  it('after the host was SIGKILLed, then during and after the dispose: typed and true (never an empty listing, a resolved stop or a vouch), nothing left', async () => {
    const timersBefore = timers()
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const { ids, pids } = await sessions(app)
    await killHost(socketPath)
    // The connection's close seen (its sessions unknown now).
    await waitFor(() => (app.connected ? undefined : true), 'the provider to see its connection closed')
    const afterKill = await Promise.all(ids.map((id) => callEveryMethod('after the host was SIGKILLed', app, id, ['host_unavailable', 'transport_lost'], ['spawn', 'attach'])))
    for (const answers of afterKill) {
      // Unknown, not gone and not alive: the host that could say is dead, and no successor answers yet.
      expect(answers.hasPty).toEqual({ sync: true, value: null })
      expect(answers.probeLiveness).toEqual({ sync: false, value: null })
      expect(answers.write).toEqual({ sync: true, value: { kind: 'refused', reason: 'provider_refused_write' } })
      // Never "nothing runs" nor "stopped": a listing and a stop reject.
      expect('error' in answers.listProcesses!).toBe(true)
      expect('error' in answers.shutdown!).toBe(true)
    }
    const disposing = app.dispose()
    const duringDispose = ids.map((id) => callEveryMethod('the turn dispose() began, the host dead', app, id, ['provider_disposed', 'host_unavailable', 'transport_lost'], ['spawn']))
    await disposing
    await Promise.all(duringDispose)
    for (const id of ids.slice(0, 10)) await callEveryMethod('after dispose(), the host dead', app, id, ['provider_disposed'])
    // The hang-up ended each session's process with its host; nothing else started.
    await waitFor(() => (pids.every((pid) => !isAlive(pid)) ? true : undefined), 'every session’s process to be gone')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled).toEqual([])
    expect(timers()).toBeLessThanOrEqual(timersBefore)
  }, 120_000)
})
