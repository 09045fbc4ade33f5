import { describeThrownValue } from '../contracts/describe-value.js'

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
      toEqual: (expected) => assert(plainDataEqual(actual, expected), 'toEqual', expected, `to deeply equal ${show(expected)}${negated ? '' : whereTheyDiffer(actual, expected)}`),
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
  // Total, as `describeValue` is: a value whose inspection throws (`instanceof` on a proxy whose
  // trap throws) is still shown, never a second error in place of the assertion's.
  return describeThrownValue(value)
}

/**
 * For a failed `toEqual`: where the two first differ, each side by its kind — `: at .when, "1970-…"
 * (string) where a Date "1970-…" was expected`. Why: shown whole as JSON, values that differ only
 * in kind read the same (a `Date` and its JSON string, `NaN` and `null`, a `Map` and `{}`), and the
 * checks that compare a value with its JSON round trip fail on exactly those.
 */
function whereTheyDiffer(actual: unknown, expected: unknown): string {
  try {
    const difference = firstDifference(actual, expected, '')
    // At the top, and with nothing the values' own rendering hides: the message says it all already.
    if (difference === undefined || (difference.path === '' && showKind(actual) === show(actual) && showKind(expected) === show(expected))) return ''
    const at = difference.path === '' ? '' : ` at ${difference.path},`
    return `:${at} ${showKind(difference.actual)} where ${difference.expected === undefined ? 'nothing' : showKind(difference.expected)} was expected`
  } catch {
    // An exotic value (a proxy whose traps throw): the failure is told without it, never a second error.
    return ''
  }
}

/** The first place (a property path) where `actual` and `expected` differ by {@link plainDataEqual}, with the values there. */
function firstDifference(actual: unknown, expected: unknown, path: string): { path: string; actual: unknown; expected: unknown } | undefined {
  if (plainDataEqual(actual, expected)) return undefined
  if (typeof actual === 'object' && typeof expected === 'object' && actual !== null && expected !== null) {
    const tag = Object.prototype.toString.call(actual)
    if (tag === Object.prototype.toString.call(expected) && (tag === '[object Array]' || tag === '[object Object]')) {
      const left = actual as Record<string, unknown>
      const right = expected as Record<string, unknown>
      const isArray = tag === '[object Array]'
      const keys = isArray
        ? Array.from({ length: Math.max((actual as unknown[]).length, (expected as unknown[]).length) }, (_, index) => String(index))
        : [...new Set([...Object.keys(left), ...Object.keys(right)])]
      for (const key of keys) {
        const inner = firstDifference(left[key], right[key], isArray ? `${path}[${key}]` : `${path}.${key}`)
        if (inner !== undefined) return inner
      }
    }
  }
  return { path, actual, expected }
}

/** A value with its kind: a `Date`, `Map` or class instance by its name, not as the plain object its JSON shows. */
function showKind(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value) || value instanceof Error) return show(value)
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === Object.prototype || prototype === null) return show(value)
  const name = (prototype as { constructor?: { name?: unknown } }).constructor?.name
  const kind = typeof name === 'string' && name.length > 0 ? name : Object.prototype.toString.call(value).slice(8, -1)
  return `a ${kind} ${show(value).replace(/ \(object\)$/, '')}`
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
