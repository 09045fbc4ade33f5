import { describeValue } from './describe-value.js'
declare const ptyIncarnationIdBrand: unique symbol

/**
 * An opaque id, minted by the provider, for **one process** behind a PTY id.
 *
 * PTY ids can be reused: a slot respawns, a daemon restarts a session under the same name. The
 * incarnation tells an exit, write, kill or inventory row of an older process apart from the
 * current one, so that a late exit of the old process is never attributed to its replacement.
 * A string of 1 to {@link PTY_INCARNATION_ID_MAX_LENGTH} characters; branded so a plain string
 * cannot pass for one by accident.
 */
export type PtyIncarnationId = string & {
  /** Type-level brand only; no such property exists at run time. */
  readonly [ptyIncarnationIdBrand]: true
}

/** The longest incarnation id accepted; long enough for a UUID plus a host prefix, short enough to log. */
export const PTY_INCARNATION_ID_MAX_LENGTH = 128

/** True when `value` has the shape of an incarnation id (a string of 1–128 characters). Checks only the shape. */
export function isPtyIncarnationId(value: unknown): value is PtyIncarnationId {
  return typeof value === 'string' && value.length > 0 && value.length <= PTY_INCARNATION_ID_MAX_LENGTH
}

/**
 * Brand a string a provider minted as an incarnation id.
 *
 * @throws TypeError naming the value when it is not a string of 1–128 characters.
 */
export function toPtyIncarnationId(value: string): PtyIncarnationId {
  if (!isPtyIncarnationId(value)) {
    throw new TypeError(
      `Expected an incarnation id to be a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters, got ${describeValue(value)}`,
    )
  }
  return value
}

/**
 * `{ incarnationId }` when the incarnation is attested, `{}` otherwise (never an `undefined`
 * field): the incarnation part of an event, a reply or a row. Internal.
 */
export function incarnationOf(incarnationId: PtyIncarnationId | undefined): { incarnationId?: PtyIncarnationId } {
  return incarnationId === undefined ? {} : { incarnationId }
}

/**
 * Whether two incarnations may name the same process: they are equal, or one of them is not
 * attested (an unknown incarnation contradicts nothing; rule R1). Internal.
 */
export function incarnationsAgree(a: PtyIncarnationId | undefined, b: PtyIncarnationId | undefined): boolean {
  return a === undefined || b === undefined || a === b
}
