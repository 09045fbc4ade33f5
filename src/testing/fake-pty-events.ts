import {
  createListenerSet,
  refusedWrite,
  rethrowOnMicrotask,
  type ListenerSet,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyOutputLossEvent,
} from '../contracts/index.js'
import { resolveProcessExitCause, type ProcessExitObservation } from '../exit-cause/index.js'
import { settleHeldInput, type FakePtyRecord, type HeldEvent } from './fake-pty-record.js'
import type { FakeExit } from './fake-spawn-script.js'

// A fake PTY's events, in the order a real one delivers them: output held while the producer is
// paused, and the exit after the last byte (the data-before-exit rule, C1 in docs/architecture.md).

/** The event side of one fake provider: its listener sets, and how a PTY produces output and ends. */
export type FakePtyEvents = {
  /** The `onData` listeners. */
  readonly data: ListenerSet<PtyDataEvent>
  /** The `onExit` listeners. */
  readonly exit: ListenerSet<PtyExitEvent>
  /** The `onOutputLoss` listeners. */
  readonly loss: ListenerSet<PtyOutputLossEvent>
  /**
   * Whether the provider no longer hears its PTYs (set by `detach()`): what they produce and how
   * they end still changes their records, but no event is held or delivered.
   */
  blind: boolean
  /** The PTY prints `data`: delivered now, or held (in order) while paused or behind held output. */
  produceData(pty: FakePtyRecord, data: string): void
  /** `chars` of the PTY's output go by undelivered: a loss event, in order with its data (held while paused, like output). */
  produceLoss(pty: FakePtyRecord, chars: number): void
  /** The PTY's process ends with `exit`: the record is marked exited and the exit delivered after any held output. */
  endProcess(pty: FakePtyRecord, exit: FakeExit): void
  /** Deliver the PTY's held events, in order: while it is not paused, or all of them with `ignorePause`. */
  flushHeld(pty: FakePtyRecord, ignorePause: boolean): void
  /** The exit event `exit` makes for the PTY under `incarnationId`, its cause built at the source. */
  exitEvent(pty: FakePtyRecord, exit: FakeExit, incarnationId: PtyIncarnationId): PtyExitEvent
}

/**
 * Create the event side of a fake provider.
 *
 * @param providerHostReportsChildExitStatus - the provider-wide default of
 *   `hostReportsChildExitStatus`, read at each exit (an exit's or a spawn's own setting wins).
 */
export function createFakePtyEvents(providerHostReportsChildExitStatus: () => boolean | undefined): FakePtyEvents {
  // Why: a listener that throws must not strand a half-done fake operation; the error is rethrown
  // on its own microtask so the test runner still reports it. Delivery is on a snapshot, so a
  // listener that unsubscribes (or subscribes) while we deliver does not make anyone skip.
  const data = createListenerSet<PtyDataEvent>({ onListenerError: rethrowOnMicrotask })
  const exit = createListenerSet<PtyExitEvent>({ onListenerError: rethrowOnMicrotask })
  const loss = createListenerSet<PtyOutputLossEvent>({ onListenerError: rethrowOnMicrotask })

  const deliver = (held: HeldEvent): void => {
    if (side.blind) return
    if (held.kind === 'data') data.fire(held.event)
    else if (held.kind === 'loss') loss.fire(held.event)
    else exit.fire(held.event)
  }

  const exitEvent = (pty: FakePtyRecord, fakeExit: FakeExit, incarnationId: PtyIncarnationId): PtyExitEvent => {
    const event: PtyExitEvent = { id: pty.id, code: fakeExit.exitCode, incarnationId }
    if (fakeExit.observed !== undefined) event.observed = fakeExit.observed
    if (fakeExit.stopRequestedBeforeDeath === true) event.stopRequestedBeforeDeath = true
    if (fakeExit.diedBeforeStopRequest === true) event.diedBeforeStopRequest = true
    if (fakeExit.withoutCause !== true) {
      const hostReports =
        fakeExit.hostReportsChildExitStatus ?? pty.hostReportsChildExitStatus ?? providerHostReportsChildExitStatus()
      const observation: ProcessExitObservation = { exitCode: fakeExit.exitCode, signal: fakeExit.signal ?? null }
      if (hostReports !== undefined) observation.hostReportsChildExitStatus = hostReports
      event.cause = resolveProcessExitCause(observation)
    }
    return event
  }

  const side: FakePtyEvents = {
    data,
    exit,
    loss,
    blind: false,
    exitEvent,

    produceData(pty, chunk) {
      pty.producedChars += chunk.length
      pty.buffer += chunk
      const event: PtyDataEvent = { id: pty.id, data: chunk, incarnationId: pty.incarnationId }
      // Why: output produced while paused (or behind held output) waits, in order, for resume.
      if (side.blind) return
      if (pty.paused || pty.held.length > 0) pty.held.push({ kind: 'data', event })
      else data.fire(event)
    },

    produceLoss(pty, chars) {
      // Counted as produced: the fake's snapshots (`seq: producedChars`) stay on the PTY's own sequence.
      const fromSeq = pty.producedChars
      pty.producedChars += chars
      const event: PtyOutputLossEvent = { id: pty.id, fromSeq, toSeq: pty.producedChars, incarnationId: pty.incarnationId }
      if (side.blind) return
      if (pty.paused || pty.held.length > 0) pty.held.push({ kind: 'loss', event })
      else loss.fire(event)
    },

    endProcess(pty, fakeExit) {
      pty.state = 'exited'
      releaseScreen(pty)
      // Before the exit is heard of: the input its program never read goes with it, and its writes say so.
      settleHeldInput(pty, refusedWrite('pty_exited'))
      const event = exitEvent(pty, fakeExit, pty.incarnationId)
      pty.exit = event
      if (side.blind) return
      // Why: data always precedes exit — an exit behind held output waits for it; otherwise it is
      // delivered now, even while paused (there is nothing left to read).
      if (pty.held.length > 0) pty.held.push({ kind: 'exit', event })
      else exit.fire(event)
    },

    flushHeld(pty, ignorePause) {
      while (pty.held.length > 0 && (ignorePause || !pty.paused)) {
        const next = pty.held.shift()
        if (next !== undefined) deliver(next)
      }
    },
  }
  return side
}

/**
 * An ended PTY's screen is never read again (its snapshot is `null`), so its buffer — every char
 * it printed — goes. Why: a fake shared by a whole test suite keeps the record of every PTY it ran
 * (`getPty(id)` answers for any of them), and with its buffer each record kept all of its output:
 * a suite streaming 100 KB per test through one fake grew by ~60 KB a test.
 */
export function releaseScreen(pty: FakePtyRecord): void {
  pty.buffer = ''
}
