// A misspelt spawn option given straight to a bundled provider (helper-231): `provider.spawn({ id:
// 'x' })`, `{ cdw: '/tmp' }` or `{ sessionID: 'x' }` was ignored in silence — a fresh id minted, the
// default directory used. Each provider now refuses it with its own typed option error
// (`invalid_spawn_option`, naming the option as given, its value and the option it likely means),
// before it starts, connects to or sends anything.
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import type { ProviderSpawnOptions, PtyProvider } from '../src/contracts/index.js'
import { createNodePtyProvider, isNodePtyOptionError } from '../src/node-pty/index.js'
import { createPtyHostProvider, isPtyHostError } from '../src/pty-host/index.js'
import { createSshProvider, isSshOptionError } from '../src/ssh/index.js'
import { createFakePtyProvider } from '../src/testing/index.js'

async function rejection(call: () => unknown): Promise<unknown> {
  try {
    await call()
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

const cases: Array<[Record<string, unknown>, string, unknown, string]> = [
  [{ file: '/bin/sh', sessionID: 'x' }, 'sessionID', 'x', 'sessionId'],
  [{ id: 'x' }, 'id', 'x', 'sessionId'],
  [{ cdw: '/tmp' }, 'cdw', '/tmp', 'cwd'],
  [{ col: 100 }, 'col', 100, 'cols'],
  [{ cmd: 'ls' }, 'cmd', 'ls', 'file'],
  [{ expectedIncarnationID: 'i1', attachOnly: true, sessionId: 'x' }, 'expectedIncarnationID', 'i1', 'expectedIncarnationId'],
]

/** The refusal's shape, checked to name the option, show its value and the option meant. */
function expectRefusal(error: unknown, option: string, value: unknown, meant: string): void {
  expect(error).toBeInstanceOf(Error)
  expect(error).toMatchObject({ code: 'invalid_spawn_option', option, value })
  const { message } = error as Error
  expect(message).toContain(`\`${option}\``)
  expect(message).toContain(`did you mean \`${meant}\``)
}

describe('a bundled provider refuses a misspelt spawn option before it does anything', () => {
  it.each(cases)('fake: %j is refused naming `%s`; no PTY started, no id minted', async (options, option, value, meant) => {
    const provider = createFakePtyProvider()
    const error = await rejection(() => provider.spawn(options as ProviderSpawnOptions))
    expectRefusal(error, option, value, meant)
    expect(provider.livePtyIds()).toEqual([])
    expect(await provider.listProcesses()).toEqual([])
    // No id was minted for the refused spawn.
    expect((await provider.spawn({})).id).toBe('fake-1')
  })

  it.each(cases)('node-pty: %j is refused naming `%s`; no process started', async (options, option, value, meant) => {
    const provider = createNodePtyProvider()
    const error = await rejection(() => provider.spawn(options as ProviderSpawnOptions))
    expect(isNodePtyOptionError(error)).toBe(true)
    expectRefusal(error, option, value, meant)
    expect(await provider.listProcesses()).toEqual([])
    await provider.dispose()
  })

  it.each(cases)('ssh: %j is refused naming `%s`, before any connection', async (options, option, value, meant) => {
    // Nothing listens on port 9 (discard): a spawn that went on would fail to connect instead.
    const provider = createSshProvider({ host: '127.0.0.1', port: 9, username: 'nobody', privateKey: 'unused', hostVerifier: () => false, hostId: 'ssh:offline', connectTimeoutMs: 200 })
    const error = await rejection(() => provider.spawn(options as ProviderSpawnOptions))
    expect(isSshOptionError(error)).toBe(true)
    expectRefusal(error, option, value, meant)
    await provider.dispose()
  })

  // An attach-only spawn too: a misspelt `expectedIncarnationId` attached without its fence.
  it.each(cases)('pty host: %j is refused naming `%s`, before it connects', async (options, option, value, meant) => {
    // No host there, and none started: a spawn that went on would fail to connect instead.
    const provider = createPtyHostProvider({ socketPath: join(tmpdir(), 'ptykit-h231-no-host', 'host.sock'), autoStart: false })
    const error = await rejection(() => provider.spawn(options as ProviderSpawnOptions))
    expect(isPtyHostError(error)).toBe(true)
    expectRefusal(error, option, value, meant)
    await provider.dispose()
  })

  it('pty host: options whose keys cannot be read (a Proxy whose trap throws) reject the spawn — an attach-only one too — never throw from spawn()', async () => {
    const provider = createPtyHostProvider({ socketPath: join(tmpdir(), 'ptykit-h231-no-host', 'host.sock'), autoStart: false })
    for (const attachOnly of [undefined, true]) {
      const options = new Proxy({ sessionId: 'x', attachOnly }, {
        ownKeys() {
          throw new Error('no keys here')
        },
      }) as ProviderSpawnOptions
      let answer: Promise<unknown> | undefined
      expect(() => (answer = provider.spawn(options))).not.toThrow()
      await expect(answer).rejects.toThrow('no keys here')
    }
    await provider.dispose()
  })

  it.each([
    ['fake', () => createFakePtyProvider()],
    ['node-pty', () => createNodePtyProvider()],
    ['ssh', () => createSshProvider({ host: '127.0.0.1', port: 9, username: 'nobody', privateKey: 'unused', hostVerifier: () => false, hostId: 'ssh:offline', connectTimeoutMs: 200 })],
    ['pty host', () => createPtyHostProvider({ socketPath: join(tmpdir(), 'ptykit-h231-no-host', 'host.sock'), autoStart: false })],
  ] as Array<[string, () => PtyProvider]>)('%s: a misspelt `evn` is refused without showing or keeping its value', async (_name, create) => {
    const provider = create()
    const error = await rejection(() => provider.spawn({ evn: { TOKEN: 'secret-value' } } as ProviderSpawnOptions))
    expect(error).toMatchObject({ code: 'invalid_spawn_option', option: 'evn', value: undefined })
    expect((error as Error).message).toContain('did you mean `env`')
    expect((error as Error).message).not.toContain('secret-value')
    await provider.dispose?.()
  })
})
