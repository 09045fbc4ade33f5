import { describeCodeUnit, loneSurrogateIndex } from '../contracts/well-formed-text.js'
import { isUint8Array } from '../contracts/write-settlement.js'
import { isPtyIncarnationId, isTerminalInputKind } from '../contracts/index.js'
import { describeThrownValue, describeValue } from '../contracts/describe-value.js'
import { assertKnownOptions, isOptionsObject } from '../contracts/known-options.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'
import { CHAR_COUNT_EXPECTED, providerArgumentError } from '../contracts/provider-arguments.js'

export { describeThrownValue, describeValue }

// Every refusal below is the one shape every shared check throws (`argumentRefusal`): a `TypeError`
// with `code: 'invalid_option'`, `option` and `value`, so a host matching on `code` meets the
// controller's refusals as it meets a provider's.

/** Throw a `TypeError` naming the argument unless it is a non-empty string. */
export function assertPtyId(ptyId: unknown): void {
  if (typeof ptyId !== 'string' || ptyId.length === 0) {
    throw argumentRefusal(`Expected the \`ptyId\` argument to be a non-empty string, got ${describeValue(ptyId)}`, 'ptyId', ptyId)
  }
}

/** Throw a `TypeError` naming the option unless it is a positive integer. */
export function assertPositiveInteger(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw argumentRefusal(`Expected the \`${name}\` option to be a positive integer, got ${describeValue(value)}`, name, value)
  }
}

/** Throw a `TypeError` naming the option unless it is a non-negative finite number. */
export function assertNonNegativeNumber(kind: 'argument' | 'option', name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw argumentRefusal(`Expected the \`${name}\` ${kind} to be a non-negative number, got ${describeValue(value)}`, name, value)
  }
}

/**
 * Throw a `TypeError` naming the argument unless it is a non-negative integer: a count of chars
 * (an acknowledgement). Why not a fraction: a provider counts whole chars, and one that drops an
 * acknowledgement it cannot count (the pty host does) would never see its count go down.
 */
export function assertCharCount(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    // The providers' wording (`assertAcknowledgedChars`): one refusal, whichever layer makes it.
    throw providerArgumentError(name, CHAR_COUNT_EXPECTED, value)
  }
}

/** Throw a `TypeError` naming the option unless it is absent or a well-formed incarnation id. */
export function assertOptionalIncarnationId(name: string, value: unknown): void {
  if (value !== undefined && !isPtyIncarnationId(value)) {
    throw argumentRefusal(`Expected the \`${name}\` option to be an incarnation id (a string of 1–128 characters), got ${describeValue(value)}`, name, value)
  }
}

/** Throw a `TypeError` naming the option unless it is absent or a boolean. */
export function assertOptionalBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw argumentRefusal(`Expected the \`${name}\` option to be a boolean, got ${describeValue(value)}`, name, value)
  }
}

/**
 * Throw a `TypeError` naming the argument unless it is `undefined` or a (non-array) object — and,
 * given the method's `known` option names, naming any other option: a misspelt one
 * (`serializeBuffer(id, { scrollbackrows: 0 })`) would be ignored and its default used.
 */
export function assertOptionsObject(name: string, value: unknown, known?: readonly string[]): void {
  if (value !== undefined && !isOptionsObject(value)) {
    throw argumentRefusal(`Expected the \`${name}\` argument to be an object, got ${describeValue(value)}`, name, value)
  }
  if (known !== undefined) assertKnownOptions('', value as object | undefined, known)
}

/**
 * Throw a `TypeError` naming the argument or option unless `options` is `undefined` or an object
 * whose `scrollbackRows` is absent or a non-negative integer (`serializeBuffer` and
 * `serializeProviderBuffer`).
 */
export function assertBufferOptions(options: unknown, known: readonly string[] = ['scrollbackRows']): void {
  assertOptionsObject('options', options, known)
  const rows = (options as { scrollbackRows?: unknown } | undefined)?.scrollbackRows
  if (rows !== undefined && (typeof rows !== 'number' || !Number.isInteger(rows) || rows < 0)) {
    throw argumentRefusal(`Expected the \`scrollbackRows\` option to be a non-negative integer, got ${describeValue(rows)}`, 'scrollbackRows', rows)
  }
}

/**
 * Throw a `TypeError` naming the `data` argument and the index unless `data` is well-formed
 * UTF-16. Why refuse rather than send: a PTY carries UTF-8, where a lone surrogate has no
 * encoding, so the child would silently receive U+FFFD instead of what the caller wrote (usually
 * a surrogate pair split by the caller's own chunking).
 */
export function assertWellFormedData(data: string): void {
  const index = loneSurrogateIndex(data)
  if (index === -1) return
  throw argumentRefusal(`Expected the \`data\` argument to be well-formed UTF-16, got a lone surrogate ${describeCodeUnit(data, index)} at index ${index}`, 'data', data)
}

/**
 * Check a write's `data` and `inputKind`: `data` a well-formed UTF-16 string (a lone surrogate is
 * refused, naming its index) or a `Uint8Array` (raw bytes, a `Buffer` included), `inputKind` one
 * of the three kinds. Throws a `TypeError` naming the argument. A string costs what it did before
 * bytes were accepted (one `typeof`): the `Uint8Array` check runs only for what is no string.
 */
export function assertWriteArguments(data: unknown, inputKind: unknown): asserts data is string | Uint8Array {
  if (typeof data === 'string') assertWellFormedData(data)
  else if (!isUint8Array(data)) {
    throw argumentRefusal(`Expected the \`data\` argument to be a string or a Uint8Array (a Buffer is one), got ${describeValue(data)}`, 'data', data)
  }
  if (!isTerminalInputKind(inputKind)) {
    throw argumentRefusal(`Expected the \`inputKind\` argument to be 'driving', 'launch' or 'query-reply', got ${describeValue(inputKind)}`, 'inputKind', inputKind)
  }
}

/** Throw a `TypeError` naming the option unless `of` is absent, `'foreground'` or `'leader'`. */
export function assertCwdOf(of: unknown): void {
  if (of !== undefined && of !== 'foreground' && of !== 'leader') {
    throw argumentRefusal(`Expected the \`of\` option to be 'foreground' or 'leader', got ${describeValue(of)}`, 'of', of)
  }
}
