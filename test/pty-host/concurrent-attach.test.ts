import { createPtyController } from 'ptykit/controller'
import { describe, expect, it } from 'vitest'
import { killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const ticker = { file: '/bin/sh', args: ['-c', 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done'] }

function ticksOk(text: string): { ok: boolean; numbers: number[] } {
  const numbers = [...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]))
  return { ok: numbers.length > 0 && numbers[0] === 1 && numbers.every((n, i) => n === i + 1), numbers }
}

describe('the new window re-attaches the same session twice at once (two restore paths)', () => {
  // `provider`: the window's other restore path asks the pty host provider itself (before: the
  // controller's seq counted the provider attach's replay twice, seq 198 for 99 chars — that replay
  // raced the controller's attach, and the provider's answer placed the stream after it).
  it.each(['controller', 'provider'] as const)('a %s attach and a controller.attach(id) at once: one stream, its retained output replayed once, seq counting what arrived', async (other) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const p1 = providerOn(socketPath, { idleExitMs: 1_500 })
    const c1 = createPtyController({ provider: p1 })
    const ids = (await Promise.all(Array.from({ length: 10 }, () => c1.spawn(ticker)))).map((r) => r.id)
    await new Promise((r) => setTimeout(r, 500))
    await p1.detach()
    await c1.dispose({ stopPtys: false })

    const p2 = providerOn(socketPath, { idleExitMs: 1_500 })
    const c2 = createPtyController({ provider: p2 })
    cleanups.push(async () => {
      await c2.dispose()
      await p2.dispose()
    })
    const text = new Map<string, string>()
    const seqBad: string[] = []
    c2.on('data', ({ ptyId, data, seq }) => {
      text.set(ptyId, (text.get(ptyId) ?? '') + data)
      if (seq !== text.get(ptyId)!.length) seqBad.push(`${ptyId} seq ${seq} vs ${text.get(ptyId)!.length}`)
    })
    const spawnEvents: string[] = []
    c2.on('spawn', ({ ptyId }) => spawnEvents.push(ptyId))
    const results = await Promise.all(ids.flatMap((id) => [other === 'controller' ? c2.attach(id) : p2.attach(id).then(() => true), c2.attach(id)]))
    expect(results.every((attached) => attached === true)).toBe(true)
    await new Promise((r) => setTimeout(r, 600))
    // Every stream counts tick 1, 2, 3 … once (before: 1…11, then 1, 2, 3 … again).
    const broken = ids.filter((id) => !ticksOk(text.get(id) ?? '').ok).map((id) => `${id}: ${ticksOk(text.get(id) ?? '').numbers.slice(0, 30).join(',')}`)
    expect(broken).toEqual([])
    expect(seqBad.slice(0, 3)).toEqual([])
    expect(new Set(spawnEvents).size).toBe(ids.length)
  }, 30_000)
})
