/**
 * A write whose PTY id is no string: the host refused the request (its `ptyId`), and the provider
 * settled the write `unverifiable('transport_lost', true)` — "the bytes may have gone in" — for a
 * write nothing made. Refused now as a bad `data` is, naming `ptyId`, nothing sent.
 */
import { isPtyHostError } from 'ptykit/pty-host'
import { expect, it } from 'vitest'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

it('a write or writeBytes to a PTY id that is no non-empty string is refused naming ptyId; the connection and the PTY carry on', async () => {
  const { socketPath } = await inProcessHost(cleanups)
  const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
  const pty = await app.spawn({ file: 'cat' })
  for (const id of [5, '', null, { id: pty.id }]) {
    for (const call of [() => app.write(id as never, 'x'), () => app.writeBytes(id as never, Buffer.from('x'))]) {
      let thrown: unknown
      try {
        await call()
      } catch (error) {
        thrown = error
      }
      expect(isPtyHostError(thrown) && [thrown.code, thrown.option, thrown.value]).toEqual(['invalid_option', 'ptyId', id])
    }
  }
  expect(app.connected).toBe(true)
  expect(await app.write(pty.id, 'x')).toEqual({ kind: 'accepted' })
}, 30_000)
