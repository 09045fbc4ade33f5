/**
 * A released headless screen (an ended session's, whose history the host lets go of: a stop without
 * `keepHistory`, or the budget of ended sessions' histories) frees its memory though the session's
 * record stays (its exit, for `listExits`): xterm's `dispose()` alone keeps the terminal's buffers,
 * so a screen that only disposed its terminal held them while reachable. And what the host counts
 * for a screen (`heldBytes`) follows what it holds.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { headlessScreenBytes, loadHeadlessScreens } from '../../src/pty-host/headless-screen.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * Full garbage collections (`gc` exposed at run time: vitest's workers run without `--expose-gc`).
 * Two: an array buffer's memory is counted free once a second collection has run its finalizer.
 */
function collectGarbage(): void {
  gc()
  gc()
}

describe('a headless screen released', () => {
  it('frees its buffers though its owner keeps it (an ended session keeps its record): before, a disposed xterm terminal kept them', async () => {
    const open = await loadHeadlessScreens()
    collectGarbage()
    const before = process.memoryUsage().arrayBuffers
    // Screens of a full scrollback: ~0.7 MB of array buffers each at 80 columns.
    const screens = Array.from({ length: 20 }, () => open({ cols: 80, rows: 24, scrollbackRows: 1_000 }))
    for (const screen of screens) {
      screen.write(`${'x'.repeat(79)}\r\n`.repeat(1_100))
      await screen.snapshot(0)
    }
    collectGarbage()
    const held = process.memoryUsage().arrayBuffers
    for (const screen of screens) screen.dispose()
    collectGarbage()
    const freed = held - process.memoryUsage().arrayBuffers
    expect(screens).toHaveLength(20)
    expect(held - before).toBeGreaterThan(10 * 1024 * 1024)
    // Nearly all of it (before: next to nothing).
    expect(freed).toBeGreaterThan(0.9 * (held - before))
  })


  it('lets go of its terminal: it holds nothing any more and answers no snapshot', async () => {
    const open = await loadHeadlessScreens()
    const screen = open({ cols: 80, rows: 24, scrollbackRows: 100 })
    screen.write('line\r\n'.repeat(50))
    await screen.snapshot(0)
    const none = { lineFeeds: 0, chars: 0 }
    // 50 lines written and the cursor on the 51st, of 80 columns.
    expect(screen.heldBytes(none)).toBe(headlessScreenBytes(80, 51))
    // Counts what unparsed output may still add (its line feeds, a wrap every 80 chars), up to what
    // its buffers hold: 24 rows and 100 of scrollback, and the alternate screen's 24.
    expect(screen.heldBytes({ lineFeeds: 10, chars: 160 })).toBe(headlessScreenBytes(80, 63))
    expect(screen.heldBytes({ lineFeeds: 1_000_000, chars: 0 })).toBe(headlessScreenBytes(80, 148))
    screen.dispose()
    expect(screen.heldBytes(none)).toBe(0)
    await expect(screen.snapshot(0)).rejects.toThrow('released')
  })
})

