/**
 * Internal (not exported from `ptykit/contracts`): whether a spawn's `env` is a record the
 * providers can read — an object whose own enumerable string keys are its variables, as
 * `Object.entries` reads them. Refused: `null`, an array, and any iterable collection (a `Map`, a
 * `Set`): `Object.entries` of a `Map` is empty, so its variables would be dropped in silence.
 * Accepted: a plain object, one without a prototype, and `process.env` (whose prototype is its own).
 */
export function isEnvironmentRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  )
}

/**
 * Internal: whether `key` can name an environment variable — non-empty, without `=` (where a
 * `KEY=value` entry splits) or NUL (where a C string ends).
 */
export function isEnvironmentVariableName(key: string): boolean {
  return key.length > 0 && !key.includes('=') && !key.includes('\0')
}

/** How a refusal of an environment with a key that is not {@link isEnvironmentVariableName} describes what it expected. */
export const ENVIRONMENT_KEYS_EXPECTED = 'an object whose keys are non-empty and contain neither "=" nor NUL'

/** How a refusal of an `env` that is not an {@link isEnvironmentRecord} describes what it expected. */
export const ENVIRONMENT_RECORD_EXPECTED = 'an object of string values (a record: not a Map, not an array)'
