// A stop begun while the provider's own dispose() is under way. The provider contract allows a
// provider to refuse `provider_disposed` "from the call of `dispose` on" while it stops its PTYs
// itself and reports their exits moments later. Found at scale by helper-215 (one controller over
// three hosts, stops begun 0–50 ms after a provider's dispose: 3 runs of ~25 answered `false` for
// PTYs then closed as the operator asked). The stop answered `false` at once — both its steps
// refused — where the exit the disposal reports was on its way: the verdict waits for it, within
// the stop's budget. Traced at scale (helper-216, on the tree before the fix): the pty host's
// exit came in while the stop's hang-up was in flight, the closing connection refused the
// hang-up, then the force — `false` for a PTY already closed as asked (the third case here).
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/** A fake whose dispose() refuses every stop at once and reports the PTYs' exits `reportAfterMs` later. */
function providerDisposingSlowly(reportAfterMs: number): { provider: PtyProvider; disposeStarted: () => Promise<void> } {
  const fake = createFakePtyProvider()
  let disposing = false
  const provider: PtyProvider = Object.assign(Object.create(fake) as PtyProvider, {
    shutdown(id: string, options?: object): Promise<void> {
      if (disposing) return Promise.reject(Object.assign(new Error(`Cannot call \`shutdown\`: disposing`), { code: 'provider_disposed', ptyId: id }))
      return fake.shutdown(id, options)
    },
    listProcesses(options?: object) {
      if (disposing) return Promise.reject(Object.assign(new Error('Cannot call `listProcesses`: disposing'), { code: 'provider_disposed' }))
      return fake.listProcesses(options)
    },
    async dispose(): Promise<void> {
      disposing = true
      await new Promise((resolve) => setTimeout(resolve, reportAfterMs))
      await fake.dispose()
    },
  })
  return { provider, disposeStarted: () => provider.dispose!() }
}

/**
 * A fake whose hang-ups stay in flight (a host that has not answered them yet) until dispose():
 * the disposal stops the PTYs and reports their exits, then — once `exitsIn` resolves — closes
 * its connection, refusing what was still in flight `provider_disposed` (as the pty host provider
 * does), and every step after that.
 */
function providerClosingOverHangUps(exitsIn: () => Promise<void>): PtyProvider {
  const fake = createFakePtyProvider()
  let disposing = false
  const inFlight: ((error: Error) => void)[] = []
  const refusal = (id?: string): Error => Object.assign(new Error('Cannot call `shutdown`: disposing'), { code: 'provider_disposed', ptyId: id })
  return Object.assign(Object.create(fake) as PtyProvider, {
    shutdown(id: string): Promise<void> {
      if (disposing) return Promise.reject(refusal(id))
      return new Promise<void>((_, reject) => void inFlight.push(() => reject(refusal(id))))
    },
    listProcesses(options?: object) {
      if (disposing) return Promise.reject(refusal())
      return fake.listProcesses(options)
    },
    async dispose(): Promise<void> {
      disposing = true
      await fake.dispose()
      await exitsIn()
      for (const reject of inFlight.splice(0)) reject(refusal())
    },
  })
}

describe('stopAndWait begun while the provider is being disposed', () => {
  it('answers true once the exit the disposal reports arrives (an operator close), not false at the first refusal', async () => {
    const { provider, disposeStarted } = providerDisposingSlowly(50)
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const ids = await Promise.all([1, 2, 3].map(async () => (await controller.spawn({})).id))
    const disposing = disposeStarted()
    const verdicts = await Promise.all(ids.map((id) => controller.stopAndWait(id, { timeoutMs: 5_000 })))
    await disposing
    expect(verdicts).toEqual([true, true, true])
    expect(exits.map((exit) => exit.cause.kind)).toEqual(['operator_close', 'operator_close', 'operator_close'])
    await controller.dispose()
  })

  it('a hang-up in flight refused by the closing disposal after the exit came in: true (at scale, the force step refused too answered false)', async () => {
    let exitsSeen: () => void = () => undefined
    const allExited = new Promise<void>((resolve) => (exitsSeen = resolve))
    const provider = providerClosingOverHangUps(() => allExited)
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => {
      exits.push(event)
      if (exits.length === 3) exitsSeen()
    })
    const ids = await Promise.all([1, 2, 3].map(async () => (await controller.spawn({})).id))
    const verdicts = Promise.all(ids.map((id) => controller.stopAndWait(id, { timeoutMs: 5_000 })))
    await provider.dispose!()
    expect(await verdicts).toEqual([true, true, true])
    expect(exits.map((exit) => exit.cause.kind)).toEqual(['operator_close', 'operator_close', 'operator_close'])
    await controller.dispose()
  })

  it('a PTY whose exit the disposal never reports: false at the stop deadline (doubt stays doubt)', async () => {
    const fake = createFakePtyProvider()
    const provider: PtyProvider = Object.assign(Object.create(fake) as PtyProvider, {
      shutdown: (id: string) => Promise.reject(Object.assign(new Error('disposed'), { code: 'provider_disposed', ptyId: id })),
      listProcesses: () => Promise.reject(Object.assign(new Error('disposed'), { code: 'provider_disposed' })),
    })
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    const started = Date.now()
    expect(await controller.stopAndWait(id, { timeoutMs: 300 })).toBe(false)
    expect(Date.now() - started).toBeLessThan(5_000)
    await controller.dispose({ stopPtys: false })
  })
})
