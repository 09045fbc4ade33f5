import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProviderSpawnOptions } from '../../src/contracts/index.js'
import { SPAWN_LAUNCH_KEYS } from '../../src/pty-host/protocol.js'
import { spawnOptionsRefusal, spawnRequestParams } from '../../src/pty-host/spawn-request-params.js'

/** Launch fields (any JSON-ish value, or absent) and fields that must never cross the wire. */
const spawnOptionsArb = fc.record(
  {
    ...Object.fromEntries(SPAWN_LAUNCH_KEYS.map((key) => [key, fc.oneof(fc.string(), fc.integer(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined))])),
    sessionId: fc.string({ minLength: 1 }),
    attachOnly: fc.boolean(),
    isNewSession: fc.boolean(),
    expectedIncarnationId: fc.string(),
    onPtySpawnCommitted: fc.constant(() => undefined),
  },
  { requiredKeys: [] },
)

describe('spawnRequestParams', () => {
  it('carries the session id and exactly the launch keys the caller set (SPAWN_LAUNCH_KEYS), nothing else', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), spawnOptionsArb, (sessionId, options) => {
        const expected: Record<string, unknown> = { sessionId }
        for (const key of SPAWN_LAUNCH_KEYS) {
          const value = (options as Record<string, unknown>)[key]
          if (value !== undefined) expected[key] = value
        }
        expect(spawnRequestParams(sessionId, options as ProviderSpawnOptions)).toStrictEqual(expected)
      }),
    )
  })
})

describe('spawnOptionsRefusal: metadata', () => {
  const circular: Record<string, unknown> = { name: 'loop' }
  circular['self'] = circular
  it.each<[string, unknown, string]>([
    ['a BigInt', { big: 10n }, 'Do not know how to serialize a BigInt'],
    ['a circular object', circular, 'Converting circular structure to JSON'],
    ['a toJSON that throws', { toJSON: () => { throw new Error('no JSON for you') } }, 'no JSON for you'],
  ])('refuses metadata with %s as invalid_spawn_option naming metadata and why', (_label, metadata, why) => {
    const refusal = spawnOptionsRefusal({ file: '/bin/sh', metadata: metadata as Record<string, unknown> })
    expect(refusal).toMatchObject({ code: 'invalid_spawn_option', option: 'metadata', value: undefined })
    expect(refusal?.message).toContain('`metadata` option to be a value JSON can serialize')
    expect(refusal?.message).toContain(why)
    // One line: not V8's drawing of the circle.
    expect(refusal?.message).not.toContain('\n')
  })

  it('accepts any metadata JSON serializes (what it drops, such as a function, is dropped as for any JSON payload), and none', () => {
    fc.assert(
      fc.property(fc.option(fc.jsonValue(), { nil: undefined }), (metadata) => {
        expect(spawnOptionsRefusal({ metadata: metadata as Record<string, unknown> })).toBeUndefined()
      }),
    )
    expect(spawnOptionsRefusal({ metadata: { run: () => 1, missing: undefined } })).toBeUndefined()
  })
})

describe('spawnOptionsRefusal: env', () => {
  const SECRET = 'hunter2-secret'
  class Settings {
    TOKEN = SECRET
  }
  it.each<[string, unknown, string, string]>([
    // Before: serialized to {} and silently dropped.
    ['a Map', new Map([['TOKEN', SECRET]]), 'env', '[redacted] (Map)'],
    ['a string', `TOKEN=${SECRET}`, 'env', '[redacted] (string of 20 characters)'],
    ['an array', [SECRET], 'env', '[redacted] (array)'],
    // Before: JSON dropped the key, while the node-pty provider refuses it.
    ['an undefined value', { PATH: '/bin', TOKEN: undefined }, 'env.TOKEN', '[redacted] (undefined)'],
    ['a number value', { TOKEN: 42 }, 'env.TOKEN', '[redacted] (number)'],
  ])('refuses an env that is %s as invalid_spawn_option naming the option, never showing nor keeping a value', (_label, env, option, shown) => {
    const refusal = spawnOptionsRefusal({ file: '/bin/sh', env: env as Record<string, string> })
    expect(refusal).toMatchObject({ code: 'invalid_spawn_option', option, value: undefined })
    expect(refusal?.message).toContain(`\`${option}\` option to be`)
    expect(refusal?.message).toContain(`got ${shown}`)
    expect(refusal?.message).not.toContain(SECRET)
    expect(refusal?.message).not.toContain('42')
  })

  it('accepts a plain object of strings, also one without a prototype, and no env', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.string()), (env) => {
        expect(spawnOptionsRefusal({ env })).toBeUndefined()
        expect(spawnOptionsRefusal({ env: Object.assign(Object.create(null) as Record<string, string>, env) })).toBeUndefined()
      }),
    )
    expect(spawnOptionsRefusal({ file: '/bin/sh' })).toBeUndefined()
  })

  it('accepts what the node-pty provider reads as a record: process.env (whose prototype is its own) and a class instance (its own fields, as JSON sends them)', () => {
    expect(spawnOptionsRefusal({ env: process.env as Record<string, string> })).toBeUndefined()
    expect(spawnOptionsRefusal({ env: new Settings() as unknown as Record<string, string> })).toBeUndefined()
  })
})
