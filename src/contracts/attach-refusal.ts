import { carriesErrorCode } from './error-code.js'

/**
 * The `code` a provider puts on the error it rejects an `attachOnly` spawn with when a PTY with the
 * requested id is **live, but is another incarnation** than the `expectedIncarnationId`.
 *
 * Why a code of its own, distinct from `pty_absent`: the expected process is not proven gone — the
 * id is held by a live process the caller did not expect (a replacement, or the owner itself under
 * an identity the caller lost). Reading it as "absent" made the spawn pipeline retire the slot and
 * start a second process while the first kept running untracked. The pipeline reports it as
 * `slot_owner_unverified` and never spawns.
 */
export const PTY_LIVE_OTHER_INCARNATION_ERROR_CODE = 'pty_live_other_incarnation'

/** The shape of a provider's "live, but another incarnation" refusal (any error object carrying the code). */
export type PtyLiveOtherIncarnationError = {
  /** Always {@link PTY_LIVE_OTHER_INCARNATION_ERROR_CODE}. */
  code: typeof PTY_LIVE_OTHER_INCARNATION_ERROR_CODE
  /** The incarnation actually live under the id, when the provider says. */
  liveIncarnationId?: string | undefined
}

/**
 * True when `error` is a provider's "live, but another incarnation" refusal: an object whose `code`
 * is {@link PTY_LIVE_OTHER_INCARNATION_ERROR_CODE}.
 *
 * @param error - any thrown value.
 */
export function isPtyLiveOtherIncarnationError(error: unknown): error is PtyLiveOtherIncarnationError {
  return carriesErrorCode(error, PTY_LIVE_OTHER_INCARNATION_ERROR_CODE)
}
