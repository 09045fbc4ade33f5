// What a reader of the docs brings to a code sample: the names a sample uses but does not define.
// `scripts/check-consumer-types.mjs` compiles every ```ts fence of README.md and the
// guides (docs/*.md) as its own module and imports from here each name the fence does not
// import itself (a fence's own declarations shadow these). Keep the types honest: they are what
// the sample is checked against. A sample that needs a new name gets it here, or, for a name
// one guide alone uses (or types its own way), in that guide's doc-context.<guide>.ts.
import type { PtyController, PtyTerminal } from 'ptykit/controller'
import type { NodePtyProvider } from 'ptykit/node-pty'
import type {
  ProviderSpawnOptions,
  PtyDataEvent,
  PtyExitEvent,
  PtyProcessInfo,
  PtyProvider,
  PtyShutdownOptions,
  PtySpawnResult,
  Unsubscribe,
  WriteSettlement,
} from 'ptykit/contracts'

/** getting-started step 2: the application's controller. */
export declare const controller: PtyController
/** getting-started step 2: the node-pty provider behind it. */
export declare const provider: NodePtyProvider
/** getting-started step 3: the id of the PTY just spawned. */
export declare const id: string
/** getting-started step 3: the handle of the terminal just spawned (`controller.spawnTerminal`). */
export declare const terminal: PtyTerminal

/** README: the IDE's workspace folder. */
export declare const workspaceRoot: string
/** README: the IDE's view of one terminal. */
export declare function terminalView(ptyId: string): { write(data: string): void }
/** README: the IDE's status bar entry of one terminal. */
export declare function statusBar(ptyId: string, text: string): void
/** README: a provider for this machine. */
export declare const localProvider: PtyProvider
/** README: the host app's connection to a remote PTY relay. */
export declare const relay: {
  request(method: 'spawn', options: ProviderSpawnOptions): Promise<PtySpawnResult>
  request(method: 'shutdown', params: { id: string } & PtyShutdownOptions): Promise<void>
  request(method: 'list'): Promise<PtyProcessInfo[]>
  settledWrite(id: string, data: string): Promise<WriteSettlement>
  notify(method: string, params: object): boolean
  on(event: 'data', listener: (event: PtyDataEvent) => void): Unsubscribe
  on(event: 'exit', listener: (event: PtyExitEvent) => void): Unsubscribe
}
