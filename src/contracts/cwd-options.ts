/**
 * Options of `getCwd`. Whose directory to read:
 *
 * - `'foreground'` (the default): the foreground process's — where a command the user is running
 *   now works (a `cd` inside a running tool shows here);
 * - `'leader'`: the shell's (the PTY's leader process) — what an IDE's "new terminal here" wants,
 *   whatever program runs in the foreground.
 */
export type PtyCwdOptions = {
  /** Whose working directory. Default `'foreground'`. */
  of?: 'foreground' | 'leader' | undefined
}
