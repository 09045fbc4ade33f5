import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { describeThrownValue, describeValue } from '../../src/contracts/describe-value.js'
import { createHarness } from './controller-harness.js'

/** A proxy whose every trap throws: even `typeof`-adjacent inspection of it fails. */
function hostileProxy(): object {
  const trap = (): never => {
    throw new Error('trap')
  }
  return new Proxy({}, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap })
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

const messageGetterThrows = (): object => ({
  get message(): string {
    throw new Error('getter')
  },
})

const errorWhoseMessageThrows = (): Error => {
  const error = new Error('x')
  Object.defineProperty(error, 'message', {
    get() {
      throw new Error('getter')
    },
  })
  return error
}

describe('listener_threw for hostile thrown values', () => {
  it.each([
    ['a Proxy whose traps throw', hostileProxy],
    ['a revoked Proxy', revokedProxy],
    ['an object whose message getter throws', messageGetterThrows],
    ['an Error whose message getter throws', errorWhoseMessageThrows],
    ['undefined', () => undefined],
  ])('%s is still reported as listener_threw, and the other listeners still run', async (_name, make) => {
    const h = createHarness()
    const thrown = make()
    let laterListenerRan = false
    h.controller.on('spawn', () => {
      throw thrown
    })
    h.controller.on('spawn', () => {
      laterListenerRan = true
    })
    const { id } = await h.controller.spawn({})
    expect(laterListenerRan).toBe(true)
    const errors = h.errors()
    expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['listener_threw', id]])
    expect(errors[0]?.message).toMatch(/^A `spawn` listener threw /)
    expect(errors[0]?.cause).toBe(thrown)
  })

  it('describes an ordinary error by name and message', () => {
    expect(describeThrownValue(new TypeError('boom'))).toBe('TypeError: boom')
    expect(describeThrownValue('text')).toBe('"text" (string)')
  })

  it('describeValue and describeThrownValue are total', () => {
    // Why factories by index: fast-check itself cannot hold a hostile proxy as a generated value.
    const factories = [hostileProxy, revokedProxy, messageGetterThrows, errorWhoseMessageThrows]
    for (const make of factories) {
      expect(typeof describeValue(make())).toBe('string')
      expect(typeof describeThrownValue(make())).toBe('string')
    }
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }), (value) => {
        expect(typeof describeValue(value)).toBe('string')
        expect(typeof describeThrownValue(value)).toBe('string')
      }),
    )
  })
})

describe('listener_threw for an async listener whose promise rejects', () => {
  /** Unhandled rejections seen while `work` runs (each would end a Node process by default). */
  async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      seen.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      await work()
      // An unhandled rejection is announced after the microtasks of the turn it happened in.
      await new Promise((resolve) => setTimeout(resolve, 10))
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    return seen
  }

  it.each(['spawn', 'data', 'exit'] as const)('a rejecting `%s` listener is reported, never unhandled, and the others still run', async (event) => {
    const h = createHarness()
    const failure = new Error(`${event} listener bug`)
    let laterListenerRan = false
    const unhandled = await unhandledDuring(async () => {
      h.controller.on(event, async () => {
        await Promise.resolve()
        throw failure
      })
      h.controller.on(event, () => {
        laterListenerRan = true
      })
      const { id } = await h.controller.spawn({})
      h.provider.emitData(id, 'x')
      h.provider.emitExit(id, { exitCode: 0 })
      await h.settle()
    })
    expect(unhandled).toEqual([])
    expect(laterListenerRan).toBe(true)
    const errors = h.errors()
    expect(errors.map((error) => error.code)).toEqual(['listener_threw'])
    expect(errors[0]?.message).toMatch(new RegExp(`^A \`${event}\` listener's promise rejected with `))
    expect(errors[0]?.cause).toBe(failure)
  })

  it('a listener returning a promise that fulfils, or a non-thenable value, reports nothing', async () => {
    const h = createHarness()
    h.controller.on('data', async () => undefined)
    h.controller.on('data', (() => ({ then: 'not a function' })) as () => void)
    h.controller.on('data', (() => 42) as () => void)
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'x')
    await h.settle()
    expect(h.errors()).toEqual([])
  })
})
