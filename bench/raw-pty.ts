/**
 * The raw side: node-pty used directly, with its defaults, the way the reference baseline
 * (`node-pty-baseline.md`) measured it.
 */
import * as ptyNamespace from 'node-pty'

type NodePty = typeof ptyNamespace

/** node-pty, whichever way the CJS module surfaced through ESM interop. */
export const pty: NodePty = (ptyNamespace as unknown as { default?: NodePty }).default ?? ptyNamespace

/** The terminal size every figure uses on both sides (node-pty's default). */
export const BENCH_COLS = 80

/** See {@link BENCH_COLS}. */
export const BENCH_ROWS = 24

/** node-pty's spawn options for a raw-side PTY: node-pty's defaults, made explicit. */
export function rawSpawnOptions(): ptyNamespace.IPtyForkOptions {
  return { name: 'xterm', cols: BENCH_COLS, rows: BENCH_ROWS, cwd: process.cwd(), env: process.env }
}

/** Resolves with node-pty's exit event of `p`. */
export function rawExit(p: ptyNamespace.IPty): Promise<{ exitCode: number; signal?: number }> {
  return new Promise((resolve) => {
    p.onExit(resolve)
  })
}
