// Two copies of ptykit in one process, as in an IDE's extension host: two extensions, each bundling
// its own ptykit (one a CommonJS bundle, one an ES module), each with its own controller and
// node-pty provider. Whatever is process-wide must not make them interfere: one 'exit' listener
// for both (the exit guard's registry is shared), no signal listener, each copy's errors
// recognized by the other's guards, a dispose of one that leaves the other's PTYs alone, and an
// app that still ends as it would without ptykit — by process.exit() with every PTY of both
// killed, or by an unhandled SIGTERM.
import { spawn } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bundleApp, REPO_ROOT, useAppDirs } from '../support/bundled-app.js'
import { isDead, killIfStill, processIdentity, waitFor, type ProcessIdentity } from './pty-test-support.js'

const appDir = useAppDirs()

/** How many PTYs each extension runs (each one a shell that ignores the hang-up). */
const PTYS_PER_EXTENSION = 25

/** One extension: its own ptykit inside, node-pty external. */
const EXTENSION = `
import { createPtyController, isPtySpawnError } from 'ptykit'
import { createNodePtyProvider, isNodePtyOptionError } from 'ptykit/node-pty'
export { isPtySpawnError, isNodePtyOptionError }
export async function activate(count: number) {
  const provider = createNodePtyProvider()
  const controller = createPtyController({ provider })
  const output = new Map<string, string>()
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await controller.spawn({ file: '/bin/sh', args: ['-c', 'trap "" HUP; echo "pid $$"; exec sleep 300'] })).id)
  while (!ids.every((id) => /pid \\d+/.test(output.get(id) ?? ''))) await new Promise((r) => setTimeout(r, 10))
  const pids = ids.map((id) => Number(/pid (\\d+)/.exec(output.get(id)!)![1]))
  const errors = {
    spawn: await controller.spawn({ file: 42 as unknown as string }).catch((error: unknown) => error),
    option: await provider.spawn({ file: 42 as unknown as string }).catch((error: unknown) => error),
  }
  return { pids, errors, dispose: () => controller.dispose() }
}
`

/** The extension host: loads both, reports, then ends as told (argv[2]). */
const HOST = `
const { createRequire } = require('node:module')
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGCHLD']
const listeners = () => ({ exit: process.listenerCount('exit'), signals: signals.map((s) => process.listenerCount(s)) })
const warnings = []
process.on('warning', (w) => warnings.push(w.name))
;(async () => {
  const before = listeners()
  const a = require('./out/a.cjs')
  const b = await import('./out/b.mjs')
  const [ranA, ranB] = await Promise.all([a.activate(${PTYS_PER_EXTENSION}), b.activate(${PTYS_PER_EXTENSION})])
  const across = [
    b.isPtySpawnError(ranA.errors.spawn), a.isPtySpawnError(ranB.errors.spawn),
    b.isNodePtyOptionError(ranA.errors.option), a.isNodePtyOptionError(ranB.errors.option),
  ]
  const ending = process.argv[2]
  if (ending === 'dispose-a') await ranA.dispose()
  console.log(JSON.stringify({ a: ranA.pids, b: ranB.pids, before, after: listeners(), across, warnings }))
  if (ending === 'exit' || ending === 'dispose-a') {
    // The test looks at the PTYs before the app exits (dispose-a), then the app exits.
    process.stdin.once('data', () => process.exit(0))
  }
  setInterval(() => undefined, 1000)
})()
`

type Report = { a: number[]; b: number[]; before: { exit: number; signals: number[] }; after: { exit: number; signals: number[] }; across: boolean[]; warnings: string[] }

const leftovers: (ProcessIdentity | null)[] = []
afterEach(() => {
  for (const identity of leftovers.splice(0)) killIfStill(identity)
})

/** Build both extensions and the host in a fresh app directory; start the host with `ending`. */
async function startExtensionHost(ending: 'exit' | 'dispose-a' | 'wait') {
  const dir = appDir()
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(join(REPO_ROOT, 'node_modules', 'node-pty'), join(dir, 'node_modules', 'node-pty'))
  bundleApp(dir, EXTENSION, { external: ['node-pty'], name: 'a.cjs', format: 'cjs' })
  bundleApp(dir, EXTENSION, { external: ['node-pty'], name: 'b.mjs', format: 'esm' })
  writeFileSync(join(dir, 'host.cjs'), HOST)
  const child = spawn(process.execPath, [join(dir, 'host.cjs'), ending], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] })
  let printed = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })))
  const line = await waitFor(() => /^\{"a".*\}$/m.exec(printed)?.[0], `the extension host to report (printed: ${printed})`, 30_000)
  const report = JSON.parse(line) as Report
  leftovers.push(...[...report.a, ...report.b].map(processIdentity))
  return { report, ended, child }
}

describe('two copies of ptykit (a CJS and an ESM bundle) in one process', () => {
  it('one exit listener for both, no signal listener, no warning, and each copy recognizes the other\'s errors', async () => {
    const { report, child, ended } = await startExtensionHost('wait')
    expect(report.a).toHaveLength(PTYS_PER_EXTENSION)
    expect(report.b).toHaveLength(PTYS_PER_EXTENSION)
    expect(report.after).toEqual({ exit: report.before.exit + 1, signals: report.before.signals })
    expect(report.warnings).toEqual([])
    expect(report.across).toEqual([true, true, true, true])
    // An unhandled SIGTERM ends the app by its default action, as it would without ptykit.
    child.kill('SIGTERM')
    expect(await ended).toEqual({ code: null, signal: 'SIGTERM' })
  }, 60_000)

  it('process.exit() kills every PTY of both copies, and the app exits with its own code', async () => {
    const { report, child, ended } = await startExtensionHost('exit')
    child.stdin.write('\n')
    expect(await ended).toEqual({ code: 0, signal: null })
    const all = [...report.a, ...report.b]
    await waitFor(() => (all.every(isDead) ? true : undefined), `every PTY of both copies dead (alive: ${all.filter((pid) => !isDead(pid)).join(' ')})`, 10_000)
  }, 60_000)

  it('one copy\'s dispose stops its own PTYs only; the other\'s are still killed at exit', async () => {
    const { report, child, ended } = await startExtensionHost('dispose-a')
    expect(report.a.filter((pid) => !isDead(pid))).toEqual([])
    expect(report.b.filter(isDead)).toEqual([])
    // Copy B still guards its PTYs: one exit listener is left.
    expect(report.after.exit).toBe(report.before.exit + 1)
    child.stdin.write('\n')
    expect(await ended).toEqual({ code: 0, signal: null })
    await waitFor(() => (report.b.every(isDead) ? true : undefined), 'every PTY of copy B dead', 10_000)
  }, 60_000)
})
