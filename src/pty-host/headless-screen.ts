import { loadOptionalPeer } from '../contracts/optional-peer.js'
import { PtyHostError } from './pty-host-error.js'

/**
 * What a screen answers a snapshot with (the session adds `seq` and `source`); `scrollbackRowsHeld`:
 * how many scrollback rows `data` holds, when the screen can tell (not sent to the app).
 */
export type ScreenSnapshot = { data: string; cols: number; rows: number; lastTitle?: string; scrollbackRowsHeld?: number }

/**
 * One session's headless terminal: fed the raw output in order, resized and cleared with the
 * PTY, serialized on demand. `snapshot` serializes the screen after everything written before it.
 */
export type HeadlessScreen = {
  write(data: string): void
  resize(cols: number, rows: number): void
  clear(): void
  snapshot(scrollbackRows: number | undefined): Promise<ScreenSnapshot>
  dispose(): void
}

/** Opens a screen of `cols` × `rows` with `scrollbackRows` of scrollback. */
export type HeadlessScreenFactory = (options: { cols: number; rows: number; scrollbackRows: number }) => HeadlessScreen

/** The slice of `@xterm/headless` a screen uses. */
type HeadlessTerminal = {
  readonly cols: number
  readonly rows: number
  /** The active buffer: `length` counts its scrollback rows and the screen's. */
  readonly buffer: { readonly active: { readonly length: number } }
  write(data: string, callback?: () => void): void
  resize(cols: number, rows: number): void
  clear(): void
  loadAddon(addon: unknown): void
  onTitleChange(listener: (title: string) => void): unknown
  dispose(): void
}

/** The slice of `@xterm/addon-serialize` a screen uses. */
type SerializeAddonLike = { serialize(options?: { scrollback?: number }): string }

/**
 * Load `@xterm/headless` and `@xterm/addon-serialize` (optional peers, CommonJS packages: through
 * the project's one optional-peer loader) once per host, and return the factory of screens over
 * them.
 *
 * @throws PtyHostError (`host_unavailable`) naming the package and how to install it when one
 * is missing or is not the expected module: a host without them cannot answer snapshots.
 */
export async function loadHeadlessScreens(): Promise<HeadlessScreenFactory> {
  const unavailable =
    (name: string) =>
    (cause: unknown, why: string): Error =>
      new PtyHostError('host_unavailable', `The pty host needs ${name}, which ${why}: npm install @xterm/headless @xterm/addon-serialize`, { cause })
  const [{ Terminal }, { SerializeAddon }] = await Promise.all([
    loadOptionalPeer<{ Terminal: new (options: Record<string, unknown>) => HeadlessTerminal }>({
      loader: () => import('@xterm/headless'),
      isModule: (candidate) => typeof (candidate as { Terminal?: unknown }).Terminal === 'function',
      lacks: 'has no `Terminal` class',
      unavailable: unavailable('@xterm/headless'),
    }),
    loadOptionalPeer<{ SerializeAddon: new () => SerializeAddonLike }>({
      loader: () => import('@xterm/addon-serialize'),
      isModule: (candidate) => typeof (candidate as { SerializeAddon?: unknown }).SerializeAddon === 'function',
      lacks: 'has no `SerializeAddon` class',
      unavailable: unavailable('@xterm/addon-serialize'),
    }),
  ])
  return ({ cols, rows, scrollbackRows }) => {
    // `logLevel: 'off'`: at its default xterm logs every byte its parser rejects (binary output:
    // thousands of multi-line objects per MB, several times the parse's own CPU) to the console —
    // the app's, for a host started in its process.
    const terminal = new Terminal({ cols, rows, scrollback: scrollbackRows, allowProposedApi: true, logLevel: 'off' })
    const serializer = new SerializeAddon()
    terminal.loadAddon(serializer)
    let lastTitle: string | undefined
    terminal.onTitleChange((title) => {
      lastTitle = title
    })
    return {
      // xterm parses asynchronously, in order; a snapshot waits for everything written before it.
      write: (data) => terminal.write(data),
      resize: (newCols, newRows) => terminal.resize(newCols, newRows),
      clear: () => terminal.clear(),
      snapshot: (scrollback) =>
        new Promise<ScreenSnapshot>((resolve, reject) => {
          // Why in the callback of an empty write: it runs once everything written before was parsed.
          terminal.write('', () => {
            try {
              const snapshot: ScreenSnapshot = {
                data: serializer.serialize(scrollback === undefined ? {} : { scrollback }),
                cols: terminal.cols,
                rows: terminal.rows,
                // The serializer takes the latest `scrollback` rows of those the buffer holds above the screen.
                scrollbackRowsHeld: Math.max(0, Math.min(scrollback ?? Infinity, terminal.buffer.active.length - terminal.rows)),
              }
              if (lastTitle !== undefined) snapshot.lastTitle = lastTitle
              resolve(snapshot)
            } catch (error) {
              reject(error)
            }
          })
        }),
      dispose: () => terminal.dispose(),
    }
  }
}
