/** What a screen answers a snapshot with (the session adds `seq` and `source`). */
export type ScreenSnapshot = { data: string; cols: number; rows: number; lastTitle?: string }

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
 * Load `@xterm/headless` and `@xterm/addon-serialize` (CommonJS packages, so through their
 * default export) once per host, and return the factory of screens over them.
 */
export async function loadHeadlessScreens(): Promise<HeadlessScreenFactory> {
  const [headless, serialize] = await Promise.all([import('@xterm/headless'), import('@xterm/addon-serialize')])
  const pick = <T>(module: unknown, name: string): T => {
    const direct = (module as Record<string, unknown>)[name]
    return (direct ?? ((module as { default?: Record<string, unknown> }).default ?? {})[name]) as T
  }
  const Terminal = pick<new (options: Record<string, unknown>) => HeadlessTerminal>(headless, 'Terminal')
  const SerializeAddon = pick<new () => SerializeAddonLike>(serialize, 'SerializeAddon')
  return ({ cols, rows, scrollbackRows }) => {
    const terminal = new Terminal({ cols, rows, scrollback: scrollbackRows, allowProposedApi: true })
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
