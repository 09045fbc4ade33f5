import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import type { PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { HOST_FROM_SOURCES, hostFixture, hostPid, isAlive, providerOn, runAppToEnd, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function provider(socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider {
  const made = providerOn(socketPath, extra)
  cleanups.push(() => made.detach())
  return made
}

/** Run the fixture app in its own Node process; resolves with what it printed and the process. */
async function spawnFromChildApp(socketPath: string, flagFile: string): Promise<{ id: string; pid: number; appPid: number; appExited: Promise<void> }> {
  const app = spawn(
    process.execPath,
    [...nodeArgsFor(resolve(import.meta.dirname, 'fixtures/app-that-spawns.ts')), socketPath, JSON.stringify(HOST_FROM_SOURCES), flagFile],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const appExited = new Promise<void>((done) => app.once('exit', () => done()))
  cleanups.push(async () => {
    if (app.exitCode === null && app.signalCode === null) app.kill('SIGKILL')
    await appExited
  })
  let printed = ''
  app.stdout.setEncoding('utf8')
  app.stdout.on('data', (chunk: string) => (printed += chunk))
  const line = await waitFor(() => (printed.includes('\n') ? printed.split('\n')[0] : undefined), 'the app to print its session', 15_000)
  const { id, pid } = JSON.parse(line!) as { id: string; pid: number }
  return { id, pid, appPid: app.pid!, appExited }
}

describe('pty host: sessions outlive the app', () => {
  it('keeps a session of a SIGKILLed app running, replays what it printed meanwhile, snapshots its screen, and stops it for good', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const flagFile = join(dir, 'go')
    const app = await spawnFromChildApp(socketPath, flagFile)
    process.kill(app.appPid, 'SIGKILL')
    await app.appExited
    expect(isAlive(app.pid)).toBe(true)

    // Nobody is attached: the session prints now.
    writeFileSync(flagFile, '')
    const next = provider(socketPath, { autoStart: false })
    const listed = await next.listProcesses()
    expect(listed.map((row) => row.id)).toContain(app.id)
    const snapshot = await waitFor(async () => {
      const taken = await next.getBufferSnapshot(app.id)
      return taken?.data.includes('while-detached-XYZ') === true ? taken : undefined
    }, 'the detached output on the host screen')
    expect(snapshot).toMatchObject({ cols: 60, rows: 10, source: 'headless' })
    // The screen was cleared before the line: the snapshot paints the screen, not the history.
    expect(snapshot.data).not.toContain('first-line-XYZ')

    // Attach through a controller in this process: the whole retained output is replayed.
    const controller = createPtyController({ provider: next })
    cleanups.push(() => controller.dispose())
    let replayed = ''
    next.onData(({ id, data }) => {
      if (id === app.id) replayed += data
    })
    expect(await controller.attach(app.id)).toBe(true)
    await waitFor(() => (replayed.includes('while-detached-XYZ') ? true : undefined), 'the replay')
    expect(replayed.indexOf('first-line-XYZ')).toBeLessThan(replayed.indexOf('while-detached-XYZ'))
    // Sequence-aligned: the snapshot was taken at exactly the chars replayed (no gap, no duplicate).
    expect(snapshot.seq).toBe(replayed.length)

    expect(await controller.stopAndWait(app.id)).toBe(true)
    await waitFor(() => (isDead(app.pid) ? true : undefined), 'the session process to be gone')
    expect((await next.listProcesses()).map((row) => row.id)).not.toContain(app.id)
  }, 40_000)

  it('keeps an app whose only work is a PTY alive until the PTY exits, then lets it end', async () => {
    const { socketPath } = hostFixture(cleanups)
    const { code, printed } = await runAppToEnd(cleanups, 'app-awaits-exit.ts', [socketPath, JSON.stringify(HOST_FROM_SOURCES)])
    expect(code).toBe(0)
    expect(JSON.parse(printed.trim())).toEqual({ kind: 'exited', exitCode: 5 })
  }, 40_000)

  it('detach leaves sessions running; dispose stops only the app’s own; the idle host exits', async () => {
    const { socketPath } = hostFixture(cleanups)
    const first = provider(socketPath, { idleExitMs: 300 })
    const kept = await first.spawn({ file: 'cat' })
    await first.detach()
    await expect(first.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'provider_detached' })
    const host = hostPid(socketPath)
    expect(host).not.toBeNull()

    const second = provider(socketPath, { autoStart: false })
    expect((await second.listProcesses()).map((row) => row.id)).toEqual([kept.id])
    const exits: string[] = []
    second.onExit(({ id }) => exits.push(id))
    await second.attach(kept.id)
    await second.dispose()
    expect(exits).toEqual([kept.id])
    await waitFor(() => (isDead(kept.pid!) ? true : undefined), 'the attached session to stop')
    // No session, no client: the host leaves after idleExitMs.
    await waitFor(() => (isAlive(host!) ? undefined : true), 'the idle host to exit', 10_000)
  }, 40_000)

  it('detach during spawns: the spawns already sent resolve and their sessions keep running; one asked for meanwhile is refused provider_detached', async () => {
    const { socketPath } = hostFixture(cleanups)
    const first = provider(socketPath)
    const kept = await first.spawn({ file: 'cat' }) // connected: the spawns below are sent in the caller's turn
    const spawning = Array.from({ length: 5 }, () => first.spawn({ file: 'cat' }))
    const detaching = first.detach()
    await expect(first.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'provider_detached' })
    const spawned = await Promise.all(spawning)
    await detaching
    expect(first.connected).toBe(false)
    await expect(first.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'provider_detached' })
    for (const { pid } of spawned) expect(isAlive(pid!)).toBe(true)

    const second = provider(socketPath, { autoStart: false })
    expect((await second.listProcesses()).map((row) => row.id).sort()).toEqual([kept, ...spawned].map((result) => result.id).sort())
    const attached = await second.attach(spawned[0]!.id)
    expect(attached.incarnationId).toBe(spawned[0]!.incarnationId)
  }, 40_000)

  it('reports output that fell out of the ring on re-attach, and replays the rest from where it resumes', async () => {
    const { socketPath } = hostFixture(cleanups)
    const first = provider(socketPath, { historyChars: 64 })
    const spawned = await first.spawn({ file: '/bin/sh', args: ['-c', "i=0; while [ $i -lt 50 ]; do printf 'line-%02d\\n' $i; i=$((i+1)); done; exec cat"] })
    await waitFor(async () => ((await first.getBufferSnapshot(spawned.id))?.data.includes('line-49') === true ? true : undefined), 'all lines')
    await first.detach()

    const second = provider(socketPath, { autoStart: false })
    const losses: { fromSeq: number; toSeq: number }[] = []
    second.onOutputLoss(({ fromSeq, toSeq }) => losses.push({ fromSeq, toSeq }))
    let replayed = ''
    second.onData(({ data }) => (replayed += data))
    const attached = await second.attach(spawned.id, { replayFrom: 0 })
    await waitFor(() => (replayed.includes('line-49') ? true : undefined), 'the replay')
    const total = 50 * 'line-00\r\n'.length
    expect(losses).toEqual([{ fromSeq: 0, toSeq: total - 64 }])
    expect(attached.providerSequence).toEqual({ value: total - 64, generation: 'continued' })
    expect(replayed.length).toBe(64)
    await second.shutdown(spawned.id, { immediate: true })
  }, 40_000)
})
