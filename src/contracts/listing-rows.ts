import { describeValue } from './describe-value.js'

/** The optional fields of a listing row that say which process or claim the row is. */
const OPTIONAL_IDENTITY_FIELDS = ['incarnationId', 'claimKey', 'scopeId', 'slotKey'] as const

/**
 * What is wrong with a provider's listing, or `undefined` when every row can be read: the answer
 * is an array, and each row an object whose `id` is a non-empty string, and whose optional
 * identity fields (`incarnationId`, `claimKey`, `scopeId`, `slotKey`) are each absent or a
 * non-empty string. Why the controller checks: a listing is evidence — a PTY not in an
 * authoritative listing is proven gone, a row of another incarnation or claim is a replacement —
 * and a row it cannot read (`null`, an `id` of `5`, an `incarnationId` or `claimKey` of `null`
 * from a JSON relay) would prove an absence it never saw, or hide the owner of a claim. Such a
 * listing counts as a failed one.
 */
export function malformedListing(rows: unknown): string | undefined {
  if (!Array.isArray(rows)) return `the listing is not an array, got ${describeValue(rows)}`
  for (let index = 0; index < rows.length; index++) {
    const row: unknown = rows[index]
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return `row ${index} of the listing is not an object, got ${describeValue(row)}`
    const { id } = row as { id?: unknown }
    if (typeof id !== 'string' || id.length === 0) return `row ${index} of the listing has no PTY id (a non-empty string), got ${describeValue(id)}`
    for (const field of OPTIONAL_IDENTITY_FIELDS) {
      const value = (row as Record<string, unknown>)[field]
      if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
        return `the row of PTY ${JSON.stringify(id)} in the listing: its ${field} is not a non-empty string, got ${describeValue(value)}`
      }
    }
  }
  return undefined
}
