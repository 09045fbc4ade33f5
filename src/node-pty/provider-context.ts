import type { ExecutionHostId } from '../contracts/index.js'
import type { ProcessInspector } from './process-inspector.js'
import type { NodePtyProviderOptions } from './provider-options.js'
import type { NodePtySessionTable } from './session-table.js'
import type { SessionStopRequest } from './stop-loop.js'
import type { NodePtySession } from './node-pty-session.js'

/**
 * What the node-pty provider's parts (spawn, queries, stop) share: its resolved options, its
 * session table and its OS readers. Internal to the provider.
 */
export type NodePtyProviderContext = {
  /** The options as given (validated). */
  readonly options: NodePtyProviderOptions
  /** The platform behaved as. */
  readonly platform: NodeJS.Platform
  /** `platform === 'win32'`: no signals, no drain, no `/proc`. */
  readonly isWindows: boolean
  /** The host id of listing rows. */
  readonly hostId: ExecutionHostId
  /** See {@link NodePtyProviderOptions.hostReportsChildExitStatus}. */
  readonly hostReportsChildExitStatus: boolean
  /** See {@link NodePtyProviderOptions.drainOutputAtExit}. */
  readonly drainOutputAtExit: boolean
  /** `output: 'bytes'`: chunks delivered undecoded on `onBytes` (see `undecoded-output.ts`). */
  readonly bytesOutput: boolean
  /** See {@link NodePtyProviderOptions.maxPendingInputBytes} (the default applied). */
  readonly maxPendingInputBytes: number
  /** The deadline of a shutdown that names none, ms. */
  readonly defaultDeadlineMs: number
  /** Reads processes from the OS. */
  readonly inspector: ProcessInspector
  /** The provider's sessions. */
  readonly sessions: NodePtySessionTable
  /** Stop (or join the stop of) a session. */
  readonly stopSession: (session: NodePtySession, request: SessionStopRequest) => Promise<void>
  /** Throws `provider_disposed` naming `method` once the provider is disposed. */
  assertNotDisposed(method: string): void
}
