import type { PtyCwdOptions } from './cwd-options.js'
import type { PtyProviderBufferSnapshot } from './buffer-snapshot.js'
import type { PtyWaitBudget } from './deadline.js'
import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { PtySize } from './provider.js'
import type { PtyProcessInfo, PtyProcessInspection } from './process-info.js'
import type { PtySpawnOptions } from './spawn-options.js'
import type { TerminalInputKind } from './terminal-input-kind.js'
import type { WriteSettlement } from './write-settlement.js'

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

/**
 * Options for {@link RuntimePtyController.stopAndWait}. `deadlineMs` is an **absolute** epoch time
 * (`Date.now() + 5_000`, as the seed origin passes it); `timeoutMs` is the relative form. Give at
 * most one; when the wait runs out the answer is `false` (not verified).
 */
export type PtyStopAndWaitOptions = PtyWaitBudget & {
  /** Keep the provider's history of the PTY (for providers with persistent sessions); passed to its shutdown. */
  keepHistory?: boolean
  /**
   * Give up waiting when this signal aborts: the call then resolves `false` (the stop is not
   * verified; the stop already dispatched goes on). Never hangs, never throws because of it.
   */
  signal?: AbortSignal
}

/** A listing across hosts, with the hosts that answered. */
export type PtyHostScopedListing = {
  /** Every PTY the answering hosts hold. */
  processes: PtyProcessInfo[]
  /** The hosts that answered; a PTY is proven absent only if its host is listed here. */
  hostIds: ExecutionHostId[]
}

/**
 * Options for process listings: `deadlineMs` (an absolute epoch time, `Date.now() + 5_000`) or
 * `timeoutMs` (a duration), at most one. A host that has not answered by then is left out of the
 * queried hosts. A deadline already past means "ask once, do not wait".
 */
export type PtyListOptions = PtyWaitBudget & {
  /**
   * Give up early: once aborted, every host that has not answered is treated as not answering
   * (left out of `hostIds`; a single-host listing rejects). An already-aborted signal asks nobody.
   */
  signal?: AbortSignal
}

/**
 * The contract a host codes against to drive PTYs, whatever runs them.
 *
 * Three members are required — `write`, `kill`, `getForegroundProcess` — so a host can implement
 * a small controller; everything else is optional. Members that can be unsure answer in three
 * values: `null` is "unknown", and never counts as a denial.
 */
export type RuntimePtyController = {
  /** Spawn a PTY (or attach to a slot's owner, or join a claim). */
  spawn?(options: PtySpawnOptions): Promise<PtySpawnReply>
  /**
   * Write bytes. `true` when the bytes were handed to the provider (accepted, or handed over with
   * the settlement still pending); an exited or fenced PTY is refused (`false`), never silently
   * accepted. A caller that retries on `false` never types the input twice.
   */
  write(ptyId: string, data: string, inputKind: TerminalInputKind): boolean
  /** Three-valued settlement of a write; local providers settle synchronously. */
  writeWithSettlement?(
    ptyId: string,
    data: string,
    inputKind: TerminalInputKind,
  ): WriteSettlement | Promise<WriteSettlement>
  /** Attach-only adoption of a live PTY the controller does not yet track; `false` on doubt. Never creates. */
  attach?(ptyId: string): Promise<boolean>
  /**
   * Stop a PTY. Marks the stop first, so the exit that follows is `operator_close`; returns
   * whether a stop was dispatched.
   */
  kill(ptyId: string): boolean
  /**
   * Retire a PTY that was spawned and then rejected by the caller. `incarnationId` is the rejected
   * spawn's; a same-id respawn since then is left alone.
   */
  retireRejectedPty?(ptyId: string, stopConfirmed: boolean, incarnationId: PtyIncarnationId | undefined): void
  /** Stop with escalation and wait; `true` only when the stop was verified before the deadline. */
  stopAndWait?(ptyId: string, options?: PtyStopAndWaitOptions): Promise<boolean>
  /**
   * The PTY's working directory: its foreground process's by default, the shell's (leader's) with
   * `{ of: 'leader' }`; `null` when it cannot be read.
   */
  getCwd?(ptyId: string, options?: PtyCwdOptions): Promise<string | null>
  /** The PTY's foreground process name; `null` when it cannot be read. */
  getForegroundProcess(ptyId: string): Promise<string | null>
  /** Foreground process and children in one call; `unavailable` when the PTY is gone. */
  inspectProcess?(
    ptyId: string,
    options?: { expectedIncarnationId?: PtyIncarnationId },
  ): Promise<PtyProcessInspection>
  /** Whether the shell has child processes; `null` when it cannot be read. */
  hasChildProcesses?(ptyId: string): Promise<boolean | null>
  /** Clear the provider's buffered screen. */
  clearBuffer?(ptyId: string): Promise<void>
  /** Resize; `false` when the PTY is unknown, exited or its provider refused. */
  resize?(ptyId: string, cols: number, rows: number): boolean
  /** Synchronous existence check: `true`, `false` (proven absent) or `null` (unknown). */
  hasPty?(ptyId: string): boolean | null
  /** The consumer processed `chars` more characters of output (drives flow control). */
  acknowledgeData?(ptyId: string, chars: number): void
  /**
   * List PTYs on one host, or on every registered host when `hostId` is omitted. `null` is the
   * local host (the seed origin maps a missing host id to the local provider).
   */
  listProcesses?(hostId?: ExecutionHostId | null, options?: PtyListOptions): Promise<PtyProcessInfo[]>
  /** List every host's PTYs and say which hosts answered: absence is meaningful only for those. */
  listProcessesWithHostScope?(options?: PtyListOptions): Promise<PtyHostScopedListing>
  /** An authoritative provider-owned screen snapshot, when the provider keeps one. */
  serializeProviderBuffer?(
    ptyId: string,
    options?: { scrollbackRows?: number },
  ): Promise<PtyProviderBufferSnapshot | null>
  /** The PTY's size as last applied; `null` when unknown. */
  getSize?(ptyId: string): PtySize | null
  /** `false` only when the owning provider proved the PTY absent; `null` = unknown (never a denial). */
  probePtyLiveness?(ptyId: string): Promise<boolean | null>
}
