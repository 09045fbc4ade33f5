// What a reader of docs/spawn-pipeline.md brings to its samples (see doc-context.ts).
import type { PtyProvider } from 'ptykit/contracts'

/** The host's provider (node-pty, SSH, its own). */
export declare const myProvider: PtyProvider
