import { writeSync } from 'node:fs'
import type { NodePtyTerminal } from './node-pty-module.js'

/**
 * How a write to the master ended:
 * - `accepted`: the kernel took every byte, or took some and the rest (on `EAGAIN`, all of it) is
 *   held to write, in order, when the kernel has room; or the terminal is not one this path knows,
 *   and `terminal.write` took the data;
 * - `master-closed`: node-pty has destroyed the master's stream, so its fd is closed (the terminal
 *   has hung up, though its process may live on); nothing was written;
 * - `write-failed`: the master answered the write with an error other than `EAGAIN` (no byte was
 *   written: the syscall failed whole); nothing was queued either;
 * - `backlog-full`: holding this write (behind the input already held) would take the input held
 *   for the terminal past the bound the caller gave (`maxPendingBytes`); nothing was written.
 */
export type MasterWriteOutcome = 'accepted' | 'master-closed' | 'write-failed' | 'backlog-full'

/**
 * What became of a write whose bytes were (some or all) held for later (see {@link writeToMaster}'s
 * `onHeld`):
 * - `written`: the kernel took the last of them;
 * - `dropped`: none of the write's bytes reached the kernel — the PTY exited first
 *   ({@link dropQueuedInput}), or `failed`: a later attempt met an error other than `EAGAIN`;
 * - `partly-dropped` / `partly-failed`: some of its bytes reached the kernel, the rest did not.
 */
export type HeldWriteFate = 'written' | 'dropped' | 'partly-dropped' | 'failed' | 'partly-failed'

/** One write with bytes held: where they lie in the held stream, and who to tell their fate. */
type HeldWrite = {
  /** The held stream's position (see {@link PendingInput.queued}) of the write's first held byte. */
  start: number
  /** The held stream's position just past its last byte. */
  end: number
  /** Whether some of its bytes reached the kernel on the call, before the rest was held. */
  handedSome: boolean
  /** Told once: its fate. */
  settle: (fate: HeldWriteFate) => void
}

/** The part of node-pty 1.1's `UnixTerminal` a direct write needs (private members: checked before use). */
type UnixTerminalWriteInternals = {
  _fd?: unknown
  _socket?: { destroyed?: unknown } | null
  _writeStream?: { write?: unknown; _writeQueue?: unknown } | null
  handleFlowControl?: unknown
}

/**
 * The first wait before writing again to a master whose input buffer stayed full (`EAGAIN`: the
 * last attempt wrote nothing). Why a timer and not the next turn: node-pty retries at every turn
 * (`setImmediate`), and against a program that does not read (busy, stopped, `sleep`) that is a
 * loop of tens of thousands of failing writes a second — a core busy while it waits. After an
 * attempt that wrote some, the next comes on the next turn (the program reads: keep up with it).
 */
export const MASTER_WRITE_RETRY_FIRST_MS = 1

/**
 * How many attempts that write nothing still come on the next turn after one that wrote some,
 * before the waits begin. Why: a reader empties the buffer within a fraction of a ms of being
 * scheduled, and the next turn comes sooner than a timer's 1 ms; a few turns cost microseconds.
 */
export const MASTER_WRITE_IMMEDIATE_RETRIES = 32

/**
 * The longest wait between two attempts while the program reads nothing (the wait doubles from
 * {@link MASTER_WRITE_RETRY_FIRST_MS}): at most this long before a paste moves on once the program
 * reads again; about 20 attempts a second while it does not.
 */
export const MASTER_WRITE_RETRY_MAX_MS = 50

/**
 * The most UTF-16 code units of a long string write encoded to UTF-8 at a time: the rest of the
 * string is held as text and encoded a piece at a time as the kernel takes the bytes. Why: a 50 MB
 * paste encoded whole on the caller's turn blocked the event loop for 35–90 ms (and held the whole
 * encoding at once); a piece encodes in well under a ms, and the kernel takes at most some tens of
 * KiB per attempt anyway.
 */
export const MASTER_WRITE_ENCODE_PIECE_CHARS = 256 * 1024

/** A string's tail held as text, not yet encoded (see {@link MASTER_WRITE_ENCODE_PIECE_CHARS}). */
type HeldText = {
  /** The text. */
  text: string
  /** Its UTF-8 length (what it counts towards the bound). */
  bytes: number
}

/** Input the kernel could not take yet, for one terminal: written, in order, by {@link retryPendingInput}. */
type PendingInput = {
  /**
   * The bytes still to write, oldest first (the first may be the rest of a partly written chunk):
   * a string's UTF-8 encoding and a write of bytes alike, each a buffer of this module's own — or
   * a long string's tail, still text, encoded when its turn comes.
   */
  chunks: (Buffer | HeldText)[]
  /** The sum of the chunks' lengths (kept, not summed per write: a flood holds thousands). */
  bytes: number
  /** The last wait between attempts that wrote nothing; `0` after one that wrote some. */
  waitMs: number
  /** Attempts on the next turn that wrote nothing since the last that wrote some. */
  idleTurns: number
  /** The scheduled attempt. */
  retry: { cancel(): void }
  /** How many bytes were ever held (the held stream's end): a held write's bytes lie in [start, end). */
  queued: number
  /** How many of the held bytes the kernel took. */
  sent: number
  /** The writes with bytes still held whose caller wants their fate, oldest first. */
  writes: HeldWrite[]
}

/** Per terminal, the input waiting for room in its master's buffer (absent: none). */
const pendingInputs = new WeakMap<object, PendingInput>()

/**
 * Write `data` — text, as UTF-8, or raw bytes as they are — to a PTY's input on the calling turn,
 * without node-pty's round trip through libuv's thread pool; where that is not possible,
 * `terminal.write(data)` as before (bytes as a `Buffer`, which node-pty writes as it is).
 *
 * **Why.** node-pty 1.1 writes every chunk with an asynchronous `fs.write` (so that a full kernel
 * buffer, `EAGAIN`, cannot block the app): a pool thread wakes to make the syscall, then the main
 * loop wakes again for its completion — two thread hand-offs per keystroke, on a 2-vCPU machine
 * often taking the CPU the echoing program needs. The master is non-blocking (node-pty's
 * `pty_nonblock` at the fork), so a `writeSync` cannot block either: it takes what the kernel has
 * room for at once, or fails with `EAGAIN`. This makes that one syscall and holds whatever is left
 * for later attempts: on the next turn while the program reads, after a wait that doubles (from
 * {@link MASTER_WRITE_RETRY_FIRST_MS} to {@link MASTER_WRITE_RETRY_MAX_MS}) while it does not. Not
 * node-pty's queue: it retries at every turn, a busy loop for as long as a program does not read.
 *
 * **Long strings.** A string longer than {@link MASTER_WRITE_ENCODE_PIECE_CHARS} is measured
 * (`Buffer.byteLength`), not encoded, on the call: the first piece is encoded and written, the
 * rest held as text and encoded a piece at a time by the later attempts.
 *
 * **Order.** While input is held (or node-pty's queue holds anything), every write goes behind it,
 * so bytes never overtake earlier ones.
 *
 * **Never a recycled fd.** The master's fd is closed when node-pty destroys its socket; after that
 * the number may belong to another file (another PTY spawned since, a log file). So nothing new
 * is written once the socket is destroyed (`master-closed`), the way node-pty's own `write` becomes
 * a no-op at the socket's `close` event (a tick later). While the socket stands the fd is open
 * (JavaScript runs on one thread: nothing closes it between the look and the syscall); every later
 * attempt looks again. What is still held then is dropped at the exit ({@link dropQueuedInput}).
 *
 * **Non-blocking is node-pty's.** node-pty 1.1's `pty.cc` sets `O_NONBLOCK` on the master at the
 * fork (libuv does not: `uv_tty_init` keeps a blocking tty blocking). A host-supplied node-pty
 * build must keep that, or a full input buffer would block the event loop here instead of a pool
 * thread.
 *
 * **Bounded.** A write is refused (`backlog-full`, nothing written) when the input held for the
 * terminal plus this write's bytes would exceed `maxPendingBytes` — so also a write larger than
 * the bound, whatever is held: the kernel takes a few KiB of it at most, the rest would be held.
 * Without a bound, a writer faster than the program grew the app's memory without end.
 *
 * **Where it does not apply** — not node-pty 1.1's Unix terminal as this code knows it (Windows, a
 * stand-in, another node-pty), or a terminal that interprets flow-control strings in `write`
 * (`handleFlowControl`) — the data goes to `terminal.write`. Nothing is kept per terminal but
 * the input it holds: the checks are a few property reads per write.
 */
export function writeToMaster(
  terminal: NodePtyTerminal,
  data: string | Uint8Array,
  maxPendingBytes = Number.POSITIVE_INFINITY,
  onHeld?: (fate: Promise<HeldWriteFate>) => void,
): MasterWriteOutcome {
  const internals = terminal as unknown as UnixTerminalWriteInternals
  const fd = internals._fd
  const socket = internals._socket
  const stream = internals._writeStream
  if (
    typeof fd !== 'number' ||
    socket === undefined ||
    socket === null ||
    typeof socket.destroyed !== 'boolean' ||
    stream === undefined ||
    stream === null ||
    typeof stream.write !== 'function' ||
    !Array.isArray(stream._writeQueue) ||
    internals.handleFlowControl === true
  ) {
    terminal.write(forTerminalWrite(data))
    return 'accepted'
  }
  if (socket.destroyed) return 'master-closed'
  if (stream._writeQueue.length > 0) {
    terminal.write(forTerminalWrite(data))
    return 'accepted'
  }
  // A string's encoding is this call's own buffer; the caller's bytes are written from where they
  // are, and copied only if some must wait (the caller may reuse its buffer once this returns).
  // A long string is measured, not encoded: its pieces are encoded as the kernel takes them.
  const pending = pendingInputs.get(terminal)
  if (typeof data !== 'string') return writeChunkToMaster(terminal, fd, data, false, pending, maxPendingBytes, onHeld)
  const chunk = data.length <= MASTER_WRITE_ENCODE_PIECE_CHARS ? Buffer.from(data, 'utf8') : { text: data, bytes: Buffer.byteLength(data, 'utf8') }
  return writeChunkToMaster(terminal, fd, chunk, true, pending, maxPendingBytes, onHeld)
}

/**
 * {@link writeToMaster} for one chunk — bytes (a short string's encoding, `owned`, or the caller's
 * bytes) or a long string's text, encoded a piece at a time: behind what is held, or its first
 * piece written at once and the rest held.
 */
function writeChunkToMaster(
  terminal: NodePtyTerminal,
  fd: number,
  chunk: Uint8Array | HeldText,
  owned: boolean,
  pending: PendingInput | undefined,
  maxPendingBytes: number,
  onHeld: ((fate: Promise<HeldWriteFate>) => void) | undefined,
): MasterWriteOutcome {
  const size = chunk instanceof Uint8Array ? chunk.length : chunk.bytes
  if ((pending?.bytes ?? 0) + size > maxPendingBytes) return 'backlog-full'
  if (pending !== undefined) {
    // Behind the input still waiting: bytes never overtake earlier ones.
    if (size > 0) {
      pending.chunks.push(chunk instanceof Uint8Array && !owned ? Buffer.from(chunk) : (chunk as Buffer | HeldText))
      pending.bytes += size
      trackHeldWrite(pending, size, false, onHeld)
      pending.queued += size
    }
    return 'accepted'
  }
  // A long string's first piece is encoded here, so owned; the rest stays text.
  const [first, rest] = chunk instanceof Uint8Array ? [chunk, undefined] : encodePiece(chunk)
  const firstOwned = owned || !(chunk instanceof Uint8Array)
  let written = 0
  try {
    written = writeSync(fd, first)
  } catch (error) {
    // Proven that no byte went out. Not queued: a retry would meet the same error, settle
    // nothing, and drop the writes queued behind it.
    if ((error as { code?: unknown }).code !== 'EAGAIN') return 'write-failed'
  }
  // The rest (all of it after EAGAIN) waits for room in the kernel's buffer.
  const held: (Buffer | HeldText)[] = []
  if (written < first.length) {
    const left = first.subarray(written)
    held.push(firstOwned ? (left as Buffer) : Buffer.from(left))
  }
  if (rest !== undefined) held.push(rest)
  if (held.length > 0) {
    const created = holdPendingInput(terminal, held, written > 0)
    trackHeldWrite(created, created.bytes, written > 0, onHeld)
    created.queued = created.bytes
  }
  return 'accepted'
}

/**
 * Remember a write whose `size` bytes are now held at the end of `pending` (call before adding them
 * to `pending.queued`), when its caller asked for their fate.
 */
function trackHeldWrite(pending: PendingInput, size: number, handedSome: boolean, onHeld: ((fate: Promise<HeldWriteFate>) => void) | undefined): void {
  if (onHeld === undefined) return
  let settle: (fate: HeldWriteFate) => void = () => {}
  const fate = new Promise<HeldWriteFate>((resolve) => {
    settle = resolve
  })
  pending.writes.push({ start: pending.queued, end: pending.queued + size, handedSome, settle })
  onHeld(fate)
}

/** Tell the held writes whose every byte the kernel has taken: `written`. */
function settleWrittenWrites(pending: PendingInput): void {
  let done = 0
  while (done < pending.writes.length && (pending.writes[done] as HeldWrite).end <= pending.sent) done += 1
  if (done === 0) return
  for (const write of pending.writes.splice(0, done)) write.settle('written')
}

/** Tell every held write still waiting that its bytes (those not taken yet) were dropped, and why. */
function settleDroppedWrites(pending: PendingInput, why: 'exit' | 'failure'): void {
  settleWrittenWrites(pending)
  const writes = pending.writes
  pending.writes = []
  for (const write of writes) {
    const some = write.handedSome || pending.sent > write.start
    write.settle(why === 'exit' ? (some ? 'partly-dropped' : 'dropped') : some ? 'partly-failed' : 'failed')
  }
}

/**
 * The first {@link MASTER_WRITE_ENCODE_PIECE_CHARS} code units of `held` encoded (one fewer when
 * the last would be the first half of a surrogate pair: each half alone would be U+FFFD), and the
 * text after them (`undefined`: none). The two byte counts add up to `held.bytes`.
 */
function encodePiece(held: HeldText): [Buffer, HeldText | undefined] {
  if (held.text.length <= MASTER_WRITE_ENCODE_PIECE_CHARS) return [Buffer.from(held.text, 'utf8'), undefined]
  let end = MASTER_WRITE_ENCODE_PIECE_CHARS
  const last = held.text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  const piece = Buffer.from(held.text.slice(0, end), 'utf8')
  return [piece, { text: held.text.slice(end), bytes: held.bytes - piece.length }]
}

/**
 * What `terminal.write` gets: a string as it is, bytes as a `Buffer` copy of their own — node-pty
 * 1.1 copies a chunk it queues, but a terminal this code does not know might hold the caller's
 * buffer, which the caller may reuse once the write returns.
 */
function forTerminalWrite(data: string | Uint8Array): string | Buffer {
  return typeof data === 'string' ? data : Buffer.from(data)
}

function holdPendingInput(terminal: NodePtyTerminal, chunks: (Buffer | HeldText)[], tookSome: boolean): PendingInput {
  const bytes = chunks.reduce((sum, chunk) => sum + (chunk instanceof Uint8Array ? chunk.length : chunk.bytes), 0)
  const pending: PendingInput = { chunks, bytes, waitMs: 0, idleTurns: 0, retry: { cancel: () => {} }, queued: 0, sent: 0, writes: [] }
  pendingInputs.set(terminal, pending)
  scheduleRetry(terminal, pending, tookSome)
  return pending
}

/**
 * The next attempt: on the next turn when the last one wrote some (the program reads) and for
 * {@link MASTER_WRITE_IMMEDIATE_RETRIES} more, else after a wait that doubles from
 * {@link MASTER_WRITE_RETRY_FIRST_MS} up to {@link MASTER_WRITE_RETRY_MAX_MS}.
 */
function scheduleRetry(terminal: NodePtyTerminal, pending: PendingInput, tookSome: boolean): void {
  if (tookSome) {
    pending.idleTurns = 0
    pending.waitMs = 0
  } else if (pending.waitMs === 0) pending.idleTurns += 1
  // Next turn until the waits begin; once begun, they go on until an attempt writes some.
  if (pending.waitMs === 0 && pending.idleTurns <= MASTER_WRITE_IMMEDIATE_RETRIES) {
    const immediate = setImmediate(() => retryPendingInput(terminal, pending))
    pending.retry = { cancel: () => clearImmediate(immediate) }
    return
  }
  pending.waitMs = pending.waitMs === 0 ? MASTER_WRITE_RETRY_FIRST_MS : Math.min(pending.waitMs * 2, MASTER_WRITE_RETRY_MAX_MS)
  const timer = setTimeout(() => retryPendingInput(terminal, pending), pending.waitMs)
  pending.retry = { cancel: () => clearTimeout(timer) }
}

/**
 * Write as much of a terminal's pending input as the kernel takes now, in order, and tell the
 * writes whose last byte it took. Nothing once node-pty has destroyed the master's socket (its fd
 * may name another file by then): the input stays held, unwritten, for the exit to drop (the
 * master closes when the terminal's last process let go of it: the exit follows) — and its writes
 * learn their fate then, `dropped` with the exit as the reason. After a failure other than
 * `EAGAIN` the pending input is dropped (no program can read it any more): `failed`.
 */
function retryPendingInput(terminal: NodePtyTerminal, pending: PendingInput): void {
  if (pendingInputs.get(terminal) !== pending) return
  const internals = terminal as unknown as UnixTerminalWriteInternals
  if (internals._socket?.destroyed !== false || typeof internals._fd !== 'number') {
    // Held for the exit to drop, when nobody waits to hear; else no longer retried.
    if (pending.writes.length === 0) pendingInputs.delete(terminal)
    return
  }
  const fd = internals._fd
  let tookSome = false
  while (pending.chunks.length > 0) {
    let chunk = pending.chunks[0] as Buffer | HeldText
    if (!(chunk instanceof Uint8Array)) {
      // A long string's tail: its next piece encoded now, the rest still text behind it.
      const [piece, rest] = encodePiece(chunk)
      if (rest === undefined) pending.chunks[0] = piece
      else pending.chunks.splice(0, 1, piece, rest)
      chunk = piece
    }
    let written: number
    try {
      written = writeSync(fd, chunk)
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EAGAIN') break
      pendingInputs.delete(terminal)
      settleDroppedWrites(pending, 'failure')
      return
    }
    if (written > 0) tookSome = true
    pending.bytes -= Math.min(written, chunk.length)
    pending.sent += Math.min(written, chunk.length)
    if (written >= chunk.length) pending.chunks.shift()
    else {
      pending.chunks[0] = chunk.subarray(written)
      // A short write: the buffer is full now; the next attempt would answer EAGAIN.
      break
    }
  }
  settleWrittenWrites(pending)
  if (pending.chunks.length === 0) {
    pendingInputs.delete(terminal)
    return
  }
  scheduleRetry(terminal, pending, tookSome)
}

/**
 * Drop the input still waiting for a terminal whose process has exited (call at its exit, before
 * anyone hears of it): {@link writeToMaster}'s pending input, and whatever node-pty's own queue
 * holds (a terminal written through `terminal.write`). node-pty retries a write that met a full
 * buffer on a later turn with `fs.write` on the master's fd number — also after the master was
 * closed, when the number may already name the next PTY's master (a host that respawns on exit).
 * Nothing either holds can reach the dead process's terminal any more. The writes whose bytes
 * {@link writeToMaster} held learn it: `dropped` (or `partly-dropped`, when some of a write's bytes
 * went first); with `why` `'failure'` (a provider disposed while the process's end is not known)
 * `failed` / `partly-failed`. node-pty's own queue tells nobody (the path of a terminal this code
 * does not know).
 */
export function dropQueuedInput(terminal: NodePtyTerminal, why: 'exit' | 'failure' = 'exit'): void {
  const pending = pendingInputs.get(terminal)
  if (pending !== undefined) {
    pending.retry.cancel()
    pendingInputs.delete(terminal)
    settleDroppedWrites(pending, why)
  }
  const stream = (terminal as unknown as UnixTerminalWriteInternals)._writeStream
  if (stream === undefined || stream === null || !Array.isArray(stream._writeQueue) || stream._writeQueue.length === 0) return
  stream._writeQueue.length = 0
  const dispose = (stream as { dispose?: unknown }).dispose
  // node-pty's dispose clears the retry's immediate.
  if (typeof dispose === 'function') dispose.call(stream)
}

/** How many bytes of input {@link writeToMaster} holds for `terminal`, waiting for room (0: none). */
export function pendingInputBytes(terminal: NodePtyTerminal): number {
  return pendingInputs.get(terminal)?.bytes ?? 0
}
