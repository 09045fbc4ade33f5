import type { PtyCwdOptions } from './cwd-options.js'
import type { PtyProviderBufferSnapshot } from './buffer-snapshot.js'
import type { PtyWaitBudget } from './deadline.js'
import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { PtySize } from './provider.js'
import type { PtyProcessInfo, PtyProcessInspection } from './process-info.js'
import type {
  PtyBufferSerialization,
  PtyDisposable,
  PtyHostScopedListing,
  PtySlotAdoption,
  PtySpawnReply,
} from './runtime-pty-controller-answers.js'
import type { PtySlot, PtySpawnOptions } from './spawn-options.js'
import type { TerminalInputKind } from './terminal-input-kind.js'
import type { WriteSettlement } from './write-settlement.js'

/**
 * Options for {@link RuntimePtyController.stopAndWait}. `deadlineMs` is an **absolute** epoch time
 * (`Date.now() + 5_000`, as the seed origin passes it); `timeoutMs` is the relative form. Give at
 * most one; when the wait runs out the answer is `false` (not verified).
 */
export type PtyStopAndWaitOptions = PtyWaitBudget & {
  /** Keep the provider's history of the PTY (for providers with persistent sessions); passed to its shutdown. */
  keepHistory?: boolean | undefined
  /**
   * Give up waiting when this signal aborts: the call then resolves `false` (the stop is not
   * verified; the stop already dispatched goes on). Never hangs, never throws because of it.
   */
  signal?: AbortSignal | undefined
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
  signal?: AbortSignal | undefined
  /** Add each PTY's confirmed foreground evidence to its row (`foregroundProcessEvidence`); costs process reads. */
  includeForegroundProcessEvidence?: boolean | undefined
}

/** Options of {@link RuntimePtyController.inspectProcess}. */
export type PtyInspectProcessOptions = {
  /** Answer `unavailable` unless this incarnation is the live one. */
  expectedIncarnationId?: PtyIncarnationId | undefined
  /** Also read whether the shell has children (a process-table read); otherwise `hasChildProcesses` is `null`. */
  scanChildProcesses?: boolean | undefined
}

/**
 * Serializes a view's screen for {@link RuntimePtyController.serializeBuffer}; `null` when it
 * cannot (the controller then asks the provider).
 */
export type PtyRendererSerializer = (options: {
  /** Scrollback rows wanted above the screen; absent = the serializer's default. */
  scrollbackRows?: number | undefined
}) => PtyBufferSerialization | null | Promise<PtyBufferSerialization | null>

/** Options of {@link RuntimePtyController.adoptSlot}. */
export type PtyAdoptSlotOptions = {
  /** The slot whose live owner to adopt. */
  slot: PtySlot
  /** A claim from `claimSlotCreate` for this slot, held by the caller: adopt inside it instead of waiting behind it. */
  slotCreateClaim?: PtySlotCreateRelease | undefined
}

/** Releases a slot-create claim (see {@link RuntimePtyController.claimSlotCreate}). Calling it twice is harmless. */
export type PtySlotCreateRelease = () => void

/**
 * The contract a host codes against to drive PTYs, whatever runs them.
 *
 * Three members are required — `write`, `kill`, `getForegroundProcess` — so a host can implement
 * a small controller; everything else is optional. Members that can be unsure answer in three
 * values: `null` is "unknown", and never counts as a denial. The behaviour described below is the
 * contract's, as the default controller (`createPtyController`) implements it; its options (such
 * as `stop.defaultDeadlineMs`) are named where they set a default.
 */
export type RuntimePtyController = {
  /**
   * Spawn a PTY (or attach to a slot's owner, or join a claim) through the spawn pipeline (rollback
   * on failure), record it and emit `spawn`. Output that arrived while the spawn was in flight is
   * delivered right after the `spawn` event.
   *
   * @throws PtySpawnError (with a stable `code`) when the pipeline refuses or fails.
   * @throws PtyControllerDisposedError when the controller was disposed, also while the spawn was in
   * flight: a process it started is then stopped, and the claim and slot binding it made released.
   */
  spawn?(options: PtySpawnOptions): Promise<PtySpawnReply>
  /**
   * Write bytes; `true` when they were handed to the provider: settled `accepted`, or handed over
   * with the settlement still pending (an asynchronous provider), as the seed origin answers. `false`
   * when the write was refused (unknown, exited, fenced PTY; disposed controller) or settled
   * `unverifiable` at once. Why `true` for a pending settlement: the bytes left, and a caller that
   * retries on `false` would type them twice. `writeWithSettlement` gives the final outcome.
   *
   * @throws TypeError when `data` has a lone surrogate (not well-formed UTF-16), naming its index:
   * refused, never silently replaced by U+FFFD.
   */
  write(ptyId: string, data: string, inputKind: TerminalInputKind): boolean
  /**
   * Write bytes and settle the outcome in three values (local providers settle synchronously when
   * the terminal took every byte on the call; a write whose bytes the provider holds for a program
   * that does not read yet settles as a promise once their fate is known — `accepted`, or
   * `refused('pty_exited')` / `unverifiable('partial_write', true)` when they were dropped at the exit).
   * Refused (proven no byte left) for an unknown id (`pty_not_found`), an exited or
   * unverified-stopped PTY (`pty_exited`), an `expectedIncarnationId` that is not the live one
   * (`stale_incarnation`) and a disposed controller (`controller_disposed`). A provider that throws,
   * or rejects an async settlement, yields `unverifiable('provider_threw_after_handoff', true)`. A
   * provider answer that is not a `WriteSettlement` is read as the seed origin reads an older
   * provider's boolean (`settlementFromProviderWrite`): `false` is `refused('provider_refused_write')`,
   * `true` is `accepted`, anything else `unverifiable` with `bytesHandedToTransport: true`.
   *
   * @throws TypeError when `data` is not a string or is not well-formed UTF-16: a lone surrogate
   * (`'A\uD800B'`, usually a pair split by the caller's chunking) has no UTF-8 encoding and would
   * reach the child as U+FFFD, so it is refused, naming its index, rather than sent altered.
   * Nothing is written.
   */
  writeWithSettlement?(
    ptyId: string,
    data: string,
    inputKind: TerminalInputKind,
  ): WriteSettlement | Promise<WriteSettlement>
  /** Attach-only adoption of a live PTY the controller does not yet track; `false` on doubt. Never creates. */
  attach?(ptyId: string): Promise<boolean>
  /**
   * Stop a PTY: marks the stop for its current incarnation first (so the exit that follows is
   * `operator_close`), then dispatches `provider.shutdown(id, { expectedIncarnationId })`. Returns
   * whether a stop is committed: `false` for unknown and exited ids — an id this controller does
   * not track (a PTY that outlived an earlier run of the app) is not looked for: `attach` it first,
   * or call `stopAndWait`, which asks the hosts. An id whose `spawn` (`sessionId`) or `attach`
   * through the controller has begun and not settled — in flight, or a spawn still queued behind
   * its slot's turn or behind the stop of the id's previous PTY (a restart) — answers `true`: the
   * stop is marked for each such spawn and attach (beside the stop of a live PTY under the id, if
   * any), and the process each publishes under the id is stopped the moment it lands (after its
   * `spawn` event, the same stop, fenced by the incarnation it published; its exit is
   * `operator_close` unless it died first). The spawn's promise still resolves with its reply (and
   * `attach` with `true`): what ran is reported, then stopped. A spawn that fails, or a `claim` or
   * `slot` spawn that adopts an owner under another id, leaves nothing to stop; a spawn or attach
   * of the id begun after the `kill` is not stopped by it. An `adoptSlot` still waiting for its
   * slot's turn counts as an attach of the owner the slot store names (when the controller does
   * not track that owner live): a `kill` of that id answers `true`, and the owner the adoption
   * attaches is stopped as soon as it is published (one the adoption ends without publishing is
   * stopped on its host where it runs, fenced by the incarnation the store names). Only when that
   * stop can reach that owner alone: an owner the store names without an incarnation, or on a host
   * with no provider in this controller, does not count (`false`, unless something else of the id
   * is committed) — use `stopAndWait`, which asks the hosts now.
   * A PTY whose earlier stop went unconfirmed can be killed again (ownership is kept so a retry
   * can reach it). Called late, after `dispose()` began, it never throws and still answers whether
   * a stop is committed: `true` while disposal is stopping the PTY or a spawn or attach of the id
   * is still coming (stopped when it lands), `false` once disposal's stop of it settled or for a
   * PTY disposal let go.
   *
   * If the provider rejects, or reports no exit within `stop.unconfirmedAfterMs`, the controller
   * publishes `exit` with code −1 and cause `unknown/stop_unverified`, and liveness `unverifiable`
   * — never dead. A real exit of that incarnation arriving later publishes its real cause in a
   * second `exit`, then liveness `exited` (unless a re-attach revived the PTY first).
   */
  kill(ptyId: string): boolean
  /**
   * Retire a PTY the caller spawned and then rejected. `incarnationId` names the rejected
   * incarnation: a same-id respawn since then is left alone. Confirmed ⇒ the PTY is settled as an
   * operator close (exit code 0 if none was published) and liveness `exited`; not confirmed ⇒
   * liveness `unverifiable` and, if still live, an exit `stop_unverified`.
   *
   * @throws TypeError when `stopConfirmed` is not a boolean (a truthy `'false'` would certify a
   * death nobody confirmed), or `incarnationId` is neither `undefined` nor an incarnation id.
   */
  retireRejectedPty?(ptyId: string, stopConfirmed: boolean, incarnationId: PtyIncarnationId | undefined): void
  /**
   * Stop a PTY with escalation and wait, as the seed's `stopAndWait`: hang up, force
   * (`shutdown({ immediate: true })`) within the deadline, and answer `true` only once a shutdown
   * completed and a fresh listing of the owning host (polled with `keepHistory`) verifies the
   * incarnation gone; `false` on any doubt, at the deadline, or when `signal` aborts.
   * `deadlineMs` is an absolute epoch time (`Date.now() + 5_000`, read against `Date.now()` also
   * when the controller runs on an injected clock), `timeoutMs` a duration (at most one; default
   * `stop.defaultDeadlineMs`). An id the controller does not track is asked of
   * the hosts: each host that holds it is stopped, and the answer is `true` only when every such
   * stop was verified and every other host proved it absent — so an id no host ever held is `true`
   * once every host proved it absent (the seed origin's "verified by inventory"), `false` when a
   * host cannot be asked. The spawns (`sessionId`) and attaches
   * of the id begun before the call and not settled yet (in flight, or a spawn queued behind its
   * slot's turn or a restart's wait) are waited for (within the deadline) and what each publishes
   * under the id is stopped as soon as it lands — `true` only when those stops were verified too;
   * one still coming at the deadline (or when `signal` aborts) is `false`, and is marked as `kill`
   * marks it: what it publishes under the id is stopped the moment it lands. A spawn
   * begun after the call is neither waited for nor stopped. Verified without a provider exit ⇒ the controller publishes the exit itself (code 0,
   * `operator_close`).
   *
   * @throws TypeError when an option is malformed (naming it).
   */
  stopAndWait?(ptyId: string, options?: PtyStopAndWaitOptions): Promise<boolean>
  /**
   * The PTY's working directory. By default the **foreground process's** (where the program the
   * user runs now works: `cd` inside a running tool shows here); `{ of: 'leader' }` asks for the
   * shell's (the PTY's leader), as an IDE's "new terminal here" wants. `null` when unknown, ended,
   * unreadable (or `''`), or on error.
   *
   * @throws TypeError when `options.of` is neither `'foreground'` nor `'leader'`, or (the default
   * controller) `options` is not an object or holds an option other than `of`.
   */
  getCwd?(ptyId: string, options?: PtyCwdOptions): Promise<string | null>
  /** The PTY's foreground process name; `null` when unknown, ended, unreadable or on error. */
  getForegroundProcess(ptyId: string): Promise<string | null>
  /**
   * Foreground process and (only with `scanChildProcesses`) children in one call. `unavailable`
   * when the PTY is unknown, not live, or not the `expectedIncarnationId`.
   *
   * @throws TypeError (the default controller) when `options` is not an object, holds an option
   * other than `expectedIncarnationId` and `scanChildProcesses`, or `scanChildProcesses` is not a boolean.
   */
  inspectProcess?(ptyId: string, options?: PtyInspectProcessOptions): Promise<PtyProcessInspection>
  /** The foreground process name, **confirmed** by the owning host; `null` when it cannot be confirmed. */
  confirmForegroundProcess?(ptyId: string): Promise<string | null>
  /** `true` only when the host confirmed the shell itself is in the foreground; `false` otherwise, also on doubt. */
  confirmShellForeground?(ptyId: string): Promise<boolean>
  /** Whether the host (default `'local'`) can give foreground evidence at all; `false` for a host with no provider. */
  supportsForegroundProcessEvidence?(hostId?: ExecutionHostId): Promise<boolean>
  /**
   * Restore the default input modes of a live PTY's view: emits `inputModesReset` with the reset
   * sequence (kitty keyboard flags, the alternate screen, bracketed paste, mouse and focus
   * reporting, application cursor keys and keypad, a hidden cursor) for the view to paint (it is
   * not PTY output, so it takes no `seq`), then lets the provider reset its own screen model
   * (`resetInputModes`), if it keeps one. Nothing is written to the process. Nothing for an
   * unknown or ended PTY.
   */
  resetInputModes?(ptyId: string): Promise<void>
  /**
   * The snapshot a re-attaching view paints: the registered renderer's, else the provider's
   * (`serializeProviderBuffer`); `null` when neither can. Paint it, then follow `data` events from
   * its `seq`.
   *
   * `deadlineMs` (an epoch time) or `timeoutMs` (a duration) bounds the wait for the renderer's
   * answer (the default controller: 5 000 ms, `RENDERER_SERIALIZE_TIMEOUT_MS`); past it the
   * provider's snapshot answers, as when the renderer answers nothing — a hung or crashed view
   * never holds the caller for ever.
   *
   * @throws TypeError (the default controller) when `options` is not an object, holds an option
   * other than `scrollbackRows`, `deadlineMs` and `timeoutMs`, `scrollbackRows` is not a
   * non-negative integer (as `serializeProviderBuffer`), or the wait budget is malformed (as
   * `stopAndWait`'s: both forms, a value that is not finite, a negative `timeoutMs`).
   */
  serializeBuffer?(ptyId: string, options?: PtyWaitBudget & { scrollbackRows?: number | undefined }): Promise<PtyBufferSerialization | null>
  /** Register the view holding the PTY's authoritative screen (a newer registration replaces it); dispose to unregister. */
  registerRendererSerializer?(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable
  /** Whether a renderer serializer is registered for the PTY now. */
  hasRendererSerializer?(ptyId: string): boolean
  /**
   * The generation of the PTY's latest renderer registration; `0` before any. It does not go back
   * when a registration is disposed, but the default controller remembers it only for the latest
   * 1 024 ids whose registration was disposed (and ids being waited on): an id retired before those
   * answers `0` again.
   */
  getRendererSerializerGeneration?(ptyId: string): number
  /**
   * `true` once a renderer with a generation above `afterGeneration` is registered; `false` when
   * `timeoutMs` (default 5 000 ms) passes, `signal` aborts or the controller is disposed.
   */
  waitForRendererSerializer?(ptyId: string, afterGeneration: number, timeoutMs?: number, signal?: AbortSignal): Promise<boolean>
  /**
   * Reserve creating the slot's PTY. Spawns and adoptions of the slot by others wait until the
   * release; the holder passes it as `slotCreateClaim` to run inside it. Claims of one slot take
   * turns in order. Release it (once is enough) or the slot stays blocked.
   */
  claimSlotCreate?(slot: PtySlot): PtySlotCreateRelease
  /**
   * Adopt the slot's live owner (from the controller's records, or attach-only through its
   * provider: `materialized`, fenced by the incarnation the slot store names — another process
   * under the id is not attached), or `null` when it has none. Never spawns. Takes its turn with the
   * slot's spawns and claims. From the call on, an owner the slot store names that the controller
   * does not track live is marked by a `kill` of it: the `kill` answers `true`, and that owner,
   * if the adoption attaches it, is stopped as it lands (an owner it does not publish, where it
   * runs, fenced by the incarnation the store names) — that owner alone: a newer process the slot
   * was rebound to under the same id meanwhile is adopted, not stopped. Not an owner the store names without an incarnation, or
   * on a host with no provider here: nothing could stop it alone, and the `kill` answers `false`
   * for it. `stopAndWait` of it does not wait for the turn: it
   * stops the owner where it runs (and marks the adoption the same way). An owner the controller
   * is stopping (a `kill` of it) is no pane's to adopt: in its turn, the adoption waits until that
   * stop settles, as `spawn({ slot })` does, then adopts what the slot holds by then (`null` once
   * the owner exited).
   */
  adoptSlot?(options: PtyAdoptSlotOptions): Promise<PtySlotAdoption | null>
  /** Whether the shell has child processes; `null` when unknown, ended, unreadable or on error. */
  hasChildProcesses?(ptyId: string): Promise<boolean | null>
  /** Clear the provider's buffered screen of a live PTY; nothing for unknown or ended ones (or where the provider keeps no buffer). */
  clearBuffer?(ptyId: string): Promise<void>
  /**
   * Resize a live PTY; `false` when it is unknown, not live, or the provider refused or threw.
   *
   * @throws TypeError when `cols` or `rows` is not an integer from 1 to `MAX_PTY_DIMENSION` (65 535),
   * the limit `spawn` applies too — with `code: 'invalid_option'`, `option` and `value`, as a
   * provider's own refusal of a size (passed on to the caller) has.
   */
  resize?(ptyId: string, cols: number, rows: number): boolean
  /**
   * Three-valued existence, from the owning provider: its `hasPty` answer for a live PTY (`null`
   * when the provider has no `hasPty`, answers something else, or throws — the controller's own
   * record is not evidence the process still runs), `false` for one whose exit was proven, `null`
   * for an unverified stop. For an id the controller does not track, the providers are asked: any
   * `true` ⇒ `true`, all `false` ⇒ `false`, otherwise `null`. Either `false` (an ended PTY's, or
   * the providers') is `null` while a spawn (`sessionId`) or `attach` of the id is in flight
   * through the controller, or the spawn is queued (behind its slot's turn or a restart's wait):
   * its process may not be started yet.
   */
  hasPty?(ptyId: string): boolean | null
  /**
   * The consumer processed `chars` more chars of a PTY's output (drives flow control). Credited
   * against what is in flight (never below zero), may resume a paused producer, and is forwarded to
   * the provider's own `acknowledgeData`. Acks for unknown or ended PTYs are ignored.
   *
   * @throws TypeError when `chars` is not a non-negative integer (a count of chars: a provider counts whole ones).
   */
  acknowledgeData?(ptyId: string, chars: number): void
  /**
   * List PTYs on one host (`null` is the local host, as in the seed origin), or on every host when
   * `hostId` is omitted (see `listProcessesWithHostScope`: a failed remote host is left out, a
   * failed local host rejects). Every row is stamped with its host id.
   *
   * `deadlineMs` is an absolute epoch time (`Date.now() + 5_000`), `timeoutMs` a duration (give at
   * most one; default `LIST_PROCESSES_DEFAULT_DEADLINE_MS`); a deadline already past asks once and
   * does not wait. `signal` gives up early.
   *
   * A single host that fails, times out or is aborted rejects the call with a `listing_failed`
   * error: an unreachable host is unknown, and an empty list would read as "nothing runs there".
   *
   * @throws TypeError when `hostId` names no registered provider, or the options are malformed.
   */
  listProcesses?(hostId?: ExecutionHostId | null, options?: PtyListOptions): Promise<PtyProcessInfo[]>
  /**
   * List every host's PTYs and say which hosts answered: an id missing from `processes` is
   * absent only if its host is in `hostIds`. Options as for `listProcesses`.
   *
   * As in the seed origin, a failed (or timed-out) listing of the **local** host rejects with a
   * `listing_failed` error. A failed remote host is left out of `hostIds`, reported on `error`, and
   * the liveness of each live PTY the controller tracks on it becomes `unverifiable`
   * (`host_listing_failed`). An aborted listing leaves out every host that had not answered
   * (rejecting when that includes the local host), without touching liveness.
   */
  listProcessesWithHostScope?(options?: PtyListOptions): Promise<PtyHostScopedListing>
  /**
   * The provider-owned screen snapshot of a PTY, when the provider keeps one: a live PTY's, or an
   * ended one's that its provider kept (the pty host keeps it after an exit of its own and after a
   * `stopAndWait` with `keepHistory: true`) — only when the snapshot names that incarnation
   * (`incarnationId`). `null` otherwise, or on error.
   *
   * @throws TypeError (the default controller) when `options` is not an object, holds an option
   * other than `scrollbackRows`, or `scrollbackRows` is not a non-negative integer.
   */
  serializeProviderBuffer?(
    ptyId: string,
    options?: { scrollbackRows?: number | undefined },
  ): Promise<PtyProviderBufferSnapshot | null>
  /** The size the provider reads back, else the size last applied; `null` for unknown or ended PTYs. */
  getSize?(ptyId: string): PtySize | null
  /**
   * Whether the PTY's process is alive: `false` only when proven absent (an observed exit, or the
   * owning provider's probe), `null` when unknown — including every provider error. A probe that
   * answers for a PTY whose stop was unverified updates its liveness (`exited` or `live`). For a
   * PTY the controller tracks, the provider is asked about the tracked incarnation
   * (`PtyLivenessProbeOptions.incarnationId`), so a process spawned under the same id since (by
   * another app sharing a pty host) is never taken for it. While a spawn (`sessionId`) or `attach`
   * of an id it does not track (or whose PTY ended) is in flight (or the spawn queued) through the
   * controller, `null` instead of `false`: its process may not be started yet.
   */
  probePtyLiveness?(ptyId: string): Promise<boolean | null>
}
