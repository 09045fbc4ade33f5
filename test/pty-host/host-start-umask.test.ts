/**
 * An in-process host sets the umask its socket is born under (077) only around the synchronous
 * `listen()`: the umask is the whole process's, and other code of the app — another copy of ptykit,
 * another extension in the same extension host — creates its files under it. Before, it stayed
 * 077 until the host's listen callback had run, and a callback queued meanwhile (here: the next
 * tick after `listen()`) created its files 0600 instead of as its own umask said.
 */
import { statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startPtyHost } from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { hostFixture, useCleanups } from './pty-host-test-support.js'

/** What the other code saw: the umask, and the mode of the file it created, on the tick after listen(). */
const seen = vi.hoisted(() => ({ file: null as string | null, umask: null as number | null, mode: null as number | null }))

vi.mock('node:net', async (importOriginal) => {
  const net = await importOriginal<typeof import('node:net')>()
  const createServer = ((...args: Parameters<typeof net.createServer>) => {
    const server = net.createServer(...args)
    const listen = server.listen.bind(server) as (...listenArgs: unknown[]) => typeof server
    server.listen = ((...listenArgs: unknown[]) => {
      const result = listen(...listenArgs)
      const file = seen.file
      if (file !== null) {
        // Another part of the app, on the next tick: it creates a file, as it does at any time.
        process.nextTick(() => {
          seen.umask = process.umask()
          writeFileSync(file, 'x', { mode: 0o666 })
          seen.mode = statSync(file).mode & 0o777
        })
      }
      return result
    }) as typeof server.listen
    return server
  }) as typeof net.createServer
  return { ...net, default: { ...net, createServer }, createServer }
})

const cleanups = useCleanups()

describe('startPtyHost: the umask', () => {
  it('is the app\'s again as soon as listen() returns: a file the app creates on the next tick gets the app\'s mode, and the socket is still 0600', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const previous = process.umask(0o022)
    cleanups.push(async () => void process.umask(previous))
    seen.file = join(dir, 'another-part-of-the-app.txt')
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => host.close())
    expect(seen).toMatchObject({ umask: 0o022, mode: 0o644 })
    expect(statSync(socketPath).mode & 0o777).toBe(0o600)
    expect(process.umask()).toBe(0o022)
  })
})
