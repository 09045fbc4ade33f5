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
