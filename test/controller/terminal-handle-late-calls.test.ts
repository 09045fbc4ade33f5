/**
 * Terminal handles called late — from timers and async callbacks, twice over, 200 handles at once —
 * after their PTY exited, after the controller's `dispose()` (with and without stopping), and after
 * the provider's `detach()`: each call answers as docs/controller.md says, nothing throws, every
 * iterator ends, and no listener (the handles', the controller's, the provider's, a shared abort
 * signal's) is left behind.
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyTerminal } from '../../src/controller/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'

const HANDLES = 200

class ProviderDetachedError extends Error {
  readonly code = 'provider_detached'
}

/** The fake answering as the pty host provider does after `detach()` (see calls-after-provider-detach.test.ts). */
function detach(provider: FakePtyProvider): void {
  Object.assign(provider, {
    shutdown: (id: string) => Promise.reject(new ProviderDetachedError(`Cannot call \`shutdown\` (${id}): detached`)),
    hasPty: () => null,
    probeLiveness: async () => null,
  })
  provider.setListingFailure(new ProviderDetachedError('Cannot call `listProcesses`: detached'))
}

type Situation = 'exited' | 'disposed' | 'disposed keeping PTYs' | 'detached, then disposed' | 'detached, then disposed keeping PTYs'

/** Each late call's answers, tallied: `value:<json>` or `threw:<name>`. */
async function tally(terminals: readonly PtyTerminal[], call: (terminal: PtyTerminal) => unknown): Promise<Record<string, number>> {
  const answers = await Promise.allSettled(
    terminals.map((terminal) => new Promise((resolve, reject) => setTimeout(() => void Promise.resolve().then(() => call(terminal)).then(resolve, reject), 0))),
  )
  const counts: Record<string, number> = {}
  for (const answer of answers) {
    const key = answer.status === 'fulfilled' ? `value:${JSON.stringify(answer.value)}` : `threw:${(answer.reason as Error).name}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

const all = (value: unknown): Record<string, number> => ({ [`value:${JSON.stringify(value)}`]: HANDLES })

/** What each situation's late calls answer (the controller's table, through the handle). */
const EXPECTED: Record<Situation, { write: string; settlement: unknown; stop: boolean; kill: boolean; exited: boolean }> = {
  exited: { write: 'pty_exited', settlement: false, stop: true, kill: false, exited: true },
  disposed: { write: 'controller_disposed', settlement: false, stop: true, kill: false, exited: true },
  'disposed keeping PTYs': { write: 'controller_disposed', settlement: false, stop: false, kill: false, exited: false },
  'detached, then disposed': { write: 'controller_disposed', settlement: false, stop: false, kill: true, exited: true },
  'detached, then disposed keeping PTYs': { write: 'controller_disposed', settlement: false, stop: false, kill: false, exited: false },
}

describe(`${HANDLES} terminal handles called late`, () => {
  it('after the provider detach(), the controller not disposed: refused writes, waiting iterators, kill true then stop false — stop_unverified ends them', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(error.code))
    const terminals = await Promise.all(Array.from({ length: HANDLES }, () => controller.spawnTerminal({})))
    detach(provider)
    Object.assign(provider, { write: () => ({ kind: 'refused', reason: 'provider_refused_write' }), resize: () => false })
    const signal = new AbortController().signal
    const pulls = terminals.map((terminal) => terminal.output({ signal }).next())
    let heard = 0
    for (const terminal of terminals) terminal.onExit(() => heard++)
    expect(await tally(terminals, (terminal) => terminal.writeWithSettlement('x'))).toEqual(all({ kind: 'refused', reason: 'provider_refused_write' }))
    expect(await tally(terminals, (terminal) => terminal.resize(100, 30))).toEqual(all(false))
    const waiting = await Promise.race([Promise.any(pulls).then(() => 'ended'), new Promise((resolve) => setImmediate(() => resolve('waiting')))])
    expect(waiting).toBe('waiting')
    const half = HANDLES / 2
    expect(await tally(terminals.slice(0, half), (terminal) => terminal.kill())).toEqual({ 'value:true': half })
    expect(await tally(terminals.slice(half), (terminal) => terminal.stop({ timeoutMs: 600_000 }))).toEqual({ 'value:false': half })
    // Every PTY published stop_unverified: its output ended, `exited` resolved, its listener heard it once.
    expect((await Promise.all(pulls)).every((result) => result.done === true)).toBe(true)
    const causes = await Promise.all(terminals.map((terminal) => terminal.exited.then((event) => event.cause)))
    expect(causes).toEqual(terminals.map(() => ({ kind: 'unknown', reason: 'stop_unverified' })))
    expect(heard).toBe(HANDLES)
    // Twice: the same answers, nothing published again.
    expect(await tally(terminals, (terminal) => terminal.writeWithSettlement('x'))).toEqual(all({ kind: 'refused', reason: 'pty_exited' }))
    expect(await tally(terminals, (terminal) => terminal.stop({ timeoutMs: 600_000 }))).toEqual(all(false))
    expect(heard).toBe(HANDLES)
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    expect(errors).toEqual(['shutdown_failed'])
    await controller.dispose({ stopPtys: false })
    expect(controller.eventNames()).toEqual([])
    expect(provider.listenerCount()).toBe(0)
  })

  for (const situation of Object.keys(EXPECTED) as Situation[]) {
    it(`${situation}: each call answers as documented, twice; nothing throws, every iterator ends, no listener is left`, async () => {
      const provider = createFakePtyProvider()
      const controller = createPtyController({ provider })
      const errors: string[] = []
      controller.on('error', (error) => errors.push(error.code))
      const terminals = await Promise.all(Array.from({ length: HANDLES }, () => controller.spawnTerminal({})))
      const signal = new AbortController().signal
      const iterators = terminals.map((terminal) => terminal.output({ signal }))
      const pulls = iterators.map((iterator) => iterator.next())
      let heard = 0
      for (const terminal of terminals) {
        terminal.onData(() => heard++)
        terminal.onExit(() => heard++)
        terminal.onOutputLoss(() => heard++)
      }

      if (situation === 'exited') {
        for (const terminal of terminals) provider.emitExit(terminal.id, { exitCode: 0 })
        await Promise.all(terminals.map((terminal) => terminal.exited))
      } else {
        if (situation.startsWith('detached')) detach(provider)
        await controller.dispose(situation.endsWith('keeping PTYs') ? { stopPtys: false } : {})
      }
      // Every iterator that waited ends; one opened late ends at once.
      expect((await Promise.all(pulls)).every((result) => result.done === true)).toBe(true)
      const expected = EXPECTED[situation]
      for (let round = 0; round < 2; round++) {
        expect(await tally(terminals, (terminal) => terminal.write('x'))).toEqual(all(expected.settlement))
        expect(await tally(terminals, (terminal) => terminal.writeWithSettlement('x'))).toEqual(all({ kind: 'refused', reason: expected.write }))
        expect(await tally(terminals, (terminal) => terminal.resize(100, 30))).toEqual(all(false))
        expect(await tally(terminals, (terminal) => terminal.acknowledgeData(1))).toEqual(all(undefined))
        expect(await tally(terminals, (terminal) => typeof terminal.onData(() => heard++))).toEqual(all('function'))
        expect(await tally(terminals, async (terminal) => (await terminal.output({ signal }).next()).done)).toEqual(all(true))
        // Opened late and never pulled (a view that unmounted at once): it holds no abort listener.
        expect(await tally(terminals, (terminal) => typeof terminal.output({ signal }).next)).toEqual(all('function'))
        expect(await tally(terminals, (terminal) => terminal.kill())).toEqual(all(expected.kill))
        expect(await tally(terminals, (terminal) => terminal.stop({ timeoutMs: 1_000 }))).toEqual(all(expected.stop))
        expect(await tally(terminals, (terminal) => terminal[Symbol.asyncDispose]())).toEqual(all(undefined))
      }
      if (situation === 'exited') await controller.dispose()
      // `exited` resolves where an exit was published (a stop given up on publishes stop_unverified);
      // where the PTYs were let go of, it stays pending (no exit happened).
      const exited = await Promise.race([Promise.all(terminals.map((terminal) => terminal.exited)).then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))])
      expect(exited).toBe(expected.exited)

      // Nothing left listening: the handles' listeners were let go of (the late ones not kept), the
      // controller's and the provider's removed, the shared signal's abort listener gone.
      const heardBefore = heard
      // (Output of the PTYs still running: those let go of, or whose stop the detached provider refused.)
      for (const terminal of terminals) if (provider.getPty(terminal.id)?.live === true) provider.emitData(terminal.id, 'late')
      await new Promise((resolve) => setTimeout(resolve, 5))
      expect(heard).toBe(heardBefore)
      expect(controller.eventNames()).toEqual([])
      expect(provider.listenerCount()).toBe(0)
      expect(getEventListeners(signal, 'abort')).toHaveLength(0)
      // A detach is reported once (the first refused stop), never per handle and call.
      expect(errors).toEqual(situation === 'detached, then disposed' ? ['shutdown_failed'] : [])
    })
  }
})
