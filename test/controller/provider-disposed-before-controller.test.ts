/**
 * A host that disposes a provider before (or while) the controller that uses it is still live — a
 * common teardown-order mistake (`await provider.dispose(); await controller.dispose()`, or a
 * provider disposed from inside a listener). The SSH and pty host providers then refuse the
 * listing that verifies a stop with `provider_disposed` (the fake below is scripted to do the
 * same). Before, a `stopAndWait` under way when the provider was disposed answered `false` although
 * the provider had reported the PTY's exit (an operator close), while over the fake, whose listing
 * answers after its dispose, it answered `true`; and each stop step reported `listing_failed` (45
 * errors for 19 PTYs over SSH), noise the host cannot act on. Now the provider's own exit report
 * is the evidence, as for a provider that can say nothing else, and a PTY whose exit it never
 * reported stays in doubt (`false`), reported once per provider.
 * Real processes: the same sequences over node-pty in test/node-pty/provider-disposed-before-controller.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, isPtyControllerError, type PtyController, type PtyControllerError } from '../../src/controller/index.js'
import type { PtyExitEvent, PtyProvider } from '../../src/contracts/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness } from './controller-harness.js'

/** PTYs at once: the audit's SSH case had 19. */
const PTYS = 19

/** What the SSH and pty host providers reject a listing with once disposed. */
class ProviderDisposedError extends Error {
  readonly code = 'provider_disposed'
}

/** Dispose the fake, then refuse its listings with a plain error of the code (the fake refuses every call once disposed; a host's own provider may use any error class). */
async function disposeLikeSsh(provider: FakePtyProvider): Promise<void> {
  await provider.dispose()
  provider.setListingFailure(new ProviderDisposedError('Cannot call `listProcesses` on a disposed provider'))
}

describe('a provider disposed before the controller that uses it', () => {
  it('a stopAndWait under way when the provider is disposed answers true (its exit is an operator close), with no error', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let index = 0; index < PTYS; index++) ids.push((await h.run(h.controller.spawn({}))).id)
    // The hang-ups are still going on when the host disposes the provider.
    for (const id of ids) h.provider.setShutdownBehaviour(id, 'never_confirm')
    const stops = ids.map((id) => h.controller.stopAndWait(id, { timeoutMs: 5_000 }))
    await h.settle()
    await disposeLikeSsh(h.provider)
    expect(await h.run(Promise.all(stops))).toEqual(ids.map(() => true))
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause.kind])).toEqual(ids.map((id) => [id, 'operator_close']))
    expect(h.errors()).toEqual([])
    // The controller's dispose after it has nothing left to stop, and reports nothing.
    await h.run(h.controller.dispose())
    expect(h.errors()).toEqual([])
  })

  it('every call after the provider was disposed answers, and the late stops are true', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let index = 0; index < 3; index++) ids.push((await h.run(h.controller.spawn({}))).id)
    await disposeLikeSsh(h.provider)
    await h.settle()
    const [first, second, third] = ids as [string, string, string]
    expect(h.controller.hasPty(first)).toBe(false)
    expect(await h.run(h.controller.probePtyLiveness(first))).toBe(false)
    expect(h.controller.kill(second)).toBe(false)
    expect(await h.controller.writeWithSettlement(second, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(await h.run(h.controller.stopAndWait(third))).toBe(true)
    // An id no host held: the disposed host cannot prove it absent.
    expect(await h.run(h.controller.stopAndWait('never-spawned'))).toBe(false)
    await expect(h.run(h.controller.spawn({}))).rejects.toMatchObject({ cause: { code: 'provider_disposed' } })
    await h.run(h.controller.dispose())
    expect(h.errors()).toEqual([])
  })

  it('PTYs whose exit the disposed provider never reported: false, reported once for the provider, not per PTY and step', async () => {
    const { fake, controller, errors, run, ids, dropExits } = await controllerOverExitDroppingProvider(PTYS)
    dropExits()
    await disposeLikeSsh(fake)
    const stops = await run(Promise.all(ids.map((id) => controller.stopAndWait(id, { timeoutMs: 5_000 }))))
    expect(stops).toEqual(ids.map(() => false))
    await run(controller.dispose())
    // Once for the provider, whatever call met it first (here each stop's hang-up: a disposed
    // provider refuses every call, its shutdowns too) — not per PTY and step (76 errors for 19 PTYs).
    expect(errors.map((error) => [error.code, (error.cause as { code?: unknown }).code])).toEqual([['shutdown_failed', 'provider_disposed']])
    expect(errors.every(isPtyControllerError)).toBe(true)
    expect(errors[0]?.message).toMatch(/disposed before the controller/)
    await closeQuietly(controller)
  })
})

describe('every controller call after its provider was disposed (the provider refuses every call: provider_disposed)', () => {
  it('answers without a throw or an unhandled rejection, and reports the disposal once', async () => {
    const { fake, controller, errors, run, ids, dropExits } = await controllerOverExitDroppingProvider(4)
    const [a, b, c, d] = ids as [string, string, string, string]
    // Output its consumer acknowledges after the disposal: each acknowledgement reaches the provider.
    fake.emitData(a, 'x'.repeat(100))
    await run(Promise.resolve())
    dropExits()
    await fake.dispose()
    // Unknown, never a guess: the disposed provider can no longer say.
    expect(controller.hasPty(a)).toBeNull()
    expect(controller.hasPty('never-spawned')).toBeNull()
    expect(await run(controller.probePtyLiveness(a))).toBeNull()
    expect(await run(controller.getCwd(a))).toBeNull()
    expect(await run(controller.getForegroundProcess(a))).toBeNull()
    expect(await run(controller.hasChildProcesses(a))).toBeNull()
    expect(await run(controller.confirmForegroundProcess(a))).toBeNull()
    expect(await run(controller.supportsForegroundProcessEvidence('local'))).toBe(false)
    expect(controller.resize(a, 100, 30)).toBe(false)
    // The size the controller last set (as for any provider whose read-back throws).
    expect(controller.getSize(a)).toEqual({ cols: 80, rows: 24 })
    for (let acks = 0; acks < 5; acks++) controller.acknowledgeData(a, 10)
    expect(await controller.writeWithSettlement(b, 'x', 'driving')).toMatchObject({ kind: 'refused' })
    // A listing of the host is refused, as the provider refused it.
    await expect(run(controller.listProcesses('local'))).rejects.toMatchObject({ cause: { code: 'provider_disposed' } })
    expect(controller.kill(c)).toBe(true)
    expect(await run(controller.stopAndWait(d, { timeoutMs: 5_000 }))).toBe(false)
    await run(controller.dispose())
    // Once, by the first call that met it (`hasPty`, which throws): not once per call and PTY.
    expect(errors.map((error) => [error.code, (error.cause as { code?: unknown }).code])).toEqual([['provider_threw', 'provider_disposed']])
    expect(errors[0]?.message).toMatch(/disposed before the controller/)
  })
})

/** Drive `promise` to its end on the manual clock (as the harness's `run`). */
function runOn(fake: FakePtyProvider, clock: ReturnType<typeof createManualClock>) {
  return async <T>(promise: Promise<T>): Promise<T> => {
    let done = false
    const tracked = promise.finally(() => (done = true))
    tracked.catch(() => undefined)
    for (let turns = 0; !done; turns++) {
      await fake.settle()
      if (done) break
      const next = clock.nextTimerAt()
      if (next === null && turns < 8) continue
      if (next === null) throw new Error('runOn(): the promise is stuck')
      turns = 0
      clock.advance(Math.max(0, next - clock.now()))
    }
    return tracked
  }
}

async function closeQuietly(controller: PtyController): Promise<void> {
  await controller.dispose().catch(() => undefined)
}

/**
 * A controller (manual clock) over a fake whose disposal drops the exits of its PTYs — the
 * controller still thinks them live and asks it — once `dropExits()` is called; `count` PTYs spawned.
 */
async function controllerOverExitDroppingProvider(count: number) {
  const fake = createFakePtyProvider({ scheduling: 'manual' })
  let dropping = false
  const provider: PtyProvider = Object.assign(Object.create(fake) as PtyProvider, {
    onExit: (listener: (event: PtyExitEvent) => void) => fake.onExit((event) => (dropping ? undefined : listener(event))),
  })
  const clock = createManualClock()
  const controller = createPtyController({ provider, clock })
  const errors: PtyControllerError[] = []
  controller.on('error', (error) => errors.push(error))
  const run = runOn(fake, clock)
  const ids: string[] = []
  for (let index = 0; index < count; index++) ids.push((await run(controller.spawn({}))).id)
  return { fake, controller, errors, run, ids, dropExits: (): void => void (dropping = true) }
}
