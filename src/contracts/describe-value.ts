/**
 * Internal (not exported from `ptykit/contracts`): how every ptykit module shows a bad value in a
 * `TypeError` message — "Expected the `cols` option to be a positive integer, got 0 (number)".
 * One rendering for the whole SDK, so messages read the same whichever module refused the value.
 */

/** The longest rendering of a value: enough to recognize it, short enough for one log line. */
export const DESCRIBED_VALUE_MAX_CHARS = 200

/**
 * `value (type)`: strings as JSON, objects and arrays as (truncated) JSON, functions by kind.
 * Total: a value whose inspection throws (a `Proxy` with throwing traps, a revoked proxy, a
 * throwing `toJSON` or getter) is shown as `[unprintable object]`, never a second error.
 */
export function describeValue(value: unknown): string {
  let shown: string
  const type = typeNameOf(value)
  try {
    if (typeof value === 'string') shown = JSON.stringify(value)
    else if (typeof value === 'function') shown = '[function]'
    else if (binaryNameOf(value) !== undefined) shown = `${binaryNameOf(value)} of ${describeByteLength((value as ArrayBufferLike).byteLength)}`
    else if (typeof value === 'object' && value !== null) {
      try {
        shown = JSON.stringify(value) ?? Object.prototype.toString.call(value)
      } catch {
        // Why: a circular or exotic object must still produce a message, never a second error.
        shown = Object.prototype.toString.call(value)
      }
    } else shown = String(value)
  } catch {
    shown = `[unprintable ${typeof value}]`
  }
  if (shown.length > DESCRIBED_VALUE_MAX_CHARS) shown = `${shown.slice(0, DESCRIBED_VALUE_MAX_CHARS)}…`
  return `${shown} (${type})`
}

/**
 * How a refusal shows a value that may be a secret — an environment variable's value, a private
 * key, a passphrase: its type (and a string's length), never its contents. Error messages end up
 * in logs; such a refusal keeps no `value` on the error either.
 */
export function describeSecretValue(value: unknown): string {
  return typeof value === 'string' ? `[redacted] (string of ${value.length} characters)` : `[redacted] (${collectionNameOf(value) ?? typeNameOf(value)})`
}

/** `Map`, `Set` and such built-in collections by name (their contents stay unshown); `undefined` for anything else. */
function collectionNameOf(value: unknown): string | undefined {
  try {
    if (typeof value !== 'object' || value === null) return undefined
    const tag = Object.prototype.toString.call(value).slice(8, -1)
    return tag === 'Map' || tag === 'Set' || tag === 'WeakMap' || tag === 'WeakSet' ? tag : undefined
  } catch {
    return undefined
  }
}

/** `null`, `array`, a binary type's name (`Uint8Array`, `ArrayBuffer`, `DataView`…), or `typeof` the value. Total: `Array.isArray` throws for a revoked proxy. */
function typeNameOf(value: unknown): string {
  try {
    return value === null ? 'null' : Array.isArray(value) ? 'array' : (binaryNameOf(value) ?? typeof value)
  } catch {
    return typeof value
  }
}

/** `1 byte`, `2 bytes`. */
function describeByteLength(bytes: number): string {
  return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`
}

/**
 * The name of a typed array, `DataView` (a `Buffer` is a `Uint8Array`) or `ArrayBuffer`, else
 * `undefined`. Why: as JSON, an `ArrayBuffer` or a `DataView` shows as `{}` — a refusal of bytes
 * in the wrong container (`data` given as `encoded.buffer`) would not say what it got.
 */
function binaryNameOf(value: unknown): string | undefined {
  if (ArrayBuffer.isView(value)) return Object.prototype.toString.call(value).slice(8, -1)
  if (value instanceof ArrayBuffer) return 'ArrayBuffer'
  if (typeof SharedArrayBuffer === 'function' && value instanceof SharedArrayBuffer) return 'SharedArrayBuffer'
  return undefined
}

/**
 * A thrown value, for a report's message: `Name: message` for an error-like value, else
 * {@link describeValue}. Total: an object whose `message` getter throws, or a `Proxy` whose
 * traps throw, is still described.
 */
export function describeThrownValue(value: unknown): string {
  try {
    if (value instanceof Error) {
      const name = typeof value.name === 'string' ? value.name : 'Error'
      const message = typeof value.message === 'string' ? value.message : describeValue(value.message)
      const text = `${name}: ${message}`
      return text.length > DESCRIBED_VALUE_MAX_CHARS ? `${text.slice(0, DESCRIBED_VALUE_MAX_CHARS)}…` : text
    }
  } catch {
    // Fall through: the getters (or the proxy's traps) threw.
  }
  return describeValue(value)
}
