import { defineErrorBrand } from '../contracts/error-brand.js'

/**
 * The refusal the fake provider rejects a spawn with when it names a session id (`sessionId`) that
 * a PTY still holds: a live one (with `isNewSession`), or one whose exit is still held behind
 * paused output. Every real provider refuses such a spawn (`pty_id_in_use`) rather than replace a
 * process it runs, so the fake does too. (A script's own `id` still replaces the live process: the
 * fake's way to test stale incarnations.)
 */
export class FakePtyIdInUseError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'pty_id_in_use' as const
  /** The session id that was asked for. */
  readonly ptyId: string
  /** The incarnation that holds the id. */
  readonly liveIncarnationId: string

  /** Create the refusal of a spawn under `ptyId`, held by `liveIncarnationId`. */
  constructor(ptyId: string, liveIncarnationId: string, exitStillHeld: boolean) {
    const why = exitStillHeld
      ? 'its process has exited; its exit is still held behind paused output, and the id is free once it is delivered'
      : 'a live PTY already has that id'
    super(`Cannot create PTY ${JSON.stringify(ptyId)}: ${why}`)
    this.ptyId = ptyId
    this.liveIncarnationId = liveIncarnationId
    FAKE_PTY_ID_IN_USE_ERROR_BRAND.mark(this)
  }
}
const FAKE_PTY_ID_IN_USE_ERROR_BRAND = defineErrorBrand(FakePtyIdInUseError, 'FakePtyIdInUseError')

/** True for a {@link FakePtyIdInUseError}, also across duplicate copies of the package. */
export function isFakePtyIdInUseError(value: unknown): value is FakePtyIdInUseError {
  return FAKE_PTY_ID_IN_USE_ERROR_BRAND.is(value)
}
