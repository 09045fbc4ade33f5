/**
 * SSH: input for a remote program that does not read waits in the channel (the server's window is
 * closed); `maxPendingInputBytes` bounds it, as it bounds the node-pty provider's. Before the bound,
 * every write was `accepted` and queued by ssh2 in the app, without end.
 */
import { describe, expect, it } from 'vitest'
import type { WriteSettlement } from 'ptykit/contracts'
import { createSshProvider, isSshOptionError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const KiB = 1024
const MiB = 1024 * KiB

describe('ssh: the bound on input held for a remote program that does not read', () => {
  it('refuses a write past maxPendingInputBytes input_backlog_full', async () => {
    const provider = createSshProvider(sshOptions(sshd(), undefined, { maxPendingInputBytes: 1 * MiB }))
    let output = ''
    provider.onData((event) => {
      output += event.data
    })
    try {
      const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; exec sleep 60'] })
      await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
      const chunk = Buffer.alloc(64 * KiB, 0x62)
      let accepted = 0
      let refusal: unknown
      const held: Promise<WriteSettlement>[] = []
      // The server's window (2 MiB for OpenSSH) and its PTY take some first: at most 16 MiB in all.
      for (let i = 0; i < 256; i += 1) {
        // Held by the channel (a promise: settled once it handed the bytes on), or taken at once.
        const settlement = provider.writeBytes(id, chunk)
        if (settlement instanceof Promise) held.push(settlement)
        else if (settlement.kind !== 'accepted') {
          refusal = settlement
          break
        }
        accepted += chunk.length
        // Let the channel hand what the window allows to the socket before the next write.
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      expect(refusal).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
      expect(accepted).toBeGreaterThanOrEqual(1 * MiB)
      // A write larger than the bound is refused whole.
      expect(await provider.write(id, 'z'.repeat(1 * MiB + 1))).toEqual({ kind: 'refused', reason: 'input_backlog_full' })
      // What the channel held for `sleep` went with it when it was stopped: no held write says accepted.
      expect(held.length).toBeGreaterThan(0)
      await provider.shutdown(id, { timeoutMs: 5_000 })
      expect((await Promise.all(held)).map((settlement) => settlement.kind)).not.toContain('accepted')
    } finally {
      await provider.dispose()
    }
  }, 60_000)

  it.each([0, -1, 1.5, '1024'])('refuses maxPendingInputBytes %s, naming the option and the value', (value) => {
    let caught: unknown
    try {
      createSshProvider(sshOptions(sshd(), undefined, { maxPendingInputBytes: value as number }))
    } catch (error) {
      caught = error
    }
    expect(isSshOptionError(caught)).toBe(true)
    expect(caught).toMatchObject({ option: 'maxPendingInputBytes' })
    expect(String((caught as Error).message)).toContain(typeof value === 'string' ? `"${value}"` : String(value))
  })
})
