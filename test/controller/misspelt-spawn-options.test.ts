// A misspelt spawn option through the controller (helper-231): a consumer in plain JavaScript wrote
// `spawn({ file, sessionID: 'x' })`, `{ cdw: '/tmp' }`, `{ evn: {…} }` or `{ col: 100 }`, and each was
// ignored in silence — a fresh id minted, the default directory, environment or size used. Now the
// spawn is refused (`invalid_spawn_options`, naming the option as given, its value and the option it
// likely means), before anything happens: the provider saw no spawn, and no claim, slot or id is held.
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

function setup() {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  const spawnCalls = () => provider.calls.filter((call) => call.method === 'spawn')
  return { provider, controller, spawnCalls }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('controller.spawn: a misspelt spawn option is refused, not ignored', () => {
  it.each([
    [{ file: '/bin/sh', sessionID: 'x' }, 'sessionID', 'x', 'sessionId'],
    [{ cdw: '/tmp' }, 'cdw', '/tmp', 'cwd'],
    [{ col: 100 }, 'col', 100, 'cols'],
    [{ Rows: 30 }, 'Rows', 30, 'rows'],
    [{ argv: ['-l'] }, 'argv', ['-l'], 'args'],
    [{ id: 'x' }, 'id', 'x', 'sessionId'],
    [{ ptyId: 'x' }, 'ptyId', 'x', 'sessionId'],
    [{ cmd: 'ls' }, 'cmd', 'ls', 'file'],
  ])('%j: invalid_spawn_options naming `%s`, its value and `%s`; nothing spawned', async (options, option, value, meant) => {
    const { provider, controller, spawnCalls } = setup()
    const error = await rejection(controller.spawn(options as never))
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_spawn_options', option, value, outcome: 'not_started' })
    expect((error as Error).message).toContain(`\`${option}\``)
    expect((error as Error).message).toContain(`did you mean \`${meant}\``)
    expect((error as Error).message).toContain(JSON.stringify(value).slice(0, 5))
    expect((error as { cause?: unknown }).cause).toMatchObject({ code: 'invalid_spawn_option', option })
    expect(spawnCalls()).toEqual([])
    expect(provider.livePtyIds()).toEqual([])
    expect(await controller.listProcesses()).toEqual([])
    await controller.dispose()
  })

  it('refuses `sessionID` and holds nothing: the same id spawns afterwards, spelt right', async () => {
    const { controller, spawnCalls } = setup()
    await rejection(controller.spawn({ sessionID: 'x' } as never))
    const { id } = await controller.spawn({ sessionId: 'x' })
    expect(id).toBe('x')
    expect(spawnCalls()).toHaveLength(1)
    await controller.dispose()
  })

  it('refuses a claim or slot spawn with a misspelt option, leaving no claim or slot held', async () => {
    const { controller, spawnCalls } = setup()
    await rejection(controller.spawn({ claim: { key: 'agent-1' }, cdw: '/tmp' } as never))
    await rejection(controller.spawnTerminal({ slot: { key: 'pane-1' }, col: 100 } as never))
    expect(spawnCalls()).toEqual([])
    const claimed = await controller.spawn({ claim: { key: 'agent-1' }, cwd: '/tmp' })
    const slotted = await controller.spawn({ slot: { key: 'pane-1' }, cols: 100 })
    expect(claimed.id).not.toBe(slotted.id)
    expect(spawnCalls()).toHaveLength(2)
    await controller.dispose()
  })

  it('refuses `evn` without showing or keeping its value (it may hold secrets)', async () => {
    const { controller, spawnCalls } = setup()
    const error = await rejection(controller.spawn({ evn: { TOKEN: 'secret-value' } } as never))
    expect(error).toMatchObject({ code: 'invalid_spawn_options', option: 'evn', value: undefined })
    expect((error as Error).message).toContain('did you mean `env`')
    expect((error as Error).message).not.toContain('secret-value')
    expect((error as { cause?: { value?: unknown } }).cause?.value).toBeUndefined()
    expect(spawnCalls()).toEqual([])
    await controller.dispose()
  })

  it('passes a host\'s own keys (spawn options are records a host may pass around whole)', async () => {
    const { controller, spawnCalls } = setup()
    await controller.spawn({ file: '/bin/sh', name: 'build', tag: 'ci', meta: { a: 1 }, title: 'Build', columns: 100 } as never)
    expect(spawnCalls()).toHaveLength(1)
    await controller.dispose()
  })
})
