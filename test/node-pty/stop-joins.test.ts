/**
 * Stops that are joined late, and leaders that only look dead — found by a bug hunt from the host's
 * side (3 Dec): an immediate shutdown that joined a graceful one during its hang-up step lost its
 * SIGKILL; a stop still sweeping a job after the leader's exit was delivered was not joined by a
 * later shutdown or by dispose; a leader whose main thread exited while another thread runs (`Z` in
 * /proc, yet alive) was taken for dead.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { createPtyController } from 'ptykit/controller'
import { PtyEventLog, isDead, killIfStill, procRow, processIdentity, runsIgnoring, waitFor, expectNoChildLeftBehind, type ProcessIdentity } from './pty-test-support.js'

let provider: NodePtyProvider
let log: PtyEventLog
const leftovers: (ProcessIdentity | null)[] = []

expectNoChildLeftBehind(async () => {
  await provider.dispose().catch(() => undefined)
  // Known by pid and start time: a leftover that died long ago is never a later process with its pid.
  for (const leftover of leftovers.splice(0)) killIfStill(leftover)
  await new Promise((resolve) => setTimeout(resolve, 100))
})

beforeAll(() => {
  provider = createNodePtyProvider()
  log = new PtyEventLog(provider)
})

/** Where the threaded leader is compiled (once for the file), removed with it. */
let buildDir: string | undefined
afterAll(() => {
  if (buildDir !== undefined) rmSync(buildDir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// A process that ignores both graceful signals: only SIGKILL ends it (ignored dispositions survive exec).
const HUP_TERM_IGNORING = { file: '/bin/sh', args: ['-c', "trap '' HUP TERM; exec sleep 30"] }

describe('node-pty provider: stops that are joined late, and leaders that only look dead', () => {
  it('an immediate shutdown that joins a graceful one while its hang-up step is being sent still kills the process', async () => {
    // docs/node-pty-provider.md: "A second, immediate `shutdown` during a graceful one escalates it
    // to SIGKILL at once". The join is timed to land while the graceful stop's SIGHUP step awaits
    // its process-table read (a few ms after the stop began).
    const failures: string[] = []
    for (const delayMs of [1, 2, 3, 4, 6]) {
      const result = await provider.spawn(HUP_TERM_IGNORING)
      leftovers.push(processIdentity(result.pid!))
      await waitFor(() => (!isDead(result.pid!) ? true : undefined), 'the child')
      await sleep(50)
      const graceful = provider.shutdown(result.id, { timeoutMs: 4_000 }).then(
        () => 'resolved',
        (error: unknown) => `rejected: ${String(error)}`,
      )
      await sleep(delayMs)
      const started = Date.now()
      const immediate = await provider.shutdown(result.id, { immediate: true, timeoutMs: 1_500 }).then(
        () => 'resolved',
        (error: unknown) => `rejected: ${String(error)}`,
      )
      if (immediate !== 'resolved' || !isDead(result.pid!)) failures.push(`delay ${delayMs} ms: immediate ${immediate} after ${Date.now() - started} ms, leader dead: ${isDead(result.pid!)}`)
      try {
        process.kill(result.pid!, 'SIGKILL')
      } catch {
        // gone
      }
      await graceful
    }
    expect(failures).toEqual([])
  }, 40_000)

  // The leader dies of the hang-up at once (its exit is delivered); its background job ignores HUP
  // and TERM and stays in the leader's session and group: only the stop's SIGKILL ends it.
  const JOB_SURVIVES_HANGUP = { file: '/bin/sh', args: ['-c', "(trap '' HUP TERM; exec sleep 30) & echo BG=$!; sleep 30"] }

  /**
   * The job's pid, once the job ignores HUP and TERM and runs its sleep: `echo` prints the pid right
   * after the fork, before the job's trap (a hang-up sent then ended the job with the leader, in
   * 4 of 150 tries on a loaded machine).
   */
  async function jobOf(l: PtyEventLog, id: string): Promise<number> {
    const job = await waitFor(() => {
      const match = /BG=(\d+)/.exec(l.output(id))
      return match === null ? undefined : Number(match[1])
    }, 'the job pid')
    leftovers.push(processIdentity(job))
    await waitFor(() => (runsIgnoring(job, 'sleep', ['SIGHUP', 'SIGTERM']) ? true : undefined), 'the job to ignore HUP and TERM and run its sleep')
    return job
  }

  async function spawnWithJob(p: NodePtyProvider, l: PtyEventLog) {
    const result = await p.spawn(JOB_SURVIVES_HANGUP)
    return { result, job: await jobOf(l, result.id) }
  }

  it('an immediate shutdown during a graceful one whose leader already exited does not resolve while the session still lives', async () => {
    // docs/node-pty-provider.md: "A second, immediate `shutdown` during a graceful one escalates it
    // to SIGKILL at once" and "`shutdown` resolves only when everything the stop covers is gone".
    const { result, job } = await spawnWithJob(provider, log)
    const graceful = provider.shutdown(result.id, { timeoutMs: 5_000 })
    await log.exitOf(result.id) // the leader died of the SIGHUP; the job ignored it
    expect(isDead(job)).toBe(false)
    await provider.shutdown(result.id, { immediate: true, timeoutMs: 5_000 })
    const jobDeadWhenResolved = isDead(job)
    await graceful
    expect(jobDeadWhenResolved).toBe(true)
  })

  it('controller stopAndWait answers true only once the stopped session is gone (a job that ignores HUP and TERM)', async () => {
    // docs/controller.md: "`stopAndWait` resolves `true` only when a shutdown completed and the stop
    // was verified"; docs/node-pty-provider.md: "`shutdown` resolves only when everything the stop
    // covers is gone — which is why the controller's `stopAndWait` waits for the shutdown to complete".
    // Short graces: the job (HUP and TERM ignored) dies of the KILL 0.4 s into the stop, not 1 s.
    const own = createNodePtyProvider({ hangupGraceMs: 200, terminateGraceMs: 200 })
    const ownLog = new PtyEventLog(own)
    const controller = createPtyController({ provider: own })
    try {
      const reply = await controller.spawn(JOB_SURVIVES_HANGUP)
      const job = await jobOf(ownLog, reply.id)
      const verdict = await controller.stopAndWait(reply.id, { deadlineMs: Date.now() + 1_500 })
      const jobDeadAtVerdict = isDead(job)
      expect({ verdict, jobDeadAtVerdict }).toEqual({ verdict: true, jobDeadAtVerdict: true })
    } finally {
      await controller.dispose()
      await own.dispose()
    }
  })

  it('dispose() does not resolve while a stopping session (leader exited, job alive) still has a live process', async () => {
    // docs/node-pty-provider.md: "`dispose()` stops every PTY (the normal escalation), waits";
    // docs/writing-a-provider.md (conformance): "nothing left running after `dispose`".
    const own = createNodePtyProvider()
    const ownLog = new PtyEventLog(own)
    const { result, job } = await spawnWithJob(own, ownLog)
    const graceful = own.shutdown(result.id, { timeoutMs: 5_000 }).catch(() => undefined)
    await ownLog.exitOf(result.id)
    await own.dispose()
    const jobDeadAfterDispose = isDead(job)
    await graceful
    expect(jobDeadAfterDispose).toBe(true)
  })

  // A leader whose main thread ends (pthread_exit) while another thread keeps running and writing:
  // Linux shows the thread-group leader as `Z` in /proc/<pid>/stat, yet the process lives (its
  // num_threads field is 2). node-pty has not reaped it (waitpid has not returned).
  function buildThreadedLeader(): string {
    const dir = (buildDir ??= mkdtempSync(join(tmpdir(), 'ptykit-threaded-leader-')))
    const binary = join(dir, 'mt')
    if (existsSync(binary)) return binary
    const source = join(dir, 'mt.c')
    writeFileSync(
      source,
      `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *run(void *arg) { for (int i = 0; i < 600; i++) { printf("tick %d\\n", i); fflush(stdout); usleep(50000); } return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); usleep(50000); pthread_exit(0); }
`,
    )
    const built = spawnSync('gcc', ['-pthread', '-o', binary, source])
    if (built.status !== 0) throw new Error(`gcc failed (apt-get install -y gcc): ${built.stderr?.toString() ?? built.error?.message}`)
    return binary
  }

  it('a leader whose main thread exited while another thread runs is not reported gone by probeLiveness', async () => {
    // DESIGN.md §2: "probePtyLiveness → boolean | null (`false` only when the owning provider proved
    // the PTY absent)".
    const binary = buildThreadedLeader()
    const result = await provider.spawn({ file: binary, args: [] })
    leftovers.push(processIdentity(result.pid!))
    await waitFor(() => (log.output(result.id).includes('tick 2') ? true : undefined), 'the thread’s output')
    expect(procRow(result.pid!)?.state).toBe('Z') // what the provider sees: a "zombie" leader
    const liveness = await provider.probeLiveness(result.id)
    const before = log.output(result.id).length
    await sleep(300)
    const stillWriting = log.output(result.id).length > before
    try {
      process.kill(result.pid!, 'SIGKILL')
    } catch {
      // gone
    }
    await log.exitOf(result.id)
    expect({ stillWriting, liveness }).toEqual({ stillWriting: true, liveness: true })
  })

  it('shutdown stops a leader whose main thread exited while another thread runs', async () => {
    // docs/node-pty-provider.md: shutdown "signals … (HUP → TERM → KILL) … waits for the physical
    // exit"; "`shutdown` resolves only when everything the stop covers is gone".
    const binary = buildThreadedLeader()
    const result = await provider.spawn({ file: binary, args: [] })
    leftovers.push(processIdentity(result.pid!))
    await waitFor(() => (log.output(result.id).includes('tick 2') ? true : undefined), 'the thread’s output')
    const outcome = await provider.shutdown(result.id, { timeoutMs: 2_000 }).then(
      () => 'resolved',
      (error: unknown) => `rejected: ${String(error)}`,
    )
    const aliveAfter = procRow(result.pid!) !== null && log.exits(result.id).length === 0
    try {
      process.kill(result.pid!, 'SIGKILL')
    } catch {
      // gone
    }
    await log.exitOf(result.id)
    expect({ outcome, aliveAfter }).toEqual({ outcome: 'resolved', aliveAfter: false })
  })

  // A review (3 Dec): one id can hold several unfinished stops once it was respawned.
  const JOB = JOB_SURVIVES_HANGUP

  it('dispose waits for the first incarnation’s unfinished stop after the id was respawned and stopped again', async () => {
    const own = createNodePtyProvider()
    const log = new PtyEventLog(own)
    try {
      const first = await own.spawn({ ...JOB, sessionId: 'reused' })
      const job = await waitFor(() => {
        const m = /BG=(\d+)/.exec(log.output(first.id))
        return m === null ? undefined : Number(m[1])
      }, 'job')
      leftovers.push(processIdentity(job))
      const graceful = own.shutdown('reused', { timeoutMs: 8_000 }).catch(() => undefined)
      // The leader is gone; its stop still sweeps the job (HUP and TERM ignored, KILL at 1 s).
      await log.exitOf('reused')
      // The id is free again: a second process under it, stopped too.
      const second = await own.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; sleep 30"], sessionId: 'reused' })
      leftovers.push(processIdentity(second.pid!))
      const secondStop = own.shutdown('reused', { timeoutMs: 8_000 }).catch(() => undefined)
      await own.dispose()
      const jobDeadAfterDispose = isDead(job)
      await Promise.all([graceful, secondStop])
      expect(jobDeadAfterDispose).toBe(true)
    } finally {
      for (const leftover of leftovers) killIfStill(leftover)
    }
  }, 20_000)

  it('a shutdown of the first incarnation (expectedIncarnationId) joins its unfinished stop after the id was respawned and stopped', async () => {
    const own = createNodePtyProvider()
    const log = new PtyEventLog(own)
    try {
      const first = await own.spawn({ ...JOB, sessionId: 'reused2' })
      const job = await waitFor(() => {
        const m = /BG=(\d+)/.exec(log.output(first.id))
        return m === null ? undefined : Number(m[1])
      }, 'job')
      leftovers.push(processIdentity(job))
      const graceful = own.shutdown('reused2', { timeoutMs: 8_000 }).catch(() => undefined)
      await log.exitOf('reused2')
      const second = await own.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; sleep 30"], sessionId: 'reused2' })
      leftovers.push(processIdentity(second.pid!))
      const secondStop = own.shutdown('reused2', { timeoutMs: 8_000 }).catch(() => undefined)
      await own.shutdown('reused2', { expectedIncarnationId: first.incarnationId!, immediate: true, timeoutMs: 5_000 })
      const jobDead = isDead(job)
      await Promise.all([graceful, secondStop])
      await own.dispose()
      expect(jobDead).toBe(true)
    } finally {
      for (const leftover of leftovers) killIfStill(leftover)
    }
  }, 20_000)
})
