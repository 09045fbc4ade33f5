import type { PtyIncarnationId } from '../contracts/index.js'

/** `{ incarnationId }` when the incarnation is attested, `{}` otherwise (never an `undefined` field). */
export function incarnationOf(incarnationId: PtyIncarnationId | undefined): { incarnationId?: PtyIncarnationId } {
  return incarnationId === undefined ? {} : { incarnationId }
}

/**
 * Whether two incarnations may name the same process: they are equal, or one of them is not
 * attested (an unknown incarnation contradicts nothing).
 */
export function incarnationsAgree(a: PtyIncarnationId | undefined, b: PtyIncarnationId | undefined): boolean {
  return a === undefined || b === undefined || a === b
}
