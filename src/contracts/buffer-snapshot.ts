import type { PtyIncarnationId } from './incarnation.js'
import type { PtyProvider } from './provider.js'

/**
 * A provider-owned snapshot of a PTY's screen, aligned to an output sequence boundary, as the
 * controller answers it (`serializeProviderBuffer`): an optional field is absent, never
 * `undefined`. What a provider builds is a {@link ProviderBufferSnapshot}, which may give one as
 * `undefined`.
 *
 * Fields a source cannot prove are absent, never a default: absent `kittyKeyboardFlags` means
 * "unknown", not `0`.
 */
export type PtyProviderBufferSnapshot = {
  /** Serialized screen contents (escape sequences that redraw it). */
  data: string
  /** Columns of the snapshot. */
  cols: number
  /** Rows of the snapshot. */
  rows: number
  /** The output sequence (raw chars admitted) at which the snapshot was taken. */
  seq: number
  /** What produced it, for example `'headless'` for a headless terminal emulator. */
  source: string
  /**
   * The incarnation whose screen this is, when the provider knows it. A controller answers the
   * snapshot of an ended PTY (a provider that keeps history after the exit, as the pty host does)
   * only when it carries the ended incarnation's id: without it the screen could be a later
   * process's under the same id. A live PTY's snapshot naming another incarnation is refused too.
   */
  incarnationId?: PtyIncarnationId
  /** Kitty keyboard flags proven at this snapshot's own `seq`; absent when unknown. */
  kittyKeyboardFlags?: number
  /** The last window title seen, if any. */
  lastTitle?: string
}

/**
 * A snapshot of a PTY's screen as a provider builds it ({@link PtyProvider.getBufferSnapshot}): a
 * {@link PtyProviderBufferSnapshot} whose optional fields may also be given as `undefined` — a host
 * compiled with `exactOptionalPropertyTypes` builds it from values it holds as `T | undefined`.
 * `undefined` means absent (unknown, never a default): the controller reads it so, and answers the
 * snapshot with the key left out.
 */
export type ProviderBufferSnapshot = {
  /** Serialized screen contents (escape sequences that redraw it). */
  data: string
  /** Columns of the snapshot. */
  cols: number
  /** Rows of the snapshot. */
  rows: number
  /** The output sequence (raw chars admitted) at which the snapshot was taken. */
  seq: number
  /** What produced it, for example `'headless'` for a headless terminal emulator. */
  source: string
  /** The incarnation whose screen this is, when the provider knows it (see {@link PtyProviderBufferSnapshot.incarnationId}; `undefined`: not known). */
  incarnationId?: PtyIncarnationId | undefined
  /** Kitty keyboard flags proven at this snapshot's own `seq`; absent or `undefined` when unknown. */
  kittyKeyboardFlags?: number | undefined
  /** The last window title seen, if any (`undefined`: none). */
  lastTitle?: string | undefined
}
