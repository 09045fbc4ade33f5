import { describe, expect, it } from 'vitest'
import { createHarness } from './controller-harness.js'

const CHUNK = 'x'.repeat(1_000)

// An `output()` iterator pulled by hand (`output.next()`, not `for await`) holds what it yielded
// until it is let go of. `await using output = terminal.output()` lets go at the end of the scope,
// as `break` does a loop's — the other disposables of the API (controller, terminal, providers)
// support `await using`. Before, the iterator had `return()` only: `await using` did not compile
// (TS2851), and at run time it threw "Object is not disposable".
describe('terminal.output() and `await using`', () => {
  it('the iterator releases its hold at the end of the scope: what it held is acknowledged', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    // The consumer also acknowledges on its own: flow control stays engaged after the iterator leaves.
    terminal.acknowledgeData(0)
    {
      await using output = terminal.output()
      const next = output.next()
      h.provider.emitData(terminal.id, CHUNK)
      expect((await next).value).toBe(CHUNK)
      // Held until it is let go of.
      expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(CHUNK.length)
    }
    expect(h.controller.getFlowControlState(terminal.id)?.unacknowledgedChars).toBe(0)
    await h.run(h.controller.dispose())
  })

  it('a disposed iterator is done', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const output = terminal.output()
    await output[Symbol.asyncDispose]()
    h.provider.emitData(terminal.id, CHUNK)
    await expect(output.next()).resolves.toEqual({ done: true, value: undefined })
    await h.run(h.controller.dispose())
  })
})
