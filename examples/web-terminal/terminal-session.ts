// One terminal as the web server keeps it: the controller's handle of the PTY (its output, exit,
// writes and acks, fenced to this process), a headless xterm mirror of its screen (for repainting a
// reloaded page), and the one page currently showing it.
//
// Flow control: every char the controller delivers is acknowledged exactly once —
//   - by the page, from xterm.js's write callback, when a page is showing the terminal;
//   - by the mirror's own write callback, when none is (so a terminal nobody watches keeps running
//     at the mirror's pace instead of pausing forever);
//   - by the server on the page's behalf, for what was still unacknowledged when the page left.
//
// Back-pressure from the page's socket: output is sent only while the socket holds less than its
// limit (the viewer's `isBackedUp`). Past it, output is held for the page, unacknowledged, so the
// controller pauses the process at its high watermark — the server stops reading it — until the
// socket drains, then the held output goes out. The controller's cap ends a pause after its
// maximum hold (10 s) whatever the page does, forgiving the debt; so the held output is bounded
// too (MAX_HELD_OUTPUT_CHARS): past that it is dropped (the mirror keeps it), later output is
// acknowledged at the mirror's pace as if nobody watched, and once the socket drains the page is
// repainted from the mirror (a fresh `attached`). A slow page costs the server at most the socket's
// limit, one frame and the held output, however long it stays slow.
import { createRequire } from 'node:module'
import type { PtyControllerExitEvent, PtyTerminal } from 'ptykit/controller'
import { describeTerminalExit } from './exit-words.js'
import type { ServerMessage, TerminalStatus } from './protocol.js'

const require = createRequire(import.meta.url)
// Both packages ship CommonJS bundles without named ESM exports; `require` works under tsx and vitest alike.
const { Terminal: HeadlessTerminal } = require('@xterm/headless') as typeof import('@xterm/headless')
const { SerializeAddon } = require('@xterm/addon-serialize') as typeof import('@xterm/addon-serialize')

/** Lines of scrollback the mirror keeps, and so the most a reloaded page gets back. */
export const MIRROR_SCROLLBACK_ROWS = 1_000

/**
 * The most output chars sent to a page in one frame. Output that arrives within one turn of the
 * event loop is coalesced up to this: a flood arrives from node-pty in ~4 KB reads, and one frame
 * (and one xterm.js write) per read would cost the page more than the drawing itself.
 */
export const MAX_OUTPUT_FRAME_CHARS = 256 * 1024

/**
 * The most output held for a page whose socket is backed up (see the file's header): more than the
 * controller's high watermark (100 000 chars), so it is reached only once the controller's cap has
 * let the process run again, or when the page never acknowledged (flow control never engaged).
 */
export const MAX_HELD_OUTPUT_CHARS = MAX_OUTPUT_FRAME_CHARS

/**
 * A page connection, as a terminal sees it: somewhere to send messages, and optionally whether its
 * socket is backed up (a viewer without `isBackedUp` and `onDrain` never is).
 */
export type TerminalViewer = {
  send(message: ServerMessage): void
  /** Whether the socket holds more unsent data than it may: output then waits for {@link onDrain}. */
  isBackedUp?(): boolean
  /** Call `listener` once, when the backed-up socket has drained; answers its unsubscribe. */
  onDrain?(listener: () => void): () => void
}

/** One terminal: PTY, screen mirror and the page that shows it. */
export class TerminalSession {
  readonly id: string
  readonly title: string
  #terminal: PtyTerminal
  #mirror: InstanceType<typeof HeadlessTerminal>
  #serializer: InstanceType<typeof SerializeAddon>
  /** Unsubscribes the mirror from the terminal's output (on stop and on dispose). */
  #stopOutput: () => void
  #cols: number
  #rows: number
  #status: TerminalStatus = { state: 'live' }
  #viewer: TerminalViewer | undefined
  /** Chars sent to the viewer that it has not acknowledged yet. */
  #unacknowledged = 0
  /** How many snapshots were begun (the latest one's `generation`, sent in its `attached`); acks name theirs. */
  #generation = 0
  /** The viewer that was sent an `attached` for the current viewing (`undefined` until it is). */
  #shownTo: TerminalViewer | undefined
  /** Messages held while the viewer's snapshot is being taken; `undefined` when none is. */
  #heldForSnapshot: ServerMessage[] | undefined
  /** Output not yet framed for the viewer (see {@link MAX_OUTPUT_FRAME_CHARS}). */
  #coalesced = ''
  #flushScheduled = false
  /** Unsubscribes from the viewer's drain while output is held for it; `undefined` when none is. */
  #waitingForDrain: (() => void) | undefined
  /** Output was dropped while the viewer was backed up: repaint it from the mirror once it drained. */
  #repaintOnDrain = false
  /** The exit, when it came while output was held for the viewer (it goes out after that output). */
  #exitOnDrain: ServerMessage | undefined

  /**
   * Keep `terminal`. Construct it in the turn `spawnTerminal` resolved in: the handle replays the
   * output that arrived before it was handed over to listeners subscribed in that turn.
   */
  constructor(terminal: PtyTerminal, title: string) {
    this.#terminal = terminal
    this.id = terminal.id
    this.title = title
    this.#cols = terminal.cols
    this.#rows = terminal.rows
    this.#mirror = new HeadlessTerminal({ cols: this.#cols, rows: this.#rows, scrollback: MIRROR_SCROLLBACK_ROWS, allowProposedApi: true })
    this.#serializer = new SerializeAddon()
    // The addon's typings name @xterm/xterm's Terminal; the headless one has the same surface.
    this.#mirror.loadAddon(this.#serializer as never)
    this.#stopOutput = terminal.onData(({ data }) => this.#output(data))
    // Every chunk of output reaches `#output` before the exit is published.
    void terminal.exited.then((exit) => this.#exited(exit))
  }

  /** Whether the process is still running (as far as the controller has told). */
  get isLive(): boolean {
    return this.#status.state === 'live'
  }

  /** Output of the process, in order. */
  #output(data: string): void {
    const viewer = this.#viewer
    if (viewer === undefined || this.#repaintOnDrain) {
      this.#mirror.write(data, () => this.#terminal.acknowledgeData(data.length))
      return
    }
    this.#mirror.write(data)
    this.#unacknowledged += data.length
    this.#coalesced += data
    if (this.#waitingForDrain !== undefined) {
      if (this.#coalesced.length > MAX_HELD_OUTPUT_CHARS) this.#dropHeldOutput()
      return
    }
    if (this.#coalesced.length >= MAX_OUTPUT_FRAME_CHARS) this.#flushOutput()
    else if (!this.#flushScheduled) {
      this.#flushScheduled = true
      setImmediate(() => {
        this.#flushScheduled = false
        this.#flushOutput()
      })
    }
  }

  /** The controller published the exit: every chunk of output has already been passed to `#output`. */
  #exited({ cause }: PtyControllerExitEvent): void {
    const status: TerminalStatus & { state: 'ended' } = { state: 'ended', kind: cause.kind, description: describeTerminalExit(this.title, cause) }
    this.#status = status
    this.#flushOutput() // every byte before the exit
    const exit: ServerMessage = { type: 'exit', id: this.id, status }
    if (this.#waitingForDrain !== undefined) this.#exitOnDrain = exit
    else this.#deliver(exit)
  }

  /**
   * Show this terminal on `viewer`, taking it from any page that showed it before. The viewer gets
   * the current screen, then every later output, with nothing lost or repeated in between.
   */
  attach(viewer: TerminalViewer, opened: boolean): void {
    this.#flushOutput()
    this.#releaseViewer()
    this.#viewer = viewer
    this.#showSnapshot(viewer, opened)
  }

  /** Send `viewer` the current screen, then what was held while it was taken. */
  #showSnapshot(viewer: TerminalViewer, opened: boolean): void {
    const held: ServerMessage[] = []
    this.#heldForSnapshot = held
    // The new generation starts with the hold, not when the snapshot goes out: from here on an ack
    // of what the viewer drew before is of output already forgiven (by the release, or the
    // repaint), and counted, it would pay for output held for this snapshot.
    const generation = ++this.#generation
    // The status is read now, with the output seen so far: a later exit is among the held messages.
    const status = this.#status
    const cols = this.#cols
    const rows = this.#rows
    // xterm parses writes in order and calls each write's callback as soon as its data is parsed,
    // so this callback sees exactly the output that arrived before the attach.
    this.#mirror.write('', () => {
      if (this.#viewer !== viewer) return
      const snapshot = this.#serializer.serialize({ scrollback: MIRROR_SCROLLBACK_ROWS })
      viewer.send({ type: 'attached', id: this.id, title: this.title, cols, rows, snapshot, status, opened, generation })
      this.#shownTo = viewer
      // Only this snapshot's own hold ends here. When the same page attached again before this
      // callback, the later attach holds for its own snapshot, taken in a later callback (maybe a
      // turn later): output sent meanwhile would go out before that snapshot, which lacks it.
      if (this.#heldForSnapshot === held) this.#heldForSnapshot = undefined
      for (const message of held) viewer.send(message)
    })
  }

  /** The page stopped showing the terminal (closed, reloaded): acknowledge what it never will. */
  detach(viewer: TerminalViewer): void {
    if (this.#viewer === viewer) this.#releaseViewer()
  }

  /**
   * The viewer drew `chars` more chars of what it was shown since the `attached` of `generation`.
   * Acks from a page that no longer shows the terminal are ignored, and so are those of output
   * shown before a repaint: the repaint forgave what that output still owed, and counted, they
   * would pay off output sent after it.
   */
  acknowledge(viewer: TerminalViewer, chars: number, generation: number): void {
    if (this.#viewer !== viewer || generation !== this.#generation) return
    const credited = Math.min(chars, this.#unacknowledged)
    this.#unacknowledged -= credited
    if (credited > 0) this.#terminal.acknowledgeData(credited)
  }

  /**
   * Keys from the page showing the terminal — text, or raw bytes (xterm.js's `onBinary`, written
   * as they are); `false` when refused (another page's, the PTY ended, or bytes its provider
   * cannot write).
   */
  input(viewer: TerminalViewer, data: string | Uint8Array, kind: 'driving' | 'query-reply'): boolean {
    if (this.#viewer !== viewer || !this.isLive) return false
    return this.#terminal.write(data, kind)
  }

  /** The page's container changed size. Only the page showing the terminal may resize it. */
  resize(viewer: TerminalViewer, cols: number, rows: number): void {
    if (this.#viewer !== viewer || !this.isLive) return
    if (cols === this.#cols && rows === this.#rows) return
    if (!this.#terminal.resize(cols, rows)) return
    this.#cols = cols
    this.#rows = rows
    // Resize the mirror in stream order: output already queued was produced at the old size.
    this.#mirror.write('', () => this.#mirror.resize(cols, rows))
  }

  /**
   * Stop the process (hang-up, then kill) and wait for the verified stop; then drop the mirror.
   * The page showing the terminal is sent `closed` once the stop is known, unless it is `closer`
   * (the page that asked, which is answered by its own request): the terminal is gone from the
   * server, so its tab there must not stay live.
   */
  async stop(closer?: TerminalViewer): Promise<boolean> {
    const shownTo = this.#releaseViewer({ notify: false })
    // A relative budget would be `{ timeoutMs }`; the default deadline (10 s) is what we want anyway.
    const verified = await this.#terminal.stop()
    // Output after an unverified stop no longer reaches the mirror this session disposes.
    this.#stopOutput()
    this.#mirror.dispose()
    if (shownTo !== undefined && shownTo !== closer) shownTo.send({ type: 'closed', id: this.id, verified })
    return verified
  }

  /** Resolves once the mirror parsed every output so far and coalesced output went out (for tests). */
  settled(): Promise<void> {
    return new Promise((resolve) => this.#mirror.write('', () => setImmediate(resolve)))
  }

  /**
   * Forget the terminal without stopping it (server shutdown: the controller stops every PTY). The
   * mirror stops listening to the terminal: output the PTY still sends reaches nothing of this session.
   */
  dispose(): void {
    this.#stopOutput()
    this.#waitingForDrain?.()
    this.#waitingForDrain = undefined
    this.#viewer = undefined
    this.#mirror.dispose()
  }

  #flushOutput(): void {
    if (this.#coalesced.length === 0 || this.#waitingForDrain !== undefined) return
    const viewer = this.#viewer
    if (this.#heldForSnapshot === undefined && viewer?.onDrain !== undefined && viewer.isBackedUp?.() === true) {
      // Hold it, unacknowledged: the controller pauses the process at its high watermark.
      this.#waitingForDrain = viewer.onDrain(() => this.#drained(viewer))
      return
    }
    const data = this.#coalesced
    this.#coalesced = ''
    this.#deliver({ type: 'output', id: this.id, data })
  }

  /** The viewer's socket drained: send what was held (or repaint the page when output was dropped). */
  #drained(viewer: TerminalViewer): void {
    if (this.#viewer !== viewer) return
    this.#waitingForDrain = undefined
    const exit = this.#exitOnDrain
    this.#exitOnDrain = undefined
    if (this.#repaintOnDrain) {
      this.#repaintOnDrain = false
      // The page's screen lacks the dropped output: the repaint replaces it (the page draws a new
      // terminal from the snapshot), so what it still owed for the old one is forgiven. A later
      // exit shows in the snapshot's status.
      if (this.#unacknowledged > 0) this.#terminal.acknowledgeData(this.#unacknowledged)
      this.#unacknowledged = 0
      this.#showSnapshot(viewer, false)
      return
    }
    this.#flushOutput() // may hold again, when the socket filled up meanwhile
    if (exit === undefined) return
    if (this.#waitingForDrain !== undefined) this.#exitOnDrain = exit
    else this.#deliver(exit)
  }

  /**
   * More output than {@link MAX_HELD_OUTPUT_CHARS} waits for a backed-up page: drop it (the mirror
   * has it, and acknowledges it once parsed) and repaint the page once its socket drained.
   */
  #dropHeldOutput(): void {
    const dropped = this.#coalesced.length
    this.#coalesced = ''
    this.#unacknowledged -= dropped
    this.#repaintOnDrain = true
    this.#mirror.write('', () => this.#terminal.acknowledgeData(dropped))
  }

  #deliver(message: ServerMessage): void {
    if (this.#heldForSnapshot !== undefined) this.#heldForSnapshot.push(message)
    else this.#viewer?.send(message)
  }

  /**
   * Let go of the page viewing the terminal (acknowledging what it still owed) and tell it
   * `detached` unless `notify` is false. Returns that page when it had been shown the terminal
   * (sent its `attached`): only such a page has a tab to take down.
   */
  #releaseViewer({ notify = true }: { notify?: boolean } = {}): TerminalViewer | undefined {
    const previous = this.#viewer
    if (previous === undefined) return undefined
    this.#viewer = undefined
    // A page that was never sent the terminal's `attached` has nothing to be told. (A pending
    // snapshot alone does not say so: a repaint takes one for a page that shows the terminal.)
    const shown = this.#shownTo === previous
    this.#shownTo = undefined
    this.#heldForSnapshot = undefined
    this.#coalesced = '' // counted in #unacknowledged, acknowledged just below
    this.#waitingForDrain?.()
    this.#waitingForDrain = undefined
    this.#repaintOnDrain = false
    this.#exitOnDrain = undefined
    if (this.#unacknowledged > 0) this.#terminal.acknowledgeData(this.#unacknowledged)
    this.#unacknowledged = 0
    if (!shown) return undefined
    if (notify) previous.send({ type: 'detached', id: this.id })
    return previous
  }
}
