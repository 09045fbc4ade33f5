import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { join, resolve } from 'node:path'
import { afterEach } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { isDead, processIdentity, waitFor } from '../node-pty/pty-test-support.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import {
  createPtyHostProvider,
  PTY_HOST_PROTOCOL_VERSION,
  startPtyHost,
  type PtyHostCommand,
  type PtyHostProvider,
  type PtyHostProviderOptions,
  type PtyHostServer,
  type PtyHostServerOptions,
} from 'ptykit/pty-host'
import { encodeFrame, encodeOutputFrame, FrameDecoder } from '../../src/pty-host/frame-codec.js'
import { ptyHostPaths, readLockHolder, writeHostSecret, type LockHolder } from '../../src/pty-host/socket-security.js'

/**
 * Starts the host from the sources (tests run the sources; dist/ may be stale under `npx vitest run`):
 * one bundle of them per test file, run by plain node (tsx per start costs a second of CPU each).
 */
export const HOST_FROM_SOURCES: PtyHostCommand = {
  file: process.execPath,
  args: nodeArgsFor(resolve(import.meta.dirname, '../../src/pty-host/host-main.ts')),
}

/**
 * The calling test file's cleanups: push a cleanup while a test runs; after each test they run in
 * reverse order (the last resource opened is closed first). Call once, at the file's top level.
 */
export function useCleanups(): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  return cleanups
}

/** A private temp directory (0700, from mkdtemp) and the socket path inside it. */
export function makeSocketDir(): { dir: string; socketPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ptykit-pty-host-test-'))
  return { dir, socketPath: join(dir, 'host.sock') }
}

/**
 * For a test file of the session journal: a function answering a fresh journal path, each in a
 * private directory of its own, removed after each test.
 */
export function useJournalPaths(): () => string {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const { dir } = makeSocketDir()
    dirs.push(dir)
    return join(dir, 'host.sock.journal')
  }
}

/** The pid of the host serving `socketPath` (from its lock file), or null. */
export function hostPid(socketPath: string): number | null {
  return hostHolder(socketPath)?.pid ?? null
}

/** The host lock's holder (its pid, and on Linux the start time it wrote), or `null`. */
function hostHolder(socketPath: string): LockHolder | null {
  try {
    return readLockHolder(ptyHostPaths(socketPath))
  } catch {
    return null
  }
}

/**
 * SIGKILL the host serving `socketPath` and wait until it is gone, threads and all. Why wait: its
 * socket closes while the kernel is still tearing the process down — its leader shows `Z` while
 * its other threads still exit — and a successor started in that window rightly refuses to start
 * (the lock's holder still looks alive).
 */
export async function killHost(socketPath: string): Promise<void> {
  const pid = hostPid(socketPath)!
  process.kill(pid, 'SIGKILL')
  const threads = (): number => {
    try {
      return readdirSync(`/proc/${pid}/task`).length
    } catch {
      return 0
    }
  }
  await waitFor(() => (isDead(pid) && threads() <= 1 ? true : undefined), `the killed host (pid ${pid}) to be gone`, 10_000)
}

/** Whether a process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  return !isDead(pid)
}

/** SIGKILL the host of `socketPath` (and its PTYs' process groups die with their master), then remove the dir. */
export async function killHostAndClean(socketPath: string, dir: string): Promise<void> {
  // The lock names a pid, and on Linux the start time its host wrote: a host that died long ago
  // left its pid to whatever process took it since, which is not this cleanup's to kill.
  const holder = hostHolder(socketPath)
  const pid = holder !== null && (holder.startTime === null || processIdentity(holder.pid)?.startTime === holder.startTime) ? holder.pid : null
  if (pid !== null && isAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone.
    }
    const deadline = Date.now() + 5_000
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  }
  rmSync(dir, { recursive: true, force: true })
}

/** A fresh private socket directory; `cleanups` kill its host and remove the directory after the test. */
export function hostFixture(cleanups: (() => Promise<void>)[]): { dir: string; socketPath: string } {
  const fixture = makeSocketDir()
  cleanups.push(() => killHostAndClean(fixture.socketPath, fixture.dir))
  return fixture
}

/** A provider on `socketPath` that starts the host from the sources. */
export function providerOn(socketPath: string, extra: PtyHostProviderOptions = {}): PtyHostProvider {
  return createPtyHostProvider({ socketPath, hostCommand: HOST_FROM_SOURCES, idleExitMs: 60_000, ...extra })
}

/**
 * A controller over a provider of a host of its own (started on demand from the sources), all
 * disposed and the host killed and its directory removed by `cleanups` after the test.
 */
export function controllerOnOwnHost(cleanups: (() => Promise<void>)[]): { socketPath: string; provider: PtyHostProvider; controller: PtyController } {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(() => killHostAndClean(socketPath, dir))
  const provider = providerOn(socketPath)
  cleanups.push(() => provider.dispose())
  const controller = createPtyController({ provider })
  cleanups.push(() => controller.dispose())
  return { socketPath, provider, controller }
}

/** A provider on `socketPath` (see {@link providerOn}), disposed by `cleanups` after the test. */
export function providerDisposedAfter(
  cleanups: (() => Promise<void>)[],
  socketPath: string,
  extra: PtyHostProviderOptions = {},
): PtyHostProvider {
  const made = providerOn(socketPath, extra)
  cleanups.push(async () => {
    await made.dispose()
  })
  return made
}

/** A raw authenticated connection that sends `request` frames and resolves with their replies. */
/** The first message the host on `socketPath` answers a hello of protocol version `version` (with its secret). */
export async function helloReply(socketPath: string, version: number): Promise<Record<string, unknown>> {
  const secret = readFileSync(`${socketPath}.secret`, 'utf8').trim()
  return await new Promise<Record<string, unknown>>((resolve, reject) => {
    const socket = createConnection(socketPath, () => socket.write(encodeFrame({ v: version, type: 'hello', secret })))
    const decoder = new FrameDecoder()
    socket.on('error', reject)
    socket.on('data', (chunk: Buffer) => {
      const [first] = decoder.push(chunk) as Record<string, unknown>[]
      if (first !== undefined) {
        socket.destroy()
        resolve(first)
      }
    })
  })
}

export async function rawClient(socketPath: string): Promise<{ request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>; readonly closed: boolean; close(): void }> {
  const socket: Socket = createConnection(socketPath)
  const decoder = new FrameDecoder()
  const waiting = new Map<number, { resolve: (reply: Record<string, unknown>) => void; reject: (error: Error) => void }>()
  let closed = false
  let nextId = 1
  let welcomed: { resolve: () => void; reject: (error: Error) => void } = { resolve: () => undefined, reject: () => undefined }
  const welcome = new Promise<void>((resolve, reject) => (welcomed = { resolve, reject }))
  socket.on('error', () => undefined)
  // A refused hello or a dropped connection fails the waits at once (not as a test timeout).
  socket.on('close', () => {
    closed = true
    welcomed.reject(new Error('the host closed the connection'))
    for (const waiter of waiting.values()) waiter.reject(new Error('the host closed the connection before replying'))
    waiting.clear()
  })
  socket.on('data', (chunk: Buffer) => {
    for (const message of decoder.push(chunk) as Record<string, unknown>[]) {
      if (message.type === 'welcome') welcomed.resolve()
      if (message.type === 'refused') welcomed.reject(new Error(`the host refused the hello: ${JSON.stringify(message)}`))
      if (message.type === 'reply') {
        const id = Number(message.id)
        waiting.get(id)?.resolve(message)
        waiting.delete(id)
      }
    }
  })
  socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret: readFileSync(`${socketPath}.secret`, 'utf8').trim() }))
  await welcome
  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new Error('the connection is closed'))
        const id = nextId++
        waiting.set(id, { resolve, reject })
        socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id, method, params }))
      }),
    get closed() {
      return closed
    },
    close: () => socket.destroy(),
  }
}

/**
 * Another app's client spawns `term-1` (`/bin/sh` with `args`) as soon as the host has let go of
 * the dead PTY that had the id (its exit is delivered first: the id is refused until then); its
 * connection is closed by `cleanups`.
 */
/**
 * App 1 (a provider, no controller) spawns `term-1` (`sleep 60`) on an in-process host; its process
 * is SIGKILLed and the connection dropped at once, so app 1 holds a PTY that died unseen — the
 * start of every "another app took the id since" test (with {@link spawnAsAnotherApp}).
 */
export async function ptyDiedWhileDisconnected(
  cleanups: (() => Promise<void>)[],
): Promise<{ socketPath: string; provider1: PtyHostProvider; first: Awaited<ReturnType<PtyHostProvider['spawn']>> }> {
  const { host, socketPath } = await inProcessHost(cleanups)
  const provider1 = createPtyHostProvider({ socketPath, autoStart: false })
  cleanups.push(() => provider1.dispose())
  const first = await provider1.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'], sessionId: 'term-1', isNewSession: true })
  process.kill(first.pid!, 'SIGKILL')
  host.dropConnections()
  return { socketPath, provider1, first }
}

export async function spawnAsAnotherApp(
  cleanups: (() => Promise<void>)[],
  socketPath: string,
  args: string[],
): Promise<{ app2: Awaited<ReturnType<typeof rawClient>>; second: { incarnationId: string; pid: number } }> {
  const app2 = await rawClient(socketPath)
  cleanups.push(async () => app2.close())
  // Bounded by time, not by tries: the host lets go of the id once it has seen the PTY end.
  const giveUpAt = performance.now() + 15_000
  while (performance.now() < giveUpAt) {
    const reply = await app2.request('spawn', { sessionId: 'term-1', file: '/bin/sh', args })
    if (reply.ok === true) return { app2, second: reply.result as { incarnationId: string; pid: number } }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  throw new Error('another app could not spawn term-1 within 15 s')
}

/**
 * Calls `call` in the first turn in which `provider` is connected again (a queued keystroke or probe
 * the moment the link is back, before its re-attach settled), polling every turn for at most
 * `withinMs`. Bounded by time, not by turns: the reconnect's backoff doubles, and on a loaded machine
 * a bound of 20 000 turns once ran out before the reconnect (CI).
 */
export async function onceConnectedAgain<T>(provider: { readonly connected: boolean }, call: () => T | Promise<T>, withinMs = 15_000): Promise<T> {
  const giveUpAt = performance.now() + withinMs
  while (!provider.connected) {
    if (performance.now() > giveUpAt) throw new Error(`the provider did not reconnect within ${withinMs} ms`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return call()
}

/** A `reply` frame answering request `id` with `result` (what a fake host writes back). */
export const okReplyFrame = (id: unknown, result: unknown): Buffer => encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id, ok: true, result })

/** How a {@link fakeHost} behaves beyond answering requests. */
export type FakeHostOptions = {
  /** Unref its server and sockets (the test's process may exit while it listens). */
  unref?: boolean
  /** Fields added to its `welcome`. */
  welcome?: Record<string, unknown>
  /** Answer a `hello` this way instead of welcoming (a host that refuses the app). */
  onHello?: (message: Record<string, unknown>, socket: Socket) => void
}

/**
 * A scripted stand-in for a pty host: welcomes the client (as a host of ptykit 0.1.0 does, plus
 * the `welcome` fields given), then hands each decoded message to `onMessage`. With `unref`, its
 * own server and sockets never hold the process open (for tests of what the client holds).
 */
export async function fakeHost(
  onMessage: (message: Record<string, unknown>, socket: Socket) => void,
  options: FakeHostOptions = {},
): Promise<{ socketPath: string; close(): Promise<void> }> {
  const { dir, socketPath } = makeSocketDir()
  const paths = ptyHostPaths(socketPath)
  writeHostSecret(paths)
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    if (options.unref === true) socket.unref()
    const decoder = new FrameDecoder()
    socket.on('error', () => undefined)
    socket.on('data', (chunk: Buffer) => {
      for (const message of decoder.push(chunk) as Record<string, unknown>[]) {
        if (message.type !== 'hello') onMessage(message, socket)
        else if (options.onHello !== undefined) options.onHello(message, socket)
        else socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'welcome', hostInstanceId: 'fake-host', hostPid: process.pid, ...options.welcome }))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  if (options.unref === true) server.unref()
  chmodSync(socketPath, 0o600)
  return {
    socketPath,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A {@link fakeHost} that `cleanups` close after the test (closing it earlier in the test is fine). */
export async function fakeHostClosedAfter(
  cleanups: (() => Promise<void>)[],
  onMessage: (message: Record<string, unknown>, socket: Socket) => void,
  options: FakeHostOptions = {},
): Promise<{ socketPath: string; close(): Promise<void> }> {
  const host = await fakeHost(onMessage, options)
  cleanups.push(() => host.close())
  return host
}

/** A refusal reply frame (an error with `code`, its message the code), as a host sends it. */
export function refusalFrame(id: unknown, code: string): Buffer {
  return encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id, ok: false, error: { code, message: code } })
}

/** An `attach` request as {@link fakeAttachHost} hands it over. */
export type FakeAttachRequest = { id: unknown; params: { ptyId: string; fromSeq: number | null; expectedIncarnationId?: string } }

/**
 * Answer an attach as a host holding a live session (pid 4242, `incarnationId`) whose retained
 * output is `retained`: its reply, then the replay from the request's `fromSeq`.
 */
export function answerAttach(socket: Socket, { id, params }: FakeAttachRequest, retained: string, incarnationId = 'inc-1'): void {
  const from = Math.min(params.fromSeq ?? 0, retained.length)
  socket.write(okReplyFrame(id, { id: params.ptyId, pid: 4242, incarnationId, replayFrom: from, lostChars: 0, exited: false }))
  if (from < retained.length) socket.write(encodeOutputFrame(params.ptyId, retained.length, retained.slice(from), incarnationId))
}

/**
 * A {@link fakeHost}, closed by `cleanups`, that hands each `attach` request to `onAttach` with the
 * number of the connection it came on (1 for the first to send a request) and answers every other
 * request ok: a spawn with `spawnReply`, the rest with `null`.
 */
export async function fakeAttachHost(
  cleanups: (() => Promise<void>)[],
  onAttach: (request: FakeAttachRequest, socket: Socket, connection: number) => void,
  spawnReply: Record<string, unknown> | null = null,
): Promise<{ socketPath: string; close(): Promise<void> }> {
  const connectionNumbers = new WeakMap<Socket, number>()
  let connections = 0
  return await fakeHostClosedAfter(cleanups, (message, socket) => {
    if (!connectionNumbers.has(socket)) connectionNumbers.set(socket, ++connections)
    if (message.type !== 'request') return
    if (message.method === 'attach') onAttach(message as FakeAttachRequest, socket, connectionNumbers.get(socket)!)
    else socket.write(okReplyFrame(message.id, message.method === 'spawn' ? spawnReply : null))
  })
}

/**
 * A pty host in this process on a fresh private socket (`idleExitMs` 60 s unless `options` say),
 * closed and its directory removed by `cleanups` after the test.
 */
export async function inProcessHost(
  cleanups: (() => Promise<void>)[],
  options: PtyHostServerOptions = {},
): Promise<{ host: PtyHostServer; dir: string; socketPath: string }> {
  const { dir, socketPath } = makeSocketDir()
  const host = await startPtyHost({ socketPath, idleExitMs: 60_000, ...options })
  cleanups.push(async () => {
    await host.close()
    await killHostAndClean(socketPath, dir)
  })
  return { host, dir, socketPath }
}

/**
 * Run a fixture app (`fixtures/<name>`, from the sources) in its own Node process until it exits;
 * resolves with its exit code and what it printed. Killed by `cleanups` if the test ends first.
 * `app` gives it a working directory and an environment of its own (default: this process's).
 */
export async function runAppToEnd(
  cleanups: (() => Promise<void>)[],
  name: string,
  args: string[],
  app: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; printed: string }> {
  const child = spawn(process.execPath, [...nodeArgsFor(resolve(import.meta.dirname, 'fixtures', name)), ...args], { stdio: ['ignore', 'pipe', 'inherit'], ...app })
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let printed = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
  const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)))
  return { code, printed }
}

/** A process as `/proc/<pid>/stat` shows it: its state letter, process group, session id and start time (field 22). */
export type ProcStat = { state: string; pgid: number; sid: number; startTime: string }

/** `/proc/<pid>/stat` of `pid` now (Linux), or `null` when it is gone or cannot be read. */
export function procStatOf(pid: number | string): ProcStat | null {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  // Fields after the command (which may hold spaces and parentheses): state ppid pgrp session …
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state: fields[0]!, pgid: Number(fields[2]), sid: Number(fields[3]), startTime: fields[19]! }
}

export { killSessionMembers, sessionMembers } from '../support/proc-row.js'
