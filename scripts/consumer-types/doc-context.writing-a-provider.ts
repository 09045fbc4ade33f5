// What a reader of docs/writing-a-provider.md brings to its samples (see doc-context.ts): the
// insides of the provider they are writing.
import type { PtyExitEvent, PtyIncarnationId } from 'ptykit/contracts'

/** The provider's own exit reporting (its `exitListeners.fire`). */
export declare function emitExit(event: PtyExitEvent): void
/** The status the provider observed: the code… */
export declare const exitCode: number
/** …and the signal, when the process died of one. */
export declare const signal: number | null | undefined
/** The incarnation of the PTY that exited (a provider that builds causes at the source tracks it). */
export declare const incarnationId: PtyIncarnationId
/** The id an attach-only spawn asked for (`options.sessionId`). */
export declare const sessionId: string
/** The incarnation live under that id. */
export declare const liveIncarnationId: PtyIncarnationId
