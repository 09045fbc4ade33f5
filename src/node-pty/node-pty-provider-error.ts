import { defineErrorBrand } from '../contracts/error-brand.js'
/**
 * Stable codes of {@link NodePtyProviderError}. Match on the code, never on the message.
 *
 * - `node_pty_unavailable`: the optional peer dependency `node-pty` could not be loaded (not
 *   installed, or its native module does not match this Node/Electron);
 * - `pty_absent`: an attach-only spawn named a PTY that is not live here. The provider owns every
 *   PTY it spawned, so this is a proven, host-reported absence;
 * - `pty_live_other_incarnation`: an attach-only spawn expected an incarnation, and the id is live
 *   under another one (`PTY_LIVE_OTHER_INCARNATION_ERROR_CODE`): not an absence — the spawn
 *   pipeline reports `slot_owner_unverified` and starts nothing;
 * - `pty_id_in_use`: a spawn asked to create a new session under an id that is still live;
 * - `spawn_failed`: node-pty refused to start the process (the error is the `cause`; for a fork
 *   that failed for want of a resource the message names it: EMFILE, ENFILE, ENOSPC or the fork
 *   itself), or node-pty was not loaded because the process had no descriptors to spare (the next
 *   spawn loads it);
 * - `shutdown_timeout`: the process (or one of its session) was still alive at the shutdown's
 *   deadline, after every escalation step that fit — or its end cannot be proven: the process
 *   table could not be read (out of file descriptors), or its leader had to be signalled unseen;
 * - `shutdown_failed`: the stop could not be dispatched (signalling threw something other than
 *   "no such process");
 * - `provider_disposed`: the provider was used after `dispose()`.
 */
export type NodePtyProviderErrorCode =
  | 'node_pty_unavailable'
  | 'pty_absent'
  | 'pty_live_other_incarnation'
  | 'pty_id_in_use'
  | 'spawn_failed'
  | 'shutdown_timeout'
  | 'shutdown_failed'
  | 'provider_disposed'

/** The typed error the node-pty provider rejects with. The original error, if any, is its `cause`. */
export class NodePtyProviderError extends Error {
  /** The stable code. */
  readonly code: NodePtyProviderErrorCode
  /** The PTY id involved, when there is one. */
  readonly ptyId: string | undefined
  /** For `pty_absent` and `pty_live_other_incarnation`: the incarnation the caller expected, when it named one. */
  readonly expectedIncarnationId: string | undefined
  /** For `pty_live_other_incarnation` (and `pty_id_in_use`): the incarnation actually live under the id. */
  readonly liveIncarnationId: string | undefined

  /** Create the error. */
  constructor(
    code: NodePtyProviderErrorCode,
    message: string,
    options: {
      cause?: unknown
      ptyId?: string | undefined
      expectedIncarnationId?: string | undefined
      liveIncarnationId?: string | undefined
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.ptyId = options.ptyId
    this.expectedIncarnationId = options.expectedIncarnationId
    this.liveIncarnationId = options.liveIncarnationId
    NODE_PTY_PROVIDER_ERROR_BRAND.mark(this)
  }
}
const NODE_PTY_PROVIDER_ERROR_BRAND = defineErrorBrand(NodePtyProviderError, 'NodePtyProviderError')

/** True for a {@link NodePtyProviderError}, also across duplicate copies of the package. */
export function isNodePtyProviderError(value: unknown): value is NodePtyProviderError {
  return NODE_PTY_PROVIDER_ERROR_BRAND.is(value)
}
