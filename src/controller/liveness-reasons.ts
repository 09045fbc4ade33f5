/**
 * Reasons the controller gives in `unverifiable` liveness verdicts. They are stable strings (hosts
 * may persist or match them), each saying why the process may still be alive.
 */
export const PTY_LIVENESS_REASONS = Object.freeze({
  /** A stop was dispatched and no exit was reported within `STOP_UNCONFIRMED_AFTER_MS`. */
  stopUnconfirmed: 'stop_unconfirmed',
  /** The provider rejected (or threw from) the shutdown, so the stop may not have landed. */
  shutdownFailed: 'shutdown_failed',
  /** The provider reported an exit it could not vouch for (a negative code or `stop_unverified`). */
  exitUnconfirmed: 'provider_exit_unconfirmed',
  /** The host's listing or probe failed while a stop was being verified. */
  verificationFailed: 'stop_verification_failed',
  /** `retireRejectedPty` was told the follow-up stop could not be verified. */
  retireUnconfirmed: 'retire_unconfirmed',
  /** The PTY's (remote) host failed or timed out a process listing: contact is lost, not the process. */
  hostListingFailed: 'host_listing_failed',
} as const)

/** One of the {@link PTY_LIVENESS_REASONS} strings. */
export type PtyLivenessReason = (typeof PTY_LIVENESS_REASONS)[keyof typeof PTY_LIVENESS_REASONS]
