/**
 * A snapshot's `scrollbackRows` that is no row count: the host refused it and the provider turned
 * the refusal into `null` — "the host holds no session under the id" for a live session — and a
 * NaN crossed as JSON's `null`, answered with the host's default rows as if nothing were wrong.
 */
import { isPtyHostError } from 'ptykit/pty-host'
import { expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

it('a snapshot with a scrollbackRows that is no non-negative integer is refused naming it and the value; a live session is never answered null', async () => {
  const { socketPath } = await inProcessHost(cleanups)
  const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
  const pty = await app.spawn({ file: '/bin/sh', args: ['-c', 'echo ON-SCREEN; exec sleep 60'] })
  await waitFor(async () => ((await app.getBufferSnapshot(pty.id))?.data.includes('ON-SCREEN') === true ? true : undefined), 'the screen')
  for (const scrollbackRows of [-1, Number.NaN, 1.5, '5', Number.POSITIVE_INFINITY]) {
    const refused = await app.getBufferSnapshot(pty.id, { scrollbackRows: scrollbackRows as number }).catch((error: unknown) => error)
    expect(isPtyHostError(refused) && [refused.code, refused.option, Object.is(refused.value, scrollbackRows)]).toEqual(['invalid_option', 'scrollbackRows', true])
  }
  const refusedBag = await app.getBufferSnapshot(pty.id, 5 as never).catch((error: unknown) => error)
  expect(isPtyHostError(refusedBag) && refusedBag.option).toBe('options')
  expect((await app.getBufferSnapshot(pty.id, { scrollbackRows: 0 }))?.data).toContain('ON-SCREEN')
  expect(app.connected).toBe(true)
}, 30_000)
