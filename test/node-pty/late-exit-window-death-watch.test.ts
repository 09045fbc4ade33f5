/**
 * The death watch once `dispose()`'s late-exit wait gave up ({@link NODE_PTY_DISPOSE_LATE_EXIT_MS})
 * with two or more exits still owed. Before, the provider stopped the watch at the bound, and the
 * first of those PTYs to end afterwards started it again (its end asked the watch to stay active
 * while another session was in the table): a poll every second — a `/proc` read per stuck session,
 * an unref'd interval — and, for a terminal whose reap node-pty does not report, a process-wide
 * SIGCHLD listener, for as long as the last one did not end, for good if it never does. The bound
 * is the end of the provider's watching: no timer or listener of it survives the window.
 *
 * The sessions are stand-in terminals naming real processes (each a `sleep` in a session of its
 * own, so the disposal's kill reaches it alone), whose exit reaches the provider when the test says.
 */
import { spawn as spawnChild, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { NODE_PTY_DEATH_POLL_INTERVAL_MS, NODE_PTY_DEATH_WATCH_IDLE_MS } from '../../src/node-pty/child-death-watch.js'
import { createNodePtyProvider, NODE_PTY_DISPOSE_LATE_EXIT_MS, type NodePtyModule, type NodePtyProvider } from '../../src/node-pty/index.js'
import type { PtyExitEvent } from '../../src/contracts/index.js'
import { disposeAdvancingReapWait, expectNoChildLeftBehind, standInTerminal } from './pty-test-support.js'

const providers: NodePtyProvider[] = []
const sleepers: ChildProcess[] = []
afterEach(async () => {
  vi.useRealTimers()
  // Waited for: a SIGKILLed process is not dead at once on a loaded machine.
  const alive = sleepers.splice(0).filter((sleeper) => sleeper.exitCode === null && sleeper.signalCode === null)
  const exited = alive.map((sleeper) => once(sleeper, 'exit'))
  for (const sleeper of alive) sleeper.kill('SIGKILL')
  await Promise.all(exited)
})
expectNoChildLeftBehind(async () => {
  for (const provider of providers.splice(0)) await provider.dispose()
})

/** A provider over `count` stand-in terminals, each naming a real `sleep`; `exit(i)` delivers the i-th's exit. */
function providerOfStuckSessions(count: number) {
  const exits: Array<() => void> = []
  const pids: number[] = []
  for (let i = 0; i < count; i++) {
    const sleeper = spawnChild('/bin/sleep', ['60'], { stdio: 'ignore', detached: true })
    sleepers.push(sleeper)
    pids.push(sleeper.pid as number)
  }
  let next = 0
  const module: NodePtyModule = {
    spawn(_file, _args, options) {
      const { terminal, exit } = standInTerminal(pids[next++] as number, options)
      exits.push(() => exit({ exitCode: 0, signal: 9 }))
      return terminal
    },
  }
  const provider = createNodePtyProvider({ platform: 'linux', drainOutputAtExit: false, sweepSession: false, shutdownDeadlineMs: 0, loadNodePty: () => Promise.resolve(module) })
  providers.push(provider)
  return { provider, exit: (i: number) => exits[i]?.() }
}

describe("node-pty dispose(): the death watch after the late-exit wait's bound", () => {
  for (const stuck of [2, 3]) {
    it(`keeps no timer once the bound passed, though ${stuck} owed exits come after it, one by one`, async () => {
      const sigchldListeners = process.listenerCount('SIGCHLD')
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
      const { provider, exit } = providerOfStuckSessions(stuck)
      const exits: PtyExitEvent[] = []
      provider.onExit((event) => exits.push(event))
      for (let i = 0; i < stuck; i++) await provider.spawn({ file: '/bin/sh' })
      await disposeAdvancingReapWait(provider)
      // Owed: the watch still runs (its poll), as the wait's timer does.
      expect(vi.getTimerCount()).toBeGreaterThan(0)
      vi.advanceTimersByTime(NODE_PTY_DISPOSE_LATE_EXIT_MS)
      expect(vi.getTimerCount()).toBe(0)
      expect(process.listenerCount('SIGCHLD')).toBe(sigchldListeners)
      // The stuck ones end after the bound, all but the last: nothing starts watching again.
      for (let i = 0; i < stuck - 1; i++) {
        exit(i)
        // Nor a SIGCHLD listener (these stand-ins' reaps are not reported: the watch listens for them).
        expect({ timers: vi.getTimerCount(), sigchldListeners: process.listenerCount('SIGCHLD') }).toEqual({ timers: 0, sigchldListeners })
        vi.advanceTimersByTime(NODE_PTY_DEATH_WATCH_IDLE_MS + 10 * NODE_PTY_DEATH_POLL_INTERVAL_MS)
        expect(vi.getTimerCount()).toBe(0)
      }
      exit(stuck - 1)
      expect(vi.getTimerCount()).toBe(0)
      // The provider had let go: those exits reached nobody.
      expect(exits).toEqual([])
    })
  }
})
