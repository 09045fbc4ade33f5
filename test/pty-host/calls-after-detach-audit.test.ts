/**
 * Every public method of the pty host provider called after its `detach()`, with 200 sessions
 * attached: at once, from a timer, from a listener that fires while the detach waits, and twice.
 * Each answers as docs/pty-host.md ("After `detach()`") says: a typed `provider_detached` refusal
 * naming the method and the PTY, or the documented answer (`null`, `false`, a refused write).
 */
import { isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fakeHostClosedAfter, hostFixture, isAlive, killHostAndClean, makeSocketDir, okReplyFrame, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const unhandled = recordUnhandledRejections()
const SESSIONS = 200

/** An answer as data: the value, or the refusal's code, method and PTY. */
function shape(outcome: { value: unknown } | { error: unknown }): unknown {
  if ('value' in outcome) return { value: outcome.value }
  const error = outcome.error
  if (!isPtyHostError(error)) return { untyped: String(error) }
  return { code: error.code, method: /`(\w+)`/.exec(error.message)?.[1], ptyId: error.ptyId }
}

/** Call `run`, catching a synchronous throw and a rejection alike. */
async function settle(run: () => unknown): Promise<unknown> {
  try {
    return shape({ value: await run() })
  } catch (error) {
    return shape({ error })
  }
}

/** Every public method of the provider about `id`, each answer as data. */
function everyCall(provider: PtyHostProvider, id: string): Record<string, () => unknown> {
  return {
    spawn: () => provider.spawn({ file: 'cat' }),
    attach: () => provider.attach(id),
    write: () => provider.write(id, 'x'),
    writeBytes: () => provider.writeBytes(id, new Uint8Array([120])),
    resize: () => provider.resize(id, 90, 30),
    shutdown: () => provider.shutdown(id),
    pauseProducer: () => provider.pauseProducer(id),
    resumeProducer: () => provider.resumeProducer(id),
    acknowledgeData: () => provider.acknowledgeData(id, 5),
    listProcesses: () => provider.listProcesses(),
    listExits: () => provider.listExits(),
    forgetExits: () => provider.forgetExits([{ id }]),
    hasPty: () => provider.hasPty(id),
    probeLiveness: () => provider.probeLiveness(id),
    getCwd: () => provider.getCwd(id),
    getForegroundProcess: () => provider.getForegroundProcess(id),
    hasChildProcesses: () => provider.hasChildProcesses(id),
    clearBuffer: () => provider.clearBuffer(id),
    getBufferSnapshot: () => provider.getBufferSnapshot(id),
    detach: () => provider.detach(),
  }
}

/** What each call answers after `detach()` (docs/pty-host.md, "After `detach()`"). */
function documented(id: string): Record<string, unknown> {
  const refused = (method: string, ptyId?: string): unknown => ({ code: 'provider_detached', method, ptyId })
  return {
    spawn: refused('spawn'),
    attach: refused('attach', id),
    write: { value: { kind: 'refused', reason: 'provider_refused_write' } },
    writeBytes: { value: { kind: 'refused', reason: 'provider_refused_write' } },
    resize: { value: false },
    shutdown: refused('shutdown', id),
    pauseProducer: { value: undefined },
    resumeProducer: { value: undefined },
    acknowledgeData: { value: undefined },
    listProcesses: refused('listProcesses'),
    listExits: refused('listExits'),
    forgetExits: refused('forgetExits'),
    hasPty: { value: null },
    probeLiveness: { value: null },
    getCwd: { value: null },
    getForegroundProcess: { value: null },
    hasChildProcesses: { value: null },
    clearBuffer: refused('clearBuffer', id),
    getBufferSnapshot: { value: null },
    detach: { value: undefined },
  }
}

/** Each call about each id, the distinct answers per method (one each, when every id answers alike). */
async function answersFor(provider: PtyHostProvider, ids: readonly string[], when: (call: () => unknown) => Promise<unknown>): Promise<Record<string, unknown[]>> {
  const byMethod: Record<string, unknown[]> = {}
  await Promise.all(
    ids.flatMap((id) =>
      Object.entries(everyCall(provider, id)).map(async ([method, call]) => {
        const answer = JSON.stringify(await when(call)).replaceAll(JSON.stringify(id), '"<id>"')
        const seen = (byMethod[method] ??= [])
        if (!seen.includes(answer)) seen.push(answer)
      }),
    ),
  )
  return byMethod
}

function expectedAnswers(): Record<string, unknown[]> {
  return Object.fromEntries(Object.entries(documented('<id>')).map(([method, answer]) => [method, [JSON.stringify(answer)]]))
}

async function sessionsAttached(socketPath: string): Promise<{ app: PtyHostProvider; ids: string[]; pids: number[] }> {
  const starter = providerOn(socketPath)
  const spawned = await Promise.all(Array.from({ length: SESSIONS }, () => starter.spawn({ file: 'cat' })))
  await starter.detach()
  const app = providerOn(socketPath, { autoStart: false })
  cleanups.push(() => app.dispose())
  await Promise.all(spawned.map((reply) => app.attach(reply.id)))
  return { app, ids: spawned.map((reply) => reply.id), pids: spawned.map((reply) => reply.pid!) }
}

describe(`every call after detach(), ${SESSIONS} sessions attached`, () => {
  it('at once, from a timer and twice: each answers as documented, and every session runs on for a new provider', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { app, ids, pids } = await sessionsAttached(socketPath)
    // Paused by this app when it detaches: the host drops a closed connection's pauses, so the sessions run on.
    for (const id of ids) app.pauseProducer(id)
    await Promise.all([app.detach(), app.detach()])
    expect(app.connected).toBe(false)
    const atOnce = await answersFor(app, ids, (call) => settle(call))
    const fromTimer = await answersFor(app, ids, (call) => new Promise((resolve) => setTimeout(() => void settle(call).then(resolve), 1)))
    const twice = await answersFor(app, ids, async (call) => [await settle(call), await settle(call)])
    expect(atOnce).toEqual(expectedAnswers())
    expect(fromTimer).toEqual(expectedAnswers())
    expect(twice).toEqual(Object.fromEntries(Object.entries(expectedAnswers()).map(([method, [answer]]) => [method, [`[${answer},${answer}]`]])))
    expect(unhandled).toEqual([])

    expect(pids.filter((pid) => !isAlive(pid))).toEqual([])
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    const listed = await next.listProcesses()
    expect(listed.map((row) => row.id).sort()).toEqual([...ids].sort())
    expect((await Promise.all(ids.map((id) => next.attach(id, { replayFrom: 'live' })))).map((reply) => reply.pid)).toEqual(pids)
    // Not left paused: each session echoes what the next app types.
    const echoed = new Set<string>()
    const allEchoed = new Promise<void>((resolve) => {
      next.onData(({ id, data }) => {
        if (data.includes('ping')) echoed.add(id)
        if (echoed.size === ids.length) resolve()
      })
    })
    const written = await Promise.all(ids.map((id) => next.write(id, 'ping\r')))
    expect(written.filter((settlement) => settlement.kind !== 'accepted')).toEqual([])
    await allEchoed
  }, 120_000)

  it('asked in the same turn just before detach(), on a provider still connecting: each refusal names the method and the PTY', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { ids, pids } = await sessionsAttached(socketPath)
    // A provider that has not connected yet: each call waits for the connect, which detach() cuts off.
    const late = providerOn(socketPath, { autoStart: false })
    const calls = ids.flatMap((id) => [settle(() => late.attach(id)), settle(() => late.shutdown(id))])
    const listings = [settle(() => late.listProcesses()), settle(() => late.listExits()), settle(() => late.forgetExits([{ id: ids[0]! }]))]
    await late.detach()
    const answers = (await Promise.all(calls)).map((answer, index) => JSON.stringify(answer).replaceAll(JSON.stringify(ids[Math.floor(index / 2)]), '"<id>"'))
    expect([...new Set(answers)].sort()).toEqual(
      [
        { code: 'provider_detached', method: 'attach', ptyId: '<id>' },
        { code: 'provider_detached', method: 'shutdown', ptyId: '<id>' },
      ]
        .map((answer) => JSON.stringify(answer))
        .sort(),
    )
    expect(await Promise.all(listings)).toEqual([
      { code: 'provider_detached', method: 'listProcesses' },
      { code: 'provider_detached', method: 'listExits' },
      { code: 'provider_detached', method: 'forgetExits' },
    ])
    expect(unhandled).toEqual([])
    expect(pids.filter((pid) => !isAlive(pid))).toEqual([])
  }, 120_000)

  it('from a data listener that fires while detach() waits for attaches in flight: a clear is refused, a listing answers or is refused naming its method', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { app, ids, pids } = await sessionsAttached(socketPath)
    // Output each session retains, replayed by the re-attaches below.
    await Promise.all(ids.map((id) => app.write(id, 'hello\r')))
    const heard = new Set<string>()
    await new Promise<void>((resolve) => {
      const unsubscribe = app.onData(({ id }) => {
        heard.add(id)
        if (heard.size === ids.length) {
          unsubscribe()
          resolve()
        }
      })
    })
    let detaching: Promise<void> | null = null
    const clears: Promise<unknown>[] = []
    const listings: Promise<unknown>[] = []
    const queries: Promise<unknown>[] = []
    app.onData(({ id }) => {
      // The first replay starts the detach; the replays after it arrive while it waits for their attaches.
      if (detaching === null) {
        detaching = app.detach()
        return
      }
      clears.push(settle(() => app.clearBuffer(id)).then((answer) => JSON.stringify(answer).replaceAll(JSON.stringify(id), '"<id>"')))
      queries.push(settle(() => app.getCwd(id)), settle(() => app.probeLiveness(id)))
      listings.push(settle(() => app.listProcesses()), settle(() => app.listExits()))
    })
    const reattached = await Promise.allSettled(ids.map((id) => app.attach(id, { replayFrom: 'retained' })))
    await detaching
    expect(clears.length).toBeGreaterThan(0)
    expect(reattached.filter((outcome) => outcome.status === 'rejected')).toEqual([])
    expect([...new Set(await Promise.all(clears))]).toEqual([JSON.stringify({ code: 'provider_detached', method: 'clearBuffer', ptyId: '<id>' })])
    // A listing sent before the close may be answered; cut off, it is refused naming its method (not the wire's `list`).
    const listingShapes = new Set((await Promise.all(listings)).map((answer) => ('value' in (answer as object) ? 'answered' : JSON.stringify(answer))))
    for (const shape of listingShapes) {
      expect(['answered', JSON.stringify({ code: 'provider_detached', method: 'listProcesses' }), JSON.stringify({ code: 'provider_detached', method: 'listExits' })]).toContain(shape)
    }
    // A query cut off answers as one after the detach: "unknown", never a refusal.
    for (const answer of await Promise.all(queries)) expect(answer).toHaveProperty('value')
    expect(unhandled).toEqual([])
    expect(pids.filter((pid) => !isAlive(pid))).toEqual([])
  }, 120_000)
})

describe('requests cut off by detach()', () => {
  it('a listing, an exits listing, a forgetExits and a clear the host has not answered: each refused naming its method (not the wire name) and the PTY', async () => {
    // A host that answers the attach of `term-1` and nothing else: every other request stays in flight.
    const host = await fakeHostClosedAfter(
      cleanups,
      (message, socket) => {
        if (message.type === 'request' && message.method === 'attach') {
          socket.write(okReplyFrame(message.id, { id: 'term-1', pid: 4242, incarnationId: 'inc-1', replayFrom: 0, lostChars: 0, exited: false }))
        }
      },
      { welcome: { methods: ['spawn', 'attach', 'write', 'resize', 'pause', 'resume', 'ack', 'shutdown', 'list', 'probe', 'cwd', 'foreground', 'children', 'clear', 'snapshot', 'exits', 'forgetExits'] } },
    )
    const app = providerOn(host.socketPath, { autoStart: false })
    await app.attach('term-1')
    const pending = [
      settle(() => app.listProcesses()),
      settle(() => app.listExits()),
      settle(() => app.forgetExits([{ id: 'term-1' }])),
      settle(() => app.clearBuffer('term-1')),
      settle(() => app.getCwd('term-1')),
    ]
    await new Promise((resolve) => setTimeout(resolve, 50))
    await app.detach()
    expect(await Promise.all(pending)).toEqual([
      { code: 'provider_detached', method: 'listProcesses' },
      { code: 'provider_detached', method: 'listExits' },
      { code: 'provider_detached', method: 'forgetExits' },
      { code: 'provider_detached', method: 'clearBuffer', ptyId: 'term-1' },
      { value: null },
    ])
    expect(unhandled).toEqual([])
  }, 30_000)
})

describe('a spawn with a sessionId refused by detach()', () => {
  it('names `spawn`, the method called — not the attach it sends first', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { ids } = await sessionsAttached(socketPath)
    const app = providerOn(socketPath, { autoStart: false })
    const open = await app.spawn({ file: 'cat' })
    // Asked in the same turn just before the detach, on an open connection (sent a turn later)…
    const sameTurn = [settle(() => app.spawn({ file: 'cat', sessionId: ids[0]! })), settle(() => app.spawn({ file: 'cat', sessionId: ids[1]!, attachOnly: true }))]
    await app.detach()
    // …and on a provider still connecting, whose connect the detach cuts off.
    const connecting = providerOn(socketPath, { autoStart: false })
    const cutOff = [settle(() => connecting.spawn({ file: 'cat', sessionId: ids[2]! })), settle(() => connecting.spawn({ file: 'cat', sessionId: ids[3]!, attachOnly: true }))]
    await connecting.detach()
    const refusedSpawn = { code: 'provider_detached', method: 'spawn' }
    expect([...(await Promise.all(sameTurn)), ...(await Promise.all(cutOff))]).toEqual([refusedSpawn, refusedSpawn, refusedSpawn, refusedSpawn])
    expect(isAlive(open.pid!)).toBe(true)
    expect(unhandled).toEqual([])
  }, 60_000)
})

describe('detach() while the provider waits for a host it started to listen', () => {
  it('the waiting spawn is refused at the detach, naming spawn — not host_unavailable at connectTimeoutMs — and the poll stops', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    // A "host" that starts and never listens (it ends by itself after 5 s).
    const script = join(dir, 'never-listens.cjs')
    writeFileSync(script, 'setTimeout(() => undefined, 5_000)\n')
    const timeoutsBefore = process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length
    const app = providerOn(socketPath, { hostCommand: { file: process.execPath, args: [script] }, connectTimeoutMs: 600_000 })
    const spawning = settle(() => app.spawn({ file: 'cat' }))
    // Long enough for the first connect to fail and the host to be started: the poll is under way.
    await new Promise((resolve) => setTimeout(resolve, 300))
    await app.detach()
    // Answered at the detach: before, only at connectTimeoutMs (here 600 s, past the test's timeout).
    expect(await spawning).toEqual({ code: 'provider_detached', method: 'spawn' })
    expect(process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length).toBeLessThanOrEqual(timeoutsBefore)
    expect(unhandled).toEqual([])
  }, 20_000)
})
