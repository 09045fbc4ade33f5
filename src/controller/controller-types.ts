import type { ExecutionHostId, PtyIncarnationId, PtyInspectProcessOptions } from '../contracts/index.js'

/** Options of `PtyController.attach`. Any other option is refused with a `TypeError` naming it. */
export type PtyAttachOptions = {
  /** The host to attach on. Default `'local'`. */
  hostId?: ExecutionHostId | undefined
  /** Give up waiting for the host when aborted: `attach` answers `false` and tracks nothing. */
  signal?: AbortSignal | undefined
}

/** Write options beyond the contract's three arguments. Any other option is refused with a `TypeError` naming it. */
export type PtyWriteOptions = {
  /** Refuse the write (`stale_incarnation`) unless this incarnation is the live one. */
  expectedIncarnationId?: PtyIncarnationId | undefined
}

/** Options of `PtyController.inspectProcess` (the contract's {@link PtyInspectProcessOptions}). Any other option is refused with a `TypeError` naming it. */
export type PtyInspectOptions = PtyInspectProcessOptions

/** Options of `PtyController.dispose`. */
export type PtyControllerDisposeOptions = {
  /**
   * `true` (default): stop every PTY the controller owns, each an operator close. `false`: leave
   * them running and let go of them — no stop, no `exit` event, no error; the runtime keeps their
   * registrations. For providers whose processes outlive the app (the pty host: detach its
   * provider too, and the next app attaches to them). A spawn still in flight is stopped either
   * way: its caller never learns its id.
   */
  stopPtys?: boolean | undefined
}
