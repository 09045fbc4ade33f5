import { interopOptionalPeer, loadOptionalPeer } from '../contracts/optional-peer.js'
import { NodePtyProviderError } from './node-pty-provider-error.js'

/** A subscription handle as node-pty returns it. */
export type NodePtyDisposable = {
  /** Remove the listener. */
  dispose(): void
}

/**
 * The part of node-pty's `IPty` the provider uses. Declared here rather than imported from
 * `node-pty`, so that this package's type declarations never require node-pty's own (it is an
 * optional peer dependency) and a host can inject a stand-in.
 */
export type NodePtyTerminal = {
  /** The child's pid (the session leader). */
  readonly pid: number
  /** Columns, as node-pty last set them. */
  readonly cols: number
  /** Rows, as node-pty last set them. */
  readonly rows: number
  /** Subscribe to output (UTF-8 strings). */
  onData(listener: (data: string) => void): NodePtyDisposable
  /** Subscribe to the exit; a signalled death arrives as `{ exitCode: 0, signal: N }`. */
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): NodePtyDisposable
  /** Queue input for the PTY: a string as UTF-8, a `Buffer` as it is (node-pty 1.1 takes both). */
  write(data: string | Buffer): void
  /** Set the window size. Throws on non-positive sizes. */
  resize(cols: number, rows: number): void
  /** Stop reading the master side (the kernel buffer fills and the child blocks). */
  pause(): void
  /** Resume reading after {@link NodePtyTerminal.pause}. */
  resume(): void
  /** Signal the leader only (Unix) or end the console (Windows; a signal there throws). */
  kill(signal?: string): void
}

/** The options of node-pty's `spawn` the provider passes. */
export type NodePtySpawnOptions = {
  /** `$TERM` for the child. */
  name: string
  /** Columns. */
  cols: number
  /** Rows. */
  rows: number
  /** Working directory. */
  cwd: string
  /**
   * The full environment of the child (node-pty skips `undefined` values, and removes the
   * host-terminal variables itself when this is `process.env`).
   */
  env: Readonly<Record<string, string | undefined>>
  /** Output decoding: `'utf8'` strings, or `null` for undecoded `Buffer` chunks (the provider's `output: 'bytes'`). */
  encoding: 'utf8' | null
}

/** The part of the `node-pty` module the provider uses. */
export type NodePtyModule = {
  /** Start a process on a new PTY. */
  spawn(file: string, args: string[], options: NodePtySpawnOptions): NodePtyTerminal
}

/** The npm package name, in one place for messages. */
export const NODE_PTY_PACKAGE_NAME = 'node-pty'

const isNodePtyModule = (candidate: object): boolean => typeof (candidate as { spawn?: unknown }).spawn === 'function'

/** Pick node-pty's module object out of whatever a dynamic `import()` returned (see `interopOptionalPeer`). */
export function interopNodePtyModule(loaded: unknown): NodePtyModule | null {
  return interopOptionalPeer<NodePtyModule>(loaded, isNodePtyModule)
}

/** The error a host sees when node-pty cannot be used. */
function unavailable(cause: unknown, why: string): NodePtyProviderError {
  return new NodePtyProviderError(
    'node_pty_unavailable',
    `The node-pty provider needs the optional peer dependency \`${NODE_PTY_PACKAGE_NAME}\`, which ${why}. ` +
      `Install it with \`npm install ${NODE_PTY_PACKAGE_NAME}\` (it builds a native module; under Electron, rebuild it for Electron's ABI). ` +
      // Why: an app bundled into one file (an IDE extension) that inlined node-pty, or shipped
      // without it, is installed where it was built: "npm install" alone does not help it.
      `An app bundled into one file (esbuild, webpack) must keep it out of the bundle (esbuild \`--external:${NODE_PTY_PACKAGE_NAME}\`, webpack \`externals\`) ` +
      `and ship \`node_modules/${NODE_PTY_PACKAGE_NAME}\` beside the bundle, or pass the \`loadNodePty\` option.`,
    { cause },
  )
}

/**
 * Load node-pty with `loader` (default: a dynamic `import('node-pty')`) and normalize the result.
 * Loading happens on first use, never at import time, so importing `ptykit/node-pty` works without
 * node-pty installed.
 *
 * @throws NodePtyProviderError with code `node_pty_unavailable` when the module cannot be loaded
 * or does not look like node-pty.
 */
export async function loadNodePtyModule(loader: () => Promise<unknown> = importNodePty): Promise<NodePtyModule> {
  return loadOptionalPeer<NodePtyModule>({ loader, peer: NODE_PTY_PACKAGE_NAME, isModule: isNodePtyModule, lacks: 'has no `spawn` function', unavailable })
}

/** The default loader. A literal specifier, so bundlers see it and keep it external. */
function importNodePty(): Promise<unknown> {
  return import('node-pty')
}
