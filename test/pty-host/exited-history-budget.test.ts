/**
 * The budget of ended sessions' histories (`exitedHistoryBytes`). The host keeps the exits of the
 * latest `PTY_HOST_EXITED_SESSION_MEMORY` ended sessions (what `listExits`, re-attaches and probes
 * need), but their replay rings and headless screens — megabytes each after a flood — only while
 * they fit the budget, the oldest ended released first. Before it, a host whose sessions each
 * printed 1 MB held ~1 GB for 256 ended ones (RSS 1 013 MB after 400 such sessions).
 *
 * What a released one answers: a snapshot is refused `history_released` (never an empty screen in
 * place of its final one; a controller's `serializeBuffer` is `null`, no fault reported), and a
 * reconnect's re-attach reports the output it missed as lost, then delivers the exit with its cause.
 */
import { spawn } from 'node:child_process'
import { copyFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createPtyHostProvider, launchPtyHost, PTY_HOST_EXITED_SESSION_MEMORY, startPtyHost, type PtyHostCommand, type PtyHostLaunchFlags } from 'ptykit/pty-host'
import { ptyHostArgs } from '../../src/pty-host/launch-pty-host.js'
import type { NodePtyProvider } from '../../src/node-pty/index.js'
import { type HeadlessScreen, type ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import type { HostClient } from '../../src/pty-host/host-client.js'
import { HostSessionStore, PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR } from '../../src/pty-host/host-sessions.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { HOST_FROM_SOURCES, hostFixture, inProcessHost, makeSocketDir, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A screen that says it holds `bytes` and records its disposal. */
class SizedScreen implements HeadlessScreen {
  disposed = false
  constructor(readonly bytes: number) {}
  write(): void {}
  resize(): void {}
  clear(): void {}
  snapshot(): Promise<ScreenSnapshot> {
    return Promise.resolve({ data: 'SCREEN', cols: 10, rows: 2 })
  }
  heldBytes(): number {
    return this.disposed ? 0 : this.bytes
  }
  dispose(): void {
    this.disposed = true
  }
}

/** A store whose sessions' screens each hold `screenBytes`, within a budget of `exitedHistoryBytes`. */
function storeOf(exitedHistoryBytes: number | undefined, screenBytes = 1_000): { store: HostSessionStore; screens: SizedScreen[] } {
  const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn(), getSize: () => ({ cols: 10, rows: 2 }), getPid: () => 42 } as unknown as NodePtyProvider
  const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
  const screens: SizedScreen[] = []
  const open = (): SizedScreen => {
    const screen = new SizedScreen(screenBytes)
    screens.push(screen)
    return screen
  }
  const limits = { limitChars: 1_000, scrollbackRows: 0, ...(exitedHistoryBytes === undefined ? {} : { exitedHistoryBytes }) }
  return { store: new HostSessionStore(provider, open, scheduler, limits), screens }
}

/** A session `id` that ran, printed nothing, and ended with `code`. */
function endSession(store: HostSessionStore, id: string, code: number): ReturnType<HostSessionStore['create']> {
  const session = store.create(id, 10, 2)
  session.incarnationId = `inc-${id}`
  store.onExit({ id, code, incarnationId: `inc-${id}` as never, cause: { kind: 'exited', exitCode: code } })
  return session
}

describe('the budget of ended sessions’ histories (HostSessionStore)', () => {
  it('releases the oldest ended sessions’ histories first, keeps every exit, and frees the screens it releases', () => {
    // Each ended session holds 1 000 bytes of screen: a budget of 3 500 keeps the latest three.
    const { store, screens } = storeOf(3_500)
    const sessions = Array.from({ length: 6 }, (_, i) => endSession(store, `pty-${i}`, i + 1))
    expect(sessions.map((session) => session.historyDropped)).toEqual([true, true, true, false, false, false])
    expect(sessions.slice(0, 3).map((session) => session.historyReleasedBy)).toEqual(['budget', 'budget', 'budget'])
    expect(screens.map((screen) => screen.disposed)).toEqual([true, true, true, false, false, false])
    expect(store.exitedHeldBytes).toBe(3_000)
    // The exits stay, oldest first, each with its cause.
    expect(store.exitMessages()).toEqual(
      sessions.map((session, i) => expect.objectContaining({ type: 'exit', ptyId: session.id, code: i + 1, cause: { kind: 'exited', exitCode: i + 1 }, incarnationId: `inc-pty-${i}` })),
    )
  })

  it('counts out what leaves otherwise: a stop’s release, a forgotten exit, an id spawned again', () => {
    const { store } = storeOf(10_000)
    const [first, second] = [endSession(store, 'a', 0), endSession(store, 'b', 0)]
    expect(store.exitedHeldBytes).toBe(2_000)
    store.dropHistory(first)
    expect(first.historyReleasedBy).toBe('stop')
    expect(store.exitedHeldBytes).toBe(1_000)
    store.create('b', 10, 2)
    expect(second.historyDropped).toBe(true)
    expect(store.exitedHeldBytes).toBe(0)
    for (let i = 0; i < PTY_HOST_EXITED_SESSION_MEMORY + 5; i++) endSession(store, `many-${i}`, 0)
    expect(store.exited.size).toBe(PTY_HOST_EXITED_SESSION_MEMORY)
    // Ten fit; those past the exited-session memory no longer count.
    expect(store.exitedHeldBytes).toBe(10_000)
  })

  it('keeps the exits of 300 sessions that ended while no app was attached (an app of some hundreds of PTYs restarting)', () => {
    const { store } = storeOf(undefined)
    for (let i = 0; i < 300; i++) endSession(store, `away-${i}`, i % 7)
    expect(store.exitMessages()).toHaveLength(300)
    // The first to end is still known, with its code (it was forgotten past 256 before 7 Dec).
    expect(store.exited.get('away-0')?.exit?.code).toBe(0)
    expect(store.exited.get('away-299')?.exit?.code).toBe(299 % 7)
  })

  it('keeps as many exits as exitedSessionMemory says, forgetting the oldest first', () => {
    const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn(), getSize: () => ({ cols: 10, rows: 2 }), getPid: () => 42 } as unknown as NodePtyProvider
    const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
    const store = new HostSessionStore(provider, () => new SizedScreen(10), scheduler, { limitChars: 1_000, scrollbackRows: 0, exitedSessionMemory: 3 })
    for (let i = 0; i < 5; i++) endSession(store, `s-${i}`, i)
    expect([...store.exited.keys()]).toEqual(['s-2', 's-3', 's-4'])
  })

  it('keeps the latest ended session’s history even alone over the budget (its keepHistory snapshot), the one before it not', () => {
    const { store } = storeOf(500)
    const [older, latest] = [endSession(store, 'older', 0), endSession(store, 'latest', 0)]
    expect([older.historyDropped, latest.historyDropped]).toEqual([true, false])
    expect(store.exitedHeldBytes).toBe(1_000)
    const next = endSession(store, 'next', 0)
    expect([latest.historyDropped, next.historyDropped]).toEqual([true, false])
  })

  it('0 keeps no ended session’s history, and the default is a multiple of the history’s chars', () => {
    const none = storeOf(0).store
    expect(endSession(none, 'x', 0).historyDropped).toBe(true)
    expect(none.exitedHeldBytes).toBe(0)
    expect(storeOf(undefined).store.exitedHistoryBytes).toBe(PTY_HOST_EXITED_HISTORY_BYTES_PER_HISTORY_CHAR * 1_000)
  })

  it('a screen being serialized is disposed once its snapshot is done, not under it', () => {
    const { store, screens } = storeOf(1_500)
    const older = endSession(store, 'older', 0)
    store.beginSnapshot(older)
    endSession(store, 'newer', 0)
    expect(older.historyDropped).toBe(true)
    expect(screens[0]!.disposed).toBe(false)
    store.endSnapshot(older)
    expect(screens[0]!.disposed).toBe(true)
  })

  it('a released session’s re-attach replays nothing and reports what the client missed as lost, then the exit', () => {
    const { store } = storeOf(0)
    const session = store.create('s', 10, 2)
    session.incarnationId = 'inc-s'
    session.history.append('x'.repeat(300))
    store.onExit({ id: 's', code: 7, incarnationId: 'inc-s' as never, cause: { kind: 'exited', exitCode: 7 } })
    const sent: Record<string, unknown>[] = []
    const queued: string[] = []
    const client = {
      subscriptions: new Set<string>(),
      send: (message: Record<string, unknown>) => void sent.push(message),
      queueOutput: (_id: string, data: string) => void queued.push(data),
      flushOutput: () => undefined,
    } as unknown as HostClient
    store.attach(client, session, 100, (result) => ({ type: 'reply', result }) as never)
    expect(queued).toEqual([])
    expect(sent).toEqual([
      { type: 'reply', result: expect.objectContaining({ replayFrom: 300, lostChars: 200, exited: true }) },
      expect.objectContaining({ type: 'loss', ptyId: 's', fromSeq: 100, toSeq: 300 }),
      expect.objectContaining({ type: 'exit', ptyId: 's', code: 7, cause: { kind: 'exited', exitCode: 7 } }),
    ])
  })
})

/** A shell script that prints its marker and enough lines to scroll, then ends as `end` says. */
const printing = (marker: string, end: string): string[] => ['-c', `i=0; while [ $i -lt 60 ]; do echo "${marker} line $i"; i=$((i+1)); done; ${end}`]

describe('a pty host process with a budget of ended sessions’ histories (exitedHistoryBytes)', () => {
  it('keeps every exit for listExits while the oldest ended sessions’ screens go: their snapshots are refused history_released, a controller’s serializeBuffer is null', async () => {
    const { socketPath } = hostFixture(cleanups)
    // ~330 KB a session as the host counts it (an xterm screen of 84 lines at 80 columns, a few
    // KB of ring): a budget of 1 MiB keeps the latest few.
    const provider = providerOn(socketPath, { exitedHistoryBytes: 1024 * 1024 })
    cleanups.push(() => provider.dispose())
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose())
    const faults: unknown[] = []
    controller.on('error', (error) => faults.push(error))
    const exits = new Map<string, PtyControllerExitEvent>()
    controller.on('exit', (event) => exits.set(event.ptyId, event))
    const ends = ['exit 3', 'kill -9 $$', 'exit 0', 'exit 4', 'exit 5', 'exit 6', 'exit 7', 'exit 8']
    const spawned: { id: string; incarnationId: string | undefined }[] = []
    for (const [i, end] of ends.entries()) {
      const { id, incarnationId } = await controller.spawn({ file: '/bin/sh', args: printing(`MARK-${i}`, end) })
      spawned.push({ id, incarnationId })
      // One after the other: the host releases in the order they ended.
      await waitFor(() => (exits.has(id) ? true : undefined), `session ${i} to end`)
    }
    const causes = [
      { kind: 'exited', exitCode: 3 },
      { kind: 'signaled', signal: 9 },
      ...[0, 4, 5, 6, 7, 8].map((exitCode) => ({ kind: 'exited', exitCode })),
    ]
    // Every exit is still listed, oldest first, with the cause the host saw.
    const listed = (await provider.listExits()).filter((exit) => spawned.some(({ id }) => id === exit.id))
    expect(listed.map(({ id, cause, incarnationId }) => ({ id, cause, incarnationId }))).toEqual(spawned.map(({ id, incarnationId }, i) => ({ id, cause: causes[i], incarnationId })))

    const answers = await Promise.all(spawned.map(({ id }) => provider.getBufferSnapshot(id).then((snapshot) => ({ snapshot }), (error: unknown) => ({ error }))))
    const released = answers.findIndex((answer) => 'snapshot' in answer)
    // The oldest are released, the latest kept: one boundary, in the order they ended.
    expect(released).toBeGreaterThan(0)
    expect(released).toBeLessThan(ends.length)
    for (const [i, answer] of answers.entries()) {
      if (i < released) {
        expect(answer).toEqual({ error: expect.objectContaining({ code: 'history_released', ptyId: spawned[i]!.id, message: expect.stringContaining('exitedHistoryBytes') }) })
        expect(await controller.serializeBuffer(spawned[i]!.id)).toBeNull()
      } else {
        expect(answer).toEqual({ snapshot: expect.objectContaining({ incarnationId: spawned[i]!.incarnationId, data: expect.stringContaining(`MARK-${i} line 59`) }) })
        expect((await controller.serializeBuffer(spawned[i]!.id))?.data).toContain(`MARK-${i} line 59`)
      }
    }
    // A refused snapshot of an ended PTY is no provider fault.
    expect(faults).toEqual([])
  })

  it('a stop without keepHistory is refused as history_released too, naming the stop', async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'echo STOPPED; exec sleep 60'] })
    await waitFor(async () => ((await provider.getBufferSnapshot(id))?.data.includes('STOPPED') ? true : undefined), 'the output on the host')
    await provider.shutdown(id)
    await expect(provider.getBufferSnapshot(id)).rejects.toMatchObject({ code: 'history_released', ptyId: id, message: expect.stringContaining('without keepHistory') })
    expect(await provider.getBufferSnapshot('never-spawned')).toBeNull()
  })
})

describe('a reconnect’s re-attach of a PTY that ended, released, while the app was away', () => {
  it('reports the output the app missed as lost, then the exit with its cause (not a silent empty replay)', async () => {
    const { host, dir, socketPath } = await inProcessHost(cleanups, { exitedHistoryBytes: 0 })
    const provider = createPtyHostProvider({ socketPath, autoStart: false })
    cleanups.push(() => provider.dispose())
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose())
    let output = ''
    const losses: { fromSeq: number; toSeq: number }[] = []
    const exits: PtyControllerExitEvent[] = []
    controller.on('data', ({ data }) => (output += data))
    controller.on('outputLoss', ({ fromSeq, toSeq }) => losses.push({ fromSeq, toSeq }))
    controller.on('exit', (event) => exits.push(event))
    const gate = join(dir, 'go')
    const late = 'LATE-OUTPUT-THE-APP-MISSED'
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', `echo EARLY; while [ ! -e ${gate} ]; do sleep 0.02; done; echo ${late}; exit 7`] })
    await waitFor(() => (output.includes('EARLY\r\n') ? true : undefined), 'the early output')
    const seen = output.length
    // The app goes away: its connection drops, and no reconnect gets through while the socket's
    // name is elsewhere. The host, reached there, is watched until it has seen the PTY end.
    const away = join(dir, 'away.sock')
    renameSync(socketPath, away)
    copyFileSync(`${socketPath}.secret`, `${away}.secret`)
    host.dropConnections()
    await waitFor(() => (provider.connected ? undefined : true), 'the drop')
    writeFileSync(gate, '')
    const watcher = await rawClient(away)
    cleanups.push(async () => watcher.close())
    await waitFor(async () => (((await watcher.request('exits', {})).result as { ptyId: string }[]).some((exit) => exit.ptyId === id) ? true : undefined), 'the host to see the end')
    // Ended with no history kept (a budget of 0): the app comes back.
    renameSync(away, socketPath)
    await waitFor(() => (exits.length > 0 ? true : undefined), 'the exit, after the reconnect', 20_000)
    expect(exits).toEqual([expect.objectContaining({ ptyId: id, code: 7, cause: { kind: 'exited', exitCode: 7 } })])
    // What it printed while the app was away is gone, and said to be: never replayed as nothing.
    expect(output).not.toContain(late)
    expect(losses).toEqual([{ fromSeq: seen, toSeq: seen + `${late}\r\n`.length }])
  })
})

describe('exitedSessionMemory: a flag of the host, an option of the provider, launchPtyHost and startPtyHost', () => {
  it.each<[string, unknown]>([
    ['zero', 0],
    ['fractional', 1.5],
    ['not a number', '1k'],
  ])('a %s value is refused as invalid_option naming exitedSessionMemory and the value', async (_label, value) => {
    const refusal = expect.objectContaining({ code: 'invalid_option', option: 'exitedSessionMemory', value, message: expect.stringContaining('`exitedSessionMemory` option') })
    expect(() => createPtyHostProvider({ exitedSessionMemory: value as number })).toThrow(refusal)
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    expect(() => launchPtyHost(HOST_FROM_SOURCES as PtyHostCommand, { socketPath, exitedSessionMemory: value } as PtyHostLaunchFlags)).toThrow(refusal)
    await expect(startPtyHost({ socketPath, exitedSessionMemory: value as number })).rejects.toThrow(refusal)
    expect(readdirSync(dir)).toEqual([])
  })

  it('reaches a host the provider starts as --exited-session-memory, a flag the host knows', async () => {
    expect(ptyHostArgs({ file: 'node', args: ['host.js'] }, { socketPath: '/s', exitedSessionMemory: 2048 })).toEqual(['host.js', '--socket', '/s', '--exited-session-memory', '2048'])
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const child = spawn(HOST_FROM_SOURCES.file, [...HOST_FROM_SOURCES.args, '--socket', socketPath, '--exited-session-memory', '-1'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)))
    expect(code).toBe(2)
    expect(stderr).toContain('Expected --exited-session-memory to be a non-negative integer, got "-1"')
  })
})

describe('exitedHistoryBytes: a flag of the host, an option of the provider, launchPtyHost and startPtyHost', () => {
  it.each<[string, unknown]>([
    ['negative', -1],
    ['fractional', 1.5],
    ['not a number', '16m'],
    ['not finite', Number.POSITIVE_INFINITY],
  ])('a %s value is refused as invalid_option naming exitedHistoryBytes and the value', async (_label, value) => {
    const refusal = expect.objectContaining({ code: 'invalid_option', option: 'exitedHistoryBytes', value, message: expect.stringContaining('`exitedHistoryBytes` option to be a non-negative integer') })
    expect(() => createPtyHostProvider({ exitedHistoryBytes: value as number })).toThrow(refusal)
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    expect(() => launchPtyHost(HOST_FROM_SOURCES as PtyHostCommand, { socketPath, exitedHistoryBytes: value } as PtyHostLaunchFlags)).toThrow(refusal)
    await expect(startPtyHost({ socketPath, exitedHistoryBytes: value as number })).rejects.toThrow(refusal)
    // Nothing started, nothing left: no lock, no socket, no log.
    expect(readdirSync(dir)).toEqual([])
  })

  it('a host started with a malformed --exited-history-bytes exits 2 saying so (the provider’s option reaches it as that flag: see above)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const child = spawn(HOST_FROM_SOURCES.file, [...HOST_FROM_SOURCES.args, '--socket', socketPath, '--exited-history-bytes', '-5'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)))
    expect(code).toBe(2)
    expect(stderr).toContain('Expected --exited-history-bytes to be a non-negative integer, got "-5"')
  })
})
