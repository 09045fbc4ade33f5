/**
 * A session id the host's output frames cannot carry (they give a PTY's id a 16-bit length, and
 * carry it as UTF-8): a spawn under a longer one was accepted, and every flush of output to its
 * app then threw in the host — that app's other sessions got no output, no exit and no reply
 * again (a write to one of them settled `settlement_timeout` after 30 s), while the host logged an
 * uncaught RangeError per flush. One with a lone surrogate lost all its output without a word: the
 * frames named it with U+FFFD in its place, an id the app did not know (its exit, in JSON, came).
 */
import { createPtyController } from 'ptykit/controller'
import { isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import { isPtySpawnError } from 'ptykit/spawn'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { PTY_HOST_MAX_SESSION_ID_BYTES } from '../../src/pty-host/protocol.js'
import { inProcessHost, providerDisposedAfter, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** An app on an in-process host, with a bystander PTY whose output and exit it records. */
async function appWithBystander(): Promise<{ socketPath: string; app: PtyHostProvider; output: Map<string, string>; exits: Map<string, unknown> }> {
  const { socketPath } = await inProcessHost(cleanups)
  const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
  const output = new Map<string, string>()
  const exits = new Map<string, unknown>()
  app.onData(({ id, data }) => output.set(id, (output.get(id) ?? '') + data))
  app.onExit(({ id, cause }) => exits.set(id, cause))
  return { socketPath, app, output, exits }
}

describe('pty host: a session id longer than an output frame carries', () => {
  it('is refused naming sessionId, nothing started, by every spawn path and attach; the app’s other sessions carry on', async () => {
    const { app, output, exits } = await appWithBystander()
    const bystander = await app.spawn({ file: '/bin/sh', args: ['-c', 'read line; echo "got-$line"; exit 3'] })
    // Short in chars, long in bytes (80 000 UTF-8 bytes), long in both, and lone surrogates.
    for (const id of ['é'.repeat(40_000), 'x'.repeat(PTY_HOST_MAX_SESSION_ID_BYTES + 1), 'term-\ud800-1', 'term-\udc00', 'term-\ud83d']) {
      for (const options of [
        { file: '/bin/sh', args: ['-c', 'echo HI'], sessionId: id, isNewSession: true },
        { file: '/bin/sh', args: ['-c', 'echo HI'], sessionId: id },
        { sessionId: id, attachOnly: true },
      ]) {
        const refused = await app.spawn(options).catch((error: unknown) => error)
        expect(isPtyHostError(refused) && [refused.code, refused.option, refused.value === id]).toEqual(['invalid_spawn_option', 'sessionId', true])
        expect((refused as Error).message).toContain(id.length < 100 ? 'of well-formed Unicode (no lone surrogate' : `at most ${PTY_HOST_MAX_SESSION_ID_BYTES} UTF-8 bytes`)
      }
      const attach = await app.attach(id).catch((error: unknown) => error)
      expect(isPtyHostError(attach) && [attach.code, attach.option]).toEqual(['invalid_option', 'sessionId'])
    }
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const viaController = await controller.spawn({ file: '/bin/sh', sessionId: 'x'.repeat(70_000) }).catch((error: unknown) => error)
    expect(isPtySpawnError(viaController) && [viaController.code, viaController.option, viaController.outcome]).toEqual(['invalid_spawn_options', 'sessionId', 'not_started'])
    expect(await app.listProcesses()).toHaveLength(1)
    // The connection carries on: the bystander reads, prints and exits, each seen by the app.
    expect(await app.write(bystander.id, 'ping\r')).toEqual({ kind: 'accepted' })
    await waitFor(() => exits.get(bystander.id), 'the bystander’s exit', 10_000)
    expect(output.get(bystander.id)).toContain('got-ping')
    expect(exits.get(bystander.id)).toEqual({ kind: 'exited', exitCode: 3 })
  }, 30_000)

  it.each([
    ['the longest id the frames carry', 'x'.repeat(PTY_HOST_MAX_SESSION_ID_BYTES)],
    ['an id of astral characters (surrogate pairs)', 'term-\u{1F600}-\u{1D11E}'],
  ])('%s works: its output and exit arrive', async (_, id) => {
    const { app, output, exits } = await appWithBystander()
    await app.spawn({ file: '/bin/sh', args: ['-c', 'echo LONGEST; exit 4'], sessionId: id, isNewSession: true })
    await waitFor(() => exits.get(id), 'its exit', 10_000)
    expect(output.get(id)).toContain('LONGEST')
    expect(exits.get(id)).toEqual({ kind: 'exited', exitCode: 4 })
  }, 30_000)

  it('the host refuses it too (an app that does not check), and the connection carries on', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    for (const sessionId of ['x'.repeat(70_000), 'term-\ud800']) {
      const reply = await client.request('spawn', { sessionId, file: '/bin/sh', args: ['-c', 'echo HI'] })
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_spawn_option', option: 'sessionId' } })
    }
    expect(await client.request('list', {})).toMatchObject({ ok: true, result: [] })
  }, 30_000)
})
