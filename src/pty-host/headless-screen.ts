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
 * `heldBytes(pending)` estimates the memory the screen holds, counting the lines output written
 * but not parsed yet may still add — its line feeds, and a wrap every `cols` of its chars — up to
 * what its buffers can hold. (Escape sequences that scroll, CSI S or ESC D, may add lines that are
 * not counted until they are parsed.) `dispose` releases the terminal: a screen disposed holds
 * nothing and answers no snapshot (it rejects).
 */
export type HeadlessScreen = {
  write(data: string): void
  resize(cols: number, rows: number): void
  clear(): void
  snapshot(scrollbackRows: number | undefined): Promise<ScreenSnapshot>
  heldBytes(pending: { lineFeeds: number; chars: number }): number
  dispose(): void
}

/**
 * What an `@xterm/headless` terminal holds before any line of output, with its serializer (~180 KiB
 * measured at 80 × 24, most of it JS objects: parser, services, the screen's first lines).
 */
export const HEADLESS_SCREEN_BASE_BYTES = 192 * 1024

/**
 * What each line of an `@xterm/headless` buffer holds besides its cells: the line's object and
 * its bookkeeping (measured ~600–900 bytes a line, at 20 to 200 columns).
 */
export const HEADLESS_SCREEN_LINE_BYTES = 768

/** What each cell of a line holds: three 32-bit words (xterm's `BufferLine` layout). */
export const HEADLESS_SCREEN_CELL_BYTES = 12

/**
 * The memory a headless screen of `cols` holding `lines` lines (both buffers) takes, estimated
 * from the constants above: within 10 % of what Node reported (heap and array buffers) at 80 and
 * 200 columns, 24 to 1 024 lines, and above it (by a third) at 20 columns — a bound rather than less.
 */
export function headlessScreenBytes(cols: number, lines: number): number {
  return HEADLESS_SCREEN_BASE_BYTES + lines * (HEADLESS_SCREEN_LINE_BYTES + cols * HEADLESS_SCREEN_CELL_BYTES)
}

/** Opens a screen of `cols` × `rows` with `scrollbackRows` of scrollback. */
export type HeadlessScreenFactory = (options: { cols: number; rows: number; scrollbackRows: number }) => HeadlessScreen

/** The slice of `@xterm/headless` a screen uses. */
type HeadlessTerminal = {
  readonly cols: number
  readonly rows: number
  /** The active buffer: `length` counts its scrollback rows and the screen's. */
  readonly buffer: { readonly active: BufferLike; readonly normal: BufferLike; readonly alternate: BufferLike }
  write(data: string, callback?: () => void): void
  resize(cols: number, rows: number): void
  clear(): void
  loadAddon(addon: unknown): void
  onTitleChange(listener: (title: string) => void): unknown
  dispose(): void
}

/** The slice of an xterm buffer a screen reads: `length` counts its scrollback rows and the screen's. */
type BufferLike = { readonly length: number; readonly type: 'normal' | 'alternate' }

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
      peer: '@xterm/headless',
      isModule: (candidate) => typeof (candidate as { Terminal?: unknown }).Terminal === 'function',
      lacks: 'has no `Terminal` class',
      unavailable: unavailable('@xterm/headless'),
    }),
    loadOptionalPeer<{ SerializeAddon: new () => SerializeAddonLike }>({
      loader: () => import('@xterm/addon-serialize'),
      peer: '@xterm/addon-serialize',
      isModule: (candidate) => typeof (candidate as { SerializeAddon?: unknown }).SerializeAddon === 'function',
      lacks: 'has no `SerializeAddon` class',
      unavailable: unavailable('@xterm/addon-serialize'),
    }),
  ])
  return ({ cols, rows, scrollbackRows }) => {
    // `logLevel: 'off'`: at its default xterm logs every byte its parser rejects (binary output:
    // thousands of multi-line objects per MB, several times the parse's own CPU) to the console —
    // the app's, for a host started in its process.
    let terminal: HeadlessTerminal | null = new Terminal({ cols, rows, scrollback: scrollbackRows, allowProposedApi: true, logLevel: 'off' })
    let serializer: SerializeAddonLike | null = new SerializeAddon()
    terminal.loadAddon(serializer)
    let lastTitle: string | undefined
    terminal.onTitleChange((title) => {
      lastTitle = title
    })
    const released = (): Error => new PtyHostError('host_error', 'The headless screen was released')
    return {
      // xterm parses asynchronously, in order; a snapshot waits for everything written before it.
      write: (data) => terminal?.write(data),
      resize: (newCols, newRows) => terminal?.resize(newCols, newRows),
      clear: () => terminal?.clear(),
      snapshot: (scrollback) =>
        new Promise<ScreenSnapshot>((resolve, reject) => {
          const term = terminal
          if (term === null) return reject(released())
          // Why in the callback of an empty write: it runs once everything written before was parsed.
          term.write('', () => {
            try {
              // Released while it parsed (the owner defers that while a snapshot runs; see host-sessions.ts).
              if (terminal === null || serializer === null) return reject(released())
              const snapshot: ScreenSnapshot = {
                data: serializer.serialize(scrollback === undefined ? {} : { scrollback }),
                cols: term.cols,
                rows: term.rows,
                // The serializer takes the latest `scrollback` rows of those the buffer holds above the screen.
                scrollbackRowsHeld: Math.max(0, Math.min(scrollback ?? Infinity, term.buffer.active.length - term.rows)),
              }
              if (lastTitle !== undefined) snapshot.lastTitle = lastTitle
              resolve(snapshot)
            } catch (error) {
              reject(error)
            }
          })
        }),
      heldBytes: ({ lineFeeds, chars }) => {
        if (terminal === null) return 0
        const growthLines = lineFeeds + Math.ceil(chars / terminal.cols)
        const { normal, alternate, active } = terminal.buffer
        const lines = normal.length + (active.type === 'alternate' ? alternate.length : 0)
        // The most both buffers hold: the normal one its rows and scrollback, the alternate one its rows.
        const mostLines = scrollbackRows + 2 * terminal.rows
        return headlessScreenBytes(terminal.cols, Math.min(mostLines, lines + growthLines))
      },
      // Why drop the references too: a disposed xterm terminal keeps its buffers' lines (measured:
      // 100 disposed terminals of a full scrollback still held 150 MB of array buffers while
      // reachable), and an ended session's record outlives its screen.
      dispose: () => {
        terminal?.dispose()
        terminal = null
        serializer = null
      },
    }
  }
}
