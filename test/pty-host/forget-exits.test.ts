/**
 * `provider.forgetExits(exits)` (docs/pty-host.md, "Forgetting exits"): an app forgets the exits
 * it has dealt with, in the host and its journal. Before, nothing did: `listExits()` gave an app
 * the same exits at every restart — for weeks, of every host after the first, which read them from
 * the journal — until 1 024 newer ones pushed them out, and a host closed by `stopPtyHost` left
 * its journal behind because of them.
 */
import { existsSync } from 'node:fs'
import type { PtyExitEvent } from 'ptykit/contracts'
import { isPtyHostError, stopPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { PTY_HOST_METHODS } from '../../src/pty-host/protocol.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { olderHostInFrontOf } from './older-host-proxy.js'
import { hostFixture, inProcessHost, killHost, providerDisposedAfter, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** Spawn `sh -c 'exit <code>'` for each code, one after the other; the exits as listExits() gives them. */
async function endedWith(app: PtyHostProvider, codes: number[]): Promise<PtyExitEvent[]> {
  const ids: string[] = []
  for (const code of codes) {
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `exit ${code}`] })
    ids.push(id)
    await waitFor(async () => ((await app.listExits()).some((exit) => exit.id === id) ? true : undefined), `the exit ${code}`)
  }
  const exits = await app.listExits()
  return ids.map((id) => exits.find((exit) => exit.id === id)!)
}

describe('pty host: forgetExits', () => {
  it('forgets the exits named, in the host and in its journal: the next host (after a SIGKILL) does not list them; a host closed with none left removes its journal', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath)
    const [three, four, five] = await endedWith(app, [3, 4, 5])
    expect(three).toMatchObject({ code: 3, incarnationId: expect.any(String) })

    // Of another incarnation than the one remembered under the id (a later one's, say): kept.
    expect(await app.forgetExits([{ id: three!.id, incarnationId: 'another-incarnation' }, { id: four!.id }])).toBe(0)
    expect(await app.forgetExits([three!, four!])).toBe(2)
    expect((await app.listExits()).map((exit) => exit.id)).toEqual([five!.id])
    // Asked again: nothing left to forget.
    expect(await app.forgetExits([three!, four!])).toBe(0)
    expect(await app.forgetExits([])).toBe(0)

    // The journal was rewritten without them: a host that takes the place of this one, killed,
    // lists only the exit not forgotten.
    await killHost(socketPath)
    const next = providerDisposedAfter(cleanups, socketPath)
    await next.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    await waitFor(async () => ((await next.listExits()).length === 2 ? true : undefined), 'the new exit')
    const listed = await next.listExits()
    expect(listed.map((exit) => exit.id)).not.toContain(three!.id)
    expect(listed[0]).toMatchObject({ id: five!.id, code: 5, incarnationId: five!.incarnationId, cause: { kind: 'exited', exitCode: 5 } })

    // Every exit forgotten, nothing open: the host closed on request leaves no journal.
    expect(await next.forgetExits(listed)).toBe(2)
    expect(await next.listExits()).toEqual([])
    expect(await stopPtyHost({ socketPath })).toBe(true)
    expect(existsSync(`${socketPath}.journal`)).toBe(false)
  })

  it('after dispose() it rejects provider_disposed naming the method, as every other promise-answering call (the rule of PtyProvider.dispose)', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath)
    const [ended] = await endedWith(app, [3])
    await app.dispose()
    // A rejection, not a synchronous throw: the caller's `await … .catch()` sees it.
    const answer = app.forgetExits([ended!])
    expect(answer).toBeInstanceOf(Promise)
    await expect(answer).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`forgetExits`') })
  })

  // Found in review (helper-214): after detach() an empty list resolved 0 (answered before the
  // link was looked at), where listExits and a non-empty forgetExits reject provider_detached.
  it('after detach() it rejects provider_detached as listExits does, of an empty list too', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath)
    const [ended] = await endedWith(app, [3])
    await app.detach()
    await expect(app.listExits()).rejects.toMatchObject({ code: 'provider_detached' })
    await expect(app.forgetExits([ended!])).rejects.toMatchObject({ code: 'provider_detached' })
    await expect(app.forgetExits([])).rejects.toMatchObject({ code: 'provider_detached' })
  })

  it('refuses a malformed argument, naming the part and the value, before asking the host; the host refuses a malformed request the same way', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath)
    await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    const refusal = async (call: Promise<unknown>): Promise<unknown> => {
      const error = await call.then(() => undefined, (caught: unknown) => caught)
      return isPtyHostError(error) ? { code: error.code, option: error.option, value: error.value } : error
    }
    expect(await refusal(app.forgetExits('all' as never))).toEqual({ code: 'invalid_option', option: 'exits', value: 'all' })
    expect(await refusal(app.forgetExits([null as never]))).toEqual({ code: 'invalid_option', option: 'exits[0]', value: null })
    expect(await refusal(app.forgetExits([{ id: 'a' }, { id: 5 } as never]))).toEqual({ code: 'invalid_option', option: 'exits[1].id', value: 5 })
    expect(await refusal(app.forgetExits([{ id: 'a', incarnationId: 7 } as never]))).toEqual({ code: 'invalid_option', option: 'exits[0].incarnationId', value: 7 })

    const tool = await rawClient(socketPath)
    cleanups.push(async () => tool.close())
    const reply = await tool.request('forgetExits', { exits: [{ ptyId: '' }] })
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'exits[0].ptyId' } })
    expect(await tool.request('forgetExits', { exits: {} })).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'exits' } })
  })

  it.each([
    ['a host that lists its methods, without forgetExits', PTY_HOST_METHODS.filter((method) => method !== 'forgetExits')],
    ['a host of ptykit 0.1.0 (no methods listed)', undefined],
  ] as const)('%s is not asked: protocol_mismatch, nothing sent, the connection kept', async (_name, methods) => {
    const real = await inProcessHost(cleanups)
    const sent: string[] = []
    const { socketPath } = await olderHostInFrontOf(cleanups, real.socketPath, {
      welcome(welcome) {
        if (methods === undefined) delete welcome['methods']
        else welcome['methods'] = methods
      },
      onAppMessage(message) {
        if (message.type === 'request' || message.type === 'notify') sent.push(String(message.method))
        // What an older host does with a method it does not know.
        return message.method === 'forgetExits' ? 'drop-connection' : 'forward'
      },
    })
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    const error = await app.forgetExits([{ id }]).then(() => undefined, (caught: unknown) => caught)
    expect(isPtyHostError(error) && error.code).toBe('protocol_mismatch')
    expect(sent).not.toContain('forgetExits')
    expect(app.connected).toBe(true)
  })
})
