/**
 * A program for a PTY that shows exactly which bytes reached it: it puts its terminal in raw mode
 * (no line editing, no signals from ^C, no flow control from ^S, no literal-next from ^V, no CR→NL,
 * no echo), prints `READY`, then prints every read as hex on a line of its own. Its output is
 * plain ASCII, so it crosses any provider's text output unchanged — also from a machine (or a
 * user) whose files the test cannot read.
 */

/** The reader, in Python: one line of hex per read, until the terminal goes away. */
const READER = ['import os', 'while True:', '    chunk = os.read(0, 65536)', '    if not chunk: break', '    os.write(1, chunk.hex().encode() + b"\\n")'].join('\n')

/** `file` and `args` of a spawn that runs the reader (`/bin/sh` runs `stty`, then `python3`). */
export const RAW_HEX_READER = { file: '/bin/sh', args: ['-c', 'stty raw -echo -iexten; echo READY; exec python3 -c "$1"', 'sh', READER] }

/**
 * The bytes the reader has reported in `output` (the PTY's output so far), `undefined` before it
 * printed `READY`. Only whole lines count: a line still being printed is left for the next look.
 */
export function bytesReadFrom(output: string): Buffer | undefined {
  const start = output.indexOf('READY')
  if (start === -1) return undefined
  const lines = output.slice(start + 'READY'.length).split('\n')
  lines.pop() // the line after the last newline: not complete yet
  return Buffer.from(lines.map((line) => line.trim()).join(''), 'hex')
}
