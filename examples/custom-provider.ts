// A custom PtyProvider: PTYs run in a child "host" process that speaks JSON lines over stdio.
//
//   npx tsx examples/custom-provider.ts
//
// This is the shape of an out-of-process PTY host (as VS Code runs one): the host application
// never forks a PTY on its own thread, a crash of the host cannot take the application down, and
// every event crosses a process boundary — so it must be plain data.
//
// The host child (./json-lines-host/host.ts) is a *lossy relay*: it forwards an exit's code and
// incarnation, never its cause — like an old daemon. This provider therefore sends exits without a
// `cause`, and the controller resolves the bare code with `exitCauseFromWire`:
//
//   `exit 3` in the shell  →  exited(3)                    the code is non-zero: proof enough
//   `exit 0` in the shell  →  unknown/cause_unreported     a bare 0 could have been a kill
//
// Run directly, `main()` shows exactly that, and exits non-zero if it does not happen.
// examples/custom-provider.test.ts runs the provider conformance suite from `ptykit/testing`
// against this provider. docs/writing-a-provider.md walks through the code below.
import { spawn as spawnChild } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  assertNoMisspeltSpawnOption,
  assertPtyDimension,
  createListenerSet,
  createRecentIds,
  isPtyIncarnationId,
  refusedWrite,
  remainingWaitMs,
  resolveWaitDeadline,
  unverifiableWrite,
  type ExecutionHostId,
  type ProviderSpawnOptions,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyIncarnationId,
  type PtyListProcessesOptions,
  type PtyLivenessProbeOptions,
  type PtyProcessInfo,
  type PtyProvider,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type WriteSettlement,
} from 'ptykit/contracts'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describeTerminalExitCause, exitCauseFromWire, type TerminalExitCause } from 'ptykit/exit-cause'
import { JsonLinesHostError } from './json-lines-host/json-lines-host-error.js'
import { decodeHostMessage, encodeLine, type HostMessage, type HostMethod, type WireError } from './json-lines-host/protocol.js'

export { JsonLinesHostError, isJsonLinesHostError, type JsonLinesHostErrorCode } from './json-lines-host/json-lines-host-error.js'

/** How long `dispose` waits for the host to stop its PTYs: node-pty's own stop deadline (5 s) plus the round trip. */
export const JSON_LINES_DISPOSE_DEADLINE_MS = 6_000

/** How long the host gets to exit after its stdin closed before it is killed: it has nothing left to stop by then. */
export const JSON_LINES_HOST_EXIT_GRACE_MS = 2_000

/** Added to a caller's deadline for the pipe round trip, so the host's own deadline fires first. */
export const JSON_LINES_ROUND_TRIP_MARGIN_MS = 250

/** How many exited PTY ids the provider remembers, to refuse writes as `pty_exited` rather than `pty_not_found`. */
export const JSON_LINES_EXITED_ID_MEMORY = 1_024

/** How to start the host child. */
export type JsonLinesHostCommand = {
  /** The program. Default: this Node binary (`process.execPath`). */
  file: string
  /** Its arguments. Default: `['--import', 'tsx', <examples/json-lines-host/host.ts>]`. */
  args: readonly string[]
  /** Its working directory. Default: the repository root, where tsx finds the `ptykit/*` paths. */
  cwd?: string
}

/** Options of {@link createJsonLinesPtyProvider}. Every field is optional. */
export type JsonLinesPtyProviderOptions = {
  /** The provider's `name`. Default `'json-lines-host'`. */
  name?: string
  /** The host id put on listing rows; use the id the provider is registered under. Default `'local'`. */
  hostId?: ExecutionHostId
  /** How to start the host child. Default: `node --import tsx examples/json-lines-host/host.ts`. */
  hostCommand?: JsonLinesHostCommand
}

/** The JSON-lines provider: a {@link PtyProvider} plus a handle on its host child. */
export type JsonLinesPtyProvider = PtyProvider &
  Required<Pick<PtyProvider, 'hasPty' | 'probeLiveness' | 'pauseProducer' | 'resumeProducer' | 'getCwd' | 'getForegroundProcess' | 'dispose'>> & {
    /** The host child's pid; `null` once it has exited. */
    readonly hostPid: number | null
    /** Resolves once the host child has exited and its pipes are closed (after dispose, or a crash). */
    readonly hostExited: Promise<void>
  }

/** What this provider knows about one PTY id. `unknown`: the host died, so nobody can tell. */
type KnownPty = { state: 'live' | 'exited' | 'unknown'; incarnationId: PtyIncarnationId | undefined }

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void; timer?: NodeJS.Timeout }

const DEFAULT_HOST_COMMAND: JsonLinesHostCommand = {
  file: process.execPath,
  args: ['--import', 'tsx', fileURLToPath(new URL('./json-lines-host/host.ts', import.meta.url))],
  cwd: fileURLToPath(new URL('..', import.meta.url)),
}

/**
 * Create a provider whose PTYs run in a child host process, over JSON lines.
 *
 * - Requests are correlated by id; each is answered exactly once.
 * - Events stay plain data; exits carry a code and an incarnation, never a cause.
 * - When the host dies, every pending request rejects (`host_exited`) and every PTY that was live
 *   becomes *unknown* — `hasPty` and `probeLiveness` answer `null`, never `false`: its death was
 *   not observed, only the loss of contact.
 * - `dispose()` stops every PTY (their exits are reported), then ends the host child.
 */
export function createJsonLinesPtyProvider(options: JsonLinesPtyProviderOptions = {}): JsonLinesPtyProvider {
  const name = options.name ?? 'json-lines-host'
  const hostId = options.hostId ?? 'local'
  const command = options.hostCommand ?? DEFAULT_HOST_COMMAND
  // `createListenerSet` is the dispatcher every provider needs: subscribe returns an idempotent
  // unsubscribe, `fire` calls a snapshot of the listeners, and a listener's throw surfaces uncaught
  // (on its own microtask) without breaking the stream for the others.
  const dataListeners = createListenerSet<PtyDataEvent>()
  const exitListeners = createListenerSet<PtyExitEvent>()
  const pending = new Map<number, Pending>()
  const commits = new Map<number, () => void>()
  const ptys = new Map<string, KnownPty>()
  // Exited PTYs are remembered (a late write is `pty_exited`, not `pty_not_found`), boundedly.
  const exitedIds = createRecentIds(JSON_LINES_EXITED_ID_MEMORY)
  let nextRequestId = 1
  let hostGone = false
  let disposePromise: Promise<void> | null = null

  // stderr is inherited: the host's diagnostics show up in the application's own log.
  const child = spawnChild(command.file, [...command.args], {
    cwd: command.cwd,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  // Why: writing to a dead child's stdin fails with EPIPE; the exit handler below reports it.
  child.stdin.on('error', () => {})

  let markHostExited: () => void = () => {}
  const hostExited = new Promise<void>((resolve) => {
    markHostExited = resolve
  })

  function onHostGone(why: string): void {
    if (hostGone) return
    hostGone = true
    const error = new JsonLinesHostError('host_exited', `The PTY host exited (${why})`)
    for (const request of pending.values()) {
      clearTimeout(request.timer)
      request.reject(error)
    }
    pending.clear()
    commits.clear()
    // No exit was observed for these PTYs, only the loss of their host: unknown, not dead.
    for (const pty of ptys.values()) if (pty.state === 'live') pty.state = 'unknown'
    markHostExited()
  }

  // 'close' (not 'exit'): it fires after stdout is drained, so no reply still in the pipe is lost.
  // It goes through the inbox, behind every message that arrived before it.
  child.on('close', (code, signal) => receive({ type: 'gone', why: signal === null ? `code ${String(code)}` : `signal ${signal}` }))
  child.on('error', (error) => receive({ type: 'gone', why: error.message }))

  function rememberExit(id: string, incarnationId: PtyIncarnationId | undefined): void {
    const known = ptys.get(id)
    // A late exit of an older incarnation must not end its replacement.
    if (known !== undefined && known.incarnationId !== undefined && incarnationId !== undefined && known.incarnationId !== incarnationId) {
      return
    }
    ptys.set(id, { state: 'exited', incarnationId })
    for (const oldest of exitedIds.remember(id)) {
      if (ptys.get(oldest)?.state === 'exited') ptys.delete(oldest)
    }
  }

  function onMessage(message: HostMessage): void {
    switch (message.type) {
      case 'reply': {
        const request = pending.get(message.id)
        if (request === undefined) return // answered after its deadline: nobody is waiting
        pending.delete(message.id)
        clearTimeout(request.timer)
        if (message.ok) request.resolve(message.result)
        else request.reject(errorFromWire(message.error))
        return
      }
      case 'committed':
        commits.get(message.requestId)?.()
        commits.delete(message.requestId)
        return
      case 'data': {
        // An unreadable incarnation is not attested: `undefined` reads as absent.
        const incarnationId = isPtyIncarnationId(message.incarnationId) ? message.incarnationId : undefined
        const event: PtyDataEvent = { id: message.ptyId, data: message.data, incarnationId }
        dataListeners.fire(event)
        return
      }
      case 'exit': {
        const incarnationId = isPtyIncarnationId(message.incarnationId) ? message.incarnationId : undefined
        rememberExit(message.ptyId, incarnationId)
        // Only a code, and deliberately no `cause`: this host never sent one, and inventing one here
        // would be a guess. A malformed code (`null`) becomes NaN, which the controller resolves to
        // unknown/cause_unreported — malformed evidence is not evidence.
        const event: PtyExitEvent = { id: message.ptyId, code: message.code ?? Number.NaN, incarnationId }
        exitListeners.fire(event)
        return
      }
    }
  }

  // Messages are handled in arrival order, with one twist: after a reply, the rest waits for a
  // macrotask. Why: a caller awaiting the reply (the spawn pipeline, after `spawn`) must see it
  // before the events the host sent *after* it — as with an in-process provider. Otherwise a fast
  // `exit 0` that the host reported after its spawn reply would look like an exit during start.
  const inbox: Array<HostMessage | { type: 'gone'; why: string }> = []
  let draining = false
  function receive(message: HostMessage | { type: 'gone'; why: string }): void {
    inbox.push(message)
    if (!draining) drain()
  }
  function drain(): void {
    draining = true
    for (let message = inbox.shift(); message !== undefined; message = inbox.shift()) {
      if (message.type === 'gone') onHostGone(message.why)
      else onMessage(message)
      if (message.type === 'reply') {
        // Also when the inbox is empty: readline hands over the next line of the same chunk
        // synchronously, before the reply's awaiting caller had its turn.
        setImmediate(drain)
        return
      }
    }
    draining = false
  }

  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    const message = decodeHostMessage(line)
    if (message !== null) receive(message)
  })

  function send(method: HostMethod, params: Record<string, unknown>, timeoutMs?: number): { id: number; reply: Promise<unknown> } {
    const id = nextRequestId++
    const reply = new Promise<unknown>((resolve, reject) => {
      if (hostGone) {
        reject(new JsonLinesHostError('host_exited', `Cannot ${method}: the PTY host has exited`))
        return
      }
      const request: Pending = { resolve, reject }
      if (timeoutMs !== undefined) {
        request.timer = setTimeout(() => {
          pending.delete(id)
          reject(new JsonLinesHostError('deadline_exceeded', `The PTY host did not answer ${method} within ${timeoutMs} ms`))
        }, timeoutMs)
      }
      pending.set(id, request)
      // Throws (a TypeError) for data JSON cannot carry: a programmer error, reported as such.
      child.stdin.write(encodeLine({ type: 'request', id, method, params }))
    })
    return { id, reply }
  }

  const request = (method: HostMethod, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> =>
    send(method, params, timeoutMs).reply

  /**
   * How long a request bounded by the caller's budget may wait: what is left of it (`deadlineMs`
   * is an absolute epoch time, `timeoutMs` a duration) plus the round trip; `undefined` for no budget.
   */
  const requestTimeoutMs = (budget: { deadlineMs?: number | undefined; timeoutMs?: number | undefined }): number | undefined =>
    budget.deadlineMs === undefined && budget.timeoutMs === undefined
      ? undefined
      : remainingWaitMs(resolveWaitDeadline(budget, 0)) + JSON_LINES_ROUND_TRIP_MARGIN_MS

  // Once disposed, every call but `dispose` and the subscriptions is refused (the rule of
  // `PtyProvider.dispose`): the provider no longer knows what runs, so it guesses nothing.
  function assertUsable(method: string): void {
    if (disposePromise !== null) throw new JsonLinesHostError('provider_disposed', `Cannot call \`${method}\` on a disposed provider`)
  }

  function isLive(id: string): boolean {
    return !hostGone && ptys.get(id)?.state === 'live'
  }

  async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    assertUsable('spawn')
    // A misspelt option (`cdw`, `sessionID`, `evn`, `id`) would be ignored, the default used: refused
    // here, before anything crosses the wire, as every bundled provider refuses it — `code:
    // 'invalid_spawn_option'`, `option` and `value` (a misspelt `env`'s value neither shown nor kept).
    assertNoMisspeltSpawnOption(spawnOptions)
    // The callback cannot cross the wire: the host sends `committed` instead, and it is called here.
    const { onPtySpawnCommitted, ...launch } = spawnOptions
    const { id: requestId, reply } = send('spawn', { ...launch })
    let hookFailure: { error: unknown } | undefined
    if (onPtySpawnCommitted !== undefined) {
      commits.set(requestId, () => {
        try {
          onPtySpawnCommitted()
        } catch (error) {
          hookFailure = { error }
        }
      })
    }
    let result: PtySpawnResult
    try {
      const raw = await reply
      const parsed = toSpawnResult(raw)
      if (parsed === null) {
        // A process may exist that we cannot name reliably: stop whatever id the reply carried.
        const id = (raw as { id?: unknown } | null)?.id
        if (typeof id === 'string') await request('shutdown', { id, immediate: true }).catch(() => undefined)
        throw new JsonLinesHostError('protocol_error', `The PTY host answered spawn with a malformed result: ${JSON.stringify(raw)}`)
      }
      result = parsed
    } finally {
      commits.delete(requestId)
    }
    if (hookFailure !== undefined) {
      // The caller never learns of this process, so none may be left behind.
      const stop: Record<string, unknown> = { id: result.id, immediate: true }
      if (result.incarnationId !== undefined) stop['expectedIncarnationId'] = result.incarnationId
      await request('shutdown', stop).catch(() => undefined)
      throw hookFailure.error
    }
    const known = ptys.get(result.id)
    const exitSeen = known?.state === 'exited' && known.incarnationId === result.incarnationId
    if (!exitSeen && result.exitedBeforeSpawnReply !== true) {
      ptys.set(result.id, { state: 'live', incarnationId: result.incarnationId })
    }
    return result
  }

  function write(id: string, data: string): WriteSettlement | Promise<WriteSettlement> {
    if (typeof data !== 'string') throw new TypeError(`Expected the \`data\` argument to be a string, got ${typeof data}`)
    assertUsable('write')
    // Proven that no byte leaves: refused, and at once — a controller's boolean `write` reads a
    // pending settlement as "handed over". Anything after the bytes went down the pipe is unverifiable.
    if (ptys.get(id)?.state === 'exited') return refusedWrite('pty_exited')
    if (hostGone) return refusedWrite('provider_refused_write')
    return settleHostWrite(id, data)
  }

  async function settleHostWrite(id: string, data: string): Promise<WriteSettlement> {
    try {
      return toWriteSettlement(await request('write', { id, data }))
    } catch {
      return unverifiableWrite('transport_lost', true)
    }
  }

  async function shutdown(id: string, shutdownOptions: PtyShutdownOptions = {}): Promise<void> {
    assertUsable('shutdown')
    if (ptys.get(id)?.state === 'exited') return
    // Rejects with `host_exited` when the host is gone: the stop could not be dispatched.
    await request('shutdown', { id, ...shutdownOptions }, requestTimeoutMs(shutdownOptions))
  }

  async function listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
    assertUsable('listProcesses')
    const rows = await request('list', { ...listOptions }, requestTimeoutMs(listOptions))
    if (!Array.isArray(rows)) throw new JsonLinesHostError('protocol_error', 'The PTY host answered list with something other than an array')
    return rows.flatMap((row: unknown) => {
      const info = toProcessInfo(row, hostId)
      return info === null ? [] : [info]
    })
  }

  async function probeLiveness(id: string, probeOptions: PtyLivenessProbeOptions = {}): Promise<boolean | null> {
    assertUsable('probeLiveness')
    const known = ptys.get(id)
    // Asked about an incarnation other than the one this provider holds under the id: the host
    // answers by id, about whichever process it holds now, so its `true` may be about another
    // process — never pass that on. Its `false` (no process under the id at all) still holds.
    const another = probeOptions.incarnationId !== undefined && known?.incarnationId !== probeOptions.incarnationId
    if (!another && known?.state === 'exited') return false
    if (hostGone) return null
    try {
      const answer = await request('probe', { id })
      if (typeof answer !== 'boolean') return null
      return another && answer ? null : answer
    } catch {
      return null
    }
  }

  async function askString(method: 'getCwd' | 'getForegroundProcess', id: string): Promise<string | null> {
    assertUsable(method)
    if (!isLive(id)) return null
    try {
      const answer = await request(method, { id })
      return typeof answer === 'string' ? answer : null
    } catch {
      return null
    }
  }

  function fireAndForget(method: 'pause' | 'resume' | 'resize', params: Record<string, unknown>): void {
    request(method, params).catch(() => undefined)
  }

  async function runDispose(): Promise<void> {
    if (!hostGone) {
      // Stop every PTY first: their exits cross the wire before this reply does.
      await request('dispose', {}, JSON_LINES_DISPOSE_DEADLINE_MS).catch(() => undefined)
      child.stdin.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), JSON_LINES_HOST_EXIT_GRACE_MS)
      await hostExited
      clearTimeout(timer)
    }
    dataListeners.clear()
    exitListeners.clear()
  }

  return {
    name,
    // The host's node-pty provider owns every process it lists, so a missing row proves absence.
    // A listing never answers from a dead host: it rejects instead.
    authoritativeListings: true,
    get hostPid() {
      return hostGone ? null : (child.pid ?? null)
    },
    hostExited,
    spawn,
    write,
    resize(id: string, cols: number, rows: number): boolean {
      for (const [option, value] of [['cols', cols], ['rows', rows]] as const) {
        try {
          assertPtyDimension(option, value, 'argument')
        } catch (error) {
          // The refusal `PtyProvider.resize` documents (and the conformance suite checks): a host
          // matches on `code`, whichever provider or controller refused the size.
          throw Object.assign(error as TypeError, { code: 'invalid_option', option, value })
        }
      }
      assertUsable('resize')
      if (!isLive(id)) return false
      // Best effort: the answer arrives later. No `getSize`, since nothing here reads the size back.
      fireAndForget('resize', { id, cols, rows })
      return true
    },
    shutdown,
    pauseProducer(id: string): void {
      assertUsable('pauseProducer')
      if (isLive(id)) fireAndForget('pause', { id })
    },
    resumeProducer(id: string): void {
      assertUsable('resumeProducer')
      if (isLive(id)) fireAndForget('resume', { id })
    },
    listProcesses,
    hasPty(id: string): boolean | null {
      assertUsable('hasPty')
      const state = ptys.get(id)?.state
      if (state === 'exited') return false // its exit was observed: proven
      if (state === 'live') return true
      return null // a dead host, or an id this side never saw: unknown, never a denial
    },
    probeLiveness,
    getCwd: (id: string) => askString('getCwd', id),
    getForegroundProcess: (id: string) => askString('getForegroundProcess', id),
    onData: (listener: (event: PtyDataEvent) => void) => dataListeners.add(listener),
    onExit: (listener: (event: PtyExitEvent) => void) => exitListeners.add(listener),
    dispose(): Promise<void> {
      disposePromise ??= runDispose()
      return disposePromise
    },
  }
}

// -------------------------------------------------------------------------------------------------
// Decoding what the host sent: untrusted until checked.

function errorFromWire(error: WireError): Error {
  // A host-side TypeError is the caller's programmer error (a bad option): it stays a TypeError.
  if (error.name === 'TypeError' || error.name === 'NodePtyOptionError') {
    return Object.assign(new TypeError(error.message), error.code === undefined ? {} : { code: error.code })
  }
  // Everything else keeps its code — `pty_absent` above all, which the spawn pipeline trusts as proof.
  return new JsonLinesHostError(error.code ?? 'host_error', error.message)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const isPositiveInteger = (value: unknown): value is number => Number.isInteger(value) && (value as number) > 0

function toSpawnResult(value: unknown): PtySpawnResult | null {
  if (!isRecord(value) || typeof value['id'] !== 'string' || value['id'].length === 0) return null
  const result: PtySpawnResult = { id: value['id'] }
  const { pid, incarnationId, isReattach, exitedBeforeSpawnReply, providerSequence, hostReportsChildExitStatus, cols, rows } = value
  if (isPositiveInteger(pid) || pid === null) result.pid = pid
  if (isPtyIncarnationId(incarnationId)) result.incarnationId = incarnationId
  if (typeof isReattach === 'boolean') result.isReattach = isReattach
  if (typeof exitedBeforeSpawnReply === 'boolean') result.exitedBeforeSpawnReply = exitedBeforeSpawnReply
  if (typeof hostReportsChildExitStatus === 'boolean') result.hostReportsChildExitStatus = hostReportsChildExitStatus
  if (isPositiveInteger(cols)) result.cols = cols
  if (isPositiveInteger(rows)) result.rows = rows
  if (
    isRecord(providerSequence) &&
    Number.isInteger(providerSequence['value']) &&
    (providerSequence['value'] as number) >= 0 &&
    (providerSequence['generation'] === 'continued' || providerSequence['generation'] === 'reset')
  ) {
    result.providerSequence = { value: providerSequence['value'] as number, generation: providerSequence['generation'] }
  }
  return result
}

function toWriteSettlement(value: unknown): WriteSettlement {
  if (isRecord(value)) {
    if (value['kind'] === 'accepted') return { kind: 'accepted' }
    if (value['kind'] === 'refused' && typeof value['reason'] === 'string') return value as WriteSettlement
    if (value['kind'] === 'unverifiable' && typeof value['reason'] === 'string' && typeof value['bytesHandedToTransport'] === 'boolean') {
      return value as WriteSettlement
    }
  }
  // The bytes went down the pipe and the answer is unreadable: nobody can tell.
  return unverifiableWrite('transport_lost', true)
}

function toProcessInfo(value: unknown, hostId: ExecutionHostId): PtyProcessInfo | null {
  if (!isRecord(value) || typeof value['id'] !== 'string') return null
  const { cwd, title, pid, incarnationId, scopeId, slotKey, claimKey } = value
  // The row's host is the one this provider is registered under, whatever the child calls itself.
  const row: PtyProcessInfo = {
    id: value['id'],
    hostId,
    cwd: typeof cwd === 'string' ? cwd : null,
    title: typeof title === 'string' ? title : '',
  }
  if (isPositiveInteger(pid) || pid === null) row.pid = pid
  if (isPtyIncarnationId(incarnationId)) row.incarnationId = incarnationId
  if (typeof scopeId === 'string') row.scopeId = scopeId
  if (typeof slotKey === 'string') row.slotKey = slotKey
  if (typeof claimKey === 'string') row.claimKey = claimKey
  return row
}

// -------------------------------------------------------------------------------------------------
// The demonstration: run when this file is executed directly.

/** The longest the demonstration may take before it fails: a few seconds are plenty. */
export const EXAMPLE_DEADLINE_MS = 20_000

/** Wait for the controller's exit event of `ptyId` (recorded in `exits` from the start, so none is missed). */
function exitOf(controller: PtyController, exits: Map<string, PtyControllerExitEvent>, ptyId: string): Promise<PtyControllerExitEvent> {
  const seen = exits.get(ptyId)
  if (seen !== undefined) return Promise.resolve(seen)
  return new Promise((resolve) => {
    const onExit = (event: PtyControllerExitEvent): void => {
      if (event.ptyId !== ptyId) return
      controller.off('exit', onExit)
      resolve(event)
    }
    controller.on('exit', onExit)
  })
}

function expectCause(what: string, actual: TerminalExitCause, expected: TerminalExitCause): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
  }
}

/**
 * Three shells through a controller over this provider: `exit 3` (proven: `exited(3)`), `exit 0`
 * (a bare 0 over a lossy wire: `unknown/cause_unreported`) and a stopped `cat` (`operator_close`).
 * Throws when any cause differs.
 */
export async function main(): Promise<void> {
  const provider = createJsonLinesPtyProvider()
  const controller = createPtyController({ provider })
  const exits = new Map<string, PtyControllerExitEvent>()
  controller.on('exit', (event) => exits.set(event.ptyId, event))
  try {
    for (const [code, expected] of [
      [3, { kind: 'exited', exitCode: 3 }],
      [0, { kind: 'unknown', reason: 'cause_unreported' }],
    ] as const) {
      const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', `exit ${code}`] })
      const exit = await exitOf(controller, exits, id)
      // The provider forwarded only `{ code }`; the controller applied exitCauseFromWire to it.
      console.log(`sh -c 'exit ${code}'  → wire { code: ${exit.code} } → ${JSON.stringify(exit.cause)}`)
      console.log(`    "${describeTerminalExitCause(exit.cause)}"`)
      expectCause(`exit ${code}`, exit.cause, expected)
      expectCause(`exitCauseFromWire({ code: ${code} })`, exitCauseFromWire({ code: exit.code }), expected)
    }

    // A stop through the controller: whatever the wire says, it is the operator's close.
    const { id } = await controller.spawn({ file: 'cat' })
    const verified = await controller.stopAndWait(id, { timeoutMs: 5_000 })
    const stopped = await exitOf(controller, exits, id)
    console.log(`cat, stopped         → verified: ${verified}, ${JSON.stringify(stopped.cause)}`)
    console.log(`    "${describeTerminalExitCause(stopped.cause)}"`)
    if (!verified) throw new Error('stopAndWait did not verify the stop')
    expectCause('stopped cat', stopped.cause, { kind: 'operator_close' })
  } finally {
    await controller.dispose()
    await provider.dispose()
  }
}

const executedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (executedDirectly) {
  const watchdog = setTimeout(() => {
    console.error(`custom-provider example: did not finish within ${EXAMPLE_DEADLINE_MS} ms`)
    process.exit(1)
  }, EXAMPLE_DEADLINE_MS)
  watchdog.unref()
  main().then(
    () => clearTimeout(watchdog),
    (error: unknown) => {
      console.error(error)
      process.exitCode = 1
    },
  )
}
