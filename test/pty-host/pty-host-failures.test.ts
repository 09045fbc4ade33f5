import { execFileSync, spawn as spawnChild } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import type { TerminalExitCause } from 'ptykit/exit-cause'
import type { PtyExitEvent } from 'ptykit/contracts'
import {
  createPtyHostProvider,
  defaultPtyHostSocketPath,
  isPtyHostError,
  launchPtyHost,
  startPtyHost,
  stopPtyHost,
  type PtyHostProvider,
  type PtyHostServer,
} from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { isDead, killIfStill, processIdentity, waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, inProcessHost, isAlive, killHost, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function provider(socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider {
  const made = providerOn(socketPath, extra)
  cleanups.push(() => made.detach())
  return made
}

/**
 * A controller over a provider whose socket has no host, and which starts none: a spawn refusal
 * that came after a connect would be host_unavailable, so any other proves it came before.
 */
function withoutHost(): { socketPath: string; app: PtyHostProvider; controller: ReturnType<typeof createPtyController> } {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const app = provider(socketPath, { autoStart: false })
  const controller = createPtyController({ provider: app })
  cleanups.push(() => controller.dispose())
  return { socketPath, app, controller }
}

describe('pty host: option refusals', () => {
  it("a spawn option the host's provider refuses reaches a controller caller as invalid_spawn_options naming the option and the value", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    for (const [options, option, value] of [
      [{ cwd: '/nonexistent/ptykit-no-such-dir' }, 'cwd', '/nonexistent/ptykit-no-such-dir'],
      [{ file: '/etc/passwd' }, 'file', '/etc/passwd'],
    ] as const) {
      const error = await controller.spawn(options).catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'invalid_spawn_options', option, value, outcome: 'not_started' })
      expect(isPtyHostError((error as Error).cause) && (error as { cause: { code: string } }).cause.code).toBe('invalid_spawn_option')
    }
    expect(await app.listProcesses()).toEqual([])
  })

  it('a listing budget that is no number is refused naming it, before anything is sent (the host would drop it in silence)', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    // Typed (code, option, value) as every refusal since 7 Dec.
    await expect(app.listProcesses({ deadlineMs: 'soon' as never })).rejects.toThrow(
      Object.assign(new TypeError('Expected the `deadlineMs` option to be a finite absolute epoch time in milliseconds (for example Date.now() + 5000), got "soon" (string)'), { code: 'invalid_option', option: 'deadlineMs', value: 'soon' }),
    )
    await expect(app.listProcesses({ timeoutMs: -5 })).rejects.toThrow(/`timeoutMs` option/)
    await expect(app.listProcesses('now' as never)).rejects.toMatchObject({ code: 'invalid_option', option: 'options' })
    expect(app.connected).toBe(false)
    expect(await app.listProcesses({ timeoutMs: 5_000 })).toEqual([])
  })

  it('a socket path longer than a Unix socket address holds is refused naming it, by the host and the provider, leaving no file', async () => {
    const { dir } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const socketPath = join(dir, `${'s'.repeat(120)}.sock`)
    const refusedHost = await startPtyHost({ socketPath }).catch((error: unknown) => error)
    expect(isPtyHostError(refusedHost) && refusedHost).toMatchObject({ code: 'invalid_option', option: 'socketPath', value: socketPath })
    expect((refusedHost as Error).message).toContain('at most 107 bytes')
    expect(readdirSync(dir)).toEqual([])
    expect(() => providerOn(socketPath)).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'socketPath' }))
  })

  it('a relative socket path is refused naming it, by the host, the provider and stopPtyHost, leaving no file', async () => {
    // Relative: the app, the host it starts in another directory, and stopPtyHost would each name another socket.
    const socketPath = 'host.sock'
    const refusedHost = await startPtyHost({ socketPath }).catch((error: unknown) => error)
    expect(isPtyHostError(refusedHost) && refusedHost).toMatchObject({ code: 'invalid_option', option: 'socketPath', value: socketPath })
    expect((refusedHost as Error).message).toContain('an absolute path')
    expect(() => createPtyHostProvider({ socketPath, autoStart: false })).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'socketPath' }))
    await expect(stopPtyHost({ socketPath })).rejects.toMatchObject({ code: 'invalid_option', option: 'socketPath' })
    expect(existsSync(socketPath)).toBe(false)
  })

  it('a socket path with a NUL character is refused naming it, by the provider, the host, launchPtyHost and stopPtyHost, leaving no file', async () => {
    // Before: accepted, then every call failed with Node's own TypeError (no option named), after
    // the socket's directory had been created.
    const { dir } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const socketPath = join(dir, 'sub', 'host\0.sock')
    const refusal = expect.objectContaining({ code: 'invalid_option', option: 'socketPath', value: socketPath })
    expect(() => createPtyHostProvider({ socketPath, autoStart: false })).toThrow(refusal)
    await expect(startPtyHost({ socketPath })).rejects.toEqual(refusal)
    await expect(stopPtyHost({ socketPath })).rejects.toEqual(refusal)
    expect(() => launchPtyHost({ file: process.execPath, args: [] }, { socketPath })).toThrow(refusal)
    expect(readdirSync(dir)).toEqual([])
  })

  it('the default socket path is absolute even where XDG_RUNTIME_DIR and TMPDIR are relative, so the defaults are never refused', async () => {
    vi.stubEnv('XDG_RUNTIME_DIR', 'run-relative')
    vi.stubEnv('TMPDIR', 'tmp-relative')
    try {
      const socketPath = defaultPtyHostSocketPath()
      // The relative XDG_RUNTIME_DIR is ignored (XDG base directory spec); the temporary directory is resolved.
      expect(socketPath).toBe(join(process.cwd(), 'tmp-relative', `ptykit-${process.getuid!()}`, 'pty-host.sock'))
      // Before: the relative default made a provider, a host and stopPtyHost() with no options refuse their own default.
      expect(() => createPtyHostProvider({ autoStart: false })).not.toThrow()
      expect(await stopPtyHost()).toBe(false)
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it.each([
    ['requestTimeoutMs', 0, 'a positive integer'],
    ['connectTimeoutMs', 0, 'a positive integer'],
    ['historyChars', 0, 'a positive integer'],
    ['reconnectAttempts', -1, 'a non-negative integer'],
  ])('the provider refuses %s: %j, saying it expects %s', (option, value, expected) => {
    // Before: a requestTimeoutMs of 0 was taken, and failed every request before the host could answer.
    expect(() => createPtyHostProvider({ [option]: value, autoStart: false })).toThrow(
      expect.objectContaining({ code: 'invalid_option', option, value, message: expect.stringContaining(`${expected}, got ${value}`) }),
    )
  })

  it.each<[string, unknown, string, unknown]>([
    ['nodePty with a negative grace', { hangupGraceMs: -1 }, 'nodePty.hangupGraceMs', -1],
    ['nodePty with a fractional deadline', { shutdownDeadlineMs: 1.5 }, 'nodePty.shutdownDeadlineMs', 1.5],
    ['nodePty with a relative default cwd', { defaultCwd: 'relative/dir' }, 'nodePty.defaultCwd', 'relative/dir'],
    ['nodePty that is no object', 'bytes', 'nodePty', 'bytes'],
    ['an onClosed that is no function', 'done', 'onClosed', 'done'],
  ])('startPtyHost refuses %s as invalid_option naming the option, holding nothing after', async (_label, refusedValue, option, value) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const given = option === 'onClosed' ? { onClosed: refusedValue } : { nodePty: refusedValue }
    const refused = await startPtyHost({ socketPath, ...(given as object) }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'invalid_option', option, value, message: expect.stringContaining(`\`${option}\` option`) })
    // Before: refused after the lock was taken and the socket listened — both stayed held, and
    // the next host on the path failed host_already_running.
    expect(existsSync(socketPath)).toBe(false)
    const next = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    await next.close()
  })

  it.each<[string, unknown, string, unknown]>([
    // Before: accepted; the first spawn passed "1" to the host, or failed "The argument 'file' cannot be empty".
    ['an argument that is no string', { file: process.execPath, args: [1] }, 'hostCommand.args[0]', 1],
    ['an argument with a NUL', { file: process.execPath, args: ['ok', 'a\0b'] }, 'hostCommand.args[1]', 'a\0b'],
    ['an empty file', { file: '', args: [] }, 'hostCommand.file', ''],
    ['no file', { args: [] }, 'hostCommand.file', undefined],
    ['args that are no array', { file: process.execPath, args: 'x' }, 'hostCommand.args', 'x'],
    ['null', null, 'hostCommand', null],
  ])('the provider refuses a hostCommand with %s, naming the part and the value', (_label, hostCommand, option, value) => {
    expect(() => createPtyHostProvider({ hostCommand: hostCommand as never, autoStart: false })).toThrow(
      expect.objectContaining({ code: 'invalid_option', option, value, message: expect.stringContaining(`\`${option}\` option`) }),
    )
  })

  it('metadata JSON cannot serialize is refused as invalid_spawn_options naming metadata, before the provider connects', async () => {
    const { socketPath, app, controller } = withoutHost()
    const circular: Record<string, unknown> = {}
    circular['self'] = circular
    for (const [spawnOptions, why] of [
      [{ file: '/bin/sh', metadata: { big: 10n } }, 'serialize a BigInt'],
      [{ file: '/bin/sh', metadata: circular }, 'circular structure'],
    ] as const) {
      const error = await controller.spawn(spawnOptions).catch((caught: unknown) => caught)
      // Before: provider_spawn_failed "Do not know how to serialize a BigInt", naming no option.
      expect(error).toMatchObject({ code: 'invalid_spawn_options', option: 'metadata', outcome: 'not_started' })
      expect((error as Error).cause).toMatchObject({ code: 'invalid_spawn_option', option: 'metadata', message: expect.stringContaining(why) })
    }
    // A known session id: refused before the attach it sends first.
    await expect(app.spawn({ sessionId: 'known', file: '/bin/sh', metadata: circular })).rejects.toMatchObject({ code: 'invalid_spawn_option', option: 'metadata' })
    expect(existsSync(socketPath)).toBe(false)
  })

  it('an env that is no plain object of strings is refused as invalid_spawn_options naming it, before the provider connects, its values never shown — as the node-pty provider refuses it', async () => {
    const { socketPath, app, controller } = withoutHost()
    const local = createNodePtyProvider()
    cleanups.push(() => local.dispose())
    const secret = 'hunter2-secret'
    for (const [env, option] of [
      // Before: serialized to {} and the spawn went ahead without it.
      [new Map([['TOKEN', secret]]), 'env'],
      // Before: JSON dropped the key and the spawn went ahead; the node-pty provider refuses it.
      [{ PATH: '/usr/bin:/bin', TOKEN: undefined }, 'env.TOKEN'],
    ] as const) {
      // The provider's own refusal (a Map never reaches it through a controller: the pipeline refuses it first).
      const direct = await app.spawn({ file: '/bin/sh', env: env as never }).catch((caught: unknown) => caught)
      expect(direct).toMatchObject({ code: 'invalid_spawn_option', option, value: undefined })
      const error = await controller.spawn({ file: '/bin/sh', env: env as never }).catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'invalid_spawn_options', option, value: undefined, outcome: 'not_started' })
      const cause = option === 'env' ? (direct as Error) : ((error as Error).cause as Error)
      expect(cause).toMatchObject({ code: 'invalid_spawn_option', option, value: undefined })
      expect(`${(error as Error).message} ${cause.message}`).not.toContain(secret)
      if (option === 'env.TOKEN') {
        // The same refusal, word for word, as the node-pty provider's.
        const localError = await local.spawn({ file: '/bin/sh', env: env as never }).catch((caught: unknown) => caught)
        expect(localError).toMatchObject({ code: 'invalid_spawn_option', option, message: cause.message })
      }
    }
    expect(existsSync(socketPath)).toBe(false)
  })

  it('an attach with a replayFrom that is no output sequence is refused naming replayFrom and the value', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'] })
    for (const replayFrom of [-1, 1.5, 'bogus']) {
      const refused = await app.attach(id, { replayFrom: replayFrom as never }).catch((error: unknown) => error)
      expect(refused).toMatchObject({ code: 'invalid_option', option: 'replayFrom', value: replayFrom })
    }
    expect((await app.attach(id, { replayFrom: 'live' })).id).toBe(id)
    await app.shutdown(id, { immediate: true })
  })
})

describe('pty host: a spawn under a session id that is live here', () => {
  it('is refused at once as pty_id_in_use, nothing sent: the live PTY stays whole — during the call, after it, across a drop', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    let output = ''
    app.onData((event) => {
      if (event.id === 'S1') output += event.data
    })
    const exits: PtyExitEvent[] = []
    app.onExit((event) => exits.push(event))
    const live = await app.spawn({ file: '/bin/sh', args: ['-c', 'stty -echo; echo READY; while read line; do echo "got $line"; done'], sessionId: 'S1', isNewSession: true })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'the live PTY to be ready')
    for (const options of [{ isNewSession: true }, { isNewSession: true, env: { BIG: 'x'.repeat(20 * 1024 * 1024) } }]) {
      const refusing = app.spawn({ file: '/bin/sh', sessionId: 'S1', ...options })
      // While the call is out, the live PTY is untouched (before: it was taken over while the host
      // answered, and its resize, pause, resume and acks were dropped meanwhile).
      expect(app.hasPty('S1')).toBe(true)
      expect(app.resize('S1', 100, 30)).toBe(true)
      const refused = await refusing.catch((error: unknown) => error)
      expect(isPtyHostError(refused) && [refused.code, refused.ptyId]).toEqual(['pty_id_in_use', 'S1'])
    }
    expect(app.hasPty('S1')).toBe(true)
    // The host never heard of the refused spawns: one process, the first one.
    expect((await app.listProcesses()).map((row) => [row.id, row.incarnationId])).toEqual([['S1', live.incarnationId]])
    expect(await app.write('S1', 'after\n')).toEqual({ kind: 'accepted' })
    await waitFor(() => (output.includes('got after') ? true : undefined), 'the live PTY to answer after the refusals')
    // Output once: nothing replayed.
    expect(output.split('READY').length - 1).toBe(1)
    expect(exits).toEqual([])
  })

  it('an id whose process ended but whose exit is still on the way is refused until the exit is delivered, then spawns', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    const exited = new Set<string>()
    app.onExit((event) => exited.add(event.incarnationId ?? ''))
    const first = await app.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'], sessionId: 'S2', isNewSession: true })
    // Asked again at once: either the exit is not delivered yet (refused), or it is (a new process).
    const second = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'], sessionId: 'S2', isNewSession: true }).catch((error: unknown) => error)
    if (isPtyHostError(second)) {
      expect(second.code).toBe('pty_id_in_use')
      expect(exited.has(first.incarnationId ?? '')).toBe(false)
      await waitFor(() => (exited.has(first.incarnationId ?? '') ? true : undefined), 'the first exit')
    }
    const running = isPtyHostError(second) ? await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'], sessionId: 'S2', isNewSession: true }) : (second as Awaited<ReturnType<typeof app.spawn>>)
    expect(running.incarnationId).not.toBe(first.incarnationId)
    // Before: a spawn accepted while the old exit was in flight was recorded as exited with its
    // process running (its output dropped, dispose not stopping it).
    expect(app.hasPty('S2')).toBe(true)
    expect((await app.listProcesses()).map((row) => [row.id, row.incarnationId])).toEqual([['S2', running.incarnationId]])
  })
})

describe('pty host: reconnects and failures', () => {
  it('carries 100 sessions across a dropped connection: the provider reconnects, re-attaches, and every exit cause is exact', async () => {
    const { dir, socketPath } = makeSocketDir()
    // In-process host, so the test can drop its connections while the sessions run on.
    const host: PtyHostServer = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(async () => {
      await host.close()
      await killHostAndClean(socketPath, dir)
    })
    const app = provider(socketPath, { autoStart: false })
    const flag = join(dir, 'go')
    const actions: { script: string; cause: TerminalExitCause }[] = [
      { script: 'exit 0', cause: { kind: 'exited', exitCode: 0 } },
      { script: 'exit 3', cause: { kind: 'exited', exitCode: 3 } },
      { script: 'kill -9 $$', cause: { kind: 'signaled', signal: 9 } },
      { script: 'kill -TERM $$', cause: { kind: 'signaled', signal: 15 } },
    ]
    const exits = new Map<string, TerminalExitCause | undefined>()
    const output = new Map<string, string>()
    app.onExit(({ id, cause }) => exits.set(id, cause))
    app.onData(({ id, data }) => output.set(id, (output.get(id) ?? '') + data))
    // 100 sessions that wait for a line, plus four that end by themselves while the app is away.
    const sessions = await Promise.all(
      Array.from({ length: 104 }, async (_, index) => {
        const action = actions[index % actions.length]!
        const wait = index < 100 ? 'read line' : `while [ ! -e '${flag}' ]; do sleep 0.2; done`
        const result = await app.spawn({ file: '/bin/sh', args: ['-c', `${wait}; echo done-${index}; ${action.script}`] })
        return { id: result.id, index, expected: action.cause }
      }),
    )
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop to be seen')
    // Contact lost: unknown, never dead.
    for (const session of sessions) expect(app.hasPty(session.id)).toBeNull()
    writeFileSync(flag, '')
    await waitFor(() => (app.connected ? true : undefined), 'the reconnect', 20_000)
    await waitFor(() => (sessions.every((session) => app.hasPty(session.id) !== null) ? true : undefined), 'the re-attaches', 20_000)
    for (const session of sessions.slice(0, 100)) {
      if (exits.has(session.id)) continue
      expect((await app.write(session.id, '\r')).kind).toBe('accepted')
    }
    await waitFor(() => (exits.size === sessions.length ? true : undefined), 'all 104 exits', 30_000)
    for (const session of sessions) {
      expect(exits.get(session.id), session.id).toEqual(session.expected)
      expect(output.get(session.id)).toContain(`done-${session.index}`)
    }
  }, 90_000)

  it('more sessions end while the app is disconnected than the host remembers exits of: the forgotten ones still end, unknown/cause_unreported', async () => {
    const { dir, socketPath } = makeSocketDir()
    // The host remembers the exits of MEMORY ended sessions (`exitedSessionMemory`; its default, 1 024,
    // would take a thousand PTYs here).
    const MEMORY = 24
    const host: PtyHostServer = await startPtyHost({ socketPath, idleExitMs: 60_000, exitedSessionMemory: MEMORY })
    cleanups.push(async () => {
      await host.close()
      await killHostAndClean(socketPath, dir)
    })
    // The app reconnects only when asked (a listing connects): every session ends while it is away.
    const app = provider(socketPath, { autoStart: false, reconnectAttempts: 0 })
    const observer = provider(socketPath, { autoStart: false })
    const exits = new Map<string, PtyExitEvent>()
    app.onExit((event) => exits.set(event.id, event))
    // Each session waits on a lock (no polling: a fork storm slows node-pty's own forks to seconds);
    // the first FORGOTTEN end first, so theirs are the exits the host forgets.
    const FORGOTTEN = 4
    const early = await lockHeldUntilReleased(join(dir, 'early.lock'))
    const late = await lockHeldUntilReleased(join(dir, 'late.lock'))
    cleanups.push(async () => (early.release(), late.release()))
    const sessions: { id: string; pid: number }[] = []
    for (let start = 0; start < MEMORY + FORGOTTEN; start += 50) {
      const count = Math.min(50, MEMORY + FORGOTTEN - start)
      const batch = await Promise.all(
        Array.from({ length: count }, (_, offset) => {
          const lock = start + offset < FORGOTTEN ? early.path : late.path
          return app.spawn({ file: '/bin/sh', args: ['-c', `flock '${lock}' true; exit 3`] })
        }),
      )
      sessions.push(...batch.map((reply) => ({ id: reply.id, pid: reply.pid! })))
    }
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop to be seen')
    early.release()
    await waitFor(async () => ((await observer.listProcesses()).length === MEMORY ? true : undefined), 'the first sessions to end', 20_000)
    late.release()
    await waitFor(async () => ((await observer.listProcesses()).length === 0 ? true : undefined), 'every session to end', 30_000)
    // The app asks to stop one forgotten session while away: its end then keeps no "died first" flag.
    const stopAsked = app.shutdown(sessions[0]!.id).catch(() => undefined)
    await app.listProcesses()
    await stopAsked
    await waitFor(() => (exits.size === sessions.length ? true : undefined), 'an exit for every session', 20_000)
    // Before: the forgotten ones stayed unknown for good (hasPty null, no exit), though the host
    // answered that it held no such session.
    const forgotten = sessions.slice(0, FORGOTTEN).map((session) => exits.get(session.id))
    expect(forgotten[0]).toEqual({ id: sessions[0]!.id, incarnationId: expect.any(String), code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } })
    for (const exit of forgotten.slice(1)) expect(exit).toMatchObject({ code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' }, diedBeforeStopRequest: true })
    for (const session of sessions.slice(FORGOTTEN)) expect(exits.get(session.id)?.cause).toEqual({ kind: 'exited', exitCode: 3 })
    for (const session of sessions) expect(app.hasPty(session.id)).toBe(false)
  }, 90_000)

  it('stops a spawn whose request timed out on a connection that stays open, even one the host had not started yet', async () => {
    const { dir, socketPath } = makeSocketDir()
    // The host's first spawn waits for node-pty's module until the test lets it load: longer
    // than the app's request timeout.
    let loadNodePty: () => void = () => {}
    const loaded = new Promise<void>((resolve) => {
      loadNodePty = resolve
    })
    // node-pty itself, with the pid of each process it starts noted.
    const started: number[] = []
    const loadGated = async (): Promise<unknown> => {
      await loaded
      const nodePty = await import('node-pty')
      return {
        spawn: (...args: Parameters<typeof nodePty.spawn>) => {
          const terminal = nodePty.spawn(...args)
          started.push(terminal.pid)
          return terminal
        },
      }
    }
    const host: PtyHostServer = await startPtyHost({ socketPath, idleExitMs: 60_000, nodePty: { loadNodePty: loadGated } })
    cleanups.push(async () => {
      await host.close()
      await killHostAndClean(socketPath, dir)
    })
    const app = provider(socketPath, { autoStart: false, requestTimeoutMs: 300 })
    // It may have started (the host got the request): the error says so, and a controller's spawn would fail `unknown`.
    await expect(app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })).rejects.toMatchObject({ code: 'transport_lost', processMayExist: true })
    // The app's shutdown is on its way (the connection stays open: no reconnect will send one);
    // now the host starts the process.
    loadNodePty()
    await waitFor(() => (started.length === 1 ? true : undefined), 'the host to start the timed-out spawn')
    // ... and the app's shutdown stopped it.
    await waitFor(() => (isDead(started[0] as number) ? true : undefined), 'the timed-out spawn\'s process to be gone', 10_000)
    const observer = provider(socketPath, { autoStart: false })
    await waitFor(async () => ((await observer.listProcesses()).length === 0 ? true : undefined), 'the host to hold no session')
  })

  it('turns every PTY unverifiable when the pty host is SIGKILLed, settles a write in flight as transport_lost, refuses later writes at once, and refuses spawns with a typed error', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const starter = provider(socketPath)
    const first = await starter.spawn({ file: 'cat' })
    const app = provider(socketPath, { autoStart: false, reconnectAttempts: 2 })
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const controllerExits: unknown[] = []
    controller.on('exit', (event) => controllerExits.push(event))
    const second = await controller.spawn({ file: 'cat' })
    const pid = hostPid(socketPath)!
    // Stopped, the host cannot answer: the write is in flight when the host dies.
    process.kill(pid, 'SIGSTOP')
    const inFlight = app.write(second.id, 'hello\r')
    await new Promise((resolve) => setTimeout(resolve, 50))
    process.kill(pid, 'SIGKILL')
    expect(await inFlight).toEqual({ kind: 'unverifiable', reason: 'transport_lost', bytesHandedToTransport: true })
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    expect(app.hasPty(second.id)).toBeNull()
    expect(await app.probeLiveness(second.id)).toBeNull()
    expect(await controller.probePtyLiveness(second.id)).toBeNull()
    // Nothing can be handed over now: refused at once, and the boolean write says so (it once
    // answered `true`, reading the provider's promised refusal as "handed over").
    expect(app.write(second.id, 'lost\r')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(controller.write(second.id, 'lost\r', 'driving')).toBe(false)
    await waitFor(() => (starter.connected ? undefined : true), 'the other app to see the drop')
    expect(starter.hasPty(first.id)).toBeNull()
    await expect(app.listProcesses()).rejects.toSatisfy(isPtyHostError)
    await expect(app.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'host_unavailable' })
    expect(controllerExits).toEqual([])
    // The PTYs lost their master with the host: nothing is left behind.
    await waitFor(() => (isDead(second.pid!) && isDead(first.pid!) ? true : undefined), 'the orphaned sessions to die')
    expect(isAlive(pid)).toBe(false)
  }, 40_000)
})

describe('pty host: an explicit re-attach', () => {
  it('after a dropped connection, delivers the output missed meanwhile exactly once, and continues the sequence after it', async () => {
    const { host, dir, socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false, reconnectAttempts: 0 })
    const flag = join(dir, 'go')
    let seen = ''
    app.onData(({ data }) => (seen += data))
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `echo first-XYZ; while [ ! -e '${flag}' ]; do sleep 0.05; done; echo second-XYZ; read line`] })
    await waitFor(() => (seen.includes('first-XYZ') ? true : undefined), 'the first line')
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    writeFileSync(flag, '')
    // The host has the second line (another client's snapshot shows it) while this app is away.
    const other = provider(socketPath, { autoStart: false })
    await other.listProcesses() // connects it (a snapshot is asked only on an open connection)
    await waitFor(async () => ((await other.getBufferSnapshot(id))?.data.includes('second-XYZ') ? true : undefined), 'the second line on the host')
    // The app re-attaches by hand (a "reconnect" button): its reconnect replays the missed output,
    // and the attach's own replay overlaps it.
    const before = seen.length
    const reply = await app.attach(id)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(seen.split('second-XYZ').length - 1).toBe(1)
    // The sequence continues where the output delivered during the call began (the reconnect's
    // replay raced the reply): a caller that counts that output after it, as the controller does,
    // ends where the provider does.
    expect(reply.providerSequence).toEqual({ value: before, generation: 'continued' })
    expect(seen.length).toBeGreaterThan(before)
  }, 30_000)
})

describe('pty host: a reconnect whose replay lost output', () => {
  it('moves the controller’s output sequence past the gap: the data after it and the host’s snapshot agree on seq', async () => {
    // A ring of 64 chars: what the PTY prints while the app is away mostly falls out of it.
    const { host, dir, socketPath } = await inProcessHost(cleanups, { historyChars: 64 })
    const app = provider(socketPath, { autoStart: false, reconnectAttempts: 0 })
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const flag = join(dir, 'go')
    let output = ''
    let lastSeq = 0
    const losses: { fromSeq: number; toSeq: number }[] = []
    controller.on('data', (event) => {
      output += event.data
      lastSeq = event.seq
    })
    controller.on('outputLoss', ({ fromSeq, toSeq }) => losses.push({ fromSeq, toSeq }))
    const { id } = await controller.spawn({
      file: '/bin/sh',
      args: ['-c', `echo first-XYZ; while [ ! -e '${flag}' ]; do sleep 0.05; done; i=0; while [ $i -lt 40 ]; do echo line-$i; i=$((i+1)); done; echo last-XYZ; exec cat`],
    })
    await waitFor(() => (output.includes('first-XYZ') ? true : undefined), 'the first line')
    const seqBeforeDrop = lastSeq
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    writeFileSync(flag, '')
    // The host has the last line while this app is away (another client's snapshot shows it).
    const other = provider(socketPath, { autoStart: false })
    await other.listProcesses()
    await waitFor(async () => ((await other.getBufferSnapshot(id))?.data.includes('last-XYZ') ? true : undefined), 'the last line on the host')
    // The app re-attaches (explicitly here; its reconnect does the same), from where it was.
    await app.attach(id)
    await waitFor(() => (output.includes('last-XYZ') ? true : undefined), 'the replay')
    expect(losses).toHaveLength(1)
    expect(losses[0]!.fromSeq).toBe(seqBeforeDrop)
    expect(output).not.toContain('line-0\r\n')
    const snapshot = await controller.serializeProviderBuffer(id)
    expect(snapshot?.seq).toBe(lastSeq)
    expect(losses[0]!.toSeq - losses[0]!.fromSeq + output.length).toBe(lastSeq)
    await controller.stopAndWait(id, { timeoutMs: 5_000 })
  }, 30_000)
})

describe('pty host: a successor host', () => {
  it.each([
    ['', false],
    [', also after the app tried to re-attach it there', true],
  ] as const)('never takes a successor host’s “no such session” for the death of a PTY its dead predecessor held%s', async (_, afterFailedReattach) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const app = provider(socketPath)
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const exits: unknown[] = []
    controller.on('exit', (event) => exits.push(event))
    let output = ''
    controller.on('data', (event) => (output += event.data))
    // A process that outlives its host (it ignores the hang-up of its terminal).
    const { id, pid } = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; echo trapped; while :; do sleep 0.1; done"] })
    await waitFor(() => (output.includes('trapped') ? true : undefined), 'the hang-up to be ignored')
    const started = processIdentity(pid!)
    cleanups.push(async () => killIfStill(started))
    await killHost(socketPath)
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    // Another host instance on the same socket; the app reconnects to it.
    const successor = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => successor.close())
    await waitFor(() => (app.connected ? true : undefined), 'the reconnect to the successor', 10_000)
    expect(isAlive(pid!)).toBe(true)
    // The app's "reconnect" button: the successor never held it (a bug hunt, 3 Dec: this failed
    // attach used to make the PTY the successor's, and its absence there proof of its death).
    if (afterFailedReattach) await expect(app.attach(id)).rejects.toMatchObject({ code: 'pty_absent' })
    // Never "proven absent": the successor never held it — but it read the dead host's journal,
    // and answers from the process itself (docs/pty-host.md, "The host dies").
    expect(await app.probeLiveness(id)).toBe(true)
    expect(app.hasPty(id)).toBeNull()
    // Nor its absence from the successor's listing: a stop of it is verified only once it is gone.
    expect(app.authoritativeListings).toBe(false)
    expect(isAlive(pid!)).toBe(true)
    expect(exits).not.toContainEqual(expect.objectContaining({ cause: { kind: 'operator_close' } }))
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
    expect(processIdentity(pid!)?.startTime === started?.startTime && isAlive(pid!)).toBe(false)
    expect(exits).toContainEqual(expect.objectContaining({ cause: { kind: 'operator_close' } }))
  }, 30_000)
})

describe('pty host provider: dispose with spawns around it', () => {
  it('stops a session whose spawn was in flight when dispose() began, and refuses a spawn asked for after', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    await app.spawn({ file: '/bin/sh', args: ['-c', 'read line'] })
    const inFlight = app.spawn({ file: '/bin/sh', args: ['-c', 'read line'] })
    const disposing = app.dispose()
    // A UI that re-creates a terminal while the app shuts down.
    const late = app.spawn({ file: '/bin/sh', args: ['-c', 'read line'] })
    await expect(late).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('is being disposed') })
    await expect(app.attach('anything')).rejects.toMatchObject({ code: 'provider_disposed' })
    const started = await inFlight
    await disposing
    // Once the dispose has finished, a refusal says so (before: "is being disposed" for good).
    await expect(app.spawn({ file: '/bin/sh' })).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('has been disposed') })
    const other = provider(socketPath, { autoStart: false })
    await waitFor(async () => ((await other.listProcesses()).length === 0 ? true : undefined), 'every session of the disposed app to be stopped')
    expect(isDead(started.pid!)).toBe(true)
  }, 30_000)

  it('refuses a spawn under a session id whose attach was on the wire when dispose() began: nothing outlives the dispose', async () => {
    // helper-115's audit: the attach answered pty_absent after dispose() had taken the table it
    // stops, and the fresh spawn that followed left a PTY nobody owned. Thirty sessions make the
    // dispose long enough for that answer to come back within it.
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    await Promise.all(Array.from({ length: 30 }, () => app.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; while :; do sleep 1; done"] })))
    const late = app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 60'], sessionId: 'late-one' })
    const disposing = app.dispose()
    await expect(late).rejects.toMatchObject({ code: 'provider_disposed' })
    await disposing
    const other = provider(socketPath, { autoStart: false })
    await waitFor(async () => ((await other.listProcesses()).length === 0 ? true : undefined), 'every session of the disposed app to be stopped')
  }, 30_000)

  it('stops the app’s sessions when dispose() comes during a brief drop (the host alive)', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    const { pid } = await app.spawn({ file: '/bin/sh', args: ['-c', 'read line'] })
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    await app.dispose()
    const other = provider(socketPath, { autoStart: false })
    await waitFor(async () => ((await other.listProcesses()).length === 0 ? true : undefined), 'the disposed app’s session to be stopped')
    await waitFor(() => (isDead(pid!) ? true : undefined), 'its process to end')
  }, 30_000)
})

describe('pty host: the host lock', () => {
  it('takes over a lock whose holder is a zombie (a host that died and was not reaped yet)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    // A zombie: the inner shell exits once its parent has exec'd into sleep, which never reaps it.
    // (Exiting at once, it could be reaped by the shell before the exec on a loaded machine.)
    const exitNow = join(dir, 'exit-now')
    const parent = spawnChild('/bin/sh', ['-c', `(while [ ! -e '${exitNow}' ]; do sleep 0.01; done) & echo $!; exec sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] })
    cleanups.push(async () => {
      parent.kill('SIGKILL')
    })
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()))))
    await waitFor(() => (readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() === 'sleep' ? true : undefined), 'the parent to exec sleep')
    writeFileSync(exitNow, '')
    await waitFor(() => (isDead(zombie) ? true : undefined), 'the zombie')
    expect(() => process.kill(zombie, 0)).not.toThrow()
    writeFileSync(`${socketPath}.lock`, String(zombie), { mode: 0o600 })
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => host.close())
    expect(Number.parseInt(readFileSync(`${socketPath}.lock`, 'utf8'), 10)).toBe(process.pid)
  })
})

describe('pty host: one host per user, and only that user', () => {
  it('refuses a wrong secret, a socket owned by someone else, an open directory, and a second host', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const owner = provider(socketPath)
    await owner.spawn({ file: 'cat' })
    await expect(startPtyHost({ socketPath })).rejects.toMatchObject({ code: 'host_already_running' })

    const { chownSync, chmodSync } = await import('node:fs')
    const secret = readFileSync(`${socketPath}.secret`, 'utf8')
    writeFileSync(`${socketPath}.secret`, 'f'.repeat(64), { mode: 0o600 })
    // A wrong secret is read again until connectTimeoutMs (a host may be writing its new one): 1 s here.
    await expect(provider(socketPath, { autoStart: false, connectTimeoutMs: 1_000 }).listProcesses()).rejects.toMatchObject({ code: 'unauthorized' })
    writeFileSync(`${socketPath}.secret`, secret, { mode: 0o600 })

    chownSync(socketPath, 65534, 65534)
    await expect(provider(socketPath, { autoStart: false }).listProcesses()).rejects.toMatchObject({ code: 'insecure_socket' })
    chownSync(socketPath, process.getuid!(), process.getgid!())

    chmodSync(dir, 0o755)
    await expect(provider(socketPath, { autoStart: false }).listProcesses()).rejects.toMatchObject({ code: 'insecure_socket' })
    chmodSync(dir, 0o700)

    // Restored: the rightful client gets in again.
    expect(await provider(socketPath, { autoStart: false }).listProcesses()).toHaveLength(1)
    expect(existsSync(`${socketPath}.lock`)).toBe(true)
  }, 40_000)
})

/**
 * A lock file held by a `flock` process of its own until `release()` (idempotent): sessions that
 * run `flock <path> true` wait on it without using the CPU, and all go on at the release.
 */
async function lockHeldUntilReleased(path: string): Promise<{ path: string; release(): void }> {
  const holder = spawnChild('flock', [path, 'sleep', '600'], { stdio: 'ignore', detached: true })
  await waitFor(() => {
    try {
      execFileSync('flock', ['-n', path, 'true'])
      return undefined // Not held yet.
    } catch {
      return true
    }
  }, `flock to hold ${path}`)
  let released = false
  return {
    path,
    release() {
      if (released) return
      released = true
      try {
        process.kill(-holder.pid!, 'SIGKILL')
      } catch {
        // Gone already.
      }
    },
  }
}
