/**
 * What is known about whether a PTY's process is alive.
 *
 * - `live`: the owning provider vouches it is running;
 * - `exited`: positive evidence of absence from the **owning** host (an observed exit, or a
 *   listing that provably omits it);
 * - `unverifiable`: contact was lost, or a stop was never confirmed. Never read it as dead.
 */
export type PtyLivenessVerdict =
  | { kind: 'live' }
  | { kind: 'exited' }
  | { kind: 'unverifiable'; reason: string }
