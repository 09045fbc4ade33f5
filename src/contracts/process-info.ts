import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'

/** One row of a provider's process listing: a PTY the provider currently holds. */
export type PtyProcessInfo = {
  /** The PTY id. */
  id: string
  /** The host the row came from. Absence is meaningful only for hosts that were queried. */
  hostId: ExecutionHostId
  /** The incarnation behind the id, when the provider attests one. */
  incarnationId?: PtyIncarnationId
  /** The root process id, when published. */
  pid?: number | null
  /** The PTY's current working directory; `null` when it cannot be read (never a made-up path). */
  cwd: string | null
  /** A display title: usually the foreground process name. */
  title: string
  /** The scope the PTY was spawned in, if any. */
  scopeId?: string
  /** The slot key the PTY owns, if any. */
  slotKey?: string
  /** The claim key the PTY holds, if any. */
  claimKey?: string
}

/**
 * What an inspection of a PTY's processes found. `null` fields mean "cannot say"; `unavailable`
 * means the PTY itself is gone or unreachable.
 */
export type PtyProcessInspection = {
  /** The foreground process name, or `null` when it cannot be read. */
  foregroundProcess: string | null
  /** Whether the shell has child processes; `null` when it cannot be read. */
  hasChildProcesses: boolean | null
  /** Set when the PTY is gone or its host unreachable, so nothing could be inspected. */
  unavailable?: true
}
