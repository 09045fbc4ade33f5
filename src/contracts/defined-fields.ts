/**
 * `value` without its `undefined`-valued keys: `value` itself when it has none, else a shallow copy
 * without them. Internal.
 *
 * Why: a provider built under `exactOptionalPropertyTypes` may answer an optional field as
 * `undefined` (the provider-side types allow it: undefined means absent), while what the controller
 * and the spawn pipeline return to their own users has such a key absent, never `undefined`
 * (`'incarnationId' in row`, a spread over defaults, `Object.keys`). Provider answers passed on
 * (the controller's listing rows and snapshots, the pipeline's outcome `result`) go through this first.
 */
export function definedFields<T extends object>(value: T): DefinedFields<T> {
  const keys = Object.keys(value)
  const fields = value as Record<string, unknown>
  // The common answer has no such key: handed on as it is (no copy on every spawn's path).
  if (!keys.some((key) => fields[key] === undefined)) return value as DefinedFields<T>
  const copy: Record<string, unknown> = {}
  for (const key of keys) {
    const field = fields[key]
    if (field !== undefined) copy[key] = field
  }
  return copy as DefinedFields<T>
}

/** `T` with `undefined` taken out of every field's type (an optional field stays optional). Internal. */
export type DefinedFields<T> = { [K in keyof T]: Exclude<T[K], undefined> }
