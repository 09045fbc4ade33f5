/**
 * A host whose listen fails after it took the lock and wrote its secret (the socket's directory
 * vanished, a resource limit): it leaves nothing behind — no lock, no secret a client would read
 * for a host that never served — and the next start on the path works.
 */
import { existsSync } from 'node:fs'
import { startPtyHost } from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { ptyHostPaths } from '../../src/pty-host/socket-security.js'
import { hostFixture, useCleanups } from './pty-host-test-support.js'

/** When set, the next server's listen fails with this code (once). */
const failNextListen = vi.hoisted(() => ({ code: null as string | null }))

vi.mock('node:net', async (importOriginal) => {
  const net = await importOriginal<typeof import('node:net')>()
  const createServer = ((...args: Parameters<typeof net.createServer>) => {
    const server = net.createServer(...args)
    const code = failNextListen.code
    if (code !== null) {
      failNextListen.code = null
      server.listen = ((..._args: unknown[]) => {
        setImmediate(() => server.emit('error', Object.assign(new Error(`listen ${code}`), { code })))
        return server
      }) as typeof server.listen
    }
    return server
  }) as typeof net.createServer
  return { ...net, default: { ...net, createServer }, createServer }
})

const cleanups = useCleanups()

describe('startPtyHost: a listen that fails', () => {
  it('releases the lock and removes the secret it wrote; the next start works', async () => {
    const { socketPath } = hostFixture(cleanups)
    failNextListen.code = 'EMFILE'
    await expect(startPtyHost({ socketPath, idleExitMs: 60_000 })).rejects.toMatchObject({ code: 'EMFILE' })
    const paths = ptyHostPaths(socketPath)
    expect(existsSync(paths.secretPath)).toBe(false)
    const next = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    await next.close()
  })
})
