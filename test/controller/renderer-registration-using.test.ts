import { describe, expect, expectTypeOf, it } from 'vitest'
import type { PtyDisposable } from '../../src/contracts/index.js'
import { createHarness } from './controller-harness.js'

// A renderer's registration ends with the view that made it: `using registration =
// controller.registerRendererSerializer(…)` releases it at the end of the scope, as `using sub =
// terminal.onData(…)` does a subscription. Before, the registration had `dispose()` only: `using`
// did not compile (TS2850), and at run time it threw "Object is not disposable".
describe('registerRendererSerializer and `using`', () => {
  it('the registration is released at the end of the scope', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    {
      using registration = h.controller.registerRendererSerializer(id, () => ({ data: 'screen', cols: 80, rows: 24 }))
      expectTypeOf(registration).toMatchTypeOf<PtyDisposable & Disposable>()
      expect(h.controller.hasRendererSerializer(id)).toBe(true)
    }
    expect(h.controller.hasRendererSerializer(id)).toBe(false)
    await h.run(h.controller.dispose())
  })

  it('a registration made after dispose (it holds nothing) is Disposable too', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await h.run(h.controller.dispose())
    {
      using registration = h.controller.registerRendererSerializer(id, () => ({ data: 'late', cols: 1, rows: 1 }))
      expect(registration[Symbol.dispose]).toBe(registration.dispose)
    }
    expect(h.controller.hasRendererSerializer(id)).toBe(false)
  })
})
