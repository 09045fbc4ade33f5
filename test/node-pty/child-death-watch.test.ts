import { execFile, spawn, spawnSync } from 'node:child_process'
import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { ChildDeathWatch, NODE_PTY_DEATH_WATCH_IDLE_MS, type ChildDeathCheckReason } from '../../src/node-pty/child-death-watch.js'
import { createNodePtyProvider } from 'ptykit/node-pty'
import type { NodePtyModule } from '../../src/node-pty/node-pty-module.js'
import { PtyEventLog, standInTerminal } from './pty-test-support.js'

const watches: ChildDeathWatch[] = []
afterEach(() => {
  for (const watch of watches.splice(0)) watch.stop()
})

/** Wait past the watch's idle linger (real time: the listener is a real signal handle). */
function pastIdleDelay(ms = NODE_PTY_DEATH_WATCH_IDLE_MS): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms + 30))
}

/** Run a program through child_process and resolve with its exit code. */
function exitCodeOf(file: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    execFile(file, args, (error) => resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : null))
  })
}

describe('ChildDeathWatch', () => {
  it('holds exactly one SIGCHLD listener while active, none after the idle delay, and checks on every SIGCHLD', async () => {
    const baseline = process.listenerCount('SIGCHLD')
    let checks = 0
    const reasons = new Set<ChildDeathCheckReason>()
    const watch = new ChildDeathWatch((reason) => {
      checks += 1
      reasons.add(reason)
    }, { useSignal: true, idleMs: 40 })
    watches.push(watch)
    watch.setActive(true)
    watch.setActive(true)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    // A child_process child's death is a SIGCHLD too; child_process still sees its exit status.
    expect(await exitCodeOf('/bin/sh', ['-c', 'exit 7'])).toBe(7)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(checks).toBeGreaterThan(0)
    expect(reasons).toEqual(new Set(['signal']))
    watch.setActive(false)
    watch.setActive(false)
    // Lingers for back-to-back use: re-activation within the delay keeps the same listener.
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    watch.setActive(true)
    watch.setActive(false)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    await pastIdleDelay(40)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    expect(watch.installed).toBe(false)
    const before = checks
    expect(await exitCodeOf('/bin/sh', ['-c', 'exit 0'])).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(checks).toBe(before)
  })
})

describe('ChildDeathWatch.stop', () => {
  it('removes the listener at once, even during the idle delay', () => {
    const baseline = process.listenerCount('SIGCHLD')
    const watch = new ChildDeathWatch(() => {}, { useSignal: true })
    watches.push(watch)
    watch.setActive(true)
    watch.setActive(false)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    watch.stop()
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    watch.setActive(true)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    watch.stop()
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
  })
})

describe('ChildDeathWatch.setSignalWanted', () => {
  it('installs no SIGCHLD listener while not wanted (the poll still runs), and one at once when wanted again', async () => {
    const baseline = process.listenerCount('SIGCHLD')
    const reasons: ChildDeathCheckReason[] = []
    const watch = new ChildDeathWatch((reason) => reasons.push(reason), { useSignal: true })
    watches.push(watch)
    watch.setSignalWanted(false)
    watch.setActive(true)
    expect(watch.installed).toBe(true)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    expect(await exitCodeOf('/bin/sh', ['-c', 'exit 0'])).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(reasons).toEqual([])
    watch.setSignalWanted(true)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    expect(await exitCodeOf('/bin/sh', ['-c', 'exit 0'])).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(reasons).toContain('signal')
    watch.setSignalWanted(false)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    watch.stop()
    watch.setSignalWanted(true)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
  })
})

describe('the node-pty provider’s SIGCHLD listener', () => {
  it('is never installed for node-pty’s own PTYs, which report their reaps (child_process keeps working)', async () => {
    const baseline = process.listenerCount('SIGCHLD')
    const provider = createNodePtyProvider()
    const log = new PtyEventLog(provider)
    const a = await provider.spawn({ file: 'cat' })
    const b = await provider.spawn({ file: 'sh', args: ['-c', 'exit 3'] })
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    const codes = await Promise.all([3, 0, 5].map((code) => exitCodeOf('/bin/sh', ['-c', `exit ${code}`])))
    expect(codes).toEqual([3, 0, 5])
    expect(spawnSync('/bin/sh', ['-c', 'exit 4']).status).toBe(4)
    await log.exitOf(b.id)
    expect(log.exits(b.id)).toEqual([expect.objectContaining({ cause: { kind: 'exited', exitCode: 3 } })])
    await provider.shutdown(a.id)
    expect(log.exits(a.id)).toHaveLength(1)
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    await provider.dispose()
  })

  it('is installed while a stand-in’s PTY (no reap report) is live, and a short idle delay after', async () => {
    const baseline = process.listenerCount('SIGCHLD')
    // The stand-in's terminals name a real, idle process (every look at the OS answers "alive").
    const idle = spawn('/bin/sleep', ['60'], { stdio: 'ignore' })
    onTestFinished(() => {
      idle.kill('SIGKILL')
    })
    const exits: Array<() => void> = []
    const module: NodePtyModule = {
      spawn(_file, _args, options) {
        const { terminal, exit } = standInTerminal(idle.pid as number, options)
        exits.push(() => exit({ exitCode: 0 }))
        return terminal
      },
    }
    const provider = createNodePtyProvider({ loadNodePty: () => Promise.resolve(module) })
    const real = createNodePtyProvider()
    await provider.spawn({ file: '/bin/sh' })
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    // A node-pty PTY beside it changes nothing; the stand-in's end takes the listener away.
    const own = await real.spawn({ file: 'cat' })
    expect(process.listenerCount('SIGCHLD')).toBe(baseline + 1)
    exits.splice(0).forEach((exit) => exit())
    await pastIdleDelay()
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    await real.shutdown(own.id)
    await provider.dispose()
    await real.dispose()
  })
})
