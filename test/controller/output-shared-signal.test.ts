/**
 * One long-lived signal shared by every tab's `output()` — a web IDE's window or panel signal —
 * found by helper-156 (6 Dec): each iterator added an abort listener of its own, so from the 11th
 * open terminal on Node warned `MaxListenersExceededWarning: Possible EventTarget memory leak
 * detected. 11 abort listeners added to [AbortSignal]` (a false alarm: each was removed at its end).
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { maxListenersWarnings } from '../support/max-listeners-warnings.js'
import { createHarness } from './controller-harness.js'

const TABS = 30

const maxListeners = maxListenersWarnings()

describe('output() iterators of many terminals over one signal', () => {
  // docs/controller.md: "`break`, `return()`, or an aborted `signal` ends one iterator", and an
  // iterator "lets go of its `signal` at the exit ... leaves no abort listener on a long-lived signal".
  it('share one abort listener: no MaxListenersExceededWarning, every one still ends at the abort', async () => {
    maxListeners.watch()
    const h = createHarness()
    const window = new AbortController()
    const terminals = await Promise.all(Array.from({ length: TABS }, () => h.controller.spawnTerminal({})))
    const outputs = terminals.map((terminal) => terminal.output({ signal: window.signal }))
    const waiting = outputs.map((output) => output.next())
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(1)
    expect(await maxListeners.seen()).toEqual([])

    // One tab closes its loop: the others still wait on the signal.
    await outputs[0]?.return?.()
    await expect(waiting[0]).resolves.toEqual({ done: true, value: undefined })
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(1)

    window.abort()
    for (const pending of waiting) await expect(pending).resolves.toEqual({ done: true, value: undefined })
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(0)
    await h.run(h.controller.dispose())
  })

  it('the listener goes with the last iterator, at its exit or its return, and comes back with a new one', async () => {
    const h = createHarness()
    const window = new AbortController()
    const terminals = await Promise.all(Array.from({ length: TABS }, () => h.controller.spawnTerminal({})))
    const outputs = terminals.map((terminal) => terminal.output({ signal: window.signal }))
    for (const terminal of terminals.slice(1)) h.provider.emitExit(terminal.id, { exitCode: 0 })
    await h.settle()
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(1)
    await outputs[0]?.return?.()
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(0)

    const again = terminals[0]!.output({ signal: window.signal })
    const next = again.next()
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(1)
    window.abort()
    await expect(next).resolves.toEqual({ done: true, value: undefined })
    expect(getEventListeners(window.signal, 'abort')).toHaveLength(0)
    await h.run(h.controller.dispose())
  })
})
