// Fit a terminal to its container: as many whole cells as fit, measured from xterm.js's own screen.
//
// The renderer sizes `.xterm-screen` to exactly cols × rows cells, so one cell is its size divided by
// the grid. That needs no private API and no font guessing (what @xterm/addon-fit reaches into
// xterm's internals for).
import type { Terminal } from '@xterm/xterm'
import { MAX_TERMINAL_COLS, MAX_TERMINAL_ROWS } from '../protocol.js'

/** Room left on the right for xterm.js's scrollbar, in CSS pixels. */
export const SCROLLBAR_ALLOWANCE_PX = 14

/** Resize `terminal` to fill `container`; does nothing while either is not laid out (a hidden tab). */
export function fitTerminal(terminal: Terminal, container: HTMLElement): void {
  const screen = terminal.element?.querySelector<HTMLElement>('.xterm-screen')
  if (screen === null || screen === undefined) return
  const grid = screen.getBoundingClientRect()
  const style = getComputedStyle(container)
  const width = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
  const height = container.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)
  if (grid.width === 0 || grid.height === 0 || width <= 0 || height <= 0) return
  const cellWidth = grid.width / terminal.cols
  const cellHeight = grid.height / terminal.rows
  const cols = clamp(Math.floor((width - SCROLLBAR_ALLOWANCE_PX) / cellWidth), 2, MAX_TERMINAL_COLS)
  const rows = clamp(Math.floor(height / cellHeight), 1, MAX_TERMINAL_ROWS)
  if (cols !== terminal.cols || rows !== terminal.rows) terminal.resize(cols, rows)
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value))
}
