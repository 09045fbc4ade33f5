/**
 * A liveness probe is fenced to the incarnation asked about: two apps share a host, app A's
 * `term-1` dies while A's connection is down, and app B spawns a new `term-1`. A's probe of its
 * PTY must never be answered `true` about B's process (before, the host answered by id: `true`).
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { toPtyIncarnationId } from 'ptykit/contracts'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { describe, expect, it } from 'vitest'
import { fakeHost, inProcessHost, onceConnectedAgain, ptyDiedWhileDisconnected, rawClient, spawnAsAnotherApp, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('the host answers a probe about the incarnation it names', () => {
  it("answers false for an incarnation that is not the id's live one, never true about the live one", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app1 = await rawClient(socketPath)
    cleanups.push(async () => app1.close())
    const spawned = await app1.request('spawn', { sessionId: 'term-1', file: '/bin/sh', args: ['-c', 'exec sleep 60'] })
    expect(spawned.ok).toBe(true)
    const first = spawned.result as { incarnationId: string; pid: number }
    const probe = async (params: Record<string, unknown>): Promise<unknown> => (await app1.request('probe', { ptyId: 'term-1', ...params })).result
    expect(await probe({})).toBe(true)
    expect(await probe({ expectedIncarnationId: first.incarnationId })).toBe(true)
    expect(await probe({ expectedIncarnationId: 'an-earlier-incarnation' })).toBe(false)
    // The first process ends; another app takes the id.
    process.kill(first.pid, 'SIGKILL')
    const { app2, second } = await spawnAsAnotherApp(cleanups, socketPath, ['-c', 'exec sleep 60'])
    expect(await probe({ expectedIncarnationId: first.incarnationId })).toBe(false)
    expect(await probe({ expectedIncarnationId: second.incarnationId })).toBe(true)
    // By id, as before: whatever process holds it.
    expect(await probe({})).toBe(true)
    await app2.request('shutdown', { ptyId: 'term-1', immediate: true, expectedIncarnationId: second.incarnationId })
  })
})

describe('two apps on one host', () => {
  it('an app whose PTY died while its connection was down is never told it lives when another app spawned the id since', async () => {
    const { socketPath, provider1, first } = await ptyDiedWhileDisconnected(cleanups)
    const { app2, second } = await spawnAsAnotherApp(cleanups, socketPath, ['-c', 'exec sleep 60'])
    // App 1 probes the moment its provider is connected again (before its re-attach settled the PTY).
    const answers = await onceConnectedAgain(provider1, () =>
      Promise.all([provider1.probeLiveness('term-1'), provider1.probeLiveness('term-1', { incarnationId: first.incarnationId! })]),
    )
    expect(answers).toEqual([false, false])
    // Another app's process is not this app's to answer for, but asked about it by its incarnation: live.
    expect(await provider1.probeLiveness('term-1', { incarnationId: toPtyIncarnationId(second.incarnationId) })).toBe(true)
    await app2.request('shutdown', { ptyId: 'term-1', immediate: true, expectedIncarnationId: second.incarnationId })
  })
})

describe('an older host, which answers a probe by id', () => {
  /**
   * A host that does not say it fences probes (`probeFencesIncarnation`): its `probe` answers
   * `true` (by id), its listing has `term-1` under `listed`.
   */
  async function olderHost(listed: string, welcome: Record<string, unknown> = {}): Promise<{ socketPath: string; asked: string[] }> {
    const asked: string[] = []
    const host = await fakeHost(
      (message, socket) => {
        if (message.type !== 'request') return
        asked.push(String(message.method))
        const result = message.method === 'probe' ? true : message.method === 'list' ? [{ id: 'term-1', incarnationId: listed, pid: 1, cwd: null, title: 'sh' }] : null
        socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result }))
      },
      { welcome },
    )
    cleanups.push(() => host.close())
    return { socketPath: host.socketPath, asked }
  }

  it('has its true checked against its listing: null when the id lists another incarnation, true when it lists the one asked about', async () => {
    const other = await olderHost('inc-2')
    const provider = createPtyHostProvider({ socketPath: other.socketPath, autoStart: false })
    cleanups.push(() => provider.dispose())
    await provider.listProcesses()
    expect(await provider.probeLiveness('term-1', { incarnationId: toPtyIncarnationId('inc-1') })).toBeNull()
    expect(await provider.probeLiveness('term-1', { incarnationId: toPtyIncarnationId('inc-2') })).toBe(true)
    // Asked by id, the host's answer stands.
    expect(await provider.probeLiveness('term-1')).toBe(true)
  })

  it('a host that says it fences probes is taken at its word (no listing)', async () => {
    const fencing = await olderHost('inc-2', { probeFencesIncarnation: true })
    const provider = createPtyHostProvider({ socketPath: fencing.socketPath, autoStart: false })
    cleanups.push(() => provider.dispose())
    await provider.listProcesses()
    fencing.asked.length = 0
    expect(await provider.probeLiveness('term-1', { incarnationId: toPtyIncarnationId('inc-1') })).toBe(true)
    expect(fencing.asked).toEqual(['probe'])
  })
})
