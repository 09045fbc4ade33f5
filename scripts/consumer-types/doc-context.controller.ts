// What a reader of docs/controller.md brings to its samples (see doc-context.ts).
import type { PtyProvider, PtySlot } from 'ptykit/contracts'

/** The page's xterm.js terminal (`@xterm/xterm`'s `Terminal`, the events these samples use). */
export declare const xterm: {
  onData(listener: (data: string) => void): { dispose(): void }
  onBinary(listener: (data: string) => void): { dispose(): void }
}
/** The host's view of one terminal. */
export declare const view: { write(data: string): void }
/** An SSH provider (`createSshProvider(…)`, see ssh-provider.md). */
export declare const sshProvider: PtyProvider
/** The pane a terminal is created in, and its size. */
export declare const slot: PtySlot
/** The pane's size. */
export declare const cols: number
/** The pane's size. */
export declare const rows: number
