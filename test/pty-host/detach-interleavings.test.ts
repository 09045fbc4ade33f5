import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, inProcessHost, isAlive, killHost, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const outcome = (pending: Promise<{ id: string }>): Promise<string> =>
  pending.then(
    () => 'resolved',
    (error: { code?: string; processMayExist?: boolean }) => `${error.code}${error.processMayExist === true ? ' (may exist)' : ''}`,
  )

describe('detach() interleavings that are fine', () => {
  it('detach while the spawn waits to connect (no host yet): refused provider_detached at once, no host started, no session left', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const app = providerOn(socketPath)
    const spawning = outcome(app.spawn({ file: 'cat' }))
    const started = Date.now()
    await app.detach()
    expect(Date.now() - started).toBeLessThan(200)
    expect(await spawning).toBe('provider_detached')
    // The connect's poll ends at the detach: it starts no host for a provider nobody will use
    // (until 7 Dec it started one after the detach, which then idled out).
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(hostPid(socketPath)).toBeNull()
  }, 30_000)

  it('the connection drops while detach waits for spawns: they fail "may exist", the detach ends, the host keeps none of them', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = createPtyHostProvider({ socketPath, autoStart: false })
    const kept = await app.spawn({ file: 'cat' })
    const spawning = Array.from({ length: 5 }, () => outcome(app.spawn({ file: 'cat' })))
    const detaching = app.detach()
    setImmediate(() => host.dropConnections())
    const outcomes = await Promise.all(spawning)
    await detaching
    const next = createPtyHostProvider({ socketPath, autoStart: false })
    cleanups.push(() => next.detach())
    await new Promise((resolve) => setTimeout(resolve, 500))
    const listed = (await next.listProcesses()).map((row) => row.id)
    // Each spawn either resolved (its session listed) or failed "may exist" (its session stopped).
    expect(listed.length).toBe(1 + outcomes.filter((o) => o === 'resolved').length)
    expect(listed).toContain(kept.id)
    for (const o of outcomes) expect(['resolved', 'transport_lost (may exist)']).toContain(o)
  }, 30_000)

  it('detach while reconnecting after a drop: it ends at once; a spawn waiting on the reconnect is refused', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = createPtyHostProvider({ socketPath, autoStart: false })
    await app.spawn({ file: 'cat' })
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop to be seen')
    const spawning = outcome(app.spawn({ file: 'cat' }))
    const started = Date.now()
    await app.detach()
    expect(Date.now() - started).toBeLessThan(200)
    expect(await spawning).toBe('provider_detached')
    expect(app.connected).toBe(false)
  }, 30_000)

  it('the host dies while detach waits for a spawn: the spawn fails "may exist", the detach ends', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const app = providerOn(socketPath)
    await app.spawn({ file: 'cat' })
    const spawning = outcome(app.spawn({ file: 'sh', args: ['-c', 'sleep 60'] }))
    const detaching = app.detach()
    await killHost(socketPath)
    expect(await spawning).toMatch(/^(resolved|transport_lost \(may exist\))$/)
    await detaching
    expect(app.connected).toBe(false)
    expect(isAlive(process.pid)).toBe(true)
  }, 30_000)
})
