/**
 * A web IDE opens and closes tabs all day. Each tab subscribes its view to the terminal's handle
 * (`onData` into an xterm, `onExit` for the status line). Found by helper-156 (6 Dec): once a
 * terminal ended, its handle kept those listeners, and the controller keeps the handle for as long
 * as it remembers the ended PTY (the latest 1 024), so every closed tab's view stayed reachable —
 * 200 closed tabs with a 5 000-row xterm each kept 379 MB after a full GC (2 MB after the fix).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS, type PtyTerminal } from '../../src/controller/index.js'
import { createHarness } from './controller-harness.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
  return ref.deref() === undefined
}

/** Subscribe a "view" the way a tab does, and answer a weak reference to it (nothing else holds it). */
function subscribeView(terminal: PtyTerminal): WeakRef<object> {
  const view = { screen: new Array<string>(1_000).fill('row') }
  terminal.onData(({ data }) => view.screen.push(data))
  terminal.onExit(({ cause }) => view.screen.push(cause.kind))
  terminal.onOutputLoss(() => view.screen.push('lost'))
  return new WeakRef(view)
}

describe('an ended terminal keeps none of its listeners', () => {
  // docs/controller.md: `terminal(id)` answers the handle of an ended PTY "while the controller still
  // remembers it"; the handle must not keep the host's views alive that long.
  it('once its death is proven, the views its listeners held can be collected; the handle still answers', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const view = subscribeView(terminal)
    h.provider.emitData(terminal.id, 'hello')
    h.provider.emitExit(terminal.id, { exitCode: 0 })
    await h.settle()
    expect((await terminal.exited).cause).toEqual({ kind: 'exited', exitCode: 0 })
    expect(h.controller.terminal(terminal.id)).toBe(terminal)
    expect(await collected(view)).toBe(true)
    // A listener added now is not kept either: nothing will ever come for this incarnation.
    expect(await collected(subscribeView(terminal))).toBe(true)
    await h.run(h.controller.dispose())
  })

  it('the handle asked for after the proven death keeps no listener either', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 3 })
    await h.settle()
    const terminal = h.controller.terminal(id)
    if (terminal === null) throw new Error('no handle for the remembered PTY')
    expect(await collected(subscribeView(terminal))).toBe(true)
    await h.run(h.controller.dispose())
  })

  // docs/controller.md "What unverified means": a re-attach may revive the PTY, and its output and
  // real exit follow — its listeners must stay until the death is proven.
  it('a stop that went unverified keeps them: the real exit still reaches them', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const terminal = await h.controller.spawnTerminal({})
    const causes: string[] = []
    terminal.onExit(({ cause }) => causes.push(cause.kind))
    expect(terminal.kill()).toBe(true)
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    await h.settle()
    expect(causes).toEqual(['unknown'])
    h.provider.emitExit(terminal.id, { exitCode: 0, signal: 9 })
    await h.settle()
    expect(causes).toEqual(['unknown', 'operator_close'])
    await h.run(h.controller.dispose())
  })

  // After the dispose no event reaches a handle (the controller removed its listeners), yet the
  // disposed controller keeps its handles: a host that keeps the controller (a module-level
  // variable) kept the views of every terminal whose stop went unverified, or that
  // `dispose({ stopPtys: false })` let go of, through listeners that could never be called.
  it.each([
    ['a stop the dispose gave up on (stop_unverified)', true],
    ['a PTY dispose({ stopPtys: false }) let go of', false],
  ] as const)('once the dispose is over, %s keeps none of them either', async (_, stopPtys) => {
    const h = createHarness()
    if (stopPtys) h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const terminal = await h.controller.spawnTerminal({})
    const view = subscribeView(terminal)
    await h.run(h.controller.dispose({ stopPtys }))
    if (stopPtys) expect((await terminal.exited).cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
    expect(h.controller.disposed).toBe(true) // the host still holds the disposed controller
    expect(await collected(view)).toBe(true)
    expect(await collected(subscribeView(terminal))).toBe(true)
  })
})
