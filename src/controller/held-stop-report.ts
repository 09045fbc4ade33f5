import type { ControllerCore } from './controller-core.js'
import { waitForRecordState, type PtyRecord } from './pty-record.js'

/**
 * Reports of rejected shutdowns that ran out of time, held until the stop's fate is known: one per
 * PTY (see {@link holdStopReport}).
 */
const heldReports = new WeakMap<PtyRecord, () => void>()

/**
 * Hold `report` — a rejected shutdown of `record` that came once the stop's time was spent, whose
 * stop may still land — until the stop's fate is known: the PTY's exit (nothing reported: the stop
 * landed, and its exit is an operator close) or the end of a window (reported then, beside the
 * PTY's `stop_unverified`: the stop did not land). With `windowMs` (a `stopAndWait` step past its
 * deadline) the window is that long from now; without it (a `kill` whose provider ran out of time)
 * the caller ends it — {@link takeHeldStopReport} at the end of the unconfirmed-stop window `kill`
 * armed, or to drop it when that window is cleared by the exit. Nothing is held for a PTY already
 * `exited`, nor at `dispose` (every timer cleared): disposal's own stop of the PTY gives the verdict
 * — and a window armed then would be a timer nobody clears, holding the app open.
 *
 * One held report per PTY: several steps of one stop (a `stopAndWait`'s hang-up and force), or a
 * `kill` beside it, may be rejected so, and one stop that did not land is one failure. The latest
 * rejection's report is kept; the first hold's window ends it (or a `kill`'s window, whichever
 * takes it first).
 *
 * Why: a provider fails a stop still running when its time runs out (node-pty, SSH, the pty host:
 * `shutdown_timeout`), also one whose hang-up or kill was sent and ends the process a moment later —
 * 40 agents stopped with `{ timeoutMs: 1 }`, or 100 PTYs killed while their provider's disposal
 * stopped them on a loaded machine, reported one `shutdown_failed` "could not shut down" each (and
 * the `kill`s a `stop_unverified` exit each, before the operator close) for processes that were shut down.
 */
export function holdStopReport(core: ControllerCore, record: PtyRecord, report: () => void, windowMs?: number): void {
  if (record.state === 'exited' || core.timers.cleared) return
  const alreadyHeld = heldReports.has(record)
  heldReports.set(record, report)
  if (alreadyHeld || windowMs === undefined) return
  const exited = waitForRecordState(record, 'exited')
  const window = core.timers.after(windowMs)
  void Promise.race([exited.promise.then(() => 'exit' as const), window.promise]).then((outcome) => {
    exited.cancel()
    window.cancel()
    const held = takeHeldStopReport(record)
    // At dispose (every timer cleared) disposal's own stop of the PTY gives the verdict.
    if (outcome !== 'exit' && !core.timers.cleared) held?.()
  })
}

/** Take (and forget) the report held for `record` by {@link holdStopReport}, if any. */
export function takeHeldStopReport(record: PtyRecord): (() => void) | undefined {
  const held = heldReports.get(record)
  heldReports.delete(record)
  return held
}
