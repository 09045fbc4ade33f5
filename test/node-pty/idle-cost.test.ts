import { spawn as spawnChild, type ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createNodePtyProvider, type NodePtyModule } from 'ptykit/node-pty'
import { NODE_PTY_DEATH_POLL_BATCH, NODE_PTY_DEATH_POLL_INTERVAL_MS } from '../../src/node-pty/child-death-watch.js'
import { standInTerminal } from './pty-test-support.js'

// Count the provider's synchronous /proc reads (the death watch's thorough look is one per session).
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return { ...actual, openSync: vi.fn(actual.openSync), open: vi.fn(actual.open) }
})

/** Synchronous reads (opens) of `/proc/<pid>/stat` since the mock was last cleared. */
function statReadsOf(pid: number): number {
  return vi.mocked(fs.openSync).mock.calls.filter(([path]) => path === `/proc/${pid}/stat`).length
}

/**
 * A stand-in node-pty whose terminals all name one real, idle process (so every look at the OS
 * answers "alive") and exit when the test says so. No drain: a stand-in has no slave side.
 */
function standIn(pid: number) {
  const exits: Array<() => void> = []
  const module: NodePtyModule = {
    spawn(_file, _args, options) {
      const { terminal, exit } = standInTerminal(pid, options)
      exits.push(() => exit({ exitCode: 0 }))
      return terminal
    },
  }
  return { module, exitAll: () => exits.splice(0).forEach((exit) => exit()) }
}

let idle: ChildProcess | undefined
afterEach(() => {
  vi.useRealTimers()
  idle?.kill('SIGKILL')
  idle = undefined
})

describe('an idle node-pty provider (issue 18)', () => {
  it(`looks at no more than ${NODE_PTY_DEATH_POLL_BATCH} sessions per safety-net poll, and at least N times within ceil(N / ${NODE_PTY_DEATH_POLL_BATCH}) polls (which sessions: session-table.test.ts)`, async () => {
    idle = spawnChild('/bin/sleep', ['60'], { stdio: 'ignore' })
    const pid = idle.pid as number
    const fake = standIn(pid)
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const provider = createNodePtyProvider({ platform: 'linux', drainOutputAtExit: false, loadNodePty: () => Promise.resolve(fake.module) })
    const sessions = 100
    vi.mocked(fs.openSync).mockClear()
    vi.mocked(fs.open).mockClear()
    for (let i = 0; i < sessions; i++) await provider.spawn({ file: '/bin/sh' })
    await new Promise((resolve) => setImmediate(resolve))
    // A spawn reads nothing from /proc: the leader's start time is learnt by the first look.
    const spawnReads = [...vi.mocked(fs.openSync).mock.calls, ...vi.mocked(fs.open).mock.calls].filter(([path]) => String(path).startsWith('/proc/'))
    expect(spawnReads).toEqual([])
    const perPoll: number[] = []
    for (let poll = 0; poll < Math.ceil(sessions / NODE_PTY_DEATH_POLL_BATCH); poll++) {
      vi.mocked(fs.openSync).mockClear()
      vi.advanceTimersByTime(NODE_PTY_DEATH_POLL_INTERVAL_MS)
      perPoll.push(statReadsOf(pid))
    }
    // Before: every poll read all 100 (a blocked event loop of ~80 ms at 1 000 PTYs, loaded).
    expect(perPoll.every((reads) => reads <= NODE_PTY_DEATH_POLL_BATCH)).toBe(true)
    expect(perPoll.reduce((sum, reads) => sum + reads, 0)).toBeGreaterThanOrEqual(sessions)
    expect((await provider.listProcesses()).length).toBe(sessions)
    fake.exitAll()
    expect(await provider.listProcesses()).toEqual([])
    await provider.dispose()
  })
})
