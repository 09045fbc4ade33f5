/**
 * The node-pty provider's synchronous kill (`sigkillLeadersNow`, process-tree.ts) — of what its
 * `dispose()` stops left at their deadline (the kill a closing pty host relies on before its process
 * exits; until 7 Dec the host's own `killLeftAtClose`, which these cases tested) and of
 * `killOnProcessExit`: every process of a leader's PTY — its group, its session, its descendants —
 * SIGKILLed in one call; nothing for a leader whose pid now names another process.
 * (Linux: the checks read `/proc`.)
 */
import { spawn } from 'node:child_process'
import { afterEach, expect, it } from 'vitest'
import { createProcessInspector } from '../../src/node-pty/process-inspector.js'
import { sigkillLeadersNow } from '../../src/node-pty/process-tree.js'
import { isDead, killSessionMembers, procRow, sessionMembers, waitFor } from './pty-test-support.js'

const inspector = createProcessInspector(process.platform)


/** The start time of `pid` now (`/proc/<pid>/stat` field 22), or `null`. */
function startTimeOf(pid: number): string | null {
  return procRow(pid)?.startTime ?? null
}
const started: number[] = []

afterEach(() => {
  for (const sid of started.splice(0)) {
    killSessionMembers(sid)
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

it('kills every process of a leader’s session at once, and says the leader was killed alive', async () => {
  const pid = await stubbornSession()
  const leaderStartTime = startTimeOf(pid)
  expect(leaderStartTime).toMatch(/^\d+$/)
  expect(sigkillLeadersNow([{ pid, leaderStartTime, leaderGone: false }], inspector, true)).toEqual([true])
  await waitFor(() => (sessionMembers(pid).length === 0 && isDead(pid) ? true : undefined), 'the session to be gone', 5_000)
})

it('signals nothing for a leader whose pid shows another start time (its pid given away)', async () => {
  const pid = await stubbornSession()
  const sent: number[] = []
  const alive = sigkillLeadersNow([{ pid, leaderStartTime: '1', leaderGone: false }], inspector, true, (target) => void sent.push(target))
  expect(alive).toEqual([false])
  expect(sent).toEqual([])
})

it("signals the rest of a session whose leader's exit was heard, without calling the leader killed alive", async () => {
  const pid = await stubbornSession()
  const sent: number[] = []
  // The leader's pid is still its own here: as a session whose leader is gone would read when a member runs on.
  const alive = sigkillLeadersNow([{ pid, leaderStartTime: startTimeOf(pid), leaderGone: true }], inspector, true, (target) => void sent.push(target))
  expect(alive).toEqual([false])
  expect(sent).toContain(-pid)
})

it('does nothing for no leader', () => {
  expect(sigkillLeadersNow([], inspector, true, () => expect.unreachable())).toEqual([])
})
