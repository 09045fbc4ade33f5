/**
 * The exits a host remembers survive it (docs/pty-host.md, "What the host keeps of ended
 * sessions"): its journal records each exit as it happens, so a host after it — started after its
 * idle exit, or after it was killed — answers `listExits()` with the real causes. Before, they
 * lived only in the host's memory: every session ending while no app was connected, the host
 * exited idle 30 s later and the next app (the IDE reopened next morning) got an empty
 * `listExits()` from a fresh host: why each one ended was gone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { settleExitCause } from 'ptykit/exit-cause'
import type { PtyExitEvent } from 'ptykit/contracts'
import { startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { HOST_FROM_SOURCES, hostFixture, hostPid, killHost, killHostAndClean, makeSocketDir, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** `sh -c` waits until the file named by its `$0` exists. */
const AWAIT_GATE = 'while [ ! -e "$0" ]; do sleep 0.05; done'

type Ended = { id: string; pid: number; incarnationId: string | undefined }

/**
 * A host from the sources whose stops give the hang-up and the SIGTERM a minute each before the
 * SIGKILL (fixtures/host-with-slow-stops.ts): a program that ends on its own once a stop reached
 * the host is never overtaken by the stop's SIGKILL, however loaded the machine.
 */
const HOST_WITH_SLOW_STOPS = { file: process.execPath, args: nodeArgsFor(resolve(import.meta.dirname, 'fixtures/host-with-slow-stops.ts')) }

/**
 * On a host from the sources (with `hostOptions`; its stops slow, see {@link HOST_WITH_SLOW_STOPS}),
 * an app spawns three sessions and goes away (detaches, leaving them running); then, with no app
 * connected, one exits 3, one is SIGKILLed and one ends after a stop reached the host (a tool's
 * `shutdown`, its connection closed at once; the process ends with code 7 once it has the stop's
 * hang-up and the tool has gone). Resolves once the three processes are gone.
 *
 * Why the slow stops: the third must end on its own, with its code — the cause the host records
 * is the program's `exited(7)`, not the stop's own signal. Before, on the default graces, the
 * stop's SIGKILL came 1 s after its hang-up, and the program ended 0.3 s after the hang-up (a
 * `sleep 0.3` begun once its foreground `sleep 0.05` had ended): a race with the SIGKILL, lost on
 * a loaded machine (load ~8 on two cores) — `signaled(9)`.
 */
async function threeEndingsWhileAway(socketPath: string, dir: string, hostOptions: { idleExitMs: number }): Promise<{ exits3: Ended; killed: Ended; stopped: Ended }> {
  const gate = join(dir, 'gate')
  const first = providerOn(socketPath, { ...hostOptions, reconnectAttempts: 0, hostCommand: HOST_WITH_SLOW_STOPS })
  cleanups.push(() => first.dispose())
  const spawn = async (script: string): Promise<Ended> => {
    const reply = await first.spawn({ file: '/bin/sh', args: ['-c', script, gate] })
    return { id: reply.id, pid: reply.pid!, incarnationId: reply.incarnationId }
  }
  const exits3 = await spawn(`${AWAIT_GATE}; exit 3`)
  const killed = await spawn(`${AWAIT_GATE}; kill -9 $$`)
  // Ignores SIGTERM; ends on its own, with code 7, once it has had the stop's hang-up and the gate
  // (written once the stop's asker has gone) is open — whichever comes last. Says when its traps
  // are set: a hang-up before them ends it by the signal (`signaled(1)`, seen at load ~8: the stop
  // came before the shell just spawned had read its script).
  const stopped = await spawn(`trap '' TERM; trap 'hup=1' HUP; : > "$0-trapped"; while [ -z "$hup" ] || [ ! -e "$0" ]; do sleep 0.05; done; exit 7`)
  await waitFor(() => (existsSync(`${gate}-trapped`) ? true : undefined), 'the third’s traps to be set', 15_000)
  await first.detach()
  // A stop of the third reaches the host (a probe after it is answered after it), and its asker goes.
  const tool = await rawClient(socketPath)
  void tool.request('shutdown', { ptyId: stopped.id }).catch(() => undefined)
  await tool.request('probe', { ptyId: stopped.id })
  tool.close()
  writeFileSync(gate, '')
  await waitFor(() => ([exits3, killed, stopped].every((ended) => isDead(ended.pid)) ? true : undefined), 'the three sessions to end', 15_000)
  return { exits3, killed, stopped }
}

/** A new app on `socketPath` whose spawn starts a new host (from the sources); its listed exits. */
async function newAppsExits(socketPath: string): Promise<{ app: PtyHostProvider; exits: PtyExitEvent[] }> {
  const app = providerOn(socketPath, { idleExitMs: 60_000 })
  cleanups.push(() => app.dispose())
  await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
  return { app, exits: await app.listExits() }
}

/** The three true causes, each with its incarnation and whether a stop ended it. */
function expectTheThreeCauses(exits: PtyExitEvent[], ended: { exits3: Ended; killed: Ended; stopped: Ended }): void {
  const exitOf = (pty: Ended): PtyExitEvent | undefined => exits.find((exit) => exit.id === pty.id)
  expect(exitOf(ended.exits3)).toMatchObject({ cause: { kind: 'exited', exitCode: 3 }, code: 3, incarnationId: ended.exits3.incarnationId, diedBeforeStopRequest: true })
  expect(exitOf(ended.killed)).toMatchObject({ cause: { kind: 'signaled', signal: 9 }, incarnationId: ended.killed.incarnationId, diedBeforeStopRequest: true })
  const stopped = exitOf(ended.stopped)
  expect(stopped).toMatchObject({ cause: { kind: 'exited', exitCode: 7 }, incarnationId: ended.stopped.incarnationId, stopRequestedBeforeDeath: true })
  expect(stopped?.diedBeforeStopRequest).toBeUndefined()
  // What a controller publishes for it: the operator close it was.
  expect(settleExitCause(stopped!.cause!, { stopRequested: stopped!.stopRequestedBeforeDeath === true })).toEqual({ kind: 'operator_close' })
  expect(exitOf(ended.exits3)?.stopRequestedBeforeDeath).toBeUndefined()
}

/** The exits the journal at `socketPath` records (its `e` lines with a code), by PTY id. */
function journalledExitIds(socketPath: string): string[] {
  let text: string
  try {
    text = readFileSync(`${socketPath}.journal`, 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.t === 'e' && typeof entry.code === 'number')
    .map((entry) => String(entry.id))
}

describe('pty host: the exits survive the host', () => {
  it('after its idle exit: a new app starting a new host lists the three true causes', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const ended = await threeEndingsWhileAway(socketPath, dir, { idleExitMs: 300 })
    // No session, no client: the host exits idle.
    const pid = hostPid(socketPath)
    if (pid !== null) await waitFor(() => (isDead(pid) ? true : undefined), 'the host’s idle exit', 15_000)
    const { app, exits } = await newAppsExits(socketPath)
    expect(hostPid(socketPath)).not.toBe(pid)
    expectTheThreeCauses(exits, ended)
    // Its probes of the ended incarnations answer from them too: ended, not unknown.
    expect(await app.probeLiveness!(ended.exits3.id, { incarnationId: ended.exits3.incarnationId as never })).toBe(false)
  })

  it('after a SIGKILL of the host once the exits were journalled', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const ended = await threeEndingsWhileAway(socketPath, dir, { idleExitMs: 60_000 })
    const ids = [ended.exits3.id, ended.killed.id, ended.stopped.id]
    await waitFor(() => (ids.every((id) => journalledExitIds(socketPath).includes(id)) ? true : undefined), 'the three exits in the journal', 15_000)
    await killHost(socketPath)
    const { exits } = await newAppsExits(socketPath)
    expectTheThreeCauses(exits, ended)
  })

  it('after a close on request too (with the exits of the sessions it stopped); a successor keeps the latest of its own exitedSessionMemory, and answers a snapshot or re-attach of one from them', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const first = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const ended: Ended[] = []
    for (const code of [4, 5, 6]) {
      const reply = await app.spawn({ file: '/bin/sh', args: ['-c', `echo out-${code}; exit ${code}`] })
      ended.push({ id: reply.id, pid: reply.pid!, incarnationId: reply.incarnationId })
      // One at a time: the order they end in is the order remembered.
      await waitFor(async () => ((await app.listExits()).some((exit) => exit.id === reply.id) ? true : undefined), `exit ${code}`)
    }
    // One still runs at the close: the close stops it, and its exit is journalled too.
    const running = await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 1000'] })
    await app.detach()
    await first.close()
    const third = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    const reader = providerOn(socketPath, { autoStart: false })
    const all = await reader.listExits()
    await reader.dispose()
    await third.close()
    expect(all.map((exit) => exit.id)).toEqual([...ended.map((pty) => pty.id), running.id])
    expect(all[3]).toMatchObject({ incarnationId: running.incarnationId, stopRequestedBeforeDeath: true })
    const second = await startPtyHost({ socketPath, idleExitMs: 60_000, exitedSessionMemory: 2 })
    cleanups.push(() => second.close())
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    const exits = (await next.listExits()).filter((exit) => ended.some((pty) => pty.id === exit.id))
    expect(exits.map((exit) => [exit.id, exit.cause])).toEqual([[ended[2]!.id, { kind: 'exited', exitCode: 6 }]])
    // No screen of it is kept across hosts: said so, never an empty screen.
    await expect(next.getBufferSnapshot(ended[2]!.id)).rejects.toMatchObject({ code: 'history_released', message: expect.stringMatching(/earlier pty host/) })
    // A re-attach (a reconnect's) takes its exit, with no replay: the output ended where it had.
    const tool = await rawClient(socketPath)
    cleanups.push(async () => tool.close())
    const attached = await tool.request('attach', { ptyId: ended[2]!.id, includeExited: true, fromSeq: 0 })
    expect(attached).toMatchObject({ ok: true, result: { exited: true, incarnationId: ended[2]!.incarnationId, replayFrom: 'out-6\r\n'.length, lostChars: 'out-6\r\n'.length } })
    expect(await tool.request('probe', { ptyId: ended[2]!.id, expectedIncarnationId: ended[2]!.incarnationId })).toMatchObject({ ok: true, result: false })
  })

  it('an app whose host went while it was disconnected learns from the successor how each of its PTYs ended — not unknown', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const gate = join(dir, 'gate')
    const first = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    const provider = providerOn(socketPath, { autoStart: false, reconnectAttempts: 0 })
    cleanups.push(() => provider.dispose())
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose())
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const exits3 = await controller.spawn({ file: '/bin/sh', args: ['-c', `${AWAIT_GATE}; exit 3`, gate] })
    const killed = await controller.spawn({ file: '/bin/sh', args: ['-c', `${AWAIT_GATE}; kill -9 $$`, gate] })
    // The app loses its connection (and does not reconnect on its own); its PTYs end meanwhile,
    // and their host goes (closed here; a death reads the same to the app: another host instance).
    first.dropConnections()
    await waitFor(() => (provider.connected ? undefined : true), 'the drop')
    writeFileSync(gate, '')
    await waitFor(() => ([exits3.id, killed.id].every((id) => journalledExitIds(socketPath).includes(id)) ? true : undefined), 'the two exits in the journal', 15_000)
    await first.close()
    const successor = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => successor.close())
    await provider.listProcesses() // connects: the app asks the successor about its PTYs of the host that went
    await waitFor(() => (exits.length === 2 ? true : undefined), 'the two ends reported')
    // Before: both `unknown/host_status_unavailable` — the successor proved them gone, but the app
    // did not ask how they ended.
    expect(exits.find((event) => event.ptyId === exits3.id)).toMatchObject({ cause: { kind: 'exited', exitCode: 3 }, incarnationId: exits3.incarnationId })
    expect(exits.find((event) => event.ptyId === killed.id)).toMatchObject({ cause: { kind: 'signaled', signal: 9 }, incarnationId: killed.incarnationId })
  })
})

describe('pty host: an exit is journalled before any app hears of it', () => {
  it('a host SIGKILLed by the app the moment its exit arrives (its journal line slow to write) leaves the exit to its successor', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const gate = join(dir, 'gate')
    // The host writes each exit's journal line 1.5 s late (a slow disk): a host that sends the
    // exit first is killed with the line unwritten.
    const slowJournal = resolve(import.meta.dirname, 'fixtures/slow-journal-exits.mjs')
    const app = providerOn(socketPath, { reconnectAttempts: 0, hostCommand: { file: HOST_FROM_SOURCES.file, args: ['--import', slowJournal, ...HOST_FROM_SOURCES.args] } })
    cleanups.push(() => app.dispose())
    // The app kills the host as soon as it hears of the exit, in the exit listener itself.
    let hostKilled: number | null = null
    app.onExit(() => {
      if (hostKilled !== null) return
      hostKilled = hostPid(socketPath)!
      process.kill(hostKilled, 'SIGKILL')
    })
    const reply = await app.spawn({ file: '/bin/sh', args: ['-c', `${AWAIT_GATE}; exit 3`, gate] })
    writeFileSync(gate, '')
    await waitFor(() => (hostKilled !== null && isDead(hostKilled) ? true : undefined), 'the exit, and the host killed at it to be gone', 15_000)
    const { exits } = await newAppsExits(socketPath)
    expect(exits.find((exit) => exit.id === reply.id)).toMatchObject({ code: 3, cause: { kind: 'exited', exitCode: 3 }, incarnationId: reply.incarnationId, diedBeforeStopRequest: true })
  })
})
