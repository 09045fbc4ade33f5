/** `value (type)` for error messages, as in "got 0 (number)". */
export function describeValue(value: unknown): string {
  let shown: string
  if (typeof value === 'string') shown = JSON.stringify(value)
  else if (typeof value === 'function') shown = '[function]'
  else if (typeof value === 'object' && value !== null) shown = Array.isArray(value) ? '[array]' : '[object]'
  else shown = String(value)
  return `${shown} (${value === null ? 'null' : typeof value})`
}

/** Throw a `TypeError` naming the argument unless it is a non-empty string. */
export function assertPtyId(ptyId: unknown): void {
  if (typeof ptyId !== 'string' || ptyId.length === 0) {
    throw new TypeError(`Expected the \`ptyId\` argument to be a non-empty string, got ${describeValue(ptyId)}`)
  }
}

/** Throw a `TypeError` naming the option unless it is a positive integer. */
export function assertPositiveInteger(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new TypeError(`Expected the \`${name}\` option to be a positive integer, got ${describeValue(value)}`)
  }
}

/** Throw a `TypeError` naming the option unless it is a non-negative finite number. */
export function assertNonNegativeNumber(kind: 'argument' | 'option', name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`Expected the \`${name}\` ${kind} to be a non-negative number, got ${describeValue(value)}`)
  }
}
