import { loadOptionalPeer } from '../contracts/optional-peer.js'
import { SshProviderError } from './ssh-provider-error.js'

/**
 * The part of an `ssh2` channel (a duplex stream) the provider uses. Declared here, not imported
 * from `ssh2`, so that this package's declarations never require ssh2's types (an optional peer).
 */
export type Ssh2Channel = {
  /** Subscribe to output, exit, close and end. */
  on(event: 'data', listener: (chunk: Buffer) => void): Ssh2Channel
  on(event: 'exit', listener: (code: number | null, signal?: string) => void): Ssh2Channel
  on(event: 'close' | 'end', listener: () => void): Ssh2Channel
  on(event: 'error', listener: (error: Error) => void): Ssh2Channel
  /** Remove a listener. */
  removeListener?(event: string, listener: (...args: never[]) => void): unknown
  /**
   * Queue bytes; false when the outgoing window is full (they are still queued). `callback` runs
   * once the channel handed the last of them to the connection (with an error when it could not);
   * never, for bytes still held when the channel closes.
   */
  write(data: string | Buffer, callback?: (error?: Error | null) => void): boolean
  /**
   * The bytes written and not yet handed on (a `Writable`'s): what waits for the remote's window
   * to open. Absent on a stand-in: its writes are not bounded.
   */
  readonly writableLength?: number
  /**
   * Whether the writable side has ended (a `Writable`'s): ssh2 ends it when the server closes the
   * channel, before 'close' (which waits for the output to be read). Absent on a stand-in.
   */
  readonly writableEnded?: boolean
  /** Stop reading: the channel's window is no longer refilled, so the server stops sending. */
  pause(): unknown
  /** Resume reading. */
  resume(): unknown
  /** Send a `window-change` request. */
  setWindow(rows: number, cols: number, height: number, width: number): void
  /** Send a `signal` request (name without `SIG`). OpenSSH ignores it for root logins. */
  signal(name: string): void
  /** Send EOF (no more input). */
  end(): unknown
  /** Close the channel. */
  close(): void
  /** True once the readable side ended. */
  readonly readableEnded: boolean
  /** The stderr stream (merged into the pty for pty sessions, but drained anyway). */
  readonly stderr: { on(event: 'data', listener: (chunk: Buffer) => void): unknown; resume(): unknown }
}

/** The pty request of an `exec`. */
export type Ssh2PtyRequest = { term: string; cols: number; rows: number; width: number; height: number }

/** The connection settings the provider passes to `ssh2`'s `connect`. */
export type Ssh2ConnectConfig = Record<string, unknown>

/** The part of an `ssh2` `Client` the provider uses. */
export type Ssh2Client = {
  /** Subscribe to connection events. */
  on(event: 'ready' | 'close' | 'end', listener: () => void): Ssh2Client
  on(event: 'error', listener: (error: Error & { level?: string }) => void): Ssh2Client
  /** Connect. */
  connect(config: Ssh2ConnectConfig): void
  /** Open a session channel and run `command`, with a pty when asked. */
  exec(command: string, options: { pty?: Ssh2PtyRequest | false }, callback: (error: Error | undefined, channel: Ssh2Channel) => void): boolean
  /** Close the connection. */
  end(): void
  /** Close the connection at once. */
  destroy(): void
}

/** The part of the `ssh2` module the provider uses. */
export type Ssh2Module = {
  /** The client class. */
  Client: new () => Ssh2Client
}

/** The npm package name, in one place for messages. */
export const SSH2_PACKAGE_NAME = 'ssh2'

const isSsh2Module = (candidate: object): boolean => typeof (candidate as { Client?: unknown }).Client === 'function'

function unavailable(cause: unknown, why: string): SshProviderError {
  return new SshProviderError(
    'ssh2_unavailable',
    `The SSH provider needs the optional peer dependency \`${SSH2_PACKAGE_NAME}\`, which ${why}. ` +
      `Install it with \`npm install ${SSH2_PACKAGE_NAME}\` (pure JavaScript; its optional native speed-ups are not needed). ` +
      // Why: an app bundled into one file (an IDE extension) that shipped without it, or an ESM
      // bundle that inlined it (CommonJS requiring Node's built-ins), is installed where it was built.
      `An app bundled into one file (esbuild, webpack) that does not bundle it (in an ESM bundle it fails on its \`require\` of Node's built-ins) must keep it out of the bundle ` +
      `(esbuild \`--external:${SSH2_PACKAGE_NAME}\`, webpack \`externals\`) and ship \`node_modules/${SSH2_PACKAGE_NAME}\` beside the bundle, or pass the \`loadSsh2\` option.`,
    { cause },
  )
}

/**
 * Load ssh2 with `loader` (default: a dynamic `import('ssh2')`) on first use, never at import
 * time, so importing `ptykit/ssh` works without ssh2 installed.
 *
 * @throws SshProviderError with code `ssh2_unavailable` when it cannot be loaded.
 */
export async function loadSsh2Module(loader: () => Promise<unknown> = importSsh2): Promise<Ssh2Module> {
  return loadOptionalPeer<Ssh2Module>({ loader, peer: SSH2_PACKAGE_NAME, isModule: isSsh2Module, lacks: 'has no `Client` class', unavailable })
}

/** The default loader. A literal specifier, so bundlers see it and keep it external. */
function importSsh2(): Promise<unknown> {
  return import('ssh2')
}
