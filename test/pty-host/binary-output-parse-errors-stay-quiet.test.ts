/**
 * A PTY that prints binary output (`cat` of a binary file) makes xterm's parser meet bytes it
 * rejects. The host's headless screen must not log each rejection: xterm's default log level
 * prints every parsing error as a multi-line object, which costs the host several times the parse
 * itself and, for a host started in the app's process (`startPtyHost`), floods the app's console.
 */
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startPtyHost } from 'ptykit/pty-host'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
afterEach(() => vi.restoreAllMocks())

describe('pty host: binary output', () => {
  it('is parsed into the screen without writing xterm parsing errors to the console', async () => {
    const { dir, socketPath } = makeSocketDir()
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(async () => {
      await host.close()
      await killHostAndClean(socketPath, dir)
    })
    const payload = join(dir, 'binary')
    writeFileSync(payload, randomBytes(64 * 1024))
    cleanups.push(async () => rmSync(payload, { force: true }))
    const logged: unknown[][] = []
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args)
      })
    }
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    let received = ''
    app.onData(({ id, data }) => {
      received += data
      app.acknowledgeData(id, data.length)
    })
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `stty -opost; cat '${payload}'; printf DONE; exec sleep 60`] })
    await waitFor(() => (received.endsWith('DONE') ? true : undefined), 'the binary output to reach the app')
    // The snapshot waits until the screen parsed everything before it.
    const snapshot = await app.getBufferSnapshot(id, { scrollbackRows: 0 })
    expect(snapshot?.seq).toBe(received.length)
    expect(logged.filter((args) => String(args[0]).includes('xterm'))).toEqual([])
  })
})
