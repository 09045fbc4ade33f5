/**
 * getting-started step 3: a spawn's `command` is typed before the writes the caller makes right
 * after `spawn()` resolves (they are queued behind it), so input reaches the shell in order.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, waitFor } from './pty-test-support.js'

const provider = createNodePtyProvider()
const controller = createPtyController({ provider })

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

describe('launch command order', () => {
  it('writes made right after spawn() resolves run after the launch command', async () => {
    let output = ''
    controller.on('data', ({ data }) => {
      output += data
    })
    // The arithmetic makes the results differ from the echoed input lines.
    const { id } = await controller.spawn({ file: '/bin/sh', command: 'echo LAUNCH$((40+2))' })
    expect(controller.write(id, 'echo CALLER$((50+5))\r', 'driving')).toBe(true)
    await waitFor(() => (output.includes('LAUNCH42') && output.includes('CALLER55') ? true : undefined), 'both outputs', 10_000)
    expect(output.indexOf('LAUNCH42')).toBeLessThan(output.indexOf('CALLER55'))
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  })
})
