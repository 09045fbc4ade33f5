// An app that ends without disposing its node-pty provider: `killOnProcessExit` (default on)
// kills what its PTYs still run, as the process ends — real apps, real shells, real signals.
import { spawn } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { guardProcessExit } from '../../src/node-pty/process-exit-guard.js'
import { bundleNodeEntry, nodeArgsFor } from '../support/node-entry-bundle.js'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { isDead, killIfStill, processIdentity, PtyEventLog, waitFor, type ProcessIdentity } from './pty-test-support.js'

const APP = resolve(import.meta.dirname, 'fixtures', 'app-ends-without-dispose.ts')
const GUARD = resolve(import.meta.dirname, '../../src/node-pty/process-exit-guard.ts')

type RunningApp = {
  readonly pids: number[]
  /** How many listeners the app has of SIGINT, SIGTERM and SIGHUP (together), and of 'exit', once its PTYs ran. */
  readonly listeners: { signal: number; exit: number }
  /** Resolves with how the app ended. */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly printed: () => string
  kill(signal: NodeJS.Signals): void
}

const leftovers: (ProcessIdentity | null)[] = []
const apps: RunningApp[] = []
afterEach(() => {
  for (const app of apps.splice(0)) app.kill('SIGKILL')
  for (const identity of leftovers.splice(0)) killIfStill(identity)
})

/** Start the app and wait for the processes of its three PTYs. */
async function startApp(ending: string, providerOptions: object = {}, copies = 1): Promise<RunningApp> {
  const command = [process.execPath, ...nodeArgsFor(APP), ending, JSON.stringify(providerOptions), String(copies)]
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
  let printed = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })))
  const line = await waitFor(() => /^\{"pids".*\}$/m.exec(printed)?.[0], 'the app to print its PTYs\' processes', 30_000)
  const { pids, signalListeners, exitListeners } = JSON.parse(line) as { pids: number[]; signalListeners: number; exitListeners: number }
  leftovers.push(...pids.map(processIdentity))
  const app: RunningApp = {
    pids,
    listeners: { signal: signalListeners, exit: exitListeners },
    ended,
    printed: () => printed,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    },
  }
  apps.push(app)
  return app
}

/** Wait until every process is dead (gone, or a zombie nobody reaped yet). */
async function expectAllDead(pids: number[]): Promise<void> {
  await waitFor(() => (pids.every(isDead) ? true : undefined), `every PTY process dead (alive: ${pids.filter((pid) => !isDead(pid)).join(' ')})`, 5_000)
}

describe('killOnProcessExit: an app that ends without disposing leaves no PTY process behind', () => {
  it('process.exit(): every process of every PTY is killed — hang-up ignorers and a job in its own group included', async () => {
    const app = await startApp('exit')
    expect(app.pids).toHaveLength(4)
    expect(await app.ended).toEqual({ code: 0, signal: null })
    await expectAllDead(app.pids)
  })

  it('at scale: 300 PTYs (400 processes) of an app that exits are all killed', async () => {
    const app = await startApp('exit', {}, 100)
    expect(app.pids).toHaveLength(400)
    expect(await app.ended).toEqual({ code: 0, signal: null })
    await expectAllDead(app.pids)
  }, 60_000)

  it.each(['throw', 'reject'] as const)('an uncaught exception or unhandled rejection (%s): the same, and the app still fails with its error', async (ending) => {
    const app = await startApp(ending)
    expect(await app.ended).toEqual({ code: 1, signal: null })
    expect(app.printed()).toContain('the app fails')
    await expectAllDead(app.pids)
  })

  it('an unhandled SIGTERM ends the app by its default action, as without ptykit: no signal is listened for, and what survives is what raw node-pty leaves', async () => {
    const app = await startApp('wait')
    expect(app.listeners.signal).toBe(0)
    app.kill('SIGTERM')
    expect(await app.ended).toEqual({ code: null, signal: 'SIGTERM' })
    await new Promise((done) => setTimeout(done, 300))
    // The hang-up ignorer outlives its terminal (the afterEach kills it).
    expect(isDead(app.pids[0]!)).toBe(false)
  })

  it('a signal the app handles by exiting: the exit kills', async () => {
    const app = await startApp('handles-SIGTERM')
    app.kill('SIGTERM')
    await waitFor(() => (app.printed().includes('handled') ? true : undefined), 'the app to handle SIGTERM')
    expect(app.pids.filter(isDead)).toEqual([])
    expect(await app.ended).toEqual({ code: 5, signal: null })
    await expectAllDead(app.pids)
  })

  it('the getting-started guide\'s handler (process.once, dispose, die of the signal) runs to its end first', async () => {
    const app = await startApp('disposes-on-SIGTERM')
    app.kill('SIGTERM')
    expect(await app.ended).toEqual({ code: null, signal: 'SIGTERM' })
    expect(app.printed()).toContain('disposed')
    await expectAllDead(app.pids)
  })

  it('killOnProcessExit: false keeps raw node-pty\'s behaviour: the hang-up ignorers survive the app', async () => {
    const app = await startApp('exit', { killOnProcessExit: false })
    expect(await app.ended).toEqual({ code: 0, signal: null })
    await new Promise((done) => setTimeout(done, 300))
    const [ignorer, , job] = app.pids
    expect([ignorer, job].map((pid) => isDead(pid!))).toEqual([false, false])
  })
})

/**
 * The process's guard registry, as every copy of ptykit finds it. Test files share their worker's
 * globals (vitest `isolate: false`): a provider an earlier file never disposed may be registered.
 */
function registeredKillers(): number {
  const registry = (globalThis as Record<symbol, { killers: Set<unknown> } | undefined>)[Symbol.for('ptykit.processExitGuard.v1')]
  return registry?.killers.size ?? 0
}

describe('the node-pty provider and the exit guard', () => {
  it('a provider is registered while a PTY of it may have processes, and one that never spawned not at all', async () => {
    const before = registeredKillers()
    const idle = createNodePtyProvider()
    const provider = createNodePtyProvider()
    const optedOut = createNodePtyProvider({ killOnProcessExit: false })
    expect(registeredKillers()).toBe(before)
    const exits = new PtyEventLog(provider)
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'read line'] })
    await optedOut.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    expect(registeredKillers()).toBe(before + 1)
    provider.write(id, 'done\r')
    await exits.exitOf(id)
    // No PTY left, so nothing to kill: the guard lets go of the provider (it kept an undisposed
    // one alive for good); the next spawn registers it again.
    expect(registeredKillers()).toBe(before)
    await provider.spawn({ file: '/bin/sleep', args: ['60'] })
    expect(registeredKillers()).toBe(before + 1)
    await Promise.all([idle.dispose(), provider.dispose(), optedOut.dispose()])
    expect(registeredKillers()).toBe(before)
  })

  it('refuses a killOnProcessExit that is not a boolean, naming it', () => {
    expect(() => createNodePtyProvider({ killOnProcessExit: 'yes' as unknown as boolean })).toThrow(/killOnProcessExit/)
  })
})

describe('guardProcessExit', () => {
  it('listens for the process\'s exit once however many providers register, for no signal, and stops when the last one leaves', () => {
    // With a provider of an earlier file still registered, the guard listens already.
    const listening = registeredKillers() > 0 ? 0 : 1
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
    const signalListeners = (): number[] => signals.map((signal) => process.listenerCount(signal))
    const before = { exit: process.listenerCount('exit'), signals: signalListeners() }
    const releaseA = guardProcessExit(() => undefined)
    const releaseB = guardProcessExit(() => undefined)
    expect(process.listenerCount('exit')).toBe(before.exit + listening)
    expect(signalListeners()).toEqual(before.signals)
    releaseA()
    releaseA()
    expect(process.listenerCount('exit')).toBe(before.exit + listening)
    releaseB()
    expect(process.listenerCount('exit')).toBe(before.exit)
  })

  it('registers nothing in a worker thread (a kill during its teardown would abort the process)', async () => {
    const worker = new Worker(
      `import(${JSON.stringify(pathToFileURL(bundleNodeEntry(GUARD)).href)}).then(({ guardProcessExit }) => {
         const before = process.listenerCount('exit');
         guardProcessExit(() => {});
         const registry = globalThis[Symbol.for('ptykit.processExitGuard.v1')];
         require('node:worker_threads').parentPort.postMessage({ killers: registry === undefined ? 0 : registry.killers.size, addedExitListeners: process.listenerCount('exit') - before });
       })`,
      { eval: true },
    )
    const seen = await new Promise<unknown>((resolveSeen, rejectSeen) => {
      worker.once('message', resolveSeen)
      worker.once('error', rejectSeen)
    })
    await worker.terminate()
    expect(seen).toEqual({ killers: 0, addedExitListeners: 0 })
  })
})
