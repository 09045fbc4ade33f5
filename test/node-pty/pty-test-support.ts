import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import type { PtyDataEvent, PtyExitEvent, PtyProvider } from 'ptykit/contracts'
import { loadNodePtyModule, type NodePtyModule, type NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { afterAll, beforeAll, expect, vi } from 'vitest'
import { NODE_PTY_DISPOSE_KILL_REAP_MS } from '../../src/node-pty/stop-schedule.js'
import { NodePtySession } from '../../src/node-pty/node-pty-session.js'
import { toPtyIncarnationId } from '../../src/contracts/incarnation.js'

import { isDeadState, killSessionMembers, procRow, sessionMembers, type ProcRow } from '../support/proc-row.js'

export { isDeadState, killSessionMembers, procRow, sessionMembers, type ProcRow }

/**
 * A process as seen at one moment: its pid and its start time (`/proc/<pid>/stat` field 22), which
 * together name it for good — a pid alone names whatever process holds it now, and `pid_max` is
 * 32 768 here: the whole suite wraps it.
 */
export type ProcessIdentity = { readonly pid: number; readonly startTime: string }

/** The identity of the process `pid` names now; `null` when there is none. */
export function processIdentity(pid: number): ProcessIdentity | null {
  const row = procRow(pid)
  return row === null ? null : { pid, startTime: row.startTime }
}

/**
 * Signal (SIGKILL by default) the process `identity` names — with `group`, its process group — if
 * it is still that process and not dead. For cleanups that run after a test: the process they
 * remember may have died long since, and its pid been given to another test's process.
 */
export function killIfStill(identity: ProcessIdentity | null | undefined, options: { group?: boolean; signal?: NodeJS.Signals } = {}): void {
  if (identity === null || identity === undefined) return
  const now = procRow(identity.pid)
  if (now === null || now.startTime !== identity.startTime || isDeadState(now.state)) return
  try {
    process.kill(options.group === true ? -identity.pid : identity.pid, options.signal ?? 'SIGKILL')
  } catch {
    // Gone meanwhile.
  }
}


/** True when the process is gone, a zombie or being reaped (dead; reaping is its parent's business). */
export function isDead(pid: number): boolean {
  const row = procRow(pid)
  return row === null || isDeadState(row.state)
}

/**
 * SIGKILL `pid` and busy-wait — no event-loop turn, so no exit can be delivered meanwhile — until
 * the kernel shows it dead: the state of a process that died while its exit is on its way.
 */
export function killAndSpinUntilDead(pid: number): void {
  process.kill(pid, 'SIGKILL')
  const deadline = Date.now() + 5_000
  while (!isDead(pid)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still alive 5 s after SIGKILL: ${JSON.stringify(procRow(pid))}`)
  }
}

/**
 * Whether `pid` runs `command` with every one of `signals` ignored (their bits in the `SigIgn` mask
 * of `/proc/<pid>/status`). A script's `(trap '' HUP; exec sleep 30) & echo $!` prints the job's pid
 * right after its fork, before the job has set its trap and exec'd: a test that hangs the session
 * up as soon as it reads the pid waits for this first, or a loaded machine's hang-up can end the job.
 */
export function runsIgnoring(pid: number, command: string, signals: readonly NodeJS.Signals[]): boolean {
  let status: string
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return false
  }
  const name = /^Name:\s*(.*)$/m.exec(status)?.[1]
  const ignored = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status)?.[1]
  if (name !== command || ignored === undefined) return false
  const mask = BigInt(`0x${ignored}`)
  return signals.every((signal) => ((mask >> BigInt(osConstants.signals[signal] - 1)) & 1n) === 1n)
}

/** The command name of `pid` (`/proc/<pid>/comm`: `sleep` once a shell exec'd it), or `undefined`. */
export function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** Every live (non-zombie) child of `pid`. */
export function liveChildrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => procRow(Number(entry)))
    .filter((row): row is ProcRow => row !== null && row.ppid === pid && !isDeadState(row.state))
    .map((row) => row.pid)
}

/** Poll `probe` until it returns something other than `undefined`. */
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

type LoggedEvent = { kind: 'data'; event: PtyDataEvent } | { kind: 'exit'; event: PtyExitEvent }

/** Records a provider's events, in order, per PTY. */
export class PtyEventLog {
  readonly #byId = new Map<string, LoggedEvent[]>()
  readonly #waiters = new Map<string, Set<() => void>>()

  constructor(provider: PtyProvider) {
    provider.onData((event) => this.#push({ kind: 'data', event }))
    provider.onExit((event) => this.#push({ kind: 'exit', event }))
  }

  #push(entry: LoggedEvent): void {
    const id = entry.event.id
    const list = this.#byId.get(id)
    if (list === undefined) this.#byId.set(id, [entry])
    else list.push(entry)
    for (const wake of [...(this.#waiters.get(id) ?? [])]) wake()
  }

  /** Every event of a PTY, in arrival order. */
  of(id: string): readonly LoggedEvent[] {
    return this.#byId.get(id) ?? []
  }

  /** The concatenated output of a PTY. */
  output(id: string): string {
    return this.of(id).flatMap((e) => (e.kind === 'data' ? [e.event.data] : [])).join('')
  }

  /** The exits of a PTY. */
  exits(id: string): PtyExitEvent[] {
    return this.of(id).flatMap((e) => (e.kind === 'exit' ? [e.event] : []))
  }

  /** True when some data event of the PTY came after its exit event. */
  dataAfterExit(id: string): boolean {
    const mine = this.of(id)
    const exitAt = mine.findIndex((e) => e.kind === 'exit')
    return exitAt >= 0 && mine.slice(exitAt + 1).some((e) => e.kind === 'data')
  }

  /** Wait until `condition` holds (checked on every event of PTY `id`), or fail after `timeoutMs`. */
  until(id: string, condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    if (condition()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      let waiters = this.#waiters.get(id)
      if (waiters === undefined) {
        waiters = new Set()
        this.#waiters.set(id, waiters)
      }
      const mine = waiters
      const timer = setTimeout(() => {
        mine.delete(check)
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))
      }, timeoutMs)
      const check = (): void => {
        if (!condition()) return
        clearTimeout(timer)
        mine.delete(check)
        resolve()
      }
      mine.add(check)
    })
  }

  /** Wait for the (first) exit of a PTY. */
  async exitOf(id: string, timeoutMs = 5_000): Promise<PtyExitEvent> {
    await this.until(id, () => this.exits(id).length > 0, `the exit of ${id}`, timeoutMs)
    return this.exits(id)[0]!
  }
}

/**
 * Fail the test file if it leaves a child process of the test process behind. Call it first at the
 * top of a file, with the file's own clean-up: the children are counted before any other hook, and
 * checked after `cleanup` ran.
 */
export function expectNoChildLeftBehind(cleanup: () => Promise<void>): void {
  let childrenBefore: number[] = []
  beforeAll(() => {
    childrenBefore = liveChildrenOf(process.pid)
  })
  afterAll(async () => {
    await cleanup()
    expect(liveChildrenOf(process.pid).filter((pid) => !childrenBefore.includes(pid))).toEqual([])
  })
}

/**
 * The real node-pty terminals a test file starts: each is SIGKILLed after the file's tests, and
 * the file then fails if any child of this process is left (see {@link expectNoChildLeftBehind}).
 * Push every terminal the file spawns onto the returned list.
 */
export function killTerminalsAfterAll(): NodePtyTerminal[] {
  const started: NodePtyTerminal[] = []
  expectNoChildLeftBehind(async () => {
    const killed = started.splice(0)
    for (const terminal of killed) {
      try {
        terminal.kill('SIGKILL')
      } catch {
        // Already gone.
      }
    }
    // Why wait for each death rather than a fixed pause: on a loaded machine (a full test run) a
    // SIGKILLed child can take longer than 50 ms to die, and was then counted as left behind.
    await waitFor(() => (killed.every((terminal) => isDead(terminal.pid)) ? true : undefined), 'the killed terminals to die')
  })
  return started
}

/**
 * A stand-in for one node-pty terminal with no process or PTY behind it (its `pid` is the test's
 * choice): writes, resizes and signals do nothing; `exit(event)` fires the exit listener the code
 * under test subscribed, as node-pty would after its reap.
 */
export function standInTerminal(pid: number, size: { cols: number; rows: number } = { cols: 80, rows: 24 }) {
  let exitListener: ((event: { exitCode: number; signal?: number }) => void) | null = null
  const terminal = {
    pid,
    cols: size.cols,
    rows: size.rows,
    onData: () => ({ dispose() {} }),
    onExit(listener: (event: { exitCode: number; signal?: number }) => void) {
      exitListener = listener
      return { dispose() {} }
    },
    write() {},
    resize() {},
    pause() {},
    resume() {},
    kill() {},
  } as unknown as NodePtyTerminal & { _boundClose?: boolean }
  return { terminal, exit: (event: { exitCode: number; signal?: number }) => exitListener?.(event) }
}

/** Make a FIFO at `path` (a stand-in for a PTY master in unit tests); fails naming how to install `mkfifo`. */
export function makeFifo(path: string): void {
  const made = spawnSync('mkfifo', [path])
  if (made.status !== 0) throw new Error(`mkfifo failed (install coreutils: apt-get install -y coreutils): ${made.error?.message ?? made.stderr.toString()}`)
}

/**
 * A `loadNodePty` giving the real node-pty whose `spawn` goes through `around` (which forks by
 * calling the `spawn` it is handed): a test sees or acts at each fork.
 */
export function nodePtyAround(
  around: (spawn: NodePtyModule['spawn'], ...args: Parameters<NodePtyModule['spawn']>) => NodePtyTerminal,
): () => Promise<NodePtyModule> {
  return async () => {
    const real = await loadNodePtyModule()
    return { spawn: (...args) => around(real.spawn.bind(real), ...args) }
  }
}

/**
 * `provider.dispose()` under vitest's fake timers, for a PTY whose exit does not come (a stand-in
 * terminal): the disposal waits up to `NODE_PTY_DISPOSE_KILL_REAP_MS` for the exits of what it
 * SIGKILLed at its deadline, on a faked `setTimeout` — advanced here, as the time passes.
 */
export async function disposeAdvancingReapWait(provider: { dispose(): Promise<void> }): Promise<void> {
  const disposed = provider.dispose()
  await vi.advanceTimersByTimeAsync(NODE_PTY_DISPOSE_KILL_REAP_MS)
  await disposed
}

/**
 * A bare `NodePtySession` over a {@link standInTerminal} at `pid` (id `<prefix>-<pid>`), for tests of
 * the stop loop and the leader checks: no output, no listeners, `isLeaderGone` as given (a test's
 * private /proc), reaps never reported.
 */
export function standInSession(prefix: string, pid: number, isLeaderGone: (session: NodePtySession) => boolean) {
  const { terminal, exit } = standInTerminal(pid)
  const session = new NodePtySession(
    {
      id: `${prefix}-${pid}`,
      incarnationId: toPtyIncarnationId(`i-${pid}`),
      terminal,
      file: '/bin/sh',
      drainOutputAtExit: false,
      hostReportsChildExitStatus: true,
      command: undefined,
      scopeId: undefined,
      slotKey: undefined,
      claimKey: undefined,
      leaderStartTime: null,
    },
    {
      emitData: () => {},
      emitBytes: () => {},
      emitExit: () => {},
      onEnded: () => {},
      isLeaderGone,
      isLeaderReaped: () => false,
    },
  )
  return { session, terminal, exit }
}

/**
 * A shell whose leader dies of the hang-up at once while its background job (`sleep`) ignores HUP
 * and TERM, so only a stop's KILL ends it; it prints the job's pid as `BG=<pid>`.
 */
export function jobSurvivingHangup(seconds = 30): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', `(trap '' HUP TERM; exec sleep ${seconds}) & echo BG=$!; sleep ${seconds}`] }
}

/**
 * The pid of {@link jobSurvivingHangup}'s job, once `output()` shows it and the job ignores HUP and
 * TERM; its identity is handed to `remember` first (for the test's clean-up to kill if still there).
 */
export async function hangupProofJob(output: () => string, remember: (identity: ProcessIdentity | null) => void): Promise<number> {
  const job = await waitFor(() => {
    const match = /BG=(\d+)/.exec(output())
    return match === null ? undefined : Number(match[1])
  }, 'the job pid')
  remember(processIdentity(job))
  await waitFor(() => (runsIgnoring(job, 'sleep', ['SIGHUP', 'SIGTERM']) ? true : undefined), 'the job to ignore HUP and TERM')
  return job
}

/** A `stopAndWait`'s verdict, and whether the job was dead when it came. */
export async function verdictOf(stop: Promise<boolean>, job: number): Promise<{ verdict: boolean; jobDead: boolean }> {
  const verdict = await stop
  return { verdict, jobDead: isDead(job) }
}

/** `true` only once the job is dead (the provider's stop may have killed it meanwhile: then either answer is right). */
export function expectNotTrueWhileAlive({ verdict, jobDead }: { verdict: boolean; jobDead: boolean }): void {
  expect({ verdict, jobDead }, 'stopAndWait answered true while the job lived').not.toEqual({ verdict: true, jobDead: false })
}
