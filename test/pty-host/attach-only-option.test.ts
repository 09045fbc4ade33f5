/**
 * `attachOnly` decides whether a spawn may start a process: one that was not exactly `true`
 * (`'yes'`, `1`) read as `false`, and a spawn meant only to re-attach started a new shell under
 * the id. Refused now naming the option and the value, nothing started (so is an `isNewSession`
 * that is no boolean).
 */
import { isPtyHostError } from 'ptykit/pty-host'
import { expect, it } from 'vitest'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

it('a spawn whose attachOnly or isNewSession is no boolean is refused naming it, and starts nothing', async () => {
  const { socketPath } = await inProcessHost(cleanups)
  const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
  for (const [option, value] of [['attachOnly', 'yes'], ['attachOnly', 1], ['isNewSession', 'true']] as const) {
    const refused = await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'], sessionId: 'restored-1', [option]: value } as never).catch((error: unknown) => error)
    expect(isPtyHostError(refused) && [refused.code, refused.option, refused.value]).toEqual(['invalid_spawn_option', option, value])
  }
  expect(await app.listProcesses()).toEqual([])
  expect(await app.listExits()).toEqual([])
  // Well-formed, the attach-only spawn finds nothing to attach to, and still starts nothing.
  await expect(app.spawn({ file: '/bin/sh', sessionId: 'restored-1', attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent' })
  expect(await app.listProcesses()).toEqual([])
}, 30_000)
