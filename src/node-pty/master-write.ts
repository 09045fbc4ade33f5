import { writeSync } from 'node:fs'
import type { NodePtyTerminal } from './node-pty-module.js'

/**
 * How a write to the master ended:
 * - `accepted`: the kernel took every byte, or took some and node-pty's queue holds the rest (or,
 *   on `EAGAIN`, all of it) to write when the kernel has room — in order, as node-pty writes; or
 *   the terminal is not one this path knows, and `terminal.write` took the data;
 * - `master-closed`: node-pty has destroyed the master's stream, so its fd is closed (the terminal
 *   has hung up, though its process may live on); nothing was written;
 * - `write-failed`: the master answered the write with an error other than `EAGAIN` (no byte was
 *   written: the syscall failed whole); nothing was queued either.
 */
export type MasterWriteOutcome = 'accepted' | 'master-closed' | 'write-failed'

/** The part of node-pty 1.1's `UnixTerminal` a direct write needs (private members: checked before use). */
type UnixTerminalWriteInternals = {
  _fd?: unknown
  _socket?: { destroyed?: unknown } | null
  _writeStream?: { write?: unknown; _writeQueue?: unknown } | null
  handleFlowControl?: unknown
}

type WriteStream = { write(data: Buffer): void; _writeQueue: unknown[] }

/**
 * Write `data` to a PTY's input on the calling turn, without node-pty's round trip through
 * libuv's thread pool; where that is not possible, `terminal.write(data)` as before.
 *
 * **Why.** node-pty 1.1 writes every chunk with an asynchronous `fs.write` (so that a full kernel
 * buffer, `EAGAIN`, cannot block the app): a pool thread wakes to make the syscall, then the main
 * loop wakes again for its completion — two thread hand-offs per keystroke, on a 2-vCPU machine
 * often taking the CPU the echoing program needs. The master is non-blocking (node-pty's
 * `pty_nonblock` at the fork), so a `writeSync` cannot block either: it takes what the kernel has
 * room for at once, or fails with `EAGAIN`. This makes that one syscall and hands whatever is left
 * to node-pty's own queue, which retries as before.
 *
 * **Order.** While node-pty's queue holds anything, every write goes behind it (the queue writes
 * in order), so bytes never overtake earlier ones.
 *
 * **Never a recycled fd.** The master's fd is closed when node-pty destroys its socket; after that
 * the number may belong to another file (another PTY spawned since, a log file). So nothing new
 * is written once the socket is destroyed (`master-closed`), the way node-pty's own `write` becomes
 * a no-op at the socket's `close` event (a tick later). While the socket stands the fd is open
 * (JavaScript runs on one thread: nothing closes it between the look and the syscall). What
 * node-pty's queue still holds then is dropped at the exit ({@link dropQueuedInput}).
 *
 * **Non-blocking is node-pty's.** node-pty 1.1's `pty.cc` sets `O_NONBLOCK` on the master at the
 * fork (libuv does not: `uv_tty_init` keeps a blocking tty blocking). A host-supplied node-pty
 * build must keep that, or a full input buffer would block the event loop here instead of a pool
 * thread.
 *
 * **Where it does not apply** — not node-pty 1.1's Unix terminal as this code knows it (Windows, a
 * stand-in, another node-pty), or a terminal that interprets flow-control strings in `write`
 * (`handleFlowControl`) — the data goes to `terminal.write`. Nothing is kept per terminal: the
 * checks are a few property reads per write.
 */
export function writeToMaster(terminal: NodePtyTerminal, data: string): MasterWriteOutcome {
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
    terminal.write(data)
    return 'accepted'
  }
  if (socket.destroyed) return 'master-closed'
  if (stream._writeQueue.length > 0) {
    terminal.write(data)
    return 'accepted'
  }
  const bytes = Buffer.from(data, 'utf8')
  let written = 0
  try {
    written = writeSync(fd, bytes)
  } catch (error) {
    // Proven that no byte went out. Not handed to node-pty's queue: it would log the same error
    // asynchronously, settle nothing, and drop the writes queued behind it.
    if ((error as { code?: unknown }).code !== 'EAGAIN') return 'write-failed'
  }
  // The rest (all of it after EAGAIN) waits in node-pty's queue, which copies it.
  if (written < bytes.length) (stream as WriteStream).write(bytes.subarray(written))
  return 'accepted'
}

/**
 * Drop what node-pty's queue still holds for a terminal whose process has exited (call at its
 * exit, before anyone hears of it). node-pty retries a write that met a full buffer on a later
 * turn with `fs.write` on the master's fd number — also after the master was closed, when the
 * number may already name the next PTY's master (a host that respawns on exit). Nothing it holds
 * can reach the dead process's terminal any more.
 */
export function dropQueuedInput(terminal: NodePtyTerminal): void {
  const stream = (terminal as unknown as UnixTerminalWriteInternals)._writeStream
  if (stream === undefined || stream === null || !Array.isArray(stream._writeQueue) || stream._writeQueue.length === 0) return
  stream._writeQueue.length = 0
  const dispose = (stream as { dispose?: unknown }).dispose
  // node-pty's dispose clears the retry's immediate.
  if (typeof dispose === 'function') dispose.call(stream)
}
