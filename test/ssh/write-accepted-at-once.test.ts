/**
 * SSH: a write the channel takes at once (the server's window has room) settles synchronously —
 * a plain `accepted`, and nothing allocated to wait for it: no promise, as the node-pty provider's
 * write. Before, every write made a promise, a callback and an entry (kept only for a write whose
 * bytes the channel holds: a program that does not read), and dropped them when the channel took
 * it at once — on every keystroke.
 */
import { createHook } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import type { WriteSettlement } from 'ptykit/contracts'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()

/** What `write` returns, and how many promises were created during the (synchronous) call. */
function promisesMadeBy(write: () => WriteSettlement | Promise<WriteSettlement>): { settlement: WriteSettlement | Promise<WriteSettlement>; promises: number } {
  let promises = 0
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises += 1
    },
  })
  hook.enable()
  let settlement: WriteSettlement | Promise<WriteSettlement>
  try {
    settlement = write()
  } finally {
    hook.disable()
  }
  return { settlement, promises }
}

describe('ssh: a write the channel takes at once', () => {
  it('is a plain accepted settlement, with no promise made for it (text and bytes)', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    let output = ''
    provider.onData((event) => {
      output += event.data
    })
    try {
      const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; exec cat'] })
      await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
      const bytes = Buffer.from('bytes-XYZ')
      const text = promisesMadeBy(() => provider.write(id, 'text-XYZ'))
      const raw = promisesMadeBy(() => provider.writeBytes(id, bytes))
      expect(text.settlement).not.toBeInstanceOf(Promise)
      expect(text.settlement).toEqual({ kind: 'accepted' })
      expect(raw.settlement).not.toBeInstanceOf(Promise)
      expect(raw.settlement).toEqual({ kind: 'accepted' })
      expect({ text: text.promises, bytes: raw.promises }).toEqual({ text: 0, bytes: 0 })
      // Taken, and in order: the program reads both.
      await waitFor(() => (output.includes('text-XYZbytes-XYZ') ? true : undefined), 'the echo of both writes')
    } finally {
      await provider.dispose()
    }
  }, 30_000)
})
