/**
 * Options of a stop or an attach that the host would misread: it read an `expectedIncarnationId`
 * that is no string as none — the stop then ended whatever process held the id, where the node-pty
 * provider stops nothing, and the attach followed whatever process held it — and a `keepHistory`
 * that is not `true` as `false`. Each is refused naming the option and the value, nothing stopped.
 */
import { isPtyHostError } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { isAlive, inProcessHost, providerDisposedAfter, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: malformed fences and stop options', () => {
  it('the provider refuses them before sending anything: the PTY keeps running, its history kept', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const pty = await app.spawn({ file: '/bin/sh', args: ['-c', 'echo KEEP-ME; exec sleep 60'], sessionId: 'term-1', isNewSession: true })
    const refusals: [Record<string, unknown>, string][] = [
      [{ expectedIncarnationId: null }, 'expectedIncarnationId'],
      [{ expectedIncarnationId: 5 }, 'expectedIncarnationId'],
      [{ expectedIncarnationId: '' }, 'expectedIncarnationId'],
      [{ keepHistory: 'yes' }, 'keepHistory'],
      [{ immediate: 1 }, 'immediate'],
    ]
    for (const [options, option] of refusals) {
      const refused = await app.shutdown(pty.id, options as never).catch((error: unknown) => error)
      expect(isPtyHostError(refused) && [refused.code, refused.option, refused.value]).toEqual(['invalid_option', option, Object.values(options)[0]])
    }
    // Another app attaches with a fence that is no incarnation id: refused, nothing followed.
    const other = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const attach = await other.attach(pty.id, { expectedIncarnationId: 5 as never }).catch((error: unknown) => error)
    expect(isPtyHostError(attach) && [attach.code, attach.option, attach.value]).toEqual(['invalid_option', 'expectedIncarnationId', 5])
    for (const options of [null, 5]) {
      const bag = await other.attach(pty.id, options as never).catch((error: unknown) => error)
      expect(isPtyHostError(bag) && [bag.code, bag.option, bag.value]).toEqual(['invalid_option', 'options', options])
    }
    const viaSpawn = await other.spawn({ sessionId: pty.id, attachOnly: true, expectedIncarnationId: {} as never }).catch((error: unknown) => error)
    expect(isPtyHostError(viaSpawn) && [viaSpawn.code, viaSpawn.option]).toEqual(['invalid_option', 'expectedIncarnationId'])
    expect(other.hasPty(pty.id)).toBeNull()
    expect(isAlive(pty.pid!)).toBe(true)
    expect((await app.listProcesses()).map((row) => row.id)).toEqual([pty.id])
    // A well-formed stop still works, keeping the history it was asked to keep.
    await app.shutdown(pty.id, { keepHistory: true, expectedIncarnationId: pty.incarnationId! })
    expect((await app.getBufferSnapshot(pty.id))?.data).toContain('KEEP-ME')
  }, 30_000)

  it('the host refuses them too (an app that does not check): nothing stopped, nothing attached', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    const spawned = await client.request('spawn', { sessionId: 'term-1', file: '/bin/sh', args: ['-c', 'exec sleep 60'] })
    const { pid } = spawned.result as { pid: number }
    for (const [params, option] of [
      [{ expectedIncarnationId: 5 }, 'expectedIncarnationId'],
      [{ expectedIncarnationId: null }, 'expectedIncarnationId'],
      [{ keepHistory: 'yes' }, 'keepHistory'],
      [{ immediate: 'yes' }, 'immediate'],
    ] as const) {
      expect(await client.request('shutdown', { ptyId: 'term-1', ...params })).toMatchObject({ ok: false, error: { code: 'invalid_option', option } })
    }
    const other = await rawClient(socketPath)
    cleanups.push(async () => other.close())
    expect(await other.request('attach', { ptyId: 'term-1', fromSeq: null, expectedIncarnationId: 5 })).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'expectedIncarnationId' } })
    expect(isAlive(pid)).toBe(true)
    expect(await client.request('shutdown', { ptyId: 'term-1', immediate: true })).toMatchObject({ ok: true })
  }, 30_000)
})
