/**
 * What the bad-input property tests share: the values that are no options object, and how a call
 * settled (a synchronous throw, a rejection, or a value).
 */
import fc from 'fast-check'

/** Values a JavaScript caller may pass where an options object is expected: never one. */
export const notAnOptionsObject = fc.oneof(
  fc.constantFrom<unknown>(null, 0, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, '', 'a\u0000b', true, 10n, Symbol('options'), () => ({})),
  fc.anything({ withBigInt: true }).filter((value) => value !== undefined && (typeof value !== 'object' || value === null)),
  fc.array(fc.anything(), { maxLength: 3 }),
)

/** How `call()` settles: a synchronous throw, a rejection, or a value (a promise's, once settled). */
export async function outcome(call: () => unknown): Promise<{ how: 'threw' | 'rejected' | 'returned'; value: unknown }> {
  let result: unknown
  try {
    result = call()
  } catch (error) {
    return { how: 'threw', value: error }
  }
  return Promise.resolve(result).then(
    (value) => ({ how: 'returned' as const, value }),
    (error: unknown) => ({ how: 'rejected' as const, value: error }),
  )
}

/**
 * The refusal every shared check, provider and the controller throw for a malformed argument or
 * option (src/contracts/argument-refusal.ts): a `TypeError` with `code: 'invalid_option'`, `option`
 * and `value` — what `toThrow` compares a thrown refusal with.
 */
export function argumentRefusalOf(message: string, option: string, value: unknown): TypeError {
  return Object.assign(new TypeError(message), { code: 'invalid_option', option, value })
}
