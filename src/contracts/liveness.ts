/**
 * What is known about whether a PTY's process is alive.
 *
 * - `live`: the owning provider vouches it is running;
 * - `exited`: positive evidence of absence from the **owning** host (an observed exit, or a
 *   listing that provably omits it);
 * - `unverifiable`: contact was lost, or a stop was never confirmed. Never read it as dead.
 */
export type PtyLivenessVerdict =
  | {
      /** The owning provider vouches the process is running. */
      kind: 'live'
    }
  | {
      /** Positive evidence of absence from the owning host. */
      kind: 'exited'
    }
  | {
      /** Nobody can tell; never read as dead. */
      kind: 'unverifiable'
      /** Why, in words (for logs and operators). */
      reason: string
    }
