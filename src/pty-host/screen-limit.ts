import { NODE_PTY_DEFAULT_COLS, NODE_PTY_DEFAULT_ROWS } from '../node-pty/launch-plan.js'
import { PtyHostError, PtyHostOptionError, invalidPtyHostOption } from './pty-host-error.js'

/**
 * The most cells one session's headless screen may hold: `cols × (rows + scrollbackRows)`,
 * 8 Mi cells (about 96 MiB of `@xterm/headless` cell data at 12 bytes a cell). No real terminal
 * reaches it: an 8K display at a 5-pixel font is about 1 536 × 432 cells, 2.2 Mi cells with the
 * default 1 000 scrollback rows. The PTY itself accepts up to 65 535 × 65 535, which a screen
 * would make some 51 GB; the host refuses a spawn or resize past this bound (`invalid_option`,
 * naming the option and the value) so one buggy client cannot exhaust the memory of the host
 * that holds every user's sessions.
 */
export const PTY_HOST_MAX_SCREEN_CELLS = 8 * 1024 * 1024

/**
 * The one screen-cost rule, on the host (where spawn and resize requests arrive) and in the
 * provider (before it sends them): unless `cols × (rows + scrollbackRows)` is at most
 * {@link PTY_HOST_MAX_SCREEN_CELLS}, throw a `PtyHostError` with `code` (`invalid_option` for a
 * resize, a `TypeError` as every provider's resize refusal; `invalid_spawn_option` for a spawn, which the spawn pipeline then reports as the caller's
 * bad option) naming the larger of `cols` and `rows` in `option` and its `value` (the message also
 * gives the whole product). Sizes that are not numbers are left to the size validator of the
 * provider that runs the PTY.
 */
export function assertScreenWithinLimit(
  size: { cols: unknown; rows: unknown; scrollbackRows: number },
  code: 'invalid_option' | 'invalid_spawn_option' = 'invalid_option',
): void {
  const { cols, rows, scrollbackRows } = size
  if (typeof cols !== 'number' || typeof rows !== 'number') return
  const cells = cols * (rows + scrollbackRows)
  if (cells <= PTY_HOST_MAX_SCREEN_CELLS) return
  const option = cols >= rows ? 'cols' : 'rows'
  const value = option === 'cols' ? cols : rows
  // A resize's size is an argument, refused as every provider refuses one (a `TypeError`); a spawn's an option.
  const message = `Expected the \`${option}\` ${code === 'invalid_option' ? 'argument' : 'option'} to keep the pty host's screen within ${PTY_HOST_MAX_SCREEN_CELLS} cells (cols × (rows + ${scrollbackRows} scrollback rows)), got ${value}: ${cols} × (${rows} + ${scrollbackRows}) = ${cells} cells`
  throw code === 'invalid_option' ? new PtyHostOptionError(message, option, value) : new PtyHostError(code, message, { option, value })
}

/**
 * The most scrollback rows a host may keep: even a default 80 × 24 screen must fit in
 * {@link PTY_HOST_MAX_SCREEN_CELLS}.
 *
 * @throws PtyHostError (`invalid_option`) naming `scrollbackRows` and its value when it is more.
 */
export function assertScrollbackRowsFit(scrollbackRows: number): void {
  const maxScrollbackRows = Math.floor(PTY_HOST_MAX_SCREEN_CELLS / NODE_PTY_DEFAULT_COLS) - NODE_PTY_DEFAULT_ROWS
  if (scrollbackRows > maxScrollbackRows) {
    throw invalidPtyHostOption('scrollbackRows', `at most ${maxScrollbackRows} (an 80 × 24 screen must fit in PTY_HOST_MAX_SCREEN_CELLS)`, scrollbackRows)
  }
}
