/**
 * The closing host's synchronous kill of what its stops left (close-kill.ts): every process of a
 * stopped session's leader — its group, its session, its descendants — SIGKILLed in one call,
 * before the host process may exit; nothing for a leader whose pid now names another process.
 * (Linux: the checks read `/proc`, as the pty host tests do.)
 */
import { spawn } from 'node:child_process'
import { afterEach, expect, it } from 'vitest'
import { createProcessInspector } from '../../src/node-pty/process-inspector.js'
import { childStartTime, killLeftAtClose } from '../../src/pty-host/close-kill.js'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { sessionMembers } from './pty-host-test-support.js'

const inspector = createProcessInspector(process.platform)
const started: number[] = []

afterEach(() => {
  for (const sid of started.splice(0)) {
    for (const pid of sessionMembers(sid)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Gone meanwhile.
      }
    }
  }
})

/** A session leader of its own (setsid) that ignores the hang-up and SIGTERM, its loop's `sleep` beside it. */
async function stubbornSession(): Promise<number> {
  const child = spawn('/bin/sh', ['-c', `trap '' HUP TERM; while :; do sleep 1; done`], { detached: true, stdio: 'ignore' })
  const pid = child.pid!
  started.push(pid)
  await waitFor(() => (sessionMembers(pid).length >= 2 ? true : undefined), 'the loop to run its sleep')
  return pid
}

it('kills every process of a stopped session at once, and says the leader was killed alive', async () => {
  const pid = await stubbornSession()
  const leaderStartTime = childStartTime(inspector, pid)
  expect(leaderStartTime).toMatch(/^\d+$/)
  expect(killLeftAtClose([{ pid, leaderStartTime, leaderGone: false }], inspector)).toEqual([true])
  await waitFor(() => (sessionMembers(pid).length === 0 && isDead(pid) ? true : undefined), 'the session to be gone', 5_000)
})

it('signals nothing for a leader whose pid shows another start time (its pid given away)', async () => {
  const pid = await stubbornSession()
  const sent: number[] = []
  const alive = killLeftAtClose([{ pid, leaderStartTime: '1', leaderGone: false }], inspector, { kill: (target) => void sent.push(target) })
  expect(alive).toEqual([false])
  expect(sent).toEqual([])
})

it("signals the rest of a session whose leader's exit was heard, without calling the leader killed alive", async () => {
  const pid = await stubbornSession()
  const sent: number[] = []
  // The leader's pid is still its own here: as a session whose leader is gone would read when a member runs on.
  const alive = killLeftAtClose([{ pid, leaderStartTime: childStartTime(inspector, pid), leaderGone: true }], inspector, { kill: (target) => void sent.push(target) })
  expect(alive).toEqual([false])
  expect(sent).toContain(-pid)
})

it('does nothing for no leader', () => {
  expect(killLeftAtClose([], inspector, { kill: () => expect.unreachable() })).toEqual([])
})
