// Bad options to every factory of the public API, from a plain-JavaScript caller (helper-155's
// audit): `null`, a primitive or an array where the options object belongs, or an option name
// nobody reads, is refused at once with a TypeError naming it — never a raw "Cannot read
// properties of null", never an array taken for an empty options object (its options ignored),
// never a misspelt option silently ignored. The factory stays usable: the right call then works.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { notAnOptionsObject } from './support/bad-input.js'
import { createListenerSet } from '../src/contracts/index.js'
import { createPtyController } from '../src/controller/index.js'
import { createNodePtyProvider } from '../src/node-pty/index.js'
import { createPtyHostProvider } from '../src/pty-host/index.js'
import { createClaimedOwnerRegistry } from '../src/spawn/index.js'
import { createSshProvider } from '../src/ssh/index.js'
import { arbitraryWireExit, createFakePtyProvider, createManualClock, ptyProviderConformanceChecks, runPtyProviderConformanceCheck } from '../src/testing/index.js'

/** Each factory, called with `options` in the place of its options object (merged into the required ones when it is an object). */
const factories: [string, (options: unknown) => unknown][] = [
  ['createFakePtyProvider', (options) => createFakePtyProvider(options as never)],
  ['createManualClock', (options) => createManualClock(options as never)],
  ['createListenerSet', (options) => createListenerSet(options as never)],
  ['createClaimedOwnerRegistry', (options) => createClaimedOwnerRegistry(options as never)],
  ['createNodePtyProvider', (options) => createNodePtyProvider(options as never)],
  ['createPtyHostProvider', (options) => createPtyHostProvider(options as never)],
  ['createPtyController', (options) => createPtyController(options as never)],
  ['createSshProvider', (options) => createSshProvider(options as never)],
  ['arbitraryWireExit', (options) => arbitraryWireExit(options as never)],
]

/** What is not an options object: `null`, any primitive, an array (of anything), a function. */

/** A `TypeError`, or the pty host's typed option error (`PtyHostError` with code `invalid_option`). */
function expectOptionError(thrown: unknown): void {
  expect(thrown).toBeInstanceOf(Error)
  if (!(thrown instanceof TypeError)) expect(thrown).toMatchObject({ name: 'PtyHostError', code: 'invalid_option' })
}

describe('every factory refuses a non-object options argument, and a misspelt option, with a TypeError naming it', () => {
  it.each(factories)('%s(not an object) throws a TypeError showing the value', (_name, create) => {
    fc.assert(
      fc.property(notAnOptionsObject, (value) => {
        let thrown: unknown
        try {
          create(value)
        } catch (error) {
          thrown = error
        }
        expectOptionError(thrown)
        expect((thrown as Error).message).toMatch(/^Expected the .*options?.* to be an object, got .* \((array|null|number|string|boolean|bigint|symbol|function)\)$/)
      }),
    )
  })

  it.each(factories.filter(([name]) => name !== 'createPtyController' && name !== 'createSshProvider'))('%s({ a misspelt option }) throws naming it, and the right call works', (_name, create) => {
    expect(() => create({ timeoutMS: 1 })).toThrow(/`timeoutMS`/)
    let thrown: unknown
    try {
      create({ timeoutMS: 1 })
    } catch (error) {
      thrown = error
    }
    expectOptionError(thrown)
    expect(create({})).toBeTypeOf('object')
    expect(create(undefined)).toBeTypeOf('object')
  })
})

describe('the conformance suite refuses options it cannot run from, naming them', () => {
  const spawns = { spawnEcho: () => ({}), spawnLongRunning: () => ({}), spawnExit: () => ({}) }

  it('ptyProviderConformanceChecks: not an object, a missing spawn function, or a misspelt option', () => {
    fc.assert(
      fc.property(fc.oneof(notAnOptionsObject, fc.constant(undefined)), (value) => {
        expect(() => ptyProviderConformanceChecks(value as never)).toThrow(/^Expected the conformance options to be an object \(\{ spawnEcho, spawnLongRunning, spawnExit, … \}\), got /)
      }),
    )
    expect(() => ptyProviderConformanceChecks({ ...spawns, spawnExit: undefined } as never)).toThrow(new TypeError('Expected the `spawnExit` option to be a function, got undefined (undefined)'))
    // A misspelt `capabilities` would run the checks the provider said it cannot pass.
    expect(() => ptyProviderConformanceChecks({ ...spawns, capabilites: {} } as never)).toThrow(/^Unknown option `capabilites`: did you mean `capabilities`\?/)
    // So would a misspelt capability: `signal: false` ran the signal checks.
    expect(() => ptyProviderConformanceChecks({ ...spawns, capabilities: { signal: false } } as never)).toThrow(/^Unknown option `capabilities.signal`: did you mean `signals`\?/)
    expect(() => ptyProviderConformanceChecks({ ...spawns, capabilities: [] } as never)).toThrow(/^Expected the `capabilities` option to be an object, got /)
    expect(ptyProviderConformanceChecks({ ...spawns, capabilities: { signals: false, exitsOnDispose: true } }).length).toBeGreaterThan(0)
    // The optional drivers: a function or nothing (a `true` would register checks that cannot run).
    expect(() => ptyProviderConformanceChecks({ ...spawns, spawnSignaled: true } as never)).toThrow(new TypeError('Expected the `spawnSignaled` option to be a function (or left out), got true (boolean)'))
    expect(() => ptyProviderConformanceChecks({ ...spawns, killFromOutside: 'kill -9' } as never)).toThrow(/^Expected the `killFromOutside` option to be a function \(or left out\), got /)
    expect(ptyProviderConformanceChecks({ ...spawns, spawnSignaled: undefined, killFromOutside: undefined } as never).length).toBe(ptyProviderConformanceChecks(spawns).length)
  })

  it('runPtyProviderConformanceCheck rejects bad options before making a provider', async () => {
    const check = ptyProviderConformanceChecks(spawns)[0]!
    let made = 0
    const make = () => {
      made++
      return createFakePtyProvider()
    }
    await expect(runPtyProviderConformanceCheck(check, make, undefined as never)).rejects.toThrow(TypeError)
    await expect(runPtyProviderConformanceCheck(check, make, { ...spawns, timeoutMS: 5 } as never)).rejects.toThrow(/^Unknown option `timeoutMS`: did you mean `timeoutMs`\?/)
    expect(made).toBe(0)
  })
})
