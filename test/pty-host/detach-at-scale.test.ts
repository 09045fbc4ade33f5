/**
 * Calls after a pty host provider's `detach()`, at the scale a user hits them: hundreds of PTYs
 * left running in the host, then the controller's own `dispose()` (which stops them) or late calls
 * from timers. The controller reports the detached provider once (as a disposed one), each call
 * answers what it can truly say, and every session still runs for the next app.
 */
import { createPtyController, type PtyController, type PtyControllerError, type PtyControllerExitEvent } from 'ptykit/controller'
import { isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { hostFixture, isAlive, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** PTYs per controller: two controllers share one host, 200 PTYs in all. */
const PTYS = 100

const unhandled = recordUnhandledRejections()

type App = { provider: PtyHostProvider; controller: PtyController; ids: string[]; pids: number[]; errors: PtyControllerError[]; exits: PtyControllerExitEvent[] }

async function appWithPtys(socketPath: string): Promise<App> {
  const provider = providerOn(socketPath)
  const controller = createPtyController({ provider })
  cleanups.push(() => controller.dispose({ stopPtys: false }))
  const errors: PtyControllerError[] = []
  const exits: PtyControllerExitEvent[] = []
  controller.on('error', (error) => errors.push(error))
  controller.on('exit', (event) => exits.push(event))
  const replies = await Promise.all(Array.from({ length: PTYS }, () => controller.spawn({ file: 'cat' })))
  return { provider, controller, ids: replies.map((reply) => reply.id), pids: replies.map((reply) => reply.pid!), errors, exits }
}

/** Each answer's shape, counted: `value:<json>` or `threw:<code>`. */
function tally(answers: readonly PromiseSettledResult<unknown>[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const answer of answers) {
    const key = answer.status === 'fulfilled' ? `value:${JSON.stringify(answer.value)}` : `threw:${(answer.reason as { code?: string }).code}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

/** `call` for each id, each from a timer of its own (as late calls in an app come). */
function fromTimers(ids: readonly string[], call: (id: string) => unknown): Promise<PromiseSettledResult<unknown>[]> {
  return Promise.allSettled(ids.map((id) => new Promise<unknown>((resolve, reject) => setTimeout(() => void Promise.resolve().then(() => call(id)).then(resolve, reject), 1))))
}

describe('calls after detach() at scale', () => {
  it(`${2 * PTYS} PTYs on a detached pty host: one error per controller, answers that say what is known, every session still running`, async () => {
    const { socketPath } = hostFixture(cleanups)
    const [stopping, late] = await Promise.all([appWithPtys(socketPath), appWithPtys(socketPath)])
    await Promise.all([stopping.provider.detach(), late.provider.detach()])

    // A plain controller.dispose() stops every PTY it owns: each stop is refused (the sessions run
    // on), each PTY published stop_unverified — and the detach reported once, not per stop step.
    await stopping.controller.dispose()
    expect(stopping.errors.map((error) => error.code)).toEqual(['shutdown_failed'])
    expect(stopping.errors[0]!.message).toMatch(/detached/)
    expect((stopping.errors[0]!.cause as { code?: string }).code).toBe('provider_detached')
    expect(stopping.exits.map((exit) => exit.cause)).toEqual(stopping.ids.map(() => ({ kind: 'unknown', reason: 'stop_unverified' })))

    // Late calls from timers, on the other controller.
    const { controller, ids } = late
    const answers = {
      write: tally(await fromTimers(ids, (id) => controller.write(id, 'x', 'driving'))),
      resize: tally(await fromTimers(ids, (id) => controller.resize(id, 100, 30))),
      hasPty: tally(await fromTimers(ids, (id) => controller.hasPty(id))),
      getCwd: tally(await fromTimers(ids, (id) => controller.getCwd(id))),
      probePtyLiveness: tally(await fromTimers(ids, (id) => controller.probePtyLiveness(id))),
      listProcesses: tally(await fromTimers(ids, () => controller.listProcesses())),
      // A budget far longer than the test's own timeout: answered at the refusal, not at its deadline.
      stopAndWait: tally(await fromTimers(ids.slice(0, PTYS / 2), (id) => controller.stopAndWait(id, { deadlineMs: Date.now() + 600_000 }))),
      kill: tally(await fromTimers(ids.slice(PTYS / 2), (id) => controller.kill(id))),
    }
    expect(answers).toEqual({
      write: { 'value:false': PTYS },
      resize: { 'value:false': PTYS },
      hasPty: { 'value:null': PTYS },
      getCwd: { 'value:null': PTYS },
      probePtyLiveness: { 'value:null': PTYS },
      listProcesses: { 'threw:listing_failed': PTYS },
      stopAndWait: { 'value:false': PTYS / 2 },
      kill: { 'value:true': PTYS / 2 },
    })
    // One report for the detached provider (its first refusal, a listing's), not one per call.
    expect(late.errors.map((error) => error.code)).toEqual(['listing_failed'])
    expect((late.errors[0]!.cause as { code?: string }).code).toBe('provider_detached')
    await controller.dispose()
    expect(late.errors).toHaveLength(1)
    expect(unhandled).toEqual([])

    // The sessions run on, and the next app attaches them.
    expect([...stopping.pids, ...late.pids].filter((pid) => !isAlive(pid))).toEqual([])
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    const attached = await next.attach(late.ids[0]!)
    expect(attached.pid).toBe(late.pids[0])
    expect((await next.listProcesses()).length).toBe(2 * PTYS)
  }, 60_000)

  it('the refusals after detach() name the method and the PTY, as those after dispose() do; probes and queries answer null', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath)
    const { id, pid } = await app.spawn({ file: 'cat' })
    await app.detach()
    const refusal = (error: unknown): unknown => (isPtyHostError(error) ? { code: error.code, ptyId: error.ptyId, method: /`(\w+)`/.exec(error.message)?.[1] } : error)
    const refused = await Promise.all([
      app.shutdown(id).catch(refusal),
      app.attach(id).catch(refusal),
      app.spawn({ file: 'cat' }).catch(refusal),
      app.listProcesses().catch(refusal),
      app.listExits().catch(refusal),
      app.forgetExits([{ id }]).catch(refusal),
    ])
    expect(refused).toEqual([
      { code: 'provider_detached', ptyId: id, method: 'shutdown' },
      { code: 'provider_detached', ptyId: id, method: 'attach' },
      { code: 'provider_detached', ptyId: undefined, method: 'spawn' },
      { code: 'provider_detached', ptyId: undefined, method: 'listProcesses' },
      { code: 'provider_detached', ptyId: undefined, method: 'listExits' },
      { code: 'provider_detached', ptyId: undefined, method: 'forgetExits' },
    ])
    expect([app.hasPty(id), await app.probeLiveness(id), await app.getCwd(id), await app.getForegroundProcess(id), await app.hasChildProcesses(id), await app.getBufferSnapshot(id)]).toEqual([null, null, null, null, null, null])
    expect(isAlive(pid!)).toBe(true)
    // After dispose() (which stops nothing after a detach): refused `provider_disposed`, the PTY named.
    await app.dispose()
    expect([await app.shutdown(id).catch(refusal), await app.probeLiveness(id).catch(refusal)]).toEqual([
      { code: 'provider_disposed', ptyId: id, method: 'shutdown' },
      { code: 'provider_disposed', ptyId: id, method: 'probeLiveness' },
    ])
    expect(isAlive(pid!)).toBe(true)
  }, 30_000)

  it('stops under way when detach() closes the connection: each stopAndWait answers false at the cut, one error for the provider', async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose({ stopPtys: false }))
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    // Shells that ignore the hang-up: each stop is still under way on the host when the detach comes.
    const replies = await Promise.all(Array.from({ length: 20 }, () => controller.spawn({ file: '/bin/sh', args: ['-c', 'trap "" HUP; exec cat'] })))
    const stops = replies.map((reply) => controller.stopAndWait(reply.id, { deadlineMs: Date.now() + 600_000 }))
    await new Promise((resolve) => setTimeout(resolve, 200))
    await provider.detach()
    expect(await Promise.all(stops)).toEqual(replies.map(() => false))
    expect(errors.map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['shutdown_failed', 'provider_detached']])
    expect(unhandled).toEqual([])
  }, 30_000)
})
