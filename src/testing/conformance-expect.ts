import { describeValue } from '../contracts/describe-value.js'

// The conformance checks' own assertions: the few vitest-style matchers the checks use, with no
// test runner behind them. Why not vitest's `expect`: the checks are documented as runnable from
// any runner (`ptyProviderConformanceChecks` + `runPtyProviderConformanceCheck` under `node:test`,
// Jest, Mocha), and vitest's `expect` cannot be required from CommonJS at all, nor imported where
// vitest is not installed. A failed assertion throws a {@link ConformanceAssertionError}, whose
// message reads as vitest's would: "{message}: expected {actual} to be {expected}".

/**
 * A conformance check that failed. `name` is `'AssertionError'`, as node:assert's, so every runner
 * reports it as a failed assertion; `actual` and `expected` hold what was compared.
 */
export class ConformanceAssertionError extends Error {
  override readonly name = 'AssertionError'
  readonly actual: unknown
  readonly expected: unknown
  readonly operator: string

  constructor(message: string, details: { actual: unknown; expected: unknown; operator: string }) {
    super(message)
    this.actual = details.actual
    this.expected = details.expected
    this.operator = details.operator
  }
}

/** The matchers of one `expect(actual, message?)`. */
export type ConformanceMatchers = {
  /** `Object.is` equality. */
  toBe(expected: unknown): void
  /** Deep equality of plain data, as vitest's `toEqual`: properties whose value is `undefined` count as absent. */
  toEqual(expected: unknown): void
  /** An array holding `item` (`Object.is`), or a string holding the substring `item`. */
  toContain(item: unknown): void
  /** A `length` of exactly `length`. */
  toHaveLength(length: number): void
  /** `actual instanceof type`. */
  toBeInstanceOf(type: abstract new (...args: never[]) => unknown): void
  /** `null`. */
  toBeNull(): void
  /** `undefined`. */
  toBeUndefined(): void
  /** Anything but `undefined`. */
  toBeDefined(): void
  /** A string that `pattern` matches. */
  toMatch(pattern: RegExp): void
  /** A number greater than `bound`. */
  toBeGreaterThan(bound: number): void
}

/** `expect(actual, message?)`: the matchers, and `.not` with each one negated. */
export type ConformanceExpectation = ConformanceMatchers & { readonly not: ConformanceMatchers }

/**
 * Assert about `actual`; `message`, when given, leads the failure's message ("the PTY after the
 * refused stop: expected false not to be false").
 */
export function expect(actual: unknown, message?: string): ConformanceExpectation {
  const matchers = (negated: boolean): ConformanceMatchers => {
    /** Throw unless `passed` (or, negated, unless it did not). */
    const assert = (passed: boolean, operator: string, expected: unknown, claim: string): void => {
      if (passed !== negated) return
      const lead = message === undefined ? '' : `${message}: `
      throw new ConformanceAssertionError(`${lead}expected ${show(actual)} ${negated ? 'not ' : ''}${claim}`, { actual, expected, operator })
    }
    return {
      toBe: (expected) => assert(Object.is(actual, expected), 'toBe', expected, `to be ${show(expected)}`),
      toEqual: (expected) => assert(plainDataEqual(actual, expected), 'toEqual', expected, `to deeply equal ${show(expected)}`),
      toContain: (item) =>
        assert(
          Array.isArray(actual) ? actual.some((element) => Object.is(element, item)) : typeof actual === 'string' && typeof item === 'string' && actual.includes(item),
          'toContain',
          item,
          `to include ${show(item)}`,
        ),
      toHaveLength: (length) => {
        const actualLength = (actual as { length?: unknown } | null | undefined)?.length
        assert(actualLength === length, 'toHaveLength', length, `to have a length of ${length} but got ${show(actualLength)}`)
      },
      toBeInstanceOf: (type) => assert(actual instanceof type, 'toBeInstanceOf', type, `to be an instance of ${type.name || 'the given class'}`),
      toBeNull: () => assert(actual === null, 'toBeNull', null, 'to be null'),
      toBeUndefined: () => assert(actual === undefined, 'toBeUndefined', undefined, 'to be undefined'),
      toBeDefined: () => assert(actual !== undefined, 'toBeDefined', undefined, 'to be defined'),
      toMatch: (pattern) => assert(typeof actual === 'string' && pattern.test(actual), 'toMatch', pattern, `to match ${String(pattern)}`),
      toBeGreaterThan: (bound) => assert(typeof actual === 'number' && actual > bound, 'toBeGreaterThan', bound, `to be greater than ${bound}`),
    }
  }
  return Object.assign(matchers(false), { not: matchers(true) })
}

/** A value in a failure message: an error by its name and message, anything else as the SDK shows bad values. */
function show(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  return describeValue(value)
}

/**
 * Deep equality of plain data, as vitest's `toEqual` reads it: primitives by `Object.is`, arrays
 * element by element, objects key by key with `undefined`-valued keys counted as absent, values of
 * different built-in kinds (a `Date` and a string, an array and an object) never equal, two `Date`s
 * by their time; any other non-plain pair only when it is the same object.
 */
export function plainDataEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  const tag = Object.prototype.toString.call(a)
  if (tag !== Object.prototype.toString.call(b)) return false
  if (tag === '[object Array]') {
    const left = a as unknown[]
    const right = b as unknown[]
    return left.length === right.length && left.every((element, index) => plainDataEqual(element, right[index]))
  }
  if (tag === '[object Date]') return Object.is((a as Date).getTime(), (b as Date).getTime())
  if (tag !== '[object Object]') return false
  const definedKeys = (value: object): string[] => Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined)
  const leftKeys = definedKeys(a)
  const rightKeys = definedKeys(b)
  return (
    leftKeys.length === rightKeys.length &&
    leftKeys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && plainDataEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  )
}
