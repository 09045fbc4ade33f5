// The conformance checks' own assertions (src/testing/conformance-expect.ts): they replace vitest's
// `expect`, so the checks run under node:test, Jest or Mocha, ESM or CommonJS, without vitest.
// scripts/check-packed-consumer.mjs runs every check from the packed tarball under node:test.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ConformanceAssertionError, expect as conformanceExpect, plainDataEqual } from '../../src/testing/conformance-expect.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The message of the assertion `assertion` fails with (it must fail). */
function failureOf(assertion: () => void): ConformanceAssertionError {
  try {
    assertion()
  } catch (error) {
    expect(error).toBeInstanceOf(ConformanceAssertionError)
    return error as ConformanceAssertionError
  }
  throw new Error('the assertion passed')
}

describe('the conformance checks', () => {
  it('load no vitest: nothing they reach imports it (the checks run under any runner)', async () => {
    const result = await build({
      entryPoints: ['event', 'inventory', 'seed', 'bytes', 'held-write'].map((name) => path.join(root, `src/testing/conformance-${name}-checks.ts`)),
      bundle: true,
      write: false,
      metafile: true,
      outdir: 'out',
      platform: 'node',
      format: 'esm',
      external: ['vitest', 'fast-check'],
      logLevel: 'silent',
    })
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((imported) => imported.path))
    expect(imports.filter((imported) => /^(vitest|fast-check)(\/|$)/.test(imported))).toEqual([])
  })
})

describe('conformance expect', () => {
  it('should pass what holds, for each matcher and its negation', () => {
    conformanceExpect(1).toBe(1)
    conformanceExpect(NaN).toBe(NaN)
    conformanceExpect(0).not.toBe(-0)
    conformanceExpect({ kind: 'exited', exitCode: 0 }).toEqual({ kind: 'exited', exitCode: 0 })
    conformanceExpect({ a: 1 }).not.toEqual({ a: 2 })
    conformanceExpect(['a', 'b']).toContain('b')
    conformanceExpect('hello world').toContain('lo w')
    conformanceExpect(['a']).not.toContain('b')
    conformanceExpect([1, 2]).toHaveLength(2)
    conformanceExpect(new TypeError('x')).toBeInstanceOf(TypeError)
    conformanceExpect(new Error('x')).not.toBeInstanceOf(TypeError)
    conformanceExpect(null).toBeNull()
    conformanceExpect(undefined).toBeUndefined()
    conformanceExpect(0).toBeDefined()
    conformanceExpect('`deadlineMs` is wrong').toMatch(/`deadlineMs`/)
    conformanceExpect(1).toBeGreaterThan(0)
  })

  it('should fail with the message first, then what was expected, as vitest words it', () => {
    expect(failureOf(() => conformanceExpect(false, 'the PTY after the refused stop').not.toBe(false)).message).toBe(
      'the PTY after the refused stop: expected false (boolean) not to be false (boolean)',
    )
    expect(failureOf(() => conformanceExpect({ cols: 80, rows: 24 }).toEqual({ cols: 100, rows: 30 })).message).toBe(
      'expected {"cols":80,"rows":24} (object) to deeply equal {"cols":100,"rows":30} (object): at .cols, 80 (number) where 100 (number) was expected',
    )
    expect(failureOf(() => conformanceExpect(['fake-1']).toContain('fake-2')).message).toBe('expected ["fake-1"] (array) to include "fake-2" (string)')
    expect(failureOf(() => conformanceExpect([1, 2], 'one row').toHaveLength(1)).message).toBe('one row: expected [1,2] (array) to have a length of 1 but got 2 (number)')
    expect(failureOf(() => conformanceExpect(new Error('closed'), 'write').toBeInstanceOf(TypeError)).message).toBe('write: expected Error: closed to be an instance of TypeError')
    expect(failureOf(() => conformanceExpect('x').toBeNull()).message).toBe('expected "x" (string) to be null')
    expect(failureOf(() => conformanceExpect(1, 'shutdown must resolve').toBeUndefined()).message).toBe('shutdown must resolve: expected 1 (number) to be undefined')
    expect(failureOf(() => conformanceExpect(undefined, 'listing row of fake-1').toBeDefined()).message).toBe('listing row of fake-1: expected undefined (undefined) to be defined')
    expect(failureOf(() => conformanceExpect('no option', 'names it').toMatch(/`deadlineMs`/)).message).toBe('names it: expected "no option" (string) to match /`deadlineMs`/')
    expect(failureOf(() => conformanceExpect(0).toBeGreaterThan(0)).message).toBe('expected 0 (number) to be greater than 0')
  })

  it('should say where two values that read alike as JSON differ, and in what kind (before: both sides shown the same)', () => {
    const event = { id: 'fake-1', code: 0, at: new Date(0) }
    expect(failureOf(() => conformanceExpect(JSON.parse(JSON.stringify(event))).toEqual(event)).message).toBe(
      'expected {"id":"fake-1","code":0,"at":"1970-01-01T00:00:00.000Z"} (object) to deeply equal {"id":"fake-1","code":0,"at":"1970-01-01T00:00:00.000Z"} (object):' +
        ' at .at, "1970-01-01T00:00:00.000Z" (string) where a Date "1970-01-01T00:00:00.000Z" was expected',
    )
    expect(failureOf(() => conformanceExpect([{ code: null }]).toEqual([{ code: NaN }])).message).toBe(
      'expected [{"code":null}] (array) to deeply equal [{"code":null}] (array): at [0].code, null (null) where NaN (number) was expected',
    )
    expect(failureOf(() => conformanceExpect({}).toEqual(new Map())).message).toBe('expected {} (object) to deeply equal {} (object): {} (object) where a Map {} was expected')
    expect(failureOf(() => conformanceExpect(['late output'], 'nothing may follow its exit').toEqual([])).message).toBe(
      'nothing may follow its exit: expected ["late output"] (array) to deeply equal [] (array): at [0], "late output" (string) where nothing was expected',
    )
    // A value whose inspection throws (a proxy's trap) still fails as the assertion, not as the trap's error.
    const exotic = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap') } })
    expect(failureOf(() => conformanceExpect(exotic).toEqual(new Date(0))).message).toBe('expected [unprintable object] (object) to deeply equal "1970-01-01T00:00:00.000Z" (object)')
    // Nothing to add where the values' own rendering shows the difference.
    expect(failureOf(() => conformanceExpect(undefined).toEqual({ cols: 1 })).message).toBe('expected undefined (undefined) to deeply equal {"cols":1} (object)')
  })

  it('should fail as an AssertionError that carries what it compared', () => {
    const failure = failureOf(() => conformanceExpect(3).toBe(4))
    expect(failure.name).toBe('AssertionError')
    expect(failure).toMatchObject({ actual: 3, expected: 4, operator: 'toBe' })
  })
})

describe('plainDataEqual (toEqual)', () => {
  // A structured clone, not a JSON round-trip: JSON turns -0 into 0, which toEqual tells apart (Object.is).
  it('should find every JSON value equal to a copy of it, and to the copy with undefined-valued keys added', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, extraKey) => {
        const copy = structuredClone(value) as unknown
        expect(plainDataEqual(value, copy)).toBe(true)
        if (typeof copy === 'object' && copy !== null && !Array.isArray(copy) && !(extraKey in copy)) {
          expect(plainDataEqual(value, { ...copy, [extraKey]: undefined })).toBe(true)
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('should find a JSON value unequal to it with one leaf changed or one key added', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (record, key) => {
        expect(plainDataEqual(record, { ...record, [key]: ['changed', record[key]] })).toBe(false)
      }),
    )
  })

  it('should keep values of different kinds apart: a Date and its JSON string, an array and an object, null and {}', () => {
    expect(plainDataEqual({ when: new Date(0) }, JSON.parse(JSON.stringify({ when: new Date(0) })))).toBe(false)
    expect(plainDataEqual([], {})).toBe(false)
    expect(plainDataEqual(null, {})).toBe(false)
    expect(plainDataEqual(new Date(5), new Date(5))).toBe(true)
    expect(plainDataEqual(new Map(), new Map())).toBe(false)
    // As vitest's toEqual: numbers by Object.is.
    expect(plainDataEqual([-0], [0])).toBe(false)
    expect(plainDataEqual([NaN], [NaN])).toBe(true)
  })
})
