// The module docs/writing-a-provider.md builds (examples/custom-provider.ts): what its samples
// import from `./custom-provider.js`. The declarations of that example:
// test/package/doc-custom-provider.test-d.ts fails when they part.
import type { ExecutionHostId, PtyProvider } from 'ptykit/contracts'

/** How to start the host child. */
export type JsonLinesHostCommand = { file: string; args: readonly string[]; cwd?: string }

/** Options of {@link createJsonLinesPtyProvider}. Every field is optional. */
export type JsonLinesPtyProviderOptions = { name?: string; hostId?: ExecutionHostId; hostCommand?: JsonLinesHostCommand }

/** The JSON-lines provider: a {@link PtyProvider} plus a handle on its host child. */
export type JsonLinesPtyProvider = PtyProvider &
  Required<Pick<PtyProvider, 'hasPty' | 'probeLiveness' | 'pauseProducer' | 'resumeProducer' | 'getCwd' | 'getForegroundProcess' | 'dispose'>> & {
    readonly hostPid: number | null
    readonly hostExited: Promise<void>
  }

/** Create a provider whose PTYs run in a child host process, over JSON lines. */
export declare function createJsonLinesPtyProvider(options?: JsonLinesPtyProviderOptions): JsonLinesPtyProvider
