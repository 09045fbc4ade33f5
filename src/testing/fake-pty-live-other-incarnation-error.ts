import { defineErrorBrand } from '../contracts/error-brand.js'
import { PTY_LIVE_OTHER_INCARNATION_ERROR_CODE } from '../contracts/index.js'

/**
 * What the fake provider rejects an `attachOnly` spawn with when the requested id is live under
 * another incarnation than the `expectedIncarnationId`: not an absence (a process holds the id),
 * so its `code` is `PTY_LIVE_OTHER_INCARNATION_ERROR_CODE`, never `pty_absent`.
 */
export class FakePtyLiveOtherIncarnationError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = PTY_LIVE_OTHER_INCARNATION_ERROR_CODE
  /** The session id that was asked for. */
  readonly ptyId: string
  /** The incarnation the caller expected. */
  readonly expectedIncarnationId: string
  /** The incarnation that is actually live under that id. */
  readonly liveIncarnationId: string

  /** Create the refusal for `ptyId`. */
  constructor(ptyId: string, details: { expectedIncarnationId: string; liveIncarnationId: string }) {
    super(
      `Cannot attach to PTY "${ptyId}": the live PTY is incarnation "${details.liveIncarnationId}", not the expected "${details.expectedIncarnationId}"`,
    )
    this.ptyId = ptyId
    this.expectedIncarnationId = details.expectedIncarnationId
    this.liveIncarnationId = details.liveIncarnationId
    FAKE_PTY_LIVE_OTHER_INCARNATION_ERROR_BRAND.mark(this)
  }
}
const FAKE_PTY_LIVE_OTHER_INCARNATION_ERROR_BRAND = defineErrorBrand(FakePtyLiveOtherIncarnationError, 'FakePtyLiveOtherIncarnationError')

/** True for a {@link FakePtyLiveOtherIncarnationError}, also across duplicate copies of the package. */
export function isFakePtyLiveOtherIncarnationError(value: unknown): value is FakePtyLiveOtherIncarnationError {
  return FAKE_PTY_LIVE_OTHER_INCARNATION_ERROR_BRAND.is(value)
}
