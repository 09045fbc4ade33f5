/**
 * A write is fenced to the incarnation the app wrote to (helper-115's audit): an app whose PTY
 * ended while its connection was down must never write into another app's PTY spawned since under
 * the same id — its write was `accepted` and the bytes went into the other process.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import { createPtyHostProvider } from 'ptykit/pty-host'
import { expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, onceConnectedAgain, ptyDiedWhileDisconnected, rawClient, spawnAsAnotherApp, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

it("a write the host receives for an incarnation that is not the id's live one is refused stale_incarnation, and reaches nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ptykit-write-fence-'))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const sink = join(dir, 'sink.txt')
  const { socketPath } = await inProcessHost(cleanups)
  const client = await rawClient(socketPath)
  cleanups.push(async () => client.close())
  const spawned = await client.request('spawn', { sessionId: 'term-1', file: '/bin/sh', args: ['-c', `cat > '${sink}'`] })
  expect(spawned.ok).toBe(true)
  const { incarnationId } = spawned.result as { incarnationId: string }
  const stale = await client.request('write', { ptyId: 'term-1', data: 'INTRUDER\n', expectedIncarnationId: 'an-earlier-incarnation' })
  expect(stale.result).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
  const own = await client.request('write', { ptyId: 'term-1', data: 'mine\n', expectedIncarnationId: incarnationId })
  expect(own.result).toEqual({ kind: 'accepted' })
  // Waits for the accepted write to reach the sink (a fixed 200 ms was too short on a loaded
  // machine). It was sent after the refused one: had that gone through, it would be there first.
  const got = await waitFor(() => {
    const text = existsSync(sink) ? readFileSync(sink, 'utf8') : ''
    return text.includes('mine') ? text : undefined
  }, "the accepted write 'mine' in the sink", 15_000)
  expect(got).not.toContain('INTRUDER')
})

it('an app whose PTY died while its connection was down writes nothing into the PTY another app spawned since under that id', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ptykit-write-fence-'))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const sink = join(dir, 'sink.txt')
  const { host, socketPath } = await inProcessHost(cleanups)
  const provider1 = createPtyHostProvider({ socketPath, autoStart: false })
  const controller1 = createPtyController({ provider: provider1 })
  cleanups.push(() => controller1.dispose({ stopPtys: false }).then(() => provider1.dispose()))
  const first = await controller1.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'], sessionId: 'term-1', isNewSession: true })
  process.kill(first.pid!, 'SIGKILL')
  host.dropConnections()
  // Another app takes the id as soon as the host has let go of the dead PTY.
  await spawnAsAnotherApp(cleanups, socketPath, ['-c', `cat > '${sink}'`])
  // App 1 writes the moment its provider is connected again (a queued keystroke).
  const settlement = await onceConnectedAgain(provider1, () => controller1.writeWithSettlement('term-1', 'INTRUDER\n', 'driving'))
  expect(settlement).toMatchObject({ kind: 'refused' })
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(existsSync(sink) ? readFileSync(sink, 'utf8') : '').not.toContain('INTRUDER')
})

it('a direct provider.shutdown(id) of a PTY the app held stops only that incarnation, never the PTY another app spawned since under the id', async () => {
  const { socketPath, provider1 } = await ptyDiedWhileDisconnected(cleanups)
  const { app2, second } = await spawnAsAnotherApp(cleanups, socketPath, ['-c', 'exec sleep 60'])
  await provider1.shutdown('term-1', { immediate: true, timeoutMs: 2_000 }).catch(() => undefined)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const probe = await app2.request('probe', { ptyId: 'term-1' })
  expect(probe.result).toBe(true)
  await app2.request('shutdown', { ptyId: 'term-1', immediate: true, expectedIncarnationId: second.incarnationId })
})
