// fc model of terminal handles from the user's side: any interleaving of spawns (some respawning a
// live or ended id), output, exits, kills, stops, output() iterators opened, pulled and returned,
// and acknowledgements — then the controller's dispose. What every handle must say afterwards,
// whatever happened to its incarnation: its `exited` resolved exactly when the controller published
// an exit of that incarnation (with the first one), its listeners heard only that incarnation's
// output, its iterators end, its `stop()` answers `true` for an end that was proven, and its writes
// are refused. Nothing the controller owned is left running.
import fc from 'fast-check'
import { expect, it } from 'vitest'
import type { PtyTerminal } from '../../src/controller/index.js'
import { createHarness, type Harness } from './controller-harness.js'

type Id = 'a' | 'b'
type Op =
  | { kind: 'spawn'; id: Id }
  | { kind: 'data'; id: Id }
  | { kind: 'exit'; id: Id; code: number }
  | { kind: 'kill' | 'stop' | 'open' | 'pull' | 'return'; index: number }
  | { kind: 'ack'; index: number; chars: number }
  | { kind: 'settle' }

const id = fc.constantFrom<Id>('a', 'b')
const index = fc.nat(2)
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: id.map((id): Op => ({ kind: 'spawn', id })), weight: 3 },
  { arbitrary: id.map((id): Op => ({ kind: 'data', id })), weight: 4 },
  fc.tuple(id, fc.nat(3)).map(([id, code]): Op => ({ kind: 'exit', id, code })),
  fc.tuple(fc.constantFrom('kill', 'stop', 'open', 'pull', 'return' as const), index).map(([kind, index]): Op => ({ kind, index })),
  fc.tuple(index, fc.nat(3_000)).map(([index, chars]): Op => ({ kind: 'ack', index, chars })),
  fc.constant<Op>({ kind: 'settle' }),
)

type Opened = { terminal: PtyTerminal; heard: string[] }

/** Whether `promise` settles before the fake and the microtask queue run dry. */
async function settledValue<T>(h: Harness, promise: Promise<T>): Promise<{ value: T } | 'pending'> {
  return Promise.race([promise.then((value) => ({ value })), h.settle().then(() => 'pending' as const)])
}

// 300 runs are seconds of CPU, and several times that in wall time on a loaded machine (6.5 s
// once). The timeout guards against a hang, not speed.
it('every handle tells the truth about its own incarnation, whatever happened to the id', async () => {
  let chunk = 0
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 45 }), async (ops) => {
      const h = createHarness()
      const opened: Opened[] = []
      const iterators: AsyncIterator<string>[] = []
      const pending: Promise<unknown>[] = []
      for (const step of ops) {
        const terminal = 'index' in step ? opened[step.index]?.terminal : undefined
        switch (step.kind) {
          case 'spawn': {
            h.provider.scriptNextSpawn({ id: step.id })
            const spawned = await h.run(h.controller.spawnTerminal({})).catch(() => null)
            if (spawned !== null && !opened.some((entry) => entry.terminal === spawned)) {
              const heard: string[] = []
              spawned.onData(({ data }) => heard.push(data))
              opened.push({ terminal: spawned, heard })
            }
            break
          }
          case 'data':
            if (h.provider.getPty(step.id)?.live === true) h.provider.emitData(step.id, `chunk ${++chunk};`)
            break
          case 'exit':
            if (h.provider.getPty(step.id)?.live === true) h.provider.emitExit(step.id, { exitCode: step.code })
            break
          case 'kill':
            terminal?.kill()
            break
          case 'stop':
            if (terminal !== undefined) pending.push(terminal.stop())
            break
          case 'open':
            if (terminal !== undefined) iterators.push(terminal.output())
            break
          case 'pull':
            void iterators[step.index]?.next()
            break
          case 'return':
            void iterators[step.index]?.return?.()
            break
          case 'ack':
            terminal?.acknowledgeData(step.chars)
            break
          case 'settle':
            break
        }
        await h.settle()
      }
      await h.run(h.controller.dispose())
      await h.run(Promise.allSettled(pending))

      expect(h.provider.livePtyIds()).toEqual([])
      for (const iterator of iterators) {
        for (let pulls = 0; ; pulls += 1) {
          const next = await settledValue(h, iterator.next())
          if (next === 'pending') throw new Error('an output() iterator still waits after dispose')
          if (next.value.done === true) break
          expect(pulls).toBeLessThan(100)
        }
      }
      for (const { terminal, heard } of opened) {
        const ofIncarnation = <T extends { ptyId: string; incarnationId?: unknown }>(events: T[]): T[] =>
          events.filter((event) => event.ptyId === terminal.id && event.incarnationId === terminal.incarnationId)
        const exits = ofIncarnation(h.exits())
        const exited = await settledValue(h, terminal.exited)
        expect(exited).toEqual(exits.length === 0 ? 'pending' : { value: exits[0] })
        // Subscribed once spawnTerminal resolved: the incarnation's output from some point on, in order.
        const output = ofIncarnation(h.data()).map((event) => event.data)
        expect(output.slice(output.length - heard.length)).toEqual(heard)
        const last = exits.at(-1)
        const provenEnd = last !== undefined && !(last.cause.kind === 'unknown' && last.cause.reason === 'stop_unverified')
        if (provenEnd) await expect(terminal.stop()).resolves.toBe(true)
        expect(terminal.write('late')).toBe(false)
      }
      expect(h.errors().filter((error) => error.code !== 'consumer_not_acknowledging')).toEqual([])
    }),
    { numRuns: 300 },
  )
}, 120_000)
