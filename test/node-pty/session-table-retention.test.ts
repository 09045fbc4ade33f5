/**
 * A host that runs for days goes idle between bursts: every PTY of a burst ended, the death
 * watch's poll stopped (no session left), so the round-robin cursor is not advanced again until
 * the next burst. The cursor must not keep the ended sessions — each with its node-pty terminal,
 * socket stream and drain — alive meanwhile (a live Map iterator holds the table it was made on,
 * deleted entries and all, once the map has shrunk since).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import type { NodePtySession } from '../../src/node-pty/node-pty-session.js'
import { NODE_PTY_DEATH_POLL_BATCH } from '../../src/node-pty/child-death-watch.js'
import { NodePtySessionTable } from '../../src/node-pty/session-table.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

describe('NodePtySessionTable after every session ended', () => {
  it('keeps none of the ended sessions reachable through its poll cursor', async () => {
    const table = new NodePtySessionTable()
    const refs: WeakRef<object>[] = []
    const burst = 300
    ;(() => {
      const sessions: NodePtySession[] = []
      for (let i = 0; i < burst; i++) {
        const session = { id: `pty-${i}`, exit: null, payload: new Array(64).fill(i) } as unknown as NodePtySession
        sessions.push(session)
        refs.push(new WeakRef(session))
        table.add(session)
      }
      // The poll looked at a slice while they ran; then every one of them ended.
      table.nextSlice(NODE_PTY_DEATH_POLL_BATCH)
      for (const session of sessions) table.ended(session)
    })()
    expect(table.size).toBe(0)
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0))
      gc()
    }
    expect(refs.filter((ref) => ref.deref() !== undefined).length).toBe(0)
  })
})
