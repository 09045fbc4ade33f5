import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { PtyProcessInfo } from './process-info.js'

// What a `RuntimePtyController` answers (its replies and results), beside the contract itself in
// `runtime-pty-controller.ts`, which also holds the options the contract's methods take.

/** What a controller's `spawn` replies. */
export type PtySpawnReply = {
  /** The PTY id to address every later call to. */
  id: string
  /** The root process id, only when proven; hosts derive process identity from it. */
  pid?: number | null
  /** The incarnation behind the id. */
  incarnationId?: PtyIncarnationId
  /** The host the PTY runs on. */
  hostId: ExecutionHostId
  /** True when the spawn attached to an existing process (a slot owner or an adopted claim). */
  isReattach: boolean
  /** For claimed spawns: whether this call created the owner or adopted an existing one. */
  claimDisposition?: 'created' | 'adopted'
}

/** A listing across hosts, with the hosts that answered. */
export type PtyHostScopedListing = {
  /** Every PTY the answering hosts hold. */
  processes: PtyProcessInfo[]
  /** The hosts that answered; a PTY is proven absent only if its host is listed here. */
  hostIds: ExecutionHostId[]
}

/**
 * The screen snapshot a re-attaching view paints, from the registered renderer or else the
 * provider. Paint `data`, then follow the `data` events after `seq` (when present): every byte
 * shows once. Fields the source cannot prove are absent, never a default.
 */
export type PtyBufferSerialization = {
  /** Escape sequences that redraw the screen. */
  data: string
  /** Columns of the snapshot. */
  cols: number
  /** Rows of the snapshot. */
  rows: number
  /** The output sequence the snapshot covers (the `seq` of the last `data` event it includes). */
  seq?: number
  /** The last window title seen. */
  lastTitle?: string
  /** Kitty keyboard flags at `seq`; absent when unknown (never read as `0`). */
  kittyKeyboardFlags?: number
}

/** Releases a registration. Calling it twice is harmless. */
export type PtyDisposable = {
  /** Release it. */
  dispose(): void
}

/** The slot's adopted live owner. */
export type PtySlotAdoption = {
  /** The PTY, as a spawn reply (`isReattach: true`). */
  result: PtySpawnReply
  /** The owner the slot store names. */
  owner: {
    /** The owning PTY id. */
    ptyId: string
    /** The host it runs on. */
    hostId: ExecutionHostId
    /** Its incarnation, when attested. */
    incarnationId?: PtyIncarnationId
  }
  /** Set when the controller did not have the owner live and its provider had to restore (attach) it. */
  materialized?: true
}
