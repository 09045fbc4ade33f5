/**
 * A `stopAndWait` hands the provider the time its caller left (`timeoutMs`), and a real provider
 * (node-pty, SSH, the pty host) rejects a stop still running when that time runs out
 * (`shutdown_timeout`) — also one whose hang-up was sent and ends the process a moment later. With
 * a short or past deadline that is the caller's deadline passing, not a provider fault: the call
 * answers `false`, and the exit that follows is an operator close. Until 7 Dec each such stop was
 * also reported `shutdown_failed` ("could not shut down"): 40 agents stopped with `{ timeoutMs: 1 }`
 * or a past `deadlineMs` in test/controller/orchestrator-user-side.test.ts reported 40 errors over
 * node-pty and none over the fake. A stop that does not land is still reported — when the
 * unconfirmed-stop window publishes it `stop_unverified` — and a rejection within the deadline at once.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'

const PTYS = 20

/**
 * The fake's `shutdown` as a real provider's: the stop's signal is sent at once, the process dies
 * `dieAfterMs` later (never, with `null`), and the call rejects `shutdown_timeout` when the
 * `timeoutMs` it was given runs out first — read on the clock, as node-pty's stop loop reads it
 * (`performance.now()`, the controller's clock too): a timer alone may fire a little early (it
 * counts from the event loop's cached time), and the rejection would come before the deadline.
 */
function slowToDie(provider: FakePtyProvider, dieAfterMs: number | null): void {
  const original = provider.shutdown.bind(provider)
  provider.shutdown = (id, options) =>
    new Promise<void>((resolve, reject) => {
      let settled = false
      const deadline = performance.now() + (options?.timeoutMs ?? 5_000)
      if (dieAfterMs !== null) {
        setTimeout(() => {
          void original(id, options).then(() => {
            if (!settled) resolve()
            settled = true
          })
        }, dieAfterMs)
      }
      const giveUpAtDeadline = (): void => {
        if (settled) return
        const left = deadline - performance.now()
        if (left > 0) {
          setTimeout(giveUpAtDeadline, Math.ceil(left))
          return
        }
        reject(Object.assign(new Error(`PTY ${id} could not be stopped by its deadline`), { code: 'shutdown_timeout' }))
        settled = true
      }
      setTimeout(giveUpAtDeadline, options?.timeoutMs ?? 5_000)
    })
}

async function setup(dieAfterMs: number | null) {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider, stop: { unconfirmedAfterMs: 200 } })
  const errors: string[] = []
  const exits: PtyControllerExitEvent[] = []
  controller.on('error', (error) => errors.push(`${error.code} ${error.ptyId}`))
  controller.on('exit', (event) => exits.push(event))
  const ids = (await Promise.all(Array.from({ length: PTYS }, () => controller.spawn({})))).map((reply) => reply.id)
  slowToDie(provider, dieAfterMs)
  return { provider, controller, errors, exits, ids }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const rushed = (controller: ReturnType<typeof createPtyController>, ids: string[]) =>
  Promise.all(ids.map((id, index) => (index % 2 === 0 ? controller.stopAndWait(id, { timeoutMs: 1 }) : controller.stopAndWait(id, { deadlineMs: Date.now() - 1_000 }))))

describe('a stop whose provider gives up at the deadline the caller chose', () => {
  it('landing a moment later: false, an operator close, and no shutdown_failed', async () => {
    const { provider, controller, errors, exits, ids } = await setup(20)
    expect(await rushed(controller, ids)).toEqual(ids.map(() => false))
    await pause(100)
    expect(exits.map((exit) => exit.cause)).toEqual(ids.map(() => ({ kind: 'operator_close' })))
    expect(provider.livePtyIds()).toEqual([])
    // Past the unconfirmed-stop window too: nothing is reported late.
    await pause(250)
    expect(errors).toEqual([])
    await controller.dispose()
  })

  it('never landing: reported once per PTY, with stop_unverified, when the unconfirmed-stop window ends — not before', async () => {
    const { provider, controller, errors, exits, ids } = await setup(null)
    expect(await rushed(controller, ids)).toEqual(ids.map(() => false))
    await pause(50)
    expect(errors).toEqual([])
    await pause(300)
    expect(exits.map((exit) => exit.cause)).toEqual(ids.map(() => ({ kind: 'unknown', reason: 'stop_unverified' })))
    expect(errors.sort()).toEqual(ids.map((id) => `shutdown_failed ${id}`).sort())
    expect(provider.livePtyIds().sort()).toEqual([...ids].sort())
    await controller.dispose({ stopPtys: false })
  })

  it('a rejection within the deadline is reported at once', async () => {
    const { provider, controller, errors, ids } = await setup(null)
    provider.shutdown = (id) => Promise.reject(Object.assign(new Error(`cannot signal ${id}`), { code: 'shutdown_failed' }))
    expect(await controller.stopAndWait(ids[0]!, { timeoutMs: 5_000 })).toBe(false)
    expect(errors).toEqual([`shutdown_failed ${ids[0]}`, `shutdown_failed ${ids[0]}`])
    await controller.dispose({ stopPtys: false })
  })
})
