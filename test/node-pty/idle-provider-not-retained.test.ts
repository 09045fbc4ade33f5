/**
 * A node-pty provider nobody disposed, whose PTYs all ended: an orchestrator that makes a provider
 * per job, a test suite that makes one per test. `killOnProcessExit` registers the provider with
 * the process-wide exit guard at its first spawn; it stayed registered until `dispose`, so the
 * guard kept every such provider alive (~50 KB each: 300 undisposed providers of one ended PTY each
 * held 16 MB), found by helper-160. It now leaves the guard once no session may have processes
 * left (its kill would find nothing), and comes back at the next spawn.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, type NodePtyProvider } from '../../src/node-pty/index.js'
import { PtyEventLog } from './pty-test-support.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** How many providers the process-wide exit guard holds now (its registry, shared by every copy of ptykit). */
function guarded(): number {
  const registry = (globalThis as Record<symbol, { killers: Set<unknown> } | undefined>)[Symbol.for('ptykit.processExitGuard.v1')]
  return registry?.killers.size ?? 0
}

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let round = 0; round < 5 && ref.deref() !== undefined; round++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
  return ref.deref() === undefined
}

/** Spawn `sh -c <script>` and wait for its exit. */
async function runToEnd(provider: NodePtyProvider, script: string): Promise<void> {
  const log = new PtyEventLog(provider)
  const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', script] })
  await log.exitOf(id)
}

describe('an undisposed node-pty provider whose PTYs all ended', () => {
  it('is not kept alive by the process exit guard', async () => {
    const before = guarded()
    const ref = await (async () => {
      const provider = createNodePtyProvider()
      await runToEnd(provider, 'exit 0')
      return new WeakRef(provider)
    })()
    expect(guarded()).toBe(before)
    expect(await collected(ref)).toBe(true)
  })

  it('holds the guard again while a later PTY runs', async () => {
    const before = guarded()
    const provider = createNodePtyProvider()
    await runToEnd(provider, 'exit 0')
    expect(guarded()).toBe(before)
    const { id } = await provider.spawn({ file: '/bin/sleep', args: ['60'] })
    expect(guarded()).toBe(before + 1)
    await provider.shutdown(id, { timeoutMs: 5_000 })
    expect(guarded()).toBe(before)
    await provider.dispose()
  })
})
