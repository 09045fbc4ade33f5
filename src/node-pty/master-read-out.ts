import { readSync } from 'node:fs'
import { withoutStackTraces } from './without-stack-traces.js'

/**
 * How many bytes one read of a read-out asks for. A PTY master hands out at most what its line
 * discipline holds (4 KiB on Linux) per read, so this only has to be at least that; one scratch
 * buffer of this size is shared by every read-out of the process.
 */
export const NODE_PTY_READ_OUT_CHUNK_BYTES = 65_536

/**
 * How many bytes a read-out reads before it stops. A dead writer can have left at most what the
 * kernel buffers between the slave and the master (on Linux 64 KiB of flip buffers plus the line
 * discipline's 4 KiB); reading more means some live process (a surviving background job that keeps
 * the tty) is still writing, and the read-out must not hold the event loop for it.
 */
export const NODE_PTY_READ_OUT_BUDGET_BYTES = 256 * 1024

let scratch: Buffer | null = null
/** The master {@link readScratchOnce} reads: set right before each call (a read-out's listeners may start another). */
let readingFd = -1

/**
 * One read of {@link readingFd} into the scratch buffer. Shared, not a closure per read-out: the
 * exit path runs one read-out per PTY, between two forks (docs/performance.md).
 */
function readScratchOnce(): number {
  const buffer = scratch as Buffer
  return readSync(readingFd, buffer, 0, buffer.length, null)
}

/**
 * How a read-out of a PTY master ended:
 * - `drained`: `EAGAIN`, nothing to read now — on Linux the kernel first waits for the input it
 *   was still moving toward the master (`n_tty_read` calls `tty_buffer_flush_work` before it
 *   answers `EAGAIN` or `EIO`), so every byte a writer wrote before this read has been read;
 * - `hung-up`: `EIO`, the same proof, and no process holds the slave side any more: nothing can
 *   ever arrive again;
 * - `stopped`: the caller asked to stop between two reads, or the read-out spent its byte budget
 *   (bytes may be left);
 * - `failed`: any other answer (an end of file or an error this code does not expect).
 */
export type MasterReadOutEnd = 'drained' | 'hung-up' | 'stopped' | 'failed'

/**
 * Read a non-blocking PTY master synchronously until it has nothing left, handing each chunk to
 * `deliver` (a view of a shared scratch buffer, valid only during the call: copy or decode it).
 *
 * @param fd - the master's file descriptor (non-blocking: node-pty's `pty_nonblock` sets `O_NONBLOCK`
 * on the master at the fork, so a read with nothing to give answers `EAGAIN` instead of waiting)
 * @param deliver - receives each chunk read, in order
 * @param keepGoing - asked before every read after the first chunk; `false` ends with `stopped`,
 * as does reading {@link NODE_PTY_READ_OUT_BUDGET_BYTES}
 */
export function readOutMaster(fd: number, deliver: (chunk: Buffer) => void, keepGoing: () => boolean): MasterReadOutEnd {
  const buffer = (scratch ??= Buffer.allocUnsafe(NODE_PTY_READ_OUT_CHUNK_BYTES))
  for (let delivered = 0; ; ) {
    if (delivered > 0 && (delivered >= NODE_PTY_READ_OUT_BUDGET_BYTES || !keepGoing())) return 'stopped'
    let read: number
    try {
      // Every read-out ends in an error (`EAGAIN` or `EIO`): its stack trace is not worth capturing.
      readingFd = fd
      read = withoutStackTraces(readScratchOnce)
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (code === 'EAGAIN') return 'drained'
      if (code === 'EIO') return 'hung-up'
      return 'failed'
    }
    if (read <= 0) return 'failed'
    delivered += read
    deliver(buffer.subarray(0, read))
  }
}

/** The parts of a PTY master's stream (node's `tty.ReadStream`) a read-out looks at, read defensively. */
export type MasterStream = {
  destroyed?: unknown
  _readableState?: {
    flowing?: unknown
    length?: unknown
    decoder?: { write?: (bytes: Buffer) => unknown } | null
  }
}

/**
 * How a read-out hands its chunks on as the master's stream would have: in bytes mode a copy of
 * each chunk; in text mode through the stream's own `StringDecoder`, so a character split between
 * the stream's last read and the read-out comes out whole. `null` when the read-out cannot follow
 * the stream: it holds data back (buffered, or not flowing), is destroyed, or does not decode as
 * expected (node's internals changed) — the caller then proves the end another way.
 *
 * @param stream - the master's stream
 * @param bytes - `true` when the stream hands out undecoded `Buffer`s (bytes mode: its decoder
 * cleared, see `undecoded-output.ts`)
 * @param sink - where the chunks go (`emit` is called with a copy or a decoded string, never a view)
 */
export function streamDeliverer<C extends string | Buffer>(
  stream: MasterStream,
  bytes: boolean,
  sink: { emit(chunk: C): void },
): ((chunk: Buffer) => void) | null {
  const state = stream._readableState
  if (state === undefined || state.flowing !== true || state.length !== 0 || stream.destroyed === true) return null
  const decoder = state.decoder
  if (bytes) {
    if (decoder !== null && decoder !== undefined) return null
    return (chunk) => sink.emit(Buffer.from(chunk) as C)
  }
  const write = decoder?.write
  if (typeof write !== 'function') return null
  return (chunk) => {
    const text = write.call(decoder, chunk)
    if (typeof text === 'string' && text.length > 0) sink.emit(text as C)
  }
}
