import type { PtyCwdOptions } from './cwd-options.js'
import type { PtyProviderBufferSnapshot } from './buffer-snapshot.js'
import type { PtyWaitBudget } from './deadline.js'
import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { PtySize } from './provider.js'
import type { PtyProcessInfo, PtyProcessInspection } from './process-info.js'
import type { PtySlot } from './spawn-options.js'
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
  /** Add each PTY's confirmed foreground evidence to its row (`foregroundProcessEvidence`); costs process reads. */
  includeForegroundProcessEvidence?: boolean
}

/** Options of {@link RuntimePtyController.inspectProcess}. */
export type PtyInspectProcessOptions = {
  /** Answer `unavailable` unless this incarnation is the live one. */
  expectedIncarnationId?: PtyIncarnationId
  /** Also read whether the shell has children (a process-table read); otherwise `hasChildProcesses` is `null`. */
  scanChildProcesses?: boolean
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

/**
 * Serializes a view's screen for {@link RuntimePtyController.serializeBuffer}; `null` when it
 * cannot (the controller then asks the provider).
 */
export type PtyRendererSerializer = (options: {
  /** Scrollback rows wanted above the screen; absent = the serializer's default. */
  scrollbackRows?: number
}) => PtyBufferSerialization | null | Promise<PtyBufferSerialization | null>

/** Releases a registration. Calling it twice is harmless. */
export type PtyDisposable = {
  /** Release it. */
  dispose(): void
}

/** Options of {@link RuntimePtyController.adoptSlot}. */
export type PtyAdoptSlotOptions = {
  /** The slot whose live owner to adopt. */
  slot: PtySlot
  /** A claim from `claimSlotCreate` for this slot, held by the caller: adopt inside it instead of waiting behind it. */
  slotCreateClaim?: PtySlotCreateRelease
}

/** Releases a slot-create claim (see {@link RuntimePtyController.claimSlotCreate}). Calling it twice is harmless. */
export type PtySlotCreateRelease = () => void

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
  /** Foreground process and (only with `scanChildProcesses`) children in one call; `unavailable` when the PTY is gone. */
  inspectProcess?(ptyId: string, options?: PtyInspectProcessOptions): Promise<PtyProcessInspection>
  /** The foreground process name, **confirmed** by the host; `null` when it cannot be confirmed. */
  confirmForegroundProcess?(ptyId: string): Promise<string | null>
  /** `true` only when the host confirmed the shell itself is in the foreground; `false` otherwise, also on doubt. */
  confirmShellForeground?(ptyId: string): Promise<boolean>
  /** Whether the host (default `'local'`) can give foreground evidence at all. */
  supportsForegroundProcessEvidence?(hostId?: ExecutionHostId): Promise<boolean>
  /** Restore the default input modes (bracketed paste, mouse, cursor keys, alternate screen, kitty flags) in the consumer's view. */
  resetInputModes?(ptyId: string): Promise<void>
  /** The snapshot a re-attaching view paints: the renderer's, else the provider's; `null` when neither can. */
  serializeBuffer?(ptyId: string, options?: { scrollbackRows?: number }): Promise<PtyBufferSerialization | null>
  /** Register the view that holds the authoritative screen of a PTY; dispose to unregister. */
  registerRendererSerializer?(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable
  /** Whether a renderer serializer is registered for the PTY now. */
  hasRendererSerializer?(ptyId: string): boolean
  /** The generation of the PTY's latest renderer registration; `0` before any. */
  getRendererSerializerGeneration?(ptyId: string): number
  /** `true` once a renderer registers with a generation above `afterGeneration`; `false` on timeout or abort. */
  waitForRendererSerializer?(ptyId: string, afterGeneration: number, timeoutMs?: number, signal?: AbortSignal): Promise<boolean>
  /** Reserve creating a slot's PTY; other slot spawns and adoptions of that slot wait until the release. */
  claimSlotCreate?(slot: PtySlot): PtySlotCreateRelease
  /** Adopt the slot's live owner, or `null` when it has none; never spawns. */
  adoptSlot?(options: PtyAdoptSlotOptions): Promise<PtySlotAdoption | null>
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
