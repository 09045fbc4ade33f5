import { join } from 'node:path'
import { inspect } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import type { ProviderSpawnOptions } from '../../src/contracts/index.js'
import { assertPtyDimension } from '../../src/node-pty/launch-plan.js'
import { SPAWN_LAUNCH_KEYS } from '../../src/pty-host/protocol.js'
import { addAppEnvironment, spawnInheritanceOfRequest, spawnOptionsRefusal, spawnRequestParams } from '../../src/pty-host/spawn-request-params.js'

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

describe("addAppEnvironment: the app's environment and directory in a spawn request", () => {
  const SECRET = 'hunter2-app-secret'

  it('to a host that takes them: process.env itself (serialized with the request, no copy) and process.cwd()', () => {
    const params: Record<string, unknown> = { sessionId: 's' }
    expect(addAppEnvironment(params, { env: { A: 'spawn' } }, true)).toBeUndefined()
    expect(params.inheritedEnv).toBe(process.env)
    expect(params.defaultCwd).toBe(process.cwd())
    // The spawn's own fields are left as they are.
    expect(params).not.toHaveProperty('env')
    expect(params).not.toHaveProperty('cwd')
  })

  it("to an older host: the app's environment less the host-terminal variables, the spawn's env on top, as env; the app's directory (or a relative cwd resolved against it) as cwd", () => {
    vi.stubEnv('PTYKIT_UNIT_A', 'app')
    vi.stubEnv('PTYKIT_UNIT_B', 'app')
    vi.stubEnv('TMUX', '/tmp/tmux-1/default,1,0')
    try {
      const params: Record<string, unknown> = {}
      expect(addAppEnvironment(params, { env: { PTYKIT_UNIT_A: 'spawn', COLUMNS: '99' }, cwd: 'sub' }, false)).toBeUndefined()
      const env = params.env as Record<string, string>
      expect([env.PTYKIT_UNIT_A, env.PTYKIT_UNIT_B, env.COLUMNS, 'TMUX' in env]).toEqual(['spawn', 'app', '99', false])
      expect(params.cwd).toBe(join(process.cwd(), 'sub'))
      expect(params).not.toHaveProperty('inheritedEnv')
      const absolute: Record<string, unknown> = {}
      addAppEnvironment(absolute, { cwd: '/somewhere' }, false)
      expect(absolute).not.toHaveProperty('cwd')
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it("refuses a spawn that needs the app's directory when process.cwd() cannot tell it (removed): invalid_spawn_option naming cwd; an absolute cwd needs none", () => {
    vi.stubEnv('PTYKIT_UNIT_TOKEN', SECRET)
    const cwd = vi.spyOn(process, 'cwd').mockImplementation(() => {
      throw Object.assign(new Error('ENOENT: process.cwd failed with error no such file or directory'), { code: 'ENOENT' })
    })
    try {
      for (const options of [{}, { cwd: 'relative' }]) {
        for (const hostInherits of [true, false]) {
          const refusal = addAppEnvironment({}, options, hostInherits)
          expect(refusal).toMatchObject({ code: 'invalid_spawn_option', option: 'cwd' })
          expect(refusal?.message).toContain("the app's working directory, which cannot be read (ENOENT)")
          expect(inspect(refusal, { depth: 10 })).not.toContain(SECRET)
        }
      }
      const params: Record<string, unknown> = {}
      expect(addAppEnvironment(params, { cwd: '/tmp' }, true)).toBeUndefined()
      expect(params.inheritedEnv).toBe(process.env)
      expect(params).not.toHaveProperty('defaultCwd')
    } finally {
      cwd.mockRestore()
      vi.unstubAllEnvs()
    }
  })
})

describe("spawnInheritanceOfRequest: the host's reading of the app's environment and directory", () => {
  const SECRET = 'hunter2-app-secret'

  it('none when the request carries neither; else what it carries', () => {
    expect(spawnInheritanceOfRequest({ sessionId: 's', file: '/bin/sh' })).toBeUndefined()
    expect(spawnInheritanceOfRequest({ inheritedEnv: { PATH: '/bin' }, defaultCwd: '/home' })).toEqual({ env: { PATH: '/bin' }, defaultCwd: '/home' })
    expect(spawnInheritanceOfRequest({ defaultCwd: '/home' })).toEqual({ defaultCwd: '/home' })
  })

  it.each<[string, Record<string, unknown>, string, string | undefined]>([
    ['an array', { inheritedEnv: [`TOKEN=${SECRET}`] }, 'inheritedEnv', undefined],
    ['a string', { inheritedEnv: `TOKEN=${SECRET}` }, 'inheritedEnv', undefined],
    ['a value that is no string', { inheritedEnv: { TOKEN: [SECRET] } }, 'inheritedEnv.TOKEN', undefined],
    ['a value with a NUL', { inheritedEnv: { TOKEN: `${SECRET}\0` } }, 'inheritedEnv.TOKEN', undefined],
    ['a key with "="', { inheritedEnv: { 'A=B': SECRET } }, 'inheritedEnv', undefined],
    ['an empty key', { inheritedEnv: { '': SECRET } }, 'inheritedEnv', undefined],
    ['a relative defaultCwd', { defaultCwd: 'relative' }, 'defaultCwd', 'relative'],
    ['a defaultCwd that is no string', { defaultCwd: 7 }, 'defaultCwd', undefined],
  ])('refuses %s: invalid_option naming the field, never an environment value', (_label, params, option) => {
    const refused = (() => {
      try {
        return spawnInheritanceOfRequest(params)
      } catch (error) {
        return error
      }
    })()
    expect(refused).toMatchObject({ code: 'invalid_option', option })
    expect(inspect(refused, { depth: 10 })).not.toContain(SECRET)
  })
})

describe('spawnOptionsRefusal: cols and rows', () => {
  // JSON carries NaN and ±Infinity as null, so the provider refuses them itself, in the words the
  // host (node-pty's assertPtyDimension) refuses every other bad size with. Until 7 Dec it said
  // "a positive integer", node-pty's words from before they became "an integer from 1 to 65535".
  for (const option of ['cols', 'rows'] as const) {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      it(`refuses ${option} ${value} as invalid_spawn_option, worded as the host refuses a bad size`, () => {
        const refusal = spawnOptionsRefusal({ file: '/bin/sh', [option]: value })
        const hostWords = (() => {
          try {
            assertPtyDimension(option, value)
          } catch (error) {
            return (error as Error).message
          }
          return undefined
        })()
        expect(refusal).toMatchObject({ code: 'invalid_spawn_option', option })
        expect(Object.is((refusal as { value?: unknown }).value, value)).toBe(true)
        expect(refusal?.message).toBe(hostWords)
        expect(refusal?.message).toContain('an integer from 1 to 65535')
      })
    }
  }
})
