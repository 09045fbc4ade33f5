import { describeValue } from '../contracts/describe-value.js'

export { describeValue }

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
