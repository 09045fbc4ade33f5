/**
 * A PTY spawned through the pty host starts from the environment and working directory of the app
 * that asks, read at the spawn — as under the app's own node-pty provider —, not from the host
 * process's: those are the environment and directory of whichever app started the host (another
 * application, or an earlier run of this one, maybe days ago). `spawnEnvironment: 'host'` keeps
 * the host's. A host of an older ptykit ignores the app's environment in the request: the app then
 * sends it as the spawn's own `env`.
 *
 * The hosts here are separate processes started with an environment and directory other than this
 * test's (an in-process host would share this process's `process.env`, proving nothing).
 */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { NODE_PTY_INHERITED_ENV_EXCLUDED } from 'ptykit/node-pty'
import { createPtyHostProvider, isPtyHostError, type PtyHostProvider, type PtyHostProviderOptions } from 'ptykit/pty-host'
import { isPtySpawnError } from 'ptykit/spawn'
import type { ProviderSpawnOptions } from '../../src/contracts/index.js'
import { SPAWN_INHERITANCE_KEYS } from '../../src/pty-host/protocol.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { olderHostInFrontOf } from './older-host-proxy.js'
import { HOST_FROM_SOURCES, hostFixture, inProcessHost, providerOn, rawClient, runAppToEnd, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
// Registered after the cleanups, so run before them: this process's environment is its own again.
afterEach(() => {
  vi.unstubAllEnvs()
})

/** A recognizable secret: no message, option name or type word could contain it by chance. */
const SECRET = 'sk-live-3c9e1f7a2b'

/** The variables these tests set; cleared from this process's environment before each use. */
const TEST_VARIABLES = ['PTYKIT_APP', 'PTYKIT_ONLY_IN_FIRST', 'PTYKIT_HOST_ONLY', 'PTYKIT_MARK', 'PTYKIT_GONE', 'PTYKIT_NEW', 'PTYKIT_A', 'PTYKIT_B', 'PTYKIT_C', 'PTYKIT_D', 'PTYKIT_TOKEN', 'ELECTRON_RUN_AS_NODE']

/** Stub this process's environment for the test (undone after it): `undefined` removes a variable. */
function appEnvironment(variables: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value)
}

/** This process's environment without the test variables (and with `extra`): a clean base for a host or another app. */
function environmentWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of [...TEST_VARIABLES, ...NODE_PTY_INHERITED_ENV_EXCLUDED]) delete env[name]
  return { ...env, ...extra }
}

/** A socket directory whose host is killed and which is removed after the test, with a directory `name` inside it (an app's or a host's working directory). */
function fixtureWithDir(name: string): { dir: string; socketPath: string; workDir: string } {
  const fixture = hostFixture(cleanups)
  const workDir = join(fixture.dir, name)
  mkdirSync(workDir)
  return { ...fixture, workDir: realpathSync(workDir) }
}

/**
 * Start a host process as an app would (detached, no stdio) but in `cwd` with `env` — the
 * environment and directory of the app that started it —, and wait until it answers.
 */
async function hostStartedWith(socketPath: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(HOST_FROM_SOURCES.file, [...HOST_FROM_SOURCES.args, '--socket', socketPath, '--idle-exit-ms', '60000'], { cwd, env, detached: true, stdio: 'ignore' })
  child.unref()
  const probe = createPtyHostProvider({ socketPath, autoStart: false })
  try {
    await waitFor(() => probe.listProcesses().then(() => true, () => undefined), 'the host to answer', 15_000)
  } finally {
    await probe.dispose()
  }
}

/** An app's provider on `socketPath` (the host runs already), disposed after the test. */
function appOn(socketPath: string, extra: PtyHostProviderOptions = {}): PtyHostProvider {
  const provider = providerOn(socketPath, { autoStart: false, ...extra })
  cleanups.push(() => provider.dispose())
  return provider
}

/** Spawn `/bin/sh -c <script>` (with `extra` options) through `provider`; resolves with what it printed once it exited. */
async function shellOutput(provider: PtyHostProvider, script: string, extra: ProviderSpawnOptions = {}): Promise<string> {
  const printed = new Map<string, string>()
  const exited = new Set<string>()
  const stopData = provider.onData(({ id, data }) => printed.set(id, (printed.get(id) ?? '') + data))
  const stopExit = provider.onExit(({ id }) => exited.add(id))
  try {
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', script], ...extra })
    await waitFor(() => (exited.has(id) ? true : undefined), 'the shell to exit', 15_000)
    return (printed.get(id) ?? '').replace(/\r\n/g, '\n').trim()
  } finally {
    stopData()
    stopExit()
  }
}

/** A shell line printing each variable as `NAME=value`, or `NAME unset`. */
const printVariables = (...names: string[]): string =>
  names.map((name) => `if [ "\${${name}+set}" = set ]; then echo "${name}=\$${name}"; else echo "${name} unset"; fi`).join('; ')

/** What {@link printVariables} prints for `values` (`undefined`: unset). */
const printed = (values: Record<string, string | undefined>): string =>
  Object.entries(values)
    .map(([name, value]) => (value === undefined ? `${name} unset` : `${name}=${value}`))
    .join('\n')

describe("a spawn through the pty host starts from the app's environment and directory", () => {
  it("two apps with different environments on one host: the second app's PTY has the second app's variables and directory, not the first's (which started the host)", async () => {
    const { socketPath, workDir } = fixtureWithDir('first-app')
    // App 1, a process of its own with its own environment and directory, starts the host.
    const first = await runAppToEnd(
      cleanups,
      'app-spawns-shell.ts',
      [socketPath, JSON.stringify(HOST_FROM_SOURCES), `${printVariables('PTYKIT_APP', 'PTYKIT_ONLY_IN_FIRST')}; pwd -P`],
      { cwd: workDir, env: environmentWith({ PTYKIT_APP: 'first', PTYKIT_ONLY_IN_FIRST: 'yes' }) },
    )
    expect(first.code).toBe(0)
    expect(JSON.parse(first.printed).output.replace(/\r\n/g, '\n').trim()).toBe(`${printed({ PTYKIT_APP: 'first', PTYKIT_ONLY_IN_FIRST: 'yes' })}\n${workDir}`)
    // App 2 (this process) on the same host.
    appEnvironment({ PTYKIT_APP: 'second', PTYKIT_ONLY_IN_FIRST: undefined })
    const second = await shellOutput(appOn(socketPath), `${printVariables('PTYKIT_APP', 'PTYKIT_ONLY_IN_FIRST')}; pwd -P`)
    // Before: PTYKIT_APP=first, PTYKIT_ONLY_IN_FIRST=yes and the first app's directory.
    expect(second).toBe(`${printed({ PTYKIT_APP: 'second', PTYKIT_ONLY_IN_FIRST: undefined })}\n${realpathSync(process.cwd())}`)
  })

  it('an app whose environment changed between two spawns: each PTY has the environment of its spawn (a new variable, a removed one, a new PATH)', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    // This provider starts the host, which inherits the environment of this moment.
    appEnvironment({ PTYKIT_MARK: 'before', PTYKIT_GONE: 'here', PTYKIT_NEW: undefined })
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    expect(await shellOutput(provider, printVariables('PTYKIT_MARK', 'PTYKIT_GONE', 'PTYKIT_NEW'))).toBe(printed({ PTYKIT_MARK: 'before', PTYKIT_GONE: 'here', PTYKIT_NEW: undefined }))
    // A program only the new PATH has: found by a bare name, as the app's own node-pty provider finds it.
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'ptykit-probe-tool'), '#!/bin/sh\necho "probe tool ran"\n')
    chmodSync(join(bin, 'ptykit-probe-tool'), 0o755)
    appEnvironment({ PTYKIT_MARK: 'after', PTYKIT_GONE: undefined, PTYKIT_NEW: 'new', PATH: `${bin}:${process.env.PATH ?? ''}` })
    // Before: PTYKIT_MARK=before, PTYKIT_GONE=here, PTYKIT_NEW-unset (the host's environment, from the first spawn's time).
    expect(await shellOutput(provider, printVariables('PTYKIT_MARK', 'PTYKIT_GONE', 'PTYKIT_NEW'))).toBe(printed({ PTYKIT_MARK: 'after', PTYKIT_GONE: undefined, PTYKIT_NEW: 'new' }))
    // Before: refused, no executable of that name on the host's PATH.
    const printedByTool = new Map<string, string>()
    provider.onData(({ id, data }) => printedByTool.set(id, (printedByTool.get(id) ?? '') + data))
    const { id } = await provider.spawn({ file: 'ptykit-probe-tool' })
    await waitFor(() => (printedByTool.get(id)?.includes('probe tool ran') === true ? true : undefined), 'the probe tool to run', 15_000)
  })

  it("a spawn without cwd starts in the app's working directory, and a relative cwd resolves against it — not the host's", async () => {
    const { socketPath, workDir } = fixtureWithDir('host-started-here')
    await hostStartedWith(socketPath, workDir, environmentWith({}))
    const app = appOn(socketPath)
    // Before: the host's directory (`host-started-here`).
    expect(await shellOutput(app, 'pwd -P')).toBe(realpathSync(process.cwd()))
    // Before: refused (no `test` in the host's directory).
    expect(await shellOutput(app, 'pwd -P', { cwd: 'test' })).toBe(realpathSync(join(process.cwd(), 'test')))
    expect(await shellOutput(app, 'pwd -P', { cwd: workDir })).toBe(workDir)
  })

  it("the app's directory, gone by the time the host spawns, is refused as `cwd` (nothing started), saying it is the app's", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = await rawClient(socketPath)
    cleanups.push(async () => app.close())
    const reply = await app.request('spawn', { sessionId: 'gone-cwd', file: '/bin/sh', inheritedEnv: { PATH: '/usr/bin:/bin', PTYKIT_TOKEN: SECRET }, defaultCwd: '/nonexistent/ptykit-app-dir' })
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_spawn_option', option: 'cwd', value: '/nonexistent/ptykit-app-dir' } })
    const { message } = (reply as { error: { message: string } }).error
    expect(message).toContain("the app's working directory")
    expect(JSON.stringify(reply)).not.toContain(SECRET)
    expect((await app.request('list', {})).result).toEqual([])
  })

  it('the host-terminal variables of the app are not inherited (as the node-pty provider removes them); a spawn that sets one explicitly keeps it', async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    await shellOutput(provider, 'true') // the host starts with this environment
    const excluded = Object.fromEntries(NODE_PTY_INHERITED_ENV_EXCLUDED.map((name) => [name, `app-${name.toLowerCase()}`]))
    appEnvironment({ ...excluded, PTYKIT_MARK: 'app' })
    // PTYKIT_MARK: the app's environment, set since the host started (before: unset).
    expect(await shellOutput(provider, printVariables('PTYKIT_MARK', ...NODE_PTY_INHERITED_ENV_EXCLUDED))).toBe(
      printed({ PTYKIT_MARK: 'app', ...Object.fromEntries(NODE_PTY_INHERITED_ENV_EXCLUDED.map((name) => [name, undefined])) }),
    )
    expect(await shellOutput(provider, printVariables('PTYKIT_MARK', 'TMUX', 'COLUMNS'), { env: { COLUMNS: '123' } })).toBe(printed({ PTYKIT_MARK: 'app', TMUX: undefined, COLUMNS: '123' }))
  })

  it("a spawn's env is set on top of the app's environment and its envToDelete removes from it", async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    await shellOutput(provider, 'true') // the host starts with this environment
    appEnvironment({ PTYKIT_A: 'app', PTYKIT_B: 'app', PTYKIT_C: 'app' })
    const output = await shellOutput(provider, printVariables('PTYKIT_A', 'PTYKIT_B', 'PTYKIT_C', 'PTYKIT_D'), { env: { PTYKIT_A: 'spawn', PTYKIT_D: 'spawn' }, envToDelete: ['PTYKIT_B', 'PTYKIT_D'] })
    // Before: PTYKIT_C-unset (the host's environment has none of the app's later variables).
    expect(output).toBe(printed({ PTYKIT_A: 'spawn', PTYKIT_B: undefined, PTYKIT_C: 'app', PTYKIT_D: undefined }))
  })

  it('ELECTRON_RUN_AS_NODE: an app that runs with it passes it on; one that does not gets none, whatever the app that started the host had', async () => {
    const { socketPath, workDir } = fixtureWithDir('extension-host')
    // Started by an app running as Node (an editor's extension host): its environment has it, unmarked.
    await hostStartedWith(socketPath, workDir, environmentWith({ ELECTRON_RUN_AS_NODE: '1' }))
    const app = appOn(socketPath)
    appEnvironment({ ELECTRON_RUN_AS_NODE: undefined })
    // Before: 1 (the host's environment), so a shell ran every Electron app as Node.
    expect(await shellOutput(app, printVariables('ELECTRON_RUN_AS_NODE'))).toBe(printed({ ELECTRON_RUN_AS_NODE: undefined }))
    appEnvironment({ ELECTRON_RUN_AS_NODE: '1' })
    expect(await shellOutput(app, printVariables('ELECTRON_RUN_AS_NODE'))).toBe(printed({ ELECTRON_RUN_AS_NODE: '1' }))
  })
})

describe("spawnEnvironment: 'host'", () => {
  it("starts every spawn from the host's environment and directory, the spawn's env on top, as before", async () => {
    const { socketPath, workDir } = fixtureWithDir('host-started-here')
    await hostStartedWith(socketPath, workDir, environmentWith({ PTYKIT_HOST_ONLY: 'host', PTYKIT_MARK: 'host' }))
    appEnvironment({ PTYKIT_APP: 'app', PTYKIT_MARK: 'app', PTYKIT_HOST_ONLY: undefined })
    const hosts = appOn(socketPath, { spawnEnvironment: 'host' })
    const script = `${printVariables('PTYKIT_HOST_ONLY', 'PTYKIT_MARK', 'PTYKIT_APP', 'PTYKIT_D')}; pwd -P`
    expect(await shellOutput(hosts, script, { env: { PTYKIT_D: 'spawn' } })).toBe(`${printed({ PTYKIT_HOST_ONLY: 'host', PTYKIT_MARK: 'host', PTYKIT_APP: undefined, PTYKIT_D: 'spawn' })}\n${workDir}`)
    // The default on the same host: the app's.
    const apps = appOn(socketPath, { spawnEnvironment: 'app' })
    expect(await shellOutput(apps, script, { env: { PTYKIT_D: 'spawn' } })).toBe(
      `${printed({ PTYKIT_HOST_ONLY: undefined, PTYKIT_MARK: 'app', PTYKIT_APP: 'app', PTYKIT_D: 'spawn' })}\n${realpathSync(process.cwd())}`,
    )
  })

  it.each([['App'], ['inherit'], [''], [null], [1], [true], [{ env: 'app' }]])('refuses %j: invalid_option naming spawnEnvironment and the value', (value) => {
    const refused = (() => {
      try {
        return createPtyHostProvider({ spawnEnvironment: value as never })
      } catch (error) {
        return error
      }
    })()
    expect(isPtyHostError(refused) && refused).toMatchObject({ code: 'invalid_option', option: 'spawnEnvironment', value })
    expect((refused as Error).message).toContain("'app' or 'host'")
  })
})

/**
 * A host of an older ptykit, made of a real host behind a proxy: its welcome says nothing of the
 * app's environment, and like such a host it ignores the fields it does not know (the proxy drops
 * them, recording whether any were sent).
 */
async function olderHost(realSocketPath: string): Promise<{ socketPath: string; spawnParams: Record<string, unknown>[] }> {
  const spawnParams: Record<string, unknown>[] = []
  const { socketPath } = await olderHostInFrontOf(cleanups, realSocketPath, {
    welcome(welcome) {
      delete welcome['appEnvironment']
    },
    onAppMessage(message) {
      if (message.type !== 'request' || message.method !== 'spawn' || message.params === undefined) return 'forward'
      spawnParams.push({ ...message.params })
      for (const key of SPAWN_INHERITANCE_KEYS) delete message.params[key]
      return { rewritten: message }
    },
  })
  return { socketPath, spawnParams }
}

describe('a host of an older ptykit, which ignores the app\'s environment in a spawn request', () => {
  it("is sent the app's environment as the spawn's env (less the host-terminal variables, the spawn's env on top) and the app's directory as cwd; a variable only the host has stays", async () => {
    const real = fixtureWithDir('host-started-here')
    await hostStartedWith(real.socketPath, real.workDir, environmentWith({ PTYKIT_HOST_ONLY: 'host', PTYKIT_MARK: 'host' }))
    const older = await olderHost(real.socketPath)
    appEnvironment({ PTYKIT_MARK: 'app', PTYKIT_A: 'app', PTYKIT_B: 'app', TMUX: '/tmp/tmux-1/default,1,0' })
    const app = appOn(older.socketPath)
    const script = `${printVariables('PTYKIT_MARK', 'PTYKIT_HOST_ONLY', 'PTYKIT_A', 'PTYKIT_B', 'TMUX')}; pwd -P`
    expect(await shellOutput(app, script)).toBe(`${printed({ PTYKIT_MARK: 'app', PTYKIT_HOST_ONLY: 'host', PTYKIT_A: 'app', PTYKIT_B: 'app', TMUX: undefined })}\n${realpathSync(process.cwd())}`)
    expect(await shellOutput(app, script, { cwd: 'test', env: { PTYKIT_A: 'spawn' }, envToDelete: ['PTYKIT_B'] })).toBe(
      `${printed({ PTYKIT_MARK: 'app', PTYKIT_HOST_ONLY: 'host', PTYKIT_A: 'spawn', PTYKIT_B: undefined, TMUX: undefined })}\n${realpathSync(join(process.cwd(), 'test'))}`,
    )
    // Nothing it would ignore was sent; the spawn's own fields carried it.
    expect(older.spawnParams.map((params) => [params['inheritedEnv'], params['defaultCwd'], params['cwd']])).toEqual([
      [undefined, undefined, process.cwd()],
      [undefined, undefined, join(process.cwd(), 'test')],
    ])
  })
})

describe("the app's environment is never shown", () => {
  it("a host that refuses an inheritedEnv names the variable, never its value", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = await rawClient(socketPath)
    cleanups.push(async () => app.close())
    for (const [inheritedEnv, option] of [
      [{ PATH: '/bin', PTYKIT_TOKEN: `${SECRET}\0tail` }, 'inheritedEnv.PTYKIT_TOKEN'],
      [{ PTYKIT_TOKEN: [SECRET] }, 'inheritedEnv.PTYKIT_TOKEN'],
      [[`PTYKIT_TOKEN=${SECRET}`], 'inheritedEnv'],
      [`PTYKIT_TOKEN=${SECRET}`, 'inheritedEnv'],
    ] as const) {
      const reply = await app.request('spawn', { sessionId: 'refused', file: '/bin/sh', inheritedEnv })
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_option', option } })
      expect((reply as { error: { message: string } }).error.message).toContain('[redacted]')
      expect(JSON.stringify(reply)).not.toContain(SECRET)
    }
    expect((await app.request('list', {})).result).toEqual([])
  })

  it("a spawn whose request the app's environment makes too large for the host's frames: refused naming inheritedEnv, nothing kept, nothing sent", async () => {
    const { socketPath } = await inProcessHost(cleanups, { maxFrameBytes: 64 * 1024 })
    appEnvironment({ PTYKIT_TOKEN: SECRET, PTYKIT_A: 'x'.repeat(128 * 1024) })
    const controller = createPtyController({ provider: appOn(socketPath) })
    cleanups.push(() => controller.dispose())
    const error = await controller.spawn({ file: '/bin/sh' }).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error) && [error.code, error.option, error.value, error.outcome]).toEqual(['invalid_spawn_options', 'inheritedEnv', undefined, 'not_started'])
    expect((error as Error).message).toContain("the app's environment")
    expect(inspect(error, { depth: 20 })).not.toContain(SECRET)
    expect(await controller.listProcesses()).toEqual([])
    // Once the app's environment fits, a spawn goes through on the same connection.
    appEnvironment({ PTYKIT_A: undefined })
    await expect(controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })).resolves.toMatchObject({ id: expect.any(String) })
  })

  it("a host started by an app whose environment holds a secret writes it to no log or journal line, whatever its spawns do", async () => {
    const { socketPath } = hostFixture(cleanups)
    appEnvironment({ PTYKIT_TOKEN: SECRET })
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    // Spawns that run, that are refused by the host (a missing program, a missing directory) and
    // that are stopped; and one that is left running (the journal keeps its lines).
    expect(await shellOutput(provider, 'echo "token of ${#PTYKIT_TOKEN} characters"')).toBe(`token of ${SECRET.length} characters`)
    await expect(provider.spawn({ file: 'ptykit-no-such-program' })).rejects.toMatchObject({ code: 'invalid_spawn_option', option: 'file' })
    await expect(provider.spawn({ file: '/bin/sh', cwd: '/nonexistent/ptykit-dir' })).rejects.toMatchObject({ code: 'invalid_spawn_option', option: 'cwd' })
    const stopped = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'] })
    await provider.shutdown(stopped.id, { immediate: true })
    await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'] })
    const journal = readFileSync(`${socketPath}.journal`, 'utf8')
    expect(journal.split('\n').filter((line) => line !== '').length).toBeGreaterThan(4)
    expect(journal).not.toContain(SECRET)
    // The log the launcher opened (the host's stderr), whatever the host wrote to it.
    expect(existsSync(`${socketPath}.log`)).toBe(true)
    expect(readFileSync(`${socketPath}.log`, 'utf8')).not.toContain(SECRET)
  })
})
