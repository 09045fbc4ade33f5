import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import type { PtyProvider } from './provider.js'

/**
 * One row of a process listing, as the controller answers it (`listProcesses`): a PTY its host
 * currently holds. An optional field is absent when unknown, never `undefined`. What a provider
 * builds is a {@link ProviderProcessInfo}, which may give one as `undefined`.
 */
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
  /**
   * Confirmed foreground evidence, present only when the listing was asked for it
   * (`includeForegroundProcessEvidence`): `null` when the host could not confirm it.
   */
  foregroundProcessEvidence?: PtyForegroundProcessEvidence | null
}

/**
 * One row of a provider's process listing ({@link PtyProvider.listProcesses}), as a provider builds
 * it: a {@link PtyProcessInfo} whose optional fields may also be given as `undefined` — a host
 * compiled with `exactOptionalPropertyTypes` builds rows from values it holds as `T | undefined`.
 * `undefined` means absent: the controller reads it so, and answers the row with the key left out.
 */
export type ProviderProcessInfo = {
  /** The PTY id. */
  id: string
  /** The host the row came from (the controller stamps its own host id over it). */
  hostId: ExecutionHostId
  /** The incarnation behind the id, when the provider attests one (`undefined`: not attested). */
  incarnationId?: PtyIncarnationId | undefined
  /** The root process id, when published (`undefined` or `null`: not published). */
  pid?: number | null | undefined
  /** The PTY's current working directory; `null` when it cannot be read (never a made-up path). */
  cwd: string | null
  /** A display title: usually the foreground process name. */
  title: string
  /** The scope the PTY was spawned in, if any (`undefined`: none). */
  scopeId?: string | undefined
  /** The slot key the PTY owns, if any (`undefined`: none). */
  slotKey?: string | undefined
  /** The claim key the PTY holds, if any (`undefined`: none). */
  claimKey?: string | undefined
  /** Confirmed foreground evidence; a provider leaves it out (or `undefined`): the controller asks `confirmForeground`. */
  foregroundProcessEvidence?: PtyForegroundProcessEvidence | null | undefined
}

/**
 * What a host **confirmed** about a PTY's foreground: read twice across a short interval (or from
 * the kernel's foreground process group of the tty), so a process in the middle of exiting is not
 * reported. A host that cannot confirm answers `null` instead of this.
 */
export type PtyForegroundProcessEvidence = {
  /** The name of the process leading the terminal's foreground process group. */
  foregroundProcess: string
  /** True when the foreground group is the shell's own (nothing runs in it). */
  shellForeground: boolean
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

/**
 * Internal (not exported from `ptykit/contracts`): whether `value` reads as a
 * {@link PtyForegroundProcessEvidence} — a provider's answer, or a test's scripted one.
 */
export function isPtyForegroundProcessEvidence(value: unknown): value is PtyForegroundProcessEvidence {
  if (typeof value !== 'object' || value === null) return false
  const evidence = value as Partial<PtyForegroundProcessEvidence>
  return typeof evidence.foregroundProcess === 'string' && typeof evidence.shellForeground === 'boolean'
}
