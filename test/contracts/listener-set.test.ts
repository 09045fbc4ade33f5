import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createListenerSet, createRecentIds } from 'ptykit/contracts'
import { callProvider } from '../../src/contracts/call-provider.js'

/** What a listener does when it is called, besides recording the call. */
type Reaction =
  | { kind: 'none' }
  | { kind: 'unsubscribe'; target: number } // unsubscribe the subscription with this index (mod count)
  | { kind: 'add' } // subscribe a new listener
  | { kind: 'throw' }

const reactionArb: fc.Arbitrary<Reaction> = fc.oneof(
  fc.constant<Reaction>({ kind: 'none' }),
  fc.nat(20).map((target): Reaction => ({ kind: 'unsubscribe', target })),
  fc.constant<Reaction>({ kind: 'add' }),
  fc.constant<Reaction>({ kind: 'throw' }),
)

describe('createListenerSet', () => {
  it('fire calls exactly the subscriptions live when it started, in order, whatever the listeners do meanwhile', () => {
    fc.assert(
      fc.property(fc.array(reactionArb, { minLength: 0, maxLength: 8 }), (reactions) => {
        const errors: unknown[] = []
        const set = createListenerSet<number>({ onListenerError: (error) => errors.push(error) })
        const calls: string[] = []
        const unsubscribes: Array<() => void> = []
        // Model: the labels of the live subscriptions, in subscription order.
        let live: string[] = []
        const subscribe = (label: string, reaction: Reaction): void => {
          const unsubscribe = set.add(() => {
            calls.push(label)
            if (reaction.kind === 'unsubscribe' && unsubscribes.length > 0) {
              const index = reaction.target % unsubscribes.length
              unsubscribes[index]?.()
              live = live.filter((l) => l !== `s${index}`)
            } else if (reaction.kind === 'add') {
              const added = `s${unsubscribes.length}`
              subscribe(added, { kind: 'none' })
            } else if (reaction.kind === 'throw') {
              throw new Error(label)
            }
          })
          unsubscribes.push(unsubscribe)
          live.push(label)
        }
        reactions.forEach((reaction, index) => subscribe(`s${index}`, reaction))
        const snapshot = [...live]
        set.fire(1)
        expect(calls).toEqual(snapshot)
        expect(errors.map((error) => (error as Error).message)).toEqual(
          reactions.flatMap((reaction, index) => (reaction.kind === 'throw' ? [`s${index}`] : [])),
        )
        // The second fire sees every change the first one's listeners made.
        const afterFirst = [...live]
        calls.length = 0
        set.fire(2)
        expect(calls).toEqual(afterFirst)
        expect(set.size).toBe(live.length)
      }),
    )
  })

  it('a fire from inside a listener calls the subscriptions live at that moment, and the outer fire keeps its own snapshot', () => {
    type NestedReaction = Reaction | { kind: 'fire' }
    const nestedArb = fc.oneof(reactionArb, fc.constant<NestedReaction>({ kind: 'fire' }))
    fc.assert(
      fc.property(fc.array(nestedArb, { minLength: 0, maxLength: 8 }), (reactions) => {
        const set = createListenerSet<number>({ onListenerError: () => undefined })
        const outerCalls: string[] = []
        let nestedCalls: string[] = []
        // Checked after the fires: an assertion inside a listener would reach onListenerError.
        const nestedFires: Array<{ calls: string[]; expected: string[] }> = []
        const unsubscribes: Array<() => void> = []
        let live: string[] = []
        const subscribe = (label: string, reaction: NestedReaction): void => {
          const unsubscribe = set.add((event) => {
            if (event === 2) {
              nestedCalls.push(label) // a nested fire: recorded, no reaction
              return
            }
            outerCalls.push(label)
            if (reaction.kind === 'unsubscribe' && unsubscribes.length > 0) {
              const index = reaction.target % unsubscribes.length
              unsubscribes[index]?.()
              live = live.filter((l) => l !== `s${index}`)
            } else if (reaction.kind === 'add') {
              subscribe(`s${unsubscribes.length}`, { kind: 'none' })
            } else if (reaction.kind === 'fire') {
              nestedCalls = []
              // A probe added just now is live for the nested fire: it is called last.
              const probe = set.add((nested) => {
                if (nested === 2) nestedCalls.push('probe')
              })
              const expected = [...live, 'probe']
              set.fire(2)
              probe()
              nestedFires.push({ calls: nestedCalls, expected })
            }
          })
          unsubscribes.push(unsubscribe)
          live.push(label)
        }
        reactions.forEach((reaction, index) => subscribe(`s${index}`, reaction))
        const snapshot = [...live]
        set.fire(1)
        expect(outerCalls).toEqual(snapshot)
        outerCalls.length = 0
        const afterFirst = [...live]
        set.fire(1)
        expect(outerCalls).toEqual(afterFirst)
        for (const nested of nestedFires) expect(nested.calls).toEqual(nested.expected)
      }),
    )
  })

  it('unsubscribe is idempotent and removes only its own subscription (the same function added twice is two subscriptions)', () => {
    type Op = { kind: 'add'; fn: number } | { kind: 'unsubscribe'; target: number } | { kind: 'fire' } | { kind: 'clear' }
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.nat(2).map((fn): Op => ({ kind: 'add', fn })),
      fc.nat(30).map((target): Op => ({ kind: 'unsubscribe', target })),
      fc.constant<Op>({ kind: 'fire' }),
      fc.constant<Op>({ kind: 'clear' }),
    )
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const set = createListenerSet<string>()
        const calls: number[] = []
        const fns = [0, 1, 2].map((n) => () => void calls.push(n))
        const unsubscribes: Array<() => void> = []
        // Model: subscription index -> function number, for live subscriptions, in order.
        let live: Array<{ sub: number; fn: number }> = []
        for (const op of ops) {
          if (op.kind === 'add') {
            unsubscribes.push(set.add(fns[op.fn] as () => void))
            live.push({ sub: unsubscribes.length - 1, fn: op.fn })
          } else if (op.kind === 'unsubscribe' && unsubscribes.length > 0) {
            const sub = op.target % unsubscribes.length
            unsubscribes[sub]?.()
            live = live.filter((entry) => entry.sub !== sub)
          } else if (op.kind === 'clear') {
            set.clear()
            live = []
          } else if (op.kind === 'fire') {
            calls.length = 0
            set.fire('event')
            expect(calls).toEqual(live.map((entry) => entry.fn))
          }
          expect(set.size).toBe(live.length)
        }
      }),
    )
  })

  it('a throwing listener does not stop the others; each error reaches the injected handler once', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }), (throws) => {
        const errors: unknown[] = []
        const set = createListenerSet<string>({ onListenerError: (error) => errors.push(error) })
        const calls: number[] = []
        throws.forEach((shouldThrow, index) =>
          set.add((event) => {
            calls.push(index)
            if (shouldThrow) throw new Error(`${event}:${index}`)
          }),
        )
        set.fire('e')
        expect(calls).toEqual(throws.map((_, index) => index))
        expect(errors.map((error) => (error as Error).message)).toEqual(
          throws.flatMap((shouldThrow, index) => (shouldThrow ? [`e:${index}`] : [])),
        )
      }),
    )
  })

  it('by default a listener error surfaces on its own microtask, after every listener ran', async () => {
    const set = createListenerSet<number>()
    const seen: number[] = []
    const original = globalThis.queueMicrotask
    const queued: Array<() => void> = []
    globalThis.queueMicrotask = (callback) => void queued.push(callback)
    try {
      set.add(() => {
        throw new Error('listener bug')
      })
      set.add((event) => void seen.push(event))
      set.fire(7)
    } finally {
      globalThis.queueMicrotask = original
    }
    expect(seen).toEqual([7])
    expect(queued).toHaveLength(1)
    expect(() => queued[0]?.()).toThrow('listener bug')
  })

  it('refuses a listener that is not a function, and a handler that is not one, naming the value', () => {
    const set = createListenerSet<number>()
    // Typed (code, option, value) as every provider's argument refusal: a provider's `onData(5)` reaches this (until 7 Dec a plain TypeError).
    expect(() => set.add(undefined as never)).toThrow(
      Object.assign(new TypeError('Expected the `listener` argument to be a function, got undefined (undefined)'), { code: 'invalid_option', option: 'listener', value: undefined }),
    )
    expect(() => createListenerSet({ onListenerError: 3 as never })).toThrow(
      Object.assign(new TypeError('Expected the `onListenerError` option to be a function, got 3 (number)'), { code: 'invalid_option', option: 'onListenerError', value: 3 }),
    )
  })
})

describe('createRecentIds', () => {
  it('remembers at most `capacity` ids, forgetting the least recently remembered first', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.oneof(fc.record({ remember: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }), fc.record({ forget: fc.constantFrom('a', 'b', 'c') }))),
        (capacity, ops) => {
          const memory = createRecentIds(capacity)
          let model: string[] = [] // oldest first
          for (const op of ops) {
            if ('remember' in op) {
              model = [...model.filter((id) => id !== op.remember), op.remember]
              const expectedForgotten = model.slice(0, Math.max(0, model.length - capacity))
              model = model.slice(model.length - Math.min(model.length, capacity))
              expect(memory.remember(op.remember)).toEqual(expectedForgotten)
            } else {
              memory.forget(op.forget)
              model = model.filter((id) => id !== op.forget)
            }
            expect(memory.size).toBe(model.length)
            for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) expect(memory.has(id)).toBe(model.includes(id))
          }
        },
      ),
    )
  })

  it('refuses a capacity that is not a positive integer, naming it', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '3']) {
      expect(() => createRecentIds(bad as never)).toThrow(RangeError)
    }
    expect(() => createRecentIds(0)).toThrow(/`capacity` .* positive integer, got 0 \(number\)/)
  })
})

describe('callProvider', () => {
  it('turns a synchronous throw into a rejection and any value into a promise of it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.boolean(), fc.boolean(), async (value, fails, async) => {
        const outcome = callProvider(() => {
          if (fails && !async) throw value
          if (fails) return Promise.reject(value)
          return async ? Promise.resolve(value) : value
        })
        expect(outcome).toBeInstanceOf(Promise)
        const settled = await outcome.then(
          (result) => ({ ok: true, result }),
          (error: unknown) => ({ ok: false, result: error }),
        )
        expect(settled).toEqual({ ok: !fails, result: value })
      }),
    )
  })
})
