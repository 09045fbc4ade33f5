// What a reader of docs/testing-with-the-fake-provider.md brings to its samples (see doc-context.ts):
// a vitest test file, the `setup()` of its first sample, and the host's own code under test.
// These names win over doc-context.ts's in that guide (its `provider` is the fake).
import type { PtyController } from 'ptykit/controller'
import type { PtyProvider, WriteSettlement } from 'ptykit/contracts'
import type { TerminalExitCause, WireExit } from 'ptykit/exit-cause'
import type { FakePtyProvider, FakePtyProviderOptions } from 'ptykit/testing'

// vitest with `globals: true`: `expect`, `it` and `vi` need no import.
/** vitest's global `expect`. */
export declare const expect: typeof import('vitest').expect
/** vitest's global `it`. */
export declare const it: typeof import('vitest').it
/** vitest's global `vi`. */
export declare const vi: typeof import('vitest').vi

// What the guide's earlier samples imported, for the samples that continue them (no imports of their own).
export { STOP_UNCONFIRMED_AFTER_MS, createPtyController } from 'ptykit/controller'
export { createFakePtyProvider, createManualClock } from 'ptykit/testing'

/** The guide's first sample: a fake provider, a controller over it, and the events recorded. */
export declare function setup(options?: FakePtyProviderOptions): { provider: FakePtyProvider; controller: PtyController; events: string[] }
/** What `setup()` returned, in the samples that continue one. */
export declare const provider: FakePtyProvider
/** What `setup()` returned, in the samples that continue one. */
export declare const events: string[]

/** The host's decoder of exits that crossed its wire. */
export declare function myDecodeExit(wire: WireExit): TerminalExitCause
/** The host's retry policy for a write. */
export declare function myRetryPolicy(settlement: WriteSettlement): 'resend' | 'give_up'
/** The host's label for an exit. */
export declare function myExitLabel(cause: TerminalExitCause): string
/** The host's own provider, and the machine its tests run it on. */
export declare function createMySshProvider(host: string): PtyProvider
/** The machine the host's provider tests run on. */
export declare const testHost: string
/** Kills a process on the test machine from outside the PTY. */
export declare function remoteKill(host: string, pid: number, signal: string): Promise<void>
