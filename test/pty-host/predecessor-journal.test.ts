/**
 * A host that dies hard (SIGKILL) leaves running what ignored its terminals' hang-up. Its
 * successor reads the dead host's session journal and answers for those processes: a probe is
 * `true` while one runs and `false` once it is proven gone, a stop stops it and is verified —
 * from the app that spawned it and from a restarted one. Before, the PTY stayed unverifiable
 * (`null`) and the process ran on as an orphan no ptykit call could stop.
 */
import { spawn as spawnChild, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createPtyController, type PtyController } from 'ptykit/controller'
import type { PtyExitEvent } from 'ptykit/contracts'
import { startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { isDeadState, killIfStill, procRow, processIdentity, runsIgnoring, waitFor, type ProcessIdentity } from '../node-pty/pty-test-support.js'
import type { Observed as ForcedPidReuse } from './fixtures/forced-pid-reuse.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { readPredecessorJournal } from '../../src/pty-host/session-journal.js'
import { inProcessHost, killHost, killHostAndClean, makeSocketDir, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A program that ignores its terminal's hang-up (inherited across the exec), prints its pid and waits. */
const HUP_IGNORING = ['-c', "trap '' HUP; echo ready-$$; exec sleep 1000"]

/** Whether the process `identity` names is gone (no such pid, a zombie, or another process at the pid). */
function isGone(identity: ProcessIdentity): boolean {
  const row = procRow(identity.pid)
  return row === null || row.startTime !== identity.startTime || isDeadState(row.state)
}

/** A provider and controller on `socketPath` (a host from the sources when it starts one), disposed of after the test without stopping anything. */
function appOn(socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): { provider: PtyHostProvider; controller: PtyController; exits: PtyExitEvent[] } {
  const provider = providerOn(socketPath, extra)
  const controller = createPtyController({ provider })
  const exits: PtyExitEvent[] = []
  provider.onExit((event) => exits.push(event))
  cleanups.push(async () => {
    await provider.detach()
    await controller.dispose({ stopPtys: false })
  })
  return { provider, controller, exits }
}

/**
 * An app whose host (from the sources) runs `count` HUP-ignoring PTYs, then is SIGKILLed; the
 * PTYs outlive it. Each PTY's process is returned with its identity (pid and start time).
 */
async function orphansOfAKilledHost(count = 1) {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(() => killHostAndClean(socketPath, dir))
  const app = appOn(socketPath, { reconnectAttempts: 0 })
  let output = ''
  app.provider.onData(({ data }) => (output += data))
  const ptys: { id: string; identity: ProcessIdentity; incarnationId: string | undefined }[] = []
  for (let index = 0; index < count; index++) {
    const spawned = await app.controller.spawn({ file: '/bin/sh', args: HUP_IGNORING })
    ptys.push({ id: spawned.id, identity: null as never, incarnationId: spawned.incarnationId })
  }
  const pids = await waitFor(() => {
    const found = [...output.matchAll(/ready-(\d+)/g)].map((match) => Number(match[1]))
    return found.length === count ? found : undefined
  }, `${count} PTYs ready`, 30_000)
  // Which pid is which PTY's: the listing's.
  const rows = await app.provider.listProcesses()
  for (const pty of ptys) {
    const pid = rows.find((row) => row.id === pty.id)?.pid
    expect(pids).toContain(pid)
    pty.identity = processIdentity(pid!)!
    const identity = pty.identity
    cleanups.push(async () => killIfStill(identity, { group: true }))
  }
  await killHost(socketPath)
  await waitFor(() => (app.provider.connected ? undefined : true), 'the drop')
  for (const pty of ptys) expect(isGone(pty.identity)).toBe(false)
  return { dir, socketPath, app, ptys }
}

/** A successor host in this process on `socketPath`. */
async function successorOn(socketPath: string) {
  const successor = await startPtyHost({ socketPath, idleExitMs: 60_000 })
  cleanups.push(() => successor.close())
  return successor
}

describe('pty host: the successor of a SIGKILLed host answers for its HUP-ignoring processes', () => {
  it('the app that spawned it: probe true, stopAndWait verified, the process gone, the exit an operator close', async () => {
    const { socketPath, app, ptys } = await orphansOfAKilledHost()
    const [pty] = ptys
    await successorOn(socketPath)
    await app.provider.listProcesses() // connects to the successor
    await expect(app.controller.probePtyLiveness(pty!.id)).resolves.toBe(true)
    const exited = new Promise<{ cause: unknown }>((resolve) => app.controller.once('exit', (event) => resolve(event)))
    await expect(app.controller.stopAndWait(pty!.id, { timeoutMs: 8_000 })).resolves.toBe(true)
    expect(isGone(pty!.identity)).toBe(true)
    expect((await exited).cause).toEqual({ kind: 'operator_close' })
    await expect(app.controller.probePtyLiveness(pty!.id)).resolves.toBe(false)
  }, 40_000)

  it('a restarted app, by id: probe true, stopAndWait verified, the process gone, then probe false', async () => {
    const { socketPath, ptys } = await orphansOfAKilledHost()
    const [pty] = ptys
    await successorOn(socketPath)
    const restarted = appOn(socketPath, { autoStart: false })
    await restarted.provider.listProcesses() // connects (a probe asks only an open connection)
    await expect(restarted.controller.probePtyLiveness(pty!.id)).resolves.toBe(true)
    await expect(restarted.controller.stopAndWait(pty!.id, { timeoutMs: 8_000 })).resolves.toBe(true)
    expect(isGone(pty!.identity)).toBe(true)
    await expect(restarted.controller.probePtyLiveness(pty!.id)).resolves.toBe(false)
  }, 40_000)

  it('an orphan that died meanwhile is answered false (its PTY’s end reported, cause unknown/host_status_unavailable)', async () => {
    const { socketPath, app, ptys } = await orphansOfAKilledHost()
    const [pty] = ptys
    await successorOn(socketPath)
    await app.provider.listProcesses()
    await expect(app.provider.probeLiveness(pty!.id)).resolves.toBe(true)
    process.kill(pty!.identity.pid, 'SIGKILL')
    await waitFor(() => (isGone(pty!.identity) ? true : undefined), 'the orphan’s death')
    const restarted = appOn(socketPath, { autoStart: false })
    await restarted.provider.listProcesses() // connects (a probe asks only an open connection)
    await expect(restarted.controller.probePtyLiveness(pty!.id)).resolves.toBe(false)
    await expect(app.provider.probeLiveness(pty!.id)).resolves.toBe(false)
    const exit = app.exits.find((event) => event.id === pty!.id)
    expect(exit).toMatchObject({ cause: { kind: 'unknown', reason: 'host_status_unavailable' }, incarnationId: pty!.incarnationId })
    expect(exit?.diedBeforeStopRequest).toBeUndefined()
    // Proven gone, the PTY is no longer in doubt.
    expect(app.provider.hasPty(pty!.id)).toBe(false)
  }, 40_000)

  it('an app that reconnects to the successor learns at once which of the dead host’s PTYs ended meanwhile', async () => {
    const { socketPath, app, ptys } = await orphansOfAKilledHost(2)
    const [ended, running] = ptys
    process.kill(ended!.identity.pid, 'SIGKILL')
    await waitFor(() => (isGone(ended!.identity) ? true : undefined), 'the orphan’s death')
    await successorOn(socketPath)
    await app.provider.listProcesses() // connects; nobody probes
    expect(app.exits.map((event) => event.id)).toEqual([ended!.id])
    expect(app.exits[0]).toMatchObject({ cause: { kind: 'unknown', reason: 'host_status_unavailable' }, incarnationId: ended!.incarnationId })
    expect(app.provider.hasPty(running!.id)).toBeNull() // still running, still the app's to stop
    await expect(app.controller.stopAndWait(running!.id, { timeoutMs: 8_000 })).resolves.toBe(true)
  }, 40_000)

  it('the app’s provider.dispose() on the successor stops them, as the sessions it spawned, and reports their ends', async () => {
    const { socketPath, app, ptys } = await orphansOfAKilledHost(3)
    await successorOn(socketPath)
    await app.provider.listProcesses() // connects to the successor
    for (const pty of ptys) await expect(app.provider.probeLiveness(pty.id)).resolves.toBe(true)
    // Before: only the sessions of the connected host were stopped; these ran on after the dispose.
    await app.provider.dispose()
    for (const pty of ptys) expect({ id: pty.id, gone: isGone(pty.identity) }).toEqual({ id: pty.id, gone: true })
    expect(app.exits.map((event) => event.id).sort()).toEqual(ptys.map((pty) => pty.id).sort())
  }, 40_000)

  it('a successor closed on request stops its predecessor’s orphans too, and leaves no journal', async () => {
    const { socketPath, ptys } = await orphansOfAKilledHost(2)
    const successor = await successorOn(socketPath)
    await successor.close()
    for (const pty of ptys) expect(isGone(pty.identity)).toBe(true)
    expect(existsSync(`${socketPath}.journal`)).toBe(false)
  }, 40_000)

  it('across two dead hosts: the second carried the first one’s orphan into its journal', async () => {
    const { socketPath, ptys } = await orphansOfAKilledHost()
    const [pty] = ptys
    // The second host, from the sources, started by a restarted app; killed in turn.
    const second = appOn(socketPath)
    await second.controller.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 1000'] })
    await expect(second.provider.probeLiveness(pty!.id)).resolves.toBe(true)
    await killHost(socketPath)
    await successorOn(socketPath)
    const third = appOn(socketPath, { autoStart: false })
    await third.provider.listProcesses()
    await expect(third.controller.probePtyLiveness(pty!.id)).resolves.toBe(true)
    await expect(third.controller.stopAndWait(pty!.id, { timeoutMs: 8_000 })).resolves.toBe(true)
    expect(isGone(pty!.identity)).toBe(true)
  }, 40_000)

  it('accounts for 100 journalled sessions: the running ones true, the killed ones false, all stopped and verified', async () => {
    const { socketPath, ptys } = await orphansOfAKilledHost(100)
    const killed = ptys.filter((_, index) => index % 3 === 0)
    for (const pty of killed) process.kill(pty.identity.pid, 'SIGKILL')
    await waitFor(() => (killed.every((pty) => isGone(pty.identity)) ? true : undefined), 'the killed ones gone')
    await successorOn(socketPath)
    const restarted = appOn(socketPath, { autoStart: false })
    await restarted.provider.listProcesses() // connects (a probe asks only an open connection)
    const answers = await Promise.all(ptys.map((pty) => restarted.controller.probePtyLiveness(pty.id)))
    expect(answers).toEqual(ptys.map((pty) => !killed.includes(pty)))
    const stopped = await Promise.all(ptys.map((pty) => restarted.controller.stopAndWait(pty.id, { timeoutMs: 15_000 })))
    expect(stopped.every((verified) => verified)).toBe(true)
    expect(ptys.filter((pty) => !isGone(pty.identity))).toEqual([])
    // Nothing of the predecessor is left unaccounted for: a new connection's listings are authoritative again.
    const later = appOn(socketPath, { autoStart: false })
    await later.provider.listProcesses()
    expect(later.provider.authoritativeListings).toBe(true)
  }, 90_000)
})

describe('pty host: the session journal', () => {
  it('is private (0600) beside the lock while the host runs, and cut down to the exits it remembers when it closes cleanly — removed when it remembers none', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = appOn(socketPath, { autoStart: false })
    const { id, incarnationId } = await app.controller.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 1000'] })
    const journalPath = `${socketPath}.journal`
    expect(statSync(journalPath).mode & 0o777).toBe(0o600)
    expect(readFileSync(journalPath, 'utf8')).toContain(JSON.stringify(id))
    await app.controller.stopAndWait(id, { timeoutMs: 5_000 })
    await host.close()
    // Nothing open, nothing unaccounted: only the exit, for the next host (since 7 Dec; before, the
    // journal was removed and the exit lost with the host).
    expect(statSync(journalPath).mode & 0o777).toBe(0o600)
    expect(readPredecessorJournal(journalPath)).toMatchObject({
      open: [],
      unaccounted: false,
      exits: [{ id, cause: { kind: 'signaled', signal: 1 }, incarnationId, stopRequestedBeforeDeath: true }],
    })
    // A host that remembers no exit (and has nothing to account for) leaves no journal.
    const { host: bare, socketPath: bareSocket } = await inProcessHost(cleanups)
    expect(existsSync(`${bareSocket}.journal`)).toBe(true)
    await bare.close()
    expect(existsSync(`${bareSocket}.journal`)).toBe(false)
  }, 20_000)

  it('never signals a process whose pid a journal entry names with another start time (a reused pid)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    // An unrelated process in a session of its own, as a PTY leader's would be.
    const victim = spawnChild('sleep', ['1000'], { stdio: 'ignore', detached: true })
    const victimIdentity = await waitFor(() => {
      const row = victim.pid === undefined ? null : procRow(victim.pid)
      return row !== null && row.sid === victim.pid ? processIdentity(victim.pid) ?? undefined : undefined
    }, 'the victim process')
    cleanups.push(async () => killIfStill(victimIdentity))
    // A dead host's lock and journal: its session's leader had the victim's pid, started at another time.
    writeDeadHostJournal(socketPath, { id: 'reused', inc: 'inc-reused', pid: victimIdentity.pid, startTime: String(Number(victimIdentity.startTime) - 1) })
    await successorOn(socketPath)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    expect((await client.request('probe', { ptyId: 'reused' })).result).toBe(false)
    expect((await client.request('probe', { ptyId: 'reused', expectedIncarnationId: 'inc-reused' })).result).toBe(false)
    expect((await client.request('shutdown', { ptyId: 'reused', immediate: true })).ok).toBe(true)
    expect((await client.request('shutdown', { ptyId: 'reused', expectedIncarnationId: 'inc-reused' })).ok).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(isGone(victimIdentity)).toBe(false)
  }, 20_000)
})

/**
 * The lock and session journal a host left when it died holding the lock (its pid is above
 * pid_max: no such process): one session, `id`/`inc`, whose leader was `pid` started at
 * `startTime` (its own session and group).
 */
function writeDeadHostJournal(socketPath: string, session: { id: string; inc: string; pid: number; startTime: string }): void {
  const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  writeFileSync(`${socketPath}.lock`, '4194305\n', { mode: 0o600 })
  const { id, inc, pid, startTime } = session
  const lines = [{ ptykitJournal: 1, bootId, unaccounted: false }, { t: 'i', k: 1, id }, { t: 's', k: 1, inc, pid, st: startTime, pg: pid, sid: pid }]
  writeFileSync(`${socketPath}.journal`, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
}

/** A HUP-ignoring process in a session of its own (as a PTY's leader), recorded in a dead host's journal at `socketPath`. */
async function journalledOrphan(socketPath: string): Promise<{ child: ChildProcess; identity: ProcessIdentity }> {
  const child = spawnChild('/bin/sh', ['-c', "trap '' HUP; exec sleep 1000"], { stdio: 'ignore', detached: true })
  const identity = await waitFor(() => {
    const row = child.pid === undefined ? null : procRow(child.pid)
    return row !== null && row.sid === child.pid && row.startTime !== '' ? processIdentity(child.pid) ?? undefined : undefined
  }, 'the orphan')
  cleanups.push(async () => killIfStill(identity))
  writeDeadHostJournal(socketPath, { id: 'pty-1', inc: 'inc-1', pid: identity.pid, startTime: identity.startTime })
  return { child, identity }
}

/** The forced pid reuse, run by plain node as the first process of a pid namespace of its own. */
const FORCED_PID_REUSE = resolve(import.meta.dirname, 'fixtures/forced-pid-reuse.ts')

/**
 * Runs fixtures/forced-pid-reuse.ts in a pid namespace of its own (`unshare --pid --fork
 * --mount-proc`, util-linux; root) and answers what it saw. Why a namespace: the scenario forces a
 * pid number through /proc/sys/kernel/ns_last_pid, which moves the pid allocator of the namespace
 * of its writer; written from here, that is the whole machine's, which the parallel test files fork
 * from all the time (a stranger could take the number, and their new processes get numbers moved
 * for them). In its own namespace nothing else forks, and everything the scenario started dies
 * with the namespace when its first process exits (or is killed: `--kill-child`).
 * Fails, saying what is missing, where that cannot run: never skipped.
 */
async function forcedPidReuseInOwnNamespace(): Promise<ForcedPidReuse> {
  const needs = 'This test forces a pid number through /proc/sys/kernel/ns_last_pid in a pid namespace of its own (`unshare --pid --fork --mount-proc`): run the tests as root, with util-linux’s `unshare` on PATH (as .ci/run does on Debian, where util-linux is essential), where root may create namespaces (CAP_SYS_ADMIN; in a container: `--privileged`)'
  if (process.getuid?.() !== 0) throw new Error(`${needs}; running as uid ${process.getuid?.()}.`)
  const first = makeSocketDir()
  const second = makeSocketDir()
  cleanups.push(async () => {
    rmSync(first.dir, { recursive: true, force: true })
    rmSync(second.dir, { recursive: true, force: true })
  })
  const args = ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', '--', process.execPath, ...nodeArgsFor(FORCED_PID_REUSE), first.socketPath, second.socketPath]
  const child = spawnChild('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  // Killed (and the namespace with it) when it runs too long.
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000)
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((done) => {
    child.once('error', (error) => done({ code: null, signal: null, error }))
    child.once('close', (code, signal) => done({ code, signal }))
  }).finally(() => clearTimeout(timer))
  if (ended.error !== undefined) throw new Error(`${needs}; \`unshare\` could not be started: ${ended.error.message}.`)
  if (ended.code !== 0) {
    // unshare's own failures start with its name (`unshare: unshare failed: Operation not permitted`).
    const prefix = stderr.startsWith('unshare:') ? `${needs}; ` : 'The forced pid reuse failed in its namespace: '
    throw new Error(`${prefix}exit ${ended.code ?? ended.signal}: ${stderr.trim()}`)
  }
  return JSON.parse(stdout) as ForcedPidReuse
}

describe('pty host: what a successor may not say or do about a dead host’s session', () => {
  it('an idle exit stops none of its predecessor’s orphans: they stay in the journal for the next host', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const { identity } = await journalledOrphan(socketPath)
    let closed = false
    const successor = await startPtyHost({ socketPath, idleExitMs: 200, onClosed: () => (closed = true) })
    cleanups.push(() => successor.close())
    await waitFor(() => (closed ? true : undefined), 'the idle exit', 20_000)
    expect(isGone(identity)).toBe(false)
    expect(readFileSync(`${socketPath}.journal`, 'utf8')).toContain('"inc-1"')
    // The next host answers for it (and, closed on request, stops it).
    const next = await successorOn(socketPath)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    expect((await client.request('probe', { ptyId: 'pty-1', expectedIncarnationId: 'inc-1' })).result).toBe(true)
    await next.close()
    expect(isGone(identity)).toBe(true)
  }, 30_000)

  it('a session whose leader died at the hang-up while its `nohup` job runs on is not “proven ended”: probe unknown, stopAndWait false, the job never signalled', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const app = appOn(socketPath, { reconnectAttempts: 0 })
    let output = ''
    app.provider.onData(({ data }) => (output += data))
    // A shell-like leader (ends at the hang-up) with a `nohup` job in its session, started after its spawn.
    const pty = await app.controller.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3; nohup sleep 1000 >/dev/null 2>&1 & echo job-$!; exec sleep 1000'] })
    const jobPid = await waitFor(() => Number(/job-(\d+)/.exec(output)?.[1]) || undefined, 'the job')
    // `echo` runs right after the fork: wait until nohup has set the hang-up aside and exec'd the
    // sleep (SigIgn's bit 0), or a loaded machine's hang-up below could end the job first.
    await waitFor(() => (runsIgnoring(jobPid, 'sleep', ['SIGHUP']) ? true : undefined), 'the job to ignore the hang-up')
    const job = processIdentity(jobPid)!
    cleanups.push(async () => killIfStill(job))
    const leaderPid = (await app.provider.listProcesses()).find((row) => row.id === pty.id)!.pid!
    await killHost(socketPath)
    await waitFor(() => (app.provider.connected ? undefined : true), 'the drop')
    await waitFor(() => (procRow(leaderPid) === null || isDeadState(procRow(leaderPid)!.state) ? true : undefined), 'the leader’s end at the hang-up')
    expect(procRow(jobPid)!.sid).toBe(leaderPid) // the job is in the PTY's session
    expect(isGone(job), 'the job outlived the hang-up').toBe(false)
    await successorOn(socketPath)
    await app.provider.listProcesses() // connects to the successor (asks about the dead host's PTYs)
    expect(app.exits).toEqual([])
    const restarted = appOn(socketPath, { autoStart: false })
    await restarted.provider.listProcesses()
    await expect(restarted.controller.probePtyLiveness(pty.id)).resolves.toBeNull()
    await expect(app.controller.stopAndWait(pty.id, { timeoutMs: 3_000 })).resolves.toBe(false)
    expect(isGone(job)).toBe(false)
    expect(restarted.provider.authoritativeListings).toBe(false)
  }, 60_000)

  it('a stop of an orphan that ended unseen, its number now another session’s id (root: ns_last_pid in a pid namespace of its own), signals nothing of that session', async () => {
    // The reuse is forced through /proc/sys/kernel/ns_last_pid, in a pid namespace of the scenario's
    // own (see the fixture): the machine's allocator, which the parallel test files fork from, stays
    // untouched. Never skipped: it fails saying what it needs.
    const observed = await forcedPidReuseInOwnNamespace()
    // The successor answered for the orphan while it ran; then a new session's leader got its number.
    expect(observed.probeWhileRunning).toBe(true)
    expect(observed.unrelatedSession).toEqual({ leaderAtOrphanPid: true, members: 2 })
    // Another process at the orphan's pid: proven ended, nothing signalled.
    expect(observed.stopAfterReuse).toMatchObject({ ok: true })
    expect(observed.goneAfterStop).toEqual([])
    expect(observed.probeAfterStop).toBe(false)
    // A fresh successor, after the new session's leader left (only its child has the id): unknown, refused, not signalled.
    expect(observed.freshProbe).toBeNull()
    expect(observed.freshStop).toMatchObject({ ok: false, error: { code: 'shutdown_timeout' } })
    expect(observed.childGoneAfterFreshStop).toBe(false)
  }, 60_000)
})
