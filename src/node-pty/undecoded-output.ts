import type { NodePtyTerminal } from './node-pty-module.js'

/**
 * Bytes mode (`output: 'bytes'`) without giving up the terminal's UTF-8 line editing.
 *
 * **Why not `encoding: null`.** node-pty derives two things from its `encoding` option: whether its
 * socket decodes the master's reads into strings, and whether the new PTY gets the `IUTF8` input
 * flag (`pty.fork`'s `utf8` argument, set only for `'utf8'`). Spawned with `encoding: null`, a
 * PTY has `-iutf8`: in canonical mode (a shell's `read`, `cat`, any program without its own
 * line editor) one erase removes one *byte* of a multi-byte character and leaves the rest in the
 * line. So the provider spawns every PTY with `encoding: 'utf8'` and, in bytes mode, turns the
 * socket's decoding off before its first read, here.
 *
 * **How.** The socket is a `tty.ReadStream`, which starts reading only on the next turn after a
 * `data` listener subscribes, so nothing was decoded yet when the provider's session is wired
 * (synchronously after `spawn()`). Its readable state's `decoder` and `encoding` are cleared — the
 * inverse of `Readable.setEncoding`, which Node offers no public call for. Should a socket keep
 * decoding anyway (another Node or node-pty), the session encodes each string chunk back to UTF-8
 * (see {@link asBytes}): every valid character survives, only invalid bytes become U+FFFD.
 */
export function stopDecodingOutput(terminal: NodePtyTerminal): void {
  const state = (terminal as unknown as { _socket?: { _readableState?: { decoder: unknown; encoding: unknown } } })._socket?._readableState
  if (state === undefined || state === null) return
  try {
    state.decoder = null
    state.encoding = null
  } catch {
    // A state that refuses: its chunks stay strings, and asBytes encodes them.
  }
}

/** A bytes-mode chunk as bytes: a `Buffer` as it came, a string (see {@link stopDecodingOutput}) encoded as UTF-8. */
export function asBytes(chunk: string | Buffer): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
}
