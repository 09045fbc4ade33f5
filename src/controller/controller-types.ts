import type { ExecutionHostId, PtyIncarnationId, PtyInspectProcessOptions } from '../contracts/index.js'

/** Options of `PtyController.attach`. */
export type PtyAttachOptions = {
  /** The host to attach on. Default `'local'`. */
  hostId?: ExecutionHostId
  /** Give up waiting for the host when aborted: `attach` answers `false` and tracks nothing. */
  signal?: AbortSignal
}

/** Write options beyond the contract's three arguments. */
export type PtyWriteOptions = {
  /** Refuse the write (`stale_incarnation`) unless this incarnation is the live one. */
  expectedIncarnationId?: PtyIncarnationId
}

/** Options of `PtyController.inspectProcess` (the contract's {@link PtyInspectProcessOptions}). */
export type PtyInspectOptions = PtyInspectProcessOptions
