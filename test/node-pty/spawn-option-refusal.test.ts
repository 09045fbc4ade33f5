import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, isNodePtyOptionError, type NodePtyProvider } from 'ptykit/node-pty'
import { isPtySpawnError } from 'ptykit/spawn'
import { expectNoChildLeftBehind } from './pty-test-support.js'

const provider: NodePtyProvider = createNodePtyProvider()
const controller: PtyController = createPtyController({ provider })

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

describe('options the provider refuses before starting a process', () => {
  it.each([
    ['file', { file: '/nonexistent/ptykit-no-such-shell' }],
    ['cwd', { cwd: '/nonexistent/ptykit-no-such-dir' }],
    ['cols', { cols: 70_000 }],
    ['rows', { rows: 0 }],
    ['sessionId', { sessionId: '' }],
    ['slot.key', { slot: { key: '' } }],
  ] as const)('a bad `%s` is invalid_spawn_options naming the option and the value, not provider_spawn_failed', async (option, options) => {
    const error = await controller.spawn(options).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_spawn_options', outcome: 'not_started' })
    expect(String((error as Error).cause)).toContain(`\`${option}\``)
    // Whoever refused it (the pipeline or the provider), the option and the value are on the error.
    const value = option === 'slot.key' ? '' : Object.values(options)[0]
    expect(error).toMatchObject({ option, value })
    if (option === 'file' || option === 'cwd') expect(isNodePtyOptionError((error as Error).cause)).toBe(true)
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
  })

  it.each([
    ['/etc/passwd', 'is not executable'],
    ['/etc', 'is not a regular file'],
    ['/nonexistent/ptykit-no-such-shell', 'does not exist'],
    ['ptykit-no-such-program', 'no executable of that name on the PATH'],
  ])('a `file` of %j is refused saying why: %s', async (file, why) => {
    const error = await provider.spawn({ file }).catch((caught: unknown) => caught)
    expect(isNodePtyOptionError(error) && error.message).toContain(why)
    expect(error).toMatchObject({ option: 'file', value: file })
  })

  it('a relative `cwd` is refused with the absolute path it resolved to', async () => {
    const error = await provider.spawn({ cwd: 'ptykit-no-such-dir' }).catch((caught: unknown) => caught)
    expect(isNodePtyOptionError(error) && error.message).toContain(JSON.stringify(join(process.cwd(), 'ptykit-no-such-dir')))
    expect(error).toMatchObject({ option: 'cwd', value: 'ptykit-no-such-dir' })
  })
})

describe('the provider option `inheritedEnv`', () => {
  it.each([
    [['FOO=bar'], 'inheritedEnv'],
    [null, 'inheritedEnv'],
    [{ 'A=B': 'x' }, 'inheritedEnv'],
    [{ PATH: 42 }, 'inheritedEnv.PATH'],
  ])('%j is refused when the provider is made, naming the option', (inheritedEnv, option) => {
    // Before: an array became variables named "0", "1"… in every child.
    expect(() => createNodePtyProvider({ inheritedEnv: inheritedEnv as never })).toThrow(expect.objectContaining({ code: 'invalid_spawn_option', option }))
  })

  it('takes an object of strings (undefined values left out)', () => {
    expect(() => createNodePtyProvider({ inheritedEnv: { PATH: '/usr/bin', GONE: undefined } })).not.toThrow()
  })
})

describe('the provider option `defaultShell`', () => {
  it('naming no executable: a spawn without `file` is refused naming `defaultShell`, nothing started; with `file` it runs', async () => {
    const provider = createNodePtyProvider({ defaultShell: '/no/such/shell' })
    const controller = createPtyController({ provider })
    try {
      // Before: refused naming `file`, an option this caller never gave.
      await expect(controller.spawn({})).rejects.toMatchObject({ code: 'invalid_spawn_options', option: 'defaultShell', value: '/no/such/shell', outcome: 'not_started' })
      const reply = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exit 3'] })
      expect((await reply.exited).cause).toEqual({ kind: 'exited', exitCode: 3 })
    } finally {
      await controller.dispose()
    }
  })
})

describe('the provider option `defaultCwd`', () => {
  it('must be an absolute path: a relative one is refused when the provider is made', () => {
    expect(() => createNodePtyProvider({ defaultCwd: 'relative/dir' })).toThrow(expect.objectContaining({ code: 'invalid_spawn_option', option: 'defaultCwd', value: 'relative/dir' }))
  })

  it('naming a directory that is gone: a spawn without `cwd` is refused naming `defaultCwd`, nothing started; with `cwd` it runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ptykit-default-cwd-'))
    const withDefault = createNodePtyProvider({ defaultCwd: dir })
    const scoped = createPtyController({ provider: withDefault })
    try {
      rmSync(dir, { recursive: true })
      const error = await scoped.spawn({ file: '/bin/true' }).catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'invalid_spawn_options', option: 'defaultCwd', value: dir, outcome: 'not_started' })
      expect(String(error)).toContain('cannot be read (ENOENT)')
      expect(scoped.inventory().allLivePtyIds.size).toBe(0)
      const reply = await scoped.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'], cwd: tmpdir() })
      expect(reply.pid).toBeGreaterThan(0)
    } finally {
      await scoped.dispose()
      await withDefault.dispose()
    }
  })
})
