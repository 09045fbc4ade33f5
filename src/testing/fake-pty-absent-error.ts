import { defineErrorBrand } from '../contracts/error-brand.js'
/**
 * The typed absence the fake provider rejects an `attachOnly` spawn with: no live PTY has the
 * requested session id. (A live PTY of another incarnation is not an absence: the fake rejects
 * with `FakePtyLiveOtherIncarnationError` for it.)
 *
 * It is typed (with a stable `code`) on purpose: only a typed absence from the owning provider may
 * count as proof that a PTY is gone. An untyped "not found" string proves nothing.
 */
export class FakePtyAbsentError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'pty_absent' as const
  /** The session id that was asked for. */
  readonly ptyId: string | undefined
  /** The incarnation the caller expected, when it named one. */
  readonly expectedIncarnationId: string | undefined
  /** The incarnation that is actually live under that id, if any (a replacement). */
  readonly liveIncarnationId: string | undefined

  /** Create an absence error for `ptyId`. */
  constructor(
    ptyId: string | undefined,
    details: { expectedIncarnationId?: string | undefined; liveIncarnationId?: string | undefined } = {},
  ) {
    const which = ptyId === undefined ? 'without a session id' : `"${ptyId}"`
    const reason =
      details.liveIncarnationId === undefined
        ? 'no live PTY has that id'
        : `the live PTY is incarnation "${details.liveIncarnationId}", not the expected "${String(details.expectedIncarnationId)}"`
    super(`Cannot attach to PTY ${which}: ${reason}`)
    this.ptyId = ptyId
    this.expectedIncarnationId = details.expectedIncarnationId
    this.liveIncarnationId = details.liveIncarnationId
    FAKE_PTY_ABSENT_ERROR_BRAND.mark(this)
  }
}
const FAKE_PTY_ABSENT_ERROR_BRAND = defineErrorBrand(FakePtyAbsentError, 'FakePtyAbsentError')

/** True for a {@link FakePtyAbsentError}, also across duplicate copies of the package. */
export function isFakePtyAbsentError(value: unknown): value is FakePtyAbsentError {
  return FAKE_PTY_ABSENT_ERROR_BRAND.is(value)
}
