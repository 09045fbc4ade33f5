import { Socket } from 'node:net'
import type { NodePtyTerminal } from './node-pty-module.js'

/**
 * How many bytes one read of a PTY master may return into the shared buffer. libuv asks for 64 KiB
 * per read of a stream; a master returns at most 4 095 bytes per read on Linux, so this only has to
 * be at least that.
 */
export const NODE_PTY_SHARED_READ_BUFFER_BYTES = 65_536

/** net.Socket's private keys of its `onread` option (the user buffer and its callback). */
type OnreadKeys = { buffer: symbol; callback: symbol }

let onreadKeys: OnreadKeys | null | undefined
let sharedBuffer: Buffer | null = null

/**
 * Find net.Socket's private keys of `onread` by building a socket with that option (no handle,
 * never connected) and looking for the values it was given. `null` when this Node does not keep
 * them as this code expects.
 */
function findOnreadKeys(): OnreadKeys | null {
  if (onreadKeys !== undefined) return onreadKeys
  onreadKeys = null
  try {
    const buffer = Buffer.alloc(1)
    const callback = (): boolean => true
    // `onread` is in Node's documented options, not in @types/node 20's constructor type.
    const probe = new Socket({ onread: { buffer, callback } } as ConstructorParameters<typeof Socket>[0])
    let bufferKey: symbol | undefined
    let callbackKey: symbol | undefined
    for (const key of Object.getOwnPropertySymbols(probe)) {
      const value = (probe as unknown as Record<symbol, unknown>)[key]
      if (value === buffer) bufferKey = key
      else if (value === callback) callbackKey = key
    }
    probe.destroy()
    if (bufferKey !== undefined && callbackKey !== undefined) onreadKeys = { buffer: bufferKey, callback: callbackKey }
  } catch {
    // No onread here: the stream keeps its own buffers.
  }
  return onreadKeys
}

/** The parts of node-pty's master stream (a `tty.ReadStream`, a net.Socket) this uses, read defensively. */
type MasterSocket = Record<symbol, unknown> & {
  _handle?: { useUserBuffer?: (buffer: Uint8Array) => void } | null
  _readableState?: { decoder?: { write?: (bytes: Buffer) => unknown } | null; length?: unknown; flowing?: unknown }
  destroyed?: unknown
  push?: (chunk: unknown) => boolean
}

/**
 * Read a PTY master into one buffer shared by every PTY of the process, instead of a fresh one per
 * read, and hand each chunk to `onChunk` — a copy in bytes mode, the stream's own decoding in text.
 *
 * **Why.** For each read of a stream, Node allocates a 64 KiB buffer, shrinks it to what was read
 * and wraps it in an `ArrayBuffer` that the garbage collector frees later (V8's worker threads,
 * page faults and all). A PTY master returns at most 4 095 bytes per read, so a 100 MB flood is
 * ~25 000 such buffers: measured as a fifth of the pty host's CPU per MB (issue 16) and the gap
 * between Node's read path and a plain read loop (issue 18). With net.Socket's `onread` mode —
 * what its `onread` option sets up, here switched on for node-pty's socket before its first read —
 * libuv reads into the shared buffer; the chunk is copied out (small copies come from Node's
 * buffer pool) or decoded at once, before the next read can reuse it. One buffer serves every PTY:
 * reads run one at a time on the event loop's thread, and `onChunk` consumes each synchronously.
 *
 * **What stays the same.** The stream's end and errors (libuv's end of file reaches `push(null)`,
 * which the exit drain watches; a read error destroys the stream), `pause()`/`resume()` (in this
 * mode they stop and start the handle's reading, the kernel's backpressure as before), and text
 * mode's decoder: the stream's own `StringDecoder`, the one the exit drain's read-out uses too, so a
 * character split between two reads comes out whole. What the drain pushes into the stream still
 * reaches node-pty's `data` listeners. node-pty's `onData` no longer sees the master's reads: the
 * caller delivers through `onChunk` instead.
 *
 * Call synchronously right after the spawn (node-pty's socket starts reading on the next turn).
 *
 * @returns `false` (and nothing changed) when the terminal, its stream or this Node is not as this
 * code knows it — a stand-in, Windows, a stream already reading into a buffer of its own, a text
 * stream without a decoder: node-pty's `onData` then delivers as before
 */
export function readIntoSharedBuffer(terminal: NodePtyTerminal, bytes: boolean, onChunk: (chunk: string | Buffer) => void): boolean {
  const socket = (terminal as unknown as { _socket?: MasterSocket | null })._socket
  if (socket === undefined || socket === null || socket.destroyed === true) return false
  const handle = socket._handle
  const keys = findOnreadKeys()
  if (keys === null || handle === undefined || handle === null || typeof handle.useUserBuffer !== 'function') return false
  if (socket[keys.buffer] !== null || socket[keys.callback] !== null) return false
  const state = socket._readableState
  if (state === undefined || state === null || state.length !== 0) return false
  const decoder = state.decoder
  if (bytes ? decoder !== null && decoder !== undefined : typeof decoder?.write !== 'function') return false
  const push = socket.push
  if (typeof push !== 'function') return false
  sharedBuffer ??= Buffer.allocUnsafe(NODE_PTY_SHARED_READ_BUFFER_BYTES)
  const buffer = sharedBuffer
  const write = bytes ? null : (decoder as { write(bytes: Buffer): unknown })
  socket[keys.buffer] = buffer
  socket[keys.callback] = (nread: number): boolean => {
    if (state.flowing !== true || state.length !== 0) {
      // The consumer paused (reads can start before a pause takes hold of the handle), or the
      // stream holds output back: this chunk queues behind it in the stream, through its decoder,
      // and comes out with it on resume. Paused, reading stops until `resume()` restarts it.
      push.call(socket, Buffer.from(buffer.subarray(0, nread)))
      return state.flowing === true
    }
    if (write === null) {
      onChunk(Buffer.from(buffer.subarray(0, nread)))
    } else {
      const text = write.write(buffer.subarray(0, nread))
      if (typeof text === 'string' && text.length > 0) onChunk(text)
    }
    return true
  }
  handle.useUserBuffer(buffer)
  return true
}
