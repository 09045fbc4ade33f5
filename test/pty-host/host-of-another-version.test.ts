/**
 * An app upgraded while its pty host runs on: the host it meets (or the app that meets it) is of
 * another ptykit version. What the user gets must say both versions and what to do.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PTY_HOST_PROTOCOL_VERSION } from 'ptykit/pty-host'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { fakeHostClosedAfter, helloReply, inProcessHost, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/**
 * A host of protocol version 1 (ptykit's first pty host, JSON frames only): it refuses a hello of
 * another version with its own text, which says nothing of what to do.
 */
async function versionOneHost(): Promise<{ socketPath: string; dir: string }> {
  const { socketPath } = await fakeHostClosedAfter(cleanups, () => undefined, {
    onHello: (message, socket) => {
      const text = `pty host protocol mismatch: the client speaks version ${JSON.stringify(message.v)}, the host speaks version 1; run a host from the same ptykit version as the app`
      socket.end(encodeFrame({ v: 1, type: 'refused', code: 'protocol_mismatch', message: text }))
    },
  })
  return { socketPath, dir: dirname(socketPath) }
}

describe('a host of another protocol version', () => {
  it('an older host refuses the app: protocol_mismatch naming both versions and how to stop that host; no second host is started', async () => {
    const { socketPath, dir } = await versionOneHost()
    const started = join(dir, 'a-host-was-started')
    // A spawn that would start a host leaves this file behind.
    const app = providerOn(socketPath, { autoStart: true, connectTimeoutMs: 2_000, hostCommand: { file: '/bin/sh', args: ['-c', `: > '${started}'`] } })
    cleanups.push(() => app.dispose())
    const refusal = { code: 'protocol_mismatch', message: expect.stringContaining(`stopPtyHost({ socketPath: ${JSON.stringify(socketPath)} })`) }
    await expect(app.listProcesses()).rejects.toMatchObject(refusal)
    const error = await app.spawn({ file: '/bin/sh', cols: 80, rows: 24 }).then(
      () => null,
      (thrown: unknown) => thrown,
    )
    expect(error).toMatchObject(refusal)
    const message = String((error as Error).message)
    expect(message).toMatch(/the host speaks version 1\b/)
    expect(message).toContain(`version ${PTY_HOST_PROTOCOL_VERSION}`)
    expect(message).toMatch(/sessions it runs end with it/)
    expect(existsSync(started)).toBe(false)
  })

  it('a host whose refusal already says what to do, in words of another version, is quoted as it is: the advice is not given twice', async () => {
    const { socketPath } = await fakeHostClosedAfter(cleanups, () => undefined, {
      onHello: (message, socket) => {
        // A newer host's own advice, worded otherwise than this app's.
        const text = `pty host protocol mismatch: the client speaks version ${JSON.stringify(message.v)}, the host speaks version 3; to go on, stopPtyHost({ socketPath: ${JSON.stringify(socketPath)} }) ends it and its sessions`
        socket.end(encodeFrame({ v: 3, type: 'refused', code: 'protocol_mismatch', message: text }))
      },
    })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const error = (await app.listProcesses().catch((thrown: unknown) => thrown)) as Error & { code?: string }
    expect(error.code).toBe('protocol_mismatch')
    expect(error.message.split('stopPtyHost(').length - 1).toBe(1)
    expect(error.message).toMatch(/ends it and its sessions$/)
  })

  it("this host refuses an app of another version with the same advice, naming its own socket", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const reply = await helloReply(socketPath, 1)
    expect(reply).toMatchObject({ type: 'refused', code: 'protocol_mismatch' })
    expect(String(reply.message)).toContain('the client speaks version 1, the host speaks version 2')
    expect(String(reply.message)).toContain(`stopPtyHost({ socketPath: ${JSON.stringify(socketPath)} })`)
  })
})
