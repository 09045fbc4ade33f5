// Bad options to every factory of the public API, from a plain-JavaScript caller (helper-155's
// audit): `null`, a primitive or an array where the options object belongs, or an option name
// nobody reads, is refused at once with a TypeError naming it — never a raw "Cannot read
// properties of null", never an array taken for an empty options object (its options ignored),
// never a misspelt option silently ignored. The factory stays usable: the right call then works.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createListenerSet } from '../src/contracts/index.js'
import { createPtyController } from '../src/controller/index.js'
import { createNodePtyProvider } from '../src/node-pty/index.js'
import { createPtyHostProvider } from '../src/pty-host/index.js'
import { createClaimedOwnerRegistry } from '../src/spawn/index.js'
import { createSshProvider } from '../src/ssh/index.js'
import { createFakePtyProvider, createManualClock } from '../src/testing/index.js'

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
]

/** What is not an options object: `null`, any primitive, an array (of anything), a function. */
const notAnOptionsObject = fc.oneof(
  fc.constantFrom<unknown>(null, 0, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, '', 'a\u0000b', true, 10n, Symbol('options'), () => ({})),
  fc.anything({ withBigInt: true }).filter((value) => value !== undefined && (typeof value !== 'object' || value === null)),
  fc.array(fc.anything(), { maxLength: 3 }),
)

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
