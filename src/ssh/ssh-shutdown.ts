import { resolveWaitDeadline, type PtyShutdownOptions } from '../contracts/index.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { SshPtySession } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { stopSshSession } from './ssh-stop.js'

/** A provider's stop timings: its options, or the `SSH_*` defaults. */
export type SshStopTimings = {
  /** Grace after HUP before TERM. */
  hangupGraceMs: number
  /** Grace after TERM before KILL. */
  terminateGraceMs: number
  /** The deadline of a stop that names none (a duration). */
  shutdownDeadlineMs: number
}

/**
 * Stop one session with the provider's timings (HUP → TERM → KILL, or one KILL when `immediate`),
 * by `deadlineEpochMs` (default: the provider's shutdown deadline from now).
 */
export function stopWithTimings(
  session: SshPtySession,
  timings: SshStopTimings,
  immediate: boolean,
  deadlineEpochMs: number = Date.now() + timings.shutdownDeadlineMs,
): Promise<void> {
  return stopSshSession(session, { immediate, deadlineEpochMs, hangupGraceMs: timings.hangupGraceMs, terminateGraceMs: timings.terminateGraceMs })
}

/**
 * The provider's `shutdown`: nothing for an unknown, exited or other-incarnation PTY; `transport_lost`
 * for one whose connection dropped (it cannot be reached) — and from a stop during which it dropped,
 * or whose channel closed without an exit status (not seen carried out); else one stop per PTY,
 * which a later call joins while it runs (once it failed, a later call tries again) — except an
 * `immediate` one, which starts its own KILL at once.
 */
export async function shutdownSshPty(table: SshSessionTable, timings: SshStopTimings, id: string, options: PtyShutdownOptions): Promise<void> {
  const session = table.get(id)
  if (session === undefined || session.state === 'exited') return
  if (options.expectedIncarnationId !== undefined && session.incarnationId !== options.expectedIncarnationId) return
  if (session.state === 'lost') {
    throw new SshProviderError('transport_lost', `Cannot stop PTY ${JSON.stringify(id)}: its SSH connection dropped, so it cannot be reached`, { ptyId: id })
  }
  const deadlineEpochMs = resolveWaitDeadline(options, timings.shutdownDeadlineMs)
  if (session.stop === null || options.immediate === true) {
    const stop = stopWithTimings(session, timings, options.immediate === true, deadlineEpochMs)
    if (session.stop === null) {
      session.stop = stop
      // A stop that gave up is not joined by a later call: that one tries again.
      stop.catch(() => {
        if (session.stop === stop) session.stop = null
      })
    } else stop.catch(() => undefined)
    await stop
    return
  }
  await session.stop
}

/** The provider's disposal: stop every starting or live PTY (gracefully), whatever each stop's fate. */
export async function stopEverySession(table: SshSessionTable, timings: SshStopTimings): Promise<void> {
  await Promise.allSettled(table.inState('live', 'starting').map((session) => stopWithTimings(session, timings, false)))
}
