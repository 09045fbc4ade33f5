import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'

/** Who a live PTY is, as the controller knows it. */
export type PtyControllerTerminalIdentity = Readonly<{
  /** The host the PTY runs on. */
  hostId: ExecutionHostId
  /** The incarnation currently behind the id, when attested. */
  incarnationId?: PtyIncarnationId
  /** The caller's pre-allocated handle for the terminal, if one was admitted. */
  handle?: string
}>

/**
 * A point-in-time inventory of the PTYs a controller knows to be live.
 */
export type PtyControllerInventory = Readonly<{
  /** Live PTYs, scoped to the requested scope when one was given. */
  livePtyIds: ReadonlySet<string>
  /**
   * Every live PTY, unscoped. Absence proofs must use this set: a PTY attributed to the wrong
   * scope would otherwise read as dead.
   */
  allLivePtyIds: ReadonlySet<string>
  /** Identity of each live PTY. */
  terminalIdentityByPtyId: ReadonlyMap<string, PtyControllerTerminalIdentity>
  /** The hosts that answered. An id is absent only if its host is in this set. */
  queriedHostIds: ReadonlySet<ExecutionHostId>
  /** Live PTYs being stopped: still live work, but no longer any surface's to show. */
  exitingPtyIds?: ReadonlySet<string>
}>
