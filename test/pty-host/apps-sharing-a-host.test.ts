/**
 * Two unrelated apps of one user that both use the default socket path share one pty host: each
 * lists, attaches and stops the other's sessions. An app that wants its sessions to itself names a
 * host of its own, `defaultPtyHostSocketPath(name)`; and the protocol-mismatch advice on the
 * default socket (stop the host) says that it may be another application's host.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { createPtyHostProvider, defaultPtyHostSocketPath, isPtyHostError, startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { helloReply, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** `XDG_RUNTIME_DIR` points at a fresh directory for each test, so the default socket is the test's own. */
let runtimeDir = ''
beforeEach(() => {
  runtimeDir = mkdtempSync(join(tmpdir(), 'ptykit-xdg-'))
  vi.stubEnv('XDG_RUNTIME_DIR', runtimeDir)
  const dir = runtimeDir
  // The first cleanup, so the last to run: after the hosts and apps of the test are closed.
  cleanups.push(async () => {
    vi.unstubAllEnvs()
    rmSync(dir, { recursive: true, force: true })
  })
})

/** An in-process host on `socketPath`, closed after the test. */
async function hostOn(socketPath: string): Promise<void> {
  const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
  cleanups.push(() => host.close())
}

/** An app's provider on `socketPath` (the host is already running), disposed after the test. */
function appOn(socketPath?: string): PtyHostProvider {
  const provider = createPtyHostProvider({ ...(socketPath === undefined ? {} : { socketPath }), autoStart: false })
  cleanups.push(() => provider.dispose())
  return provider
}

/** What the host on `socketPath` answers an app of protocol version 1. */
async function refusalOfVersionOne(socketPath: string): Promise<string> {
  const reply = await helloReply(socketPath, 1)
  expect(reply).toMatchObject({ type: 'refused', code: 'protocol_mismatch' })
  return String(reply.message)
}

describe('defaultPtyHostSocketPath(name): a host of its own', () => {
  it('is <name>.sock in the default socket\'s private directory', () => {
    const shared = defaultPtyHostSocketPath()
    expect(shared).toBe(join(runtimeDir, 'ptykit', 'pty-host.sock'))
    expect(defaultPtyHostSocketPath('my-extension')).toBe(join(dirname(shared), 'my-extension.sock'))
    expect(defaultPtyHostSocketPath('App_2')).toBe(join(dirname(shared), 'App_2.sock'))
  })

  it.each([[''], ['../elsewhere'], ['a/b'], ['.hidden'], ['my.app'], ['with space'], [42], [null]])('refuses the name %j: invalid_option naming name and the value', (name) => {
    const refused = (() => {
      try {
        return defaultPtyHostSocketPath(name as string)
      } catch (error) {
        return error
      }
    })()
    expect(isPtyHostError(refused) && refused).toMatchObject({ code: 'invalid_option', option: 'name', value: name })
  })

  it("refuses the name 'pty-host', the default socket's own: it would be the host every app shares", () => {
    expect(() => defaultPtyHostSocketPath('pty-host')).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'name', value: 'pty-host' }))
    expect(defaultPtyHostSocketPath('pty-host-2')).toBe(join(dirname(defaultPtyHostSocketPath()), 'pty-host-2.sock'))
  })

  it('refuses a name that makes a path longer than a socket address holds', () => {
    const name = 'x'.repeat(120)
    expect(() => defaultPtyHostSocketPath(name)).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'name', value: name }))
  })

  it('apps on the default socket share every session; an app on a host of its own sees none of theirs, nor they its', async () => {
    const ownSocket = defaultPtyHostSocketPath('my-extension')
    await hostOn(defaultPtyHostSocketPath())
    await hostOn(ownSocket)
    const appA = appOn()
    const appB = appOn()
    const mine = appOn(ownSocket)
    const a = await appA.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    const own = await mine.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    // The sharing: app B lists app A's session and can stop it.
    expect((await appB.listProcesses()).map((row) => row.id)).toEqual([a.id])
    // A host of its own: nothing of theirs, and nothing of its own on theirs.
    expect((await mine.listProcesses()).map((row) => row.id)).toEqual([own.id])
    expect((await appA.listProcesses()).map((row) => row.id)).toEqual([a.id])
    await appB.shutdown(a.id, { immediate: true })
    expect(await appA.listProcesses()).toEqual([])
    expect((await mine.listProcesses()).map((row) => row.id)).toEqual([own.id])
  })
})

describe('protocol mismatch advice', () => {
  it('on the default socket says the host may be another application\'s and how to take a host of its own; on a named one it does not', async () => {
    const ownSocket = defaultPtyHostSocketPath('my-extension')
    await hostOn(defaultPtyHostSocketPath())
    await hostOn(ownSocket)
    const onDefault = await refusalOfVersionOne(defaultPtyHostSocketPath())
    expect(onDefault).toContain('stopPtyHost(')
    expect(onDefault).toMatch(/another application's, do not stop it/)
    expect(onDefault).toContain("defaultPtyHostSocketPath('<your app>')")
    const onOwn = await refusalOfVersionOne(ownSocket)
    expect(onOwn).toContain('stopPtyHost(')
    expect(onOwn).not.toMatch(/another application/)
  })
})
