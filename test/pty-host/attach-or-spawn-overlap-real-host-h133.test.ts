/**
 * helper-133: with a real (in-process) pty host, `spawn({ sessionId })` (attach, else spawn) and an
 * attach-only restore of the same absent id, asked in the same turn (two restore paths of a window).
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { inProcessHost, useCleanups } from './pty-host-test-support.js'

describe('pty host provider: attach-or-spawn overlapping an attach-only restore (real host, helper-133)', () => {
  const cleanups = useCleanups()
  it('the spawn is not refused as pty_id_in_use when no PTY holds the id', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = createPtyHostProvider({ socketPath, autoStart: false })
    cleanups.push(() => app.dispose().catch(() => undefined))
    const outcomes: string[] = []
    for (let round = 0; round < 20; round++) {
      const id = `s${round}`
      const create = app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 5'], sessionId: id })
      const restore = app.attach(id)
      const [created, restored] = await Promise.allSettled([create, restore])
      outcomes.push(`${created.status === 'fulfilled' ? 'spawned' : (created.reason as { code: string }).code}/${restored.status === 'fulfilled' ? 'attached' : (restored.reason as { code: string }).code}`)
      if (created.status === 'fulfilled') await app.shutdown(id, { immediate: true })
    }
    expect(outcomes.filter((outcome) => outcome.startsWith('pty_id_in_use'))).toEqual([])
  }, 20_000)
})
