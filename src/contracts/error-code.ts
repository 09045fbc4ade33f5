/**
 * True when `value` is an object whose `code` is `code`: how a typed refusal is recognized across
 * duplicate copies of the package and across processes, where `instanceof` fails. Internal: the
 * body of every `is…Error` guard over a code.
 */
export function carriesErrorCode(value: unknown, code: string): boolean {
  return typeof value === 'object' && value !== null && (value as { code?: unknown }).code === code
}
