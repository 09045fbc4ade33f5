import { StringDecoder } from 'node:string_decoder'
import { refusedWrite, unverifiableWrite, WRITE_ACCEPTED, type PtyDataEvent, type PtyExitEvent, type PtyIncarnationId, type WriteSettlement } from '../contracts/index.js'
import { resolveProcessExitCause } from '../exit-cause/index.js'
import { LaunchMarkerScanner, type LaunchMarker, type RemoteLaunch } from './remote-launch.js'
import type { ChannelExitStatus, SshConnection } from './ssh-connection.js'
import { sshSignalNumber } from './ssh-signal-table.js'
import type { Ssh2Channel } from './ssh2-module.js'

/** `KILL`'s number: the one signal whose report proves a killer other than the stop (see `diedOfAnotherSignal`). */
const SIGKILL_NUMBER = 9

/**
 * Where a remote PTY stands:
 * - `starting`: the channel is open, the launch marker not seen yet;
 * - `live`: the program runs (marker seen, no exit);
 * - `exited`: the server reported `exit-status` or `exit-signal` and the channel closed — or, lost,
 *   its end was proven (`settleGone`) and its exit published;
 * - `lost`: the channel closed with neither, or the connection dropped. The remote program may
 *   still run: never an exit by itself — only evidence turns it into one (`settleGone`): a shell on
 *   the same machine and boot that finds the program gone, or the server's own report of its end
 *   (`exit-status`/`exit-signal` received before the drop), published once the channel has handed
 *   over every byte it received.
 */
export type SshPtyState = 'starting' | 'live' | 'exited' | 'lost'

/**
 * How many bytes a channel reads past a pause once the server reported its program's end. A dead
 * program's tail is at most what `ssh2` buffered behind the pause (its channel's 2 MiB
 * `highWaterMark`) plus what the server may still send within the window it was granted (2 MiB);
 * reading more means some live process (a background job that kept the terminal) still writes, and
 * the consumer's pause holds again — the app never buffers it without bound. OpenSSH hangs up the
 * terminal ~0.1 s after the report, so the channel closes long before.
 */
export const SSH_END_READ_OUT_BUDGET_BYTES = 4 * 1024 * 1024

/** What a session reports to its provider. */
export type SshPtySessionHooks = {
  emitData(event: PtyDataEvent): void
  emitExit(event: PtyExitEvent): void
  /**
   * The session exited or was lost, after its exit event if any. A lost session later proven gone
   * calls it again, after its exit event.
   */
  onSettled(session: SshPtySession): void
}

/** One PTY on a session channel. */
export class SshPtySession {
  readonly id: string
  readonly incarnationId: PtyIncarnationId
  readonly channel: Ssh2Channel
  readonly connection: SshConnection
  readonly launch: RemoteLaunch
  readonly scopeId: string | undefined
  readonly slotKey: string | undefined
  readonly claimKey: string | undefined
  cols: number
  rows: number
  state: SshPtyState = 'starting'
  /** The remote pid and start time, once the marker arrived. */
  marker: LaunchMarker | null = null
  /** Output chars delivered so far. */
  charsEmitted = 0
  paused = false
  /**
   * True once a stop was asked for or (lost) the program's end was proven: the output still to
   * come is bounded, reading resumes for good and later pauses are ignored, so the tail drains and
   * the exit is not held behind a consumer that stopped reading.
   */
  readingToEnd = false
  /** The running stop, joined by later shutdown calls. */
  stop: Promise<void> | null = null
  /**
   * A stop was asked for and gave up with the program's end not proven — it could not reach the
   * program (its connection dropped, and none to the same machine was open), or its deadline passed
   * first: carried out once the PTY is lost and a connection that can judge it is open
   * (`finishOwedStops` in `ssh-shutdown.ts`).
   */
  stopOwed = false
  /** Resolves when the session exited or was lost. */
  readonly settled: Promise<void>
  /** Resolves when the launch marker arrived, or the session settled first. */
  readonly started: Promise<void>
  /**
   * Resolves when output arrived while no marker had been seen (held back: a login rc's output
   * before the marker, or a program's that discarded its marker — see {@link SshPtySession.adoptLaunch}).
   */
  readonly outputWithoutMarker: Promise<void>

  readonly #hooks: SshPtySessionHooks
  readonly #decoder = new StringDecoder('utf8')
  readonly #scanner: LaunchMarkerScanner
  readonly #exitStatus: () => ChannelExitStatus | null
  /**
   * Whether the program's end was proven (`endProven`: the server reported it, or a look found a
   * lost program gone) when a stop of it was first requested (`null`: none requested). Its exit
   * says it ended on its own (`diedBeforeStopRequest`) unless a stop was requested before that
   * proof (`false`) — as the pty host says of a stop that had not reached it: a controller whose
   * stop was still on its way keeps the real cause.
   */
  #endProvenAtStopRequest: boolean | null = null
  /**
   * A stop was requested while the program's end was not proven, and a look after that request
   * found it alive ({@link SshPtySession.noteSeenAlive}): the stop came before its death. What a
   * lost program's exit says of the stop (`stopRequestedBeforeDeath`), where no status came.
   */
  #seenAliveAfterStopRequest = false
  /** The numbers of the signals the stops of this session sent it so far (see {@link SshPtySession.noteStopSignal}). */
  readonly #stopSignalsSent = new Set<number>()
  /**
   * The signal numbers the stops had sent when the server reported the program's end (`null`
   * before that report): a signal the report names that is not among them was not the stops'.
   */
  #stopSignalsSentAtReport: ReadonlySet<number> | null = null
  /** True once the channel closed: every byte it received has been handed over. */
  #channelClosed = false
  /** True once the provider asked the server to close the channel ({@link SshPtySession.closeChannel}). */
  #closeRequested = false
  /**
   * The writes whose bytes the channel still holds (the server's window was closed), oldest first:
   * each settles when the channel hands on its last byte, or at the close (see {@link SshPtySession.write}).
   */
  #heldWrites: { bytes: number; settle: (settlement: WriteSettlement) => void }[] = []
  /**
   * Callbacks still to come of writes the channel took at once (already settled `accepted`). Every
   * write hands the channel the one {@link SshPtySession.#onWritten}, and a Writable calls its
   * writes' callbacks in order: these come before any held write's.
   */
  #acceptedCallbacksDue = 0
  /**
   * The callback of every write: one function for the session, not a closure per write. Skips the
   * callbacks of writes taken at once, then settles the oldest held write (nothing once
   * `#dropHeldWrites` settled them: ssh2 calls no callback of the bytes it drops).
   */
  readonly #onWritten = (error?: Error | null): void => {
    if (this.#acceptedCallbacksDue > 0) {
      this.#acceptedCallbacksDue -= 1
      return
    }
    this.#heldWrites.shift()?.settle(error === undefined || error === null ? WRITE_ACCEPTED : unverifiableWrite('transport_lost', true))
  }
  /** A lost session's end is proven; its exit waits for the channel to hand over what it received. */
  #goneAwaitingClose = false
  /** How the session was lost (`null` while it is not): its channel closed without an exit status, or its connection dropped. */
  #lostBy: 'channel' | 'connection' | null = null
  /** The consumer asked for a pause (`pause`) and has not resumed, whether or not the channel is paused. */
  #consumerPaused = false
  /**
   * Bytes the channel still reads past a pause since the server reported the program's end
   * ({@link SSH_END_READ_OUT_BUDGET_BYTES}); `null` before that report.
   */
  #endReadOutLeft: number | null = null
  /** Events held until the spawn reply reached the caller (see {@link SshPtySession.release}). */
  #held: Array<() => void> | null = []
  #abandoned = false
  #resolveSettled!: () => void
  #resolveStarted!: () => void
  #resolveOutputWithoutMarker!: () => void

  constructor(
    fields: {
      id: string
      incarnationId: PtyIncarnationId
      channel: Ssh2Channel
      /** The command's end as the server reported it, recorded since the channel opened (`OpenedChannel`). */
      exitStatus: () => ChannelExitStatus | null
      connection: SshConnection
      launch: RemoteLaunch
      scopeId: string | undefined
      slotKey: string | undefined
      claimKey: string | undefined
    },
    hooks: SshPtySessionHooks,
  ) {
    this.id = fields.id
    this.incarnationId = fields.incarnationId
    this.channel = fields.channel
    this.#exitStatus = fields.exitStatus
    this.connection = fields.connection
    this.launch = fields.launch
    this.scopeId = fields.scopeId
    this.slotKey = fields.slotKey
    this.claimKey = fields.claimKey
    this.cols = fields.launch.cols
    this.rows = fields.launch.rows
    this.#hooks = hooks
    this.#scanner = new LaunchMarkerScanner(fields.launch.nonce)
    this.settled = new Promise((resolve) => {
      this.#resolveSettled = resolve
    })
    this.started = new Promise((resolve) => {
      this.#resolveStarted = resolve
    })
    this.outputWithoutMarker = new Promise((resolve) => {
      this.#resolveOutputWithoutMarker = resolve
    })
    const channel = fields.channel
    channel.on('data', (chunk) => {
      if (this.#endReadOutLeft !== null) this.#countEndReadOut(chunk.length)
      this.#onText(this.#decoder.write(chunk))
    })
    // A pty merges stderr into the terminal; drain the (empty) stream so it never holds the window.
    channel.stderr.resume()
    channel.on('error', () => undefined)
    channel.on('close', () => this.#onClose())
    // The program is dead once the server reports its end: its exit (published at the channel's
    // close) must not wait for a consumer that stopped reading — within a budget, past which a
    // surviving writer is throttled again.
    channel.on('exit', () => this.#onEndReported())
    if (this.exitReported) this.#onEndReported()
  }

  /** The server reported the program's end: note what the stops had sent by then, and read the tail out. */
  #onEndReported(): void {
    this.#stopSignalsSentAtReport ??= new Set(this.#stopSignalsSent)
    this.#readOutEnd()
  }

  /**
   * True once the server reported the program's end (`exit-status` or `exit-signal`): it is dead,
   * though its exit event waits for the channel to close (after the output still in flight; a
   * pause no longer holds it, the channel reads on).
   */
  get exitReported(): boolean {
    return this.#exitStatus() !== null
  }

  /**
   * True once the program's end is proven — the server reported it, or (lost) a look found it
   * gone — even while its exit waits for the channel to hand over the output it received.
   */
  get endProven(): boolean {
    return this.state === 'exited' || this.#goneAwaitingClose || this.exitReported
  }

  /**
   * A stop of this session begins (through its channel, or — lost — from another connection):
   * note whether its end was already proven (only the first request counts), and read on — the
   * program is being stopped, its remaining output is bounded, so a pause must not hold its exit back.
   */
  beginStop(): void {
    this.noteStopRequested()
    this.#readOn()
  }

  /**
   * A stop of this session was requested, whether or not it can begin (a lost PTY nothing can
   * reach: its stop is owed): note whether its end was already proven then (only the first request
   * counts). Until 7 Dec a request refused that way was not noted, and the exit of a program found
   * gone later said `diedBeforeStopRequest` — that the provider knew it dead before the request,
   * which nobody knew (a controller then kept `cause_unreported` over its own stop request).
   */
  noteStopRequested(): void {
    if (this.#endProvenAtStopRequest === null && this.state !== 'exited') this.#endProvenAtStopRequest = this.endProven
  }

  /**
   * A look (from a side shell on the same machine and boot) found the program alive. After a stop
   * request made while its end was not proven, that is evidence that the stop came before the
   * death: the exit of a lost program the provider's own stop then ended — an owed stop carried out
   * once the link was back — says `stopRequestedBeforeDeath`, as the node-pty provider's does.
   * Before 7 Dec it said nothing of the stop (a provider user without a controller was not told).
   */
  noteSeenAlive(): void {
    if (this.#endProvenAtStopRequest === false && !this.endProven) this.#seenAliveAfterStopRequest = true
  }

  /**
   * A stop is about to send `signal` (a name as SSH carries it: `HUP`, `TERM`, `KILL`) to the
   * program — by a `signal` request, from a side shell, or, for `HUP`, by closing the channel (the
   * terminal's hang-up). Noted before it is sent: an end the server reports later naming a signal
   * no stop had sent by then was not the stops' doing (see {@link SshPtySession.diedOfAnotherSignal}).
   */
  noteStopSignal(signal: string): void {
    const number = sshSignalNumber(signal)
    if (number !== null) this.#stopSignalsSent.add(number)
  }

  /**
   * True when the server reported the program's death by `KILL` while no stop had sent `KILL` when
   * the report came: something else killed it — an outside `kill -9`, the OOM killer — whose report
   * crossed the stop's hang-up on the wire. Why `KILL` alone: it cannot be caught, ignored or raised
   * in reaction to anything, so it is evidence of a killer other than the stop; any other signal may
   * be the stop's own doing at one remove (a program whose pipe reader the hang-up ended dies of
   * `PIPE`; one that handles `HUP` by aborting dies of `ABRT`), and such a death came after the stop
   * request. A death by the stop's own `KILL` (crossing an outside one) stays the stop's: true
   * either way. An exit code tells nothing of the kind, and neither does a signal name outside the
   * table.
   */
  get diedOfAnotherSignal(): boolean {
    const sent = this.#stopSignalsSentAtReport
    const status = this.#exitStatus()
    if (sent === null || status === null || typeof status.code === 'number' || typeof status.signal !== 'string') return false
    const number = sshSignalNumber(status.signal)
    return number === SIGKILL_NUMBER && !sent.has(number)
  }

  /** The server reported the program's end: read its tail out past any pause, up to the budget. */
  #readOutEnd(): void {
    if (this.#endReadOutLeft !== null) return
    this.#endReadOutLeft = SSH_END_READ_OUT_BUDGET_BYTES
    if (this.paused) {
      this.paused = false
      this.channel.resume()
    }
  }

  #countEndReadOut(bytes: number): void {
    const left = (this.#endReadOutLeft as number) - bytes
    this.#endReadOutLeft = Math.max(0, left)
    // Past the budget a live process still writes: the consumer's pause holds again.
    if (left <= 0 && this.#consumerPaused && !this.paused && !this.readingToEnd) {
      this.paused = true
      this.channel.pause()
    }
  }

  /** Resume reading for good: the output still to come is bounded, and the exit waits behind it. */
  #readOn(): void {
    this.readingToEnd = true
    if (this.paused) {
      this.paused = false
      this.channel.resume()
    }
  }

  /** The text still held back before the marker (the output of a launch that failed). */
  takeLaunchOutput(): string {
    return this.#scanner.takePending()
  }

  /**
   * The spawn gave this session up before its program was seen to start: none of its events is
   * delivered, held or later (a marker that arrives after all must not announce a PTY whose spawn
   * failed), and its `settled` resolves now.
   */
  abandon(): void {
    this.#abandoned = true
    this.#held = null
    this.#resolveSettled()
  }

  /** Deliver the events held while the spawn reply was on its way; later ones flow directly. */
  release(): void {
    const held = this.#held
    this.#held = null
    // Every held event goes out, in order, even if delivering one threw (its error is rethrown
    // after the rest): a throw must not drop the exit queued behind it.
    let failure: { error: unknown } | null = null
    for (const deliver of held ?? []) {
      try {
        deliver()
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure !== null) throw failure.error
  }

  #deliver(deliver: () => void): void {
    if (this.#abandoned) return
    if (this.#held === null) deliver()
    else this.#held.push(deliver)
  }

  /**
   * The launch marker did not come, and a look found the program the launch `exec`ed by its nonce
   * (`findStartedLaunch`): start the PTY as the marker would have — `marker` is what the look read,
   * the output held back so far is delivered as the PTY's first, and `started` resolves. A program
   * that flushes its terminal's output as it starts (`tcflush`, as tmux's client does) discards on
   * Linux the marker the server had not read yet. Returns `false` (nothing done) unless the
   * session is still starting with no marker seen.
   */
  adoptLaunch(marker: LaunchMarker): boolean {
    if (this.marker !== null || this.state !== 'starting') return false
    this.marker = marker
    this.state = 'live'
    this.#emitOutput(this.#scanner.adopt(marker))
    this.#resolveStarted()
    return true
  }

  #onText(text: string): void {
    const wasStarting = this.marker === null
    const output = this.#scanner.push(text)
    if (wasStarting && this.#scanner.marker !== null) {
      this.marker = this.#scanner.marker
      if (this.state === 'starting') this.state = 'live'
      this.#resolveStarted()
    }
    if (wasStarting && this.marker === null && text.length > 0) this.#resolveOutputWithoutMarker()
    this.#emitOutput(output)
  }

  #emitOutput(output: string): void {
    if (output.length === 0) return
    this.charsEmitted += output.length
    const event: PtyDataEvent = { id: this.id, data: output, incarnationId: this.incarnationId }
    this.#deliver(() => this.#hooks.emitData(event))
  }

  #onClose(): void {
    if (this.state === 'exited') return
    this.#channelClosed = true
    this.#dropHeldWrites()
    const tail = this.#decoder.end()
    if (tail.length > 0) this.#onText(tail)
    // Adopted without its marker: what was held back as a marker's possible start is output.
    if (this.marker !== null) this.#emitOutput(this.#scanner.takePending())
    if (this.state === 'lost') {
      // The connection dropped first (ssh2 closes its channels after it says so), and this close
      // comes after the last byte the channel received — a paused channel closes once resumed.
      // The server's report of the program's end, received before the drop, is evidence of it.
      // Without a marker the program never started: its spawn failed, and no exit is owed.
      if (this.marker !== null && (this.exitReported || this.#goneAwaitingClose)) this.#publishGone()
      return
    }
    const exitEvent = this.#reportedExitEvent()
    this.state = exitEvent === null ? 'lost' : 'exited'
    if (exitEvent === null) this.#lostBy = 'channel'
    this.#resolveStarted()
    this.#deliver(() => {
      // The id is free before the exit goes out: a listener that spawns anew under it (a respawn
      // from the exit listener) must not find it held by the PTY whose exit it is handling.
      // Each step runs whatever the one before did (see #settleThen).
      this.#settleThen(() => {
        try {
          if (exitEvent !== null) this.#hooks.emitExit(exitEvent)
        } finally {
          this.#resolveSettled()
        }
      })
    })
  }

  /**
   * The connection dropped: whatever the channel does next, this PTY's fate is unknown. The bytes
   * the channel still holds can never leave: their writes settle now, not at the channel's close —
   * which `ssh2` emits only once its readable side was read to the end, so a consumer's pause held
   * them pending for as long as it lasted (for good when the server cannot be reached again:
   * `dispose()` stops, and so resumes, only the lost PTYs it can reach).
   */
  markLost(): void {
    if (this.state === 'exited' || this.state === 'lost') return
    this.#dropHeldWrites()
    this.state = 'lost'
    this.#lostBy = 'connection'
    this.#resolveStarted()
    this.#deliver(() => this.#settleThen(() => this.#resolveSettled()))
  }

  /**
   * How this session was lost, for messages (`null` while it is not lost): its channel closed
   * without an exit status — the server closed it (sshd's `ChannelTimeout`) or a stop's last step
   * did, while its connection stayed open or with the connection closed since — or its SSH
   * connection dropped. Until 7 Dec every refusal of a lost
   * PTY said its connection dropped, also when only its channel had closed.
   */
  get lossDescription(): string | null {
    if (this.state !== 'lost' || this.#lostBy === null) return null
    if (this.#lostBy === 'connection') return 'its SSH connection dropped'
    // A stop's last step (or a launch given up) asked for the close: the server did not close it on its own.
    const closed = this.#closeRequested ? "its channel closed at the provider's request without an exit status" : 'the server closed its channel without an exit status'
    return this.connection.lost ? `${closed}, and its SSH connection has closed since` : `${closed} (its SSH connection is still open)`
  }

  /**
   * A lost session's program is proven gone (a shell on the same machine and boot found its pid
   * gone or reused, or the server reported its end before the connection dropped): report the
   * exit, once the channel has handed over every byte it received (it reads on: a pause no longer
   * holds the exit back, the output still to come being bounded). Its cause is the status the
   * server reported, if it did; else `unknown/cause_unreported` — the status went down with the
   * connection: the death is proven, how it ended is not. Returns `false` when the session is not
   * lost (its exit, if any, was reported already).
   */
  settleGone(): boolean {
    if (this.state !== 'lost') return false
    // Why wait for the close: output the channel received but has not handed over (a paused
    // reader) must come before the exit, never after it.
    if (this.#channelClosed) {
      this.#publishGone()
    } else {
      this.#goneAwaitingClose = true
      // The program is gone and the connection with it: what the channel holds is all there will
      // be, so a pause must not hold the exit back for good.
      this.#readOn()
    }
    return true
  }

  #publishGone(): void {
    this.state = 'exited'
    const event: PtyExitEvent = this.#reportedExitEvent() ?? {
      id: this.id,
      incarnationId: this.incarnationId,
      code: 0,
      cause: { kind: 'unknown', reason: 'cause_unreported' },
      // Ended on its own unless a stop was requested before its end was proven. Then the stop
      // came first only where a look after the request found it alive (a stop asked while its
      // link was down may have come after a death nobody could see: neither flag then).
      ...(this.#endProvenAtStopRequest !== false && { diedBeforeStopRequest: true }),
      ...(this.#endProvenAtStopRequest === false && this.#seenAliveAfterStopRequest && { stopRequestedBeforeDeath: true }),
    }
    // Free before the exit goes out, as in #onClose.
    this.#deliver(() => this.#settleThen(() => this.#hooks.emitExit(event)))
  }

  /**
   * Tell the provider the session settled (`onSettled`), then run `next` (the exit, the `settled`
   * promise) — whether or not `onSettled` threw: its error, if any, still propagates, after `next`.
   * Nothing of the provider's own `onSettled` throws today (map and set updates; listeners run
   * through a listener set, which catches their throws), but a bookkeeping step that did would
   * have lost the exit and left `settled` pending for good (found in a review, helper-208).
   */
  #settleThen(next: () => void): void {
    try {
      this.#hooks.onSettled(this)
    } finally {
      next()
    }
  }

  /**
   * The exit the server reported (`exit-status` or `exit-signal`) for a program that started, with
   * `diedBeforeStopRequest` unless a stop was asked for before that report — or one was, but the
   * report names a `KILL` no stop had sent ({@link SshPtySession.diedOfAnotherSignal}): the death was
   * not the stop's, its cause is kept. Otherwise a stop came first, and the exit says so
   * (`stopRequestedBeforeDeath`): a stop requested on this provider directly (its `shutdown` or
   * `dispose`, not a controller's) is an operator close too. `null` when there is none.
   */
  #reportedExitEvent(): PtyExitEvent | null {
    const exitEvent = this.marker === null ? null : exitEventOf(this, this.#exitStatus())
    if (exitEvent === null) return null
    if (this.#endProvenAtStopRequest !== false || this.diedOfAnotherSignal) exitEvent.diedBeforeStopRequest = true
    else exitEvent.stopRequestedBeforeDeath = true
    return exitEvent
  }

  /**
   * Ask the server to close the channel (a stop's last step, a launch given up): the terminal is
   * hung up. From now on `ssh2` drops what is written to the channel (it sends nothing on a channel
   * it is closing), so {@link SshPtySession.write} refuses.
   */
  closeChannel(): void {
    this.#closeRequested = true
    try {
      this.channel.close()
    } catch {
      // Already closed.
    }
  }

  /**
   * The channel closed, or the connection dropped, with bytes of writes still held (`ssh2` drops
   * them, and never calls their callbacks): settle each. The oldest was being sent when the window closed — none of its bytes
   * went when what `ssh2` holds of it (`_chunk`, read with care: a private member) is all of it,
   * else some did (`partial_write`, or nobody can tell); the ones behind it never left —
   * `refused('pty_exited')` when the program's end is proven, else `provider_refused_write` (the
   * connection dropped, or a stop closed the channel).
   */
  #dropHeldWrites(): void {
    const held = this.#heldWrites
    if (held.length === 0) return
    this.#heldWrites = []
    const refusal = refusedWrite(this.endProven ? 'pty_exited' : 'provider_refused_write')
    const inFlight = (this.channel as { _chunk?: unknown })._chunk
    held.forEach((write, index) => {
      const sentNone = index > 0 || (inFlight instanceof Uint8Array && inFlight.length === write.bytes)
      write.settle(sentNone ? refusal : unverifiableWrite(this.endProven ? 'partial_write' : 'transport_lost', true))
    })
  }

  /**
   * Settle a write: `accepted` once the channel handed every byte to the connection (never proof
   * the program read them) — at once when the server's window had room, else (a program that does
   * not read: its window closed) a promise that settles when the channel hands on the last of them
   * (`accepted`), or when the channel closes or the connection drops first (see `#dropHeldWrites`:
   * `refused('pty_exited')` when none of its bytes left and the program's end is proven,
   * `refused('provider_refused_write')` when none left and it is not, `unverifiable('partial_write',
   * true)` / `unverifiable('transport_lost', true)` when some did). Until 7 Dec
   * such a write said `accepted` at once, and the bytes the closing channel dropped went unreported.
   *
   * `refused` at once when no byte can reach the program — `pty_exited` once its end is proven
   * (the server reported it, or, lost, a look found it gone: as the node-pty provider refuses a
   * write once the exit is known, before it is delivered), `provider_refused_write` when there is
   * no channel to hand them to (the connection dropped, the channel closed, or the provider is
   * closing it): nothing is sent, and a retry cannot duplicate anything. Until 7 Dec a lost PTY's
   * write settled `unverifiable/transport_lost` (with `bytesHandedToTransport: false`), while the
   * pty host refused the same write; a write to a channel the stop was closing, or to a program
   * whose end the server had reported, said `accepted` and the bytes went nowhere.
   *
   * `input_backlog_full` (nothing sent) when the bytes the channel holds for the server's window
   * plus this write's would exceed `maxPendingBytes` (the provider's `maxPendingInputBytes`): a
   * program that does not read closes the window, and `ssh2` queued every later write in the app.
   */
  write(data: string | Buffer, maxPendingBytes = Number.POSITIVE_INFINITY): WriteSettlement | Promise<WriteSettlement> {
    if (this.endProven) return refusedWrite('pty_exited')
    // `writableEnded`: the server closed the channel (ssh2 ends its writable side at once, and says
    // 'close' only once the output is read out — for a paused PTY, much later): nothing goes out.
    if (this.state === 'lost' || this.connection.lost || this.#channelClosed || this.#closeRequested || this.channel.writableEnded === true) {
      return refusedWrite('provider_refused_write')
    }
    const held = this.channel.writableLength
    // Encoded here rather than by the channel (the same single encoding): its size is needed first.
    if (typeof held === 'number' && typeof data === 'string') data = Buffer.from(data, 'utf8')
    if (typeof held === 'number' && held + data.length > maxPendingBytes) return refusedWrite('input_backlog_full')
    try {
      if (typeof held !== 'number') {
        // A stand-in that does not say what it holds: taken is all that can be told.
        this.channel.write(data)
        return WRITE_ACCEPTED
      }
      this.channel.write(data, this.#onWritten)
      // Every byte handed on during the call (the window had room): the channel holds no more than
      // before. Settled now, with nothing allocated for it (as the node-pty provider does): its
      // callback, still to come, settles nothing.
      if (this.channel.writableLength === held) {
        this.#acceptedCallbacksDue += 1
        return WRITE_ACCEPTED
      }
      const bytes = data.length
      return new Promise<WriteSettlement>((settle) => {
        this.#heldWrites.push({ bytes, settle })
      })
    } catch {
      // A stream that throws may have sent part of the bytes first: nobody can tell.
      return unverifiableWrite('transport_lost', true)
    }
  }

  /**
   * Send a `window-change` and remember the size; `false` when the PTY is not live or gone — its end
   * proven, its connection dropped, or its channel closed or being closed by a stop (`ssh2` drops a
   * request on a channel it is closing: until 7 Dec the resize said `true`, and the size it
   * remembered was never the terminal's).
   */
  resize(cols: number, rows: number): boolean {
    if (this.state !== 'live' || this.endProven || this.connection.lost || this.#channelClosed || this.#closeRequested) return false
    try {
      this.channel.setWindow(rows, cols, 0, 0)
    } catch {
      return false
    }
    this.cols = cols
    this.rows = rows
    return true
  }

  /** Stop reading: the window is not refilled, the server stops sending, the program blocks. */
  pause(): void {
    this.#consumerPaused = true
    if (this.paused || this.readingToEnd) return
    // The end reported: its tail is read out first (see SSH_END_READ_OUT_BUDGET_BYTES).
    if (this.#endReadOutLeft !== null && this.#endReadOutLeft > 0) return
    this.paused = true
    this.channel.pause()
  }

  /** Resume reading. */
  resume(): void {
    this.#consumerPaused = false
    if (!this.paused) return
    this.paused = false
    this.channel.resume()
  }
}

/**
 * The exit event of a closed channel, or `null` when the server reported neither an exit status
 * nor a signal (a channel that closes with neither is not an exit).
 */
function exitEventOf(session: SshPtySession, status: { code: number | null; signal: string | undefined } | null): PtyExitEvent | null {
  if (status === null) return null
  const base = { id: session.id, incarnationId: session.incarnationId }
  if (typeof status.code === 'number') {
    return { ...base, code: status.code, cause: resolveProcessExitCause({ exitCode: status.code }) }
  }
  if (typeof status.signal === 'string') {
    const signal = sshSignalNumber(status.signal)
    // A name outside the table is a signalled death of unknown number: not guessed.
    if (signal === null) return { ...base, code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } }
    return { ...base, code: 128 + signal, cause: resolveProcessExitCause({ exitCode: 128 + signal, signal }) }
  }
  return null
}
