import { describe, expect, it } from 'vitest'
import { killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function hostFixture(): { dir: string; socketPath: string } {
  const fixture = makeSocketDir()
  cleanups.push(() => killHostAndClean(fixture.socketPath, fixture.dir))
  return fixture
}

const outcome = (pending: Promise<{ id: string }>): Promise<string> =>
  pending.then(
    () => 'resolved',
    (error: { code?: string }) => String(error.code),
  )

describe('h129: spawns asked for before detach() began', () => {
  // docs/pty-host.md: the spawns already sent finish; "a spawn or attach asked for once the detach
  // began is refused". A spawn with a session id (attach-or-spawn) and an attach asked for in the
  // same turn, before detach(), are refused too: unlike a fresh spawn they are sent a turn later.
  it('on an open connection, every kind of spawn asked for before detach() is treated alike', async () => {
    const { socketPath } = hostFixture()
    const app = providerOn(socketPath)
    cleanups.push(() => app.detach())
    const live = await app.spawn({ file: 'cat' })
    const fresh = outcome(app.spawn({ file: 'cat' }))
    const attachOrSpawn = outcome(app.spawn({ file: 'cat', sessionId: 'h129-restored' }))
    const attachOnly = outcome(app.spawn({ file: 'cat', sessionId: live.id, attachOnly: true }))
    const attached = outcome(app.attach(live.id))
    await app.detach()
    expect({ fresh: await fresh, attachOrSpawn: await attachOrSpawn, attachOnly: await attachOnly, attached: await attached }).toEqual({
      fresh: 'resolved',
      attachOrSpawn: 'resolved',
      attachOnly: 'resolved',
      attached: 'resolved',
    })
  }, 30_000)
})
