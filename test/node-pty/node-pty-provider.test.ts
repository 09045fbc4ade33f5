import { UNVERIFIED_PROCESS_EXIT_CODE } from '../../src/exit-cause/index.js'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { NODE_PTY_MAX_DIMENSION } from '../../src/node-pty/launch-plan.js'
import {
  createNodePtyProvider,
  isNodePtyOptionError,
  isNodePtyProviderError,
  type NodePtyModule,
  type NodePtyProvider,
  type NodePtyTerminal,
} from 'ptykit/node-pty'
import { NODE_PTY_DEATH_WATCH_IDLE_MS } from '../../src/node-pty/child-death-watch.js'
import { PtyEventLog, isDead, liveChildrenOf, nodePtyAround, waitFor, expectNoChildLeftBehind } from './pty-test-support.js'

let provider: NodePtyProvider
let log: PtyEventLog
let loads = 0
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-provider-')))
const sub = join(dir, 'sub dir')
mkdirSync(sub)

expectNoChildLeftBehind(async () => {
  await provider.dispose()
  rmSync(dir, { recursive: true, force: true })
})

beforeAll(() => {
  provider = createNodePtyProvider({
    loadNodePty: () => {
      loads += 1
      return import('node-pty')
    },
  })
  log = new PtyEventLog(provider)
})


/** Spawn an interactive `sh` in `cwd` and wait for its prompt. */
async function promptedShell(cwd: string) {
  const result = await provider.spawn({ file: '/bin/sh', args: ['-i'], cwd, env: { PS1: 'READY$ ' } })
  await log.until(result.id, () => log.output(result.id).includes('READY$ '), 'the prompt')
  return result
}

describe('node-pty provider: spawn options', () => {
  it('refuses bad options before any process starts (and before node-pty is even loaded)', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ cols: 0 }, 'cols'],
      [{ rows: NODE_PTY_MAX_DIMENSION + 1 }, 'rows'],
      [{ cwd: join(dir, 'missing') }, 'cwd'],
      [{ file: join(dir, 'no-such-program') }, 'file'],
      [{ args: 'not-an-array' }, 'args'],
      [{ env: { X: 42 } }, 'env.X'],
      [{ envToDelete: [7] }, 'envToDelete[0]'],
      [{ command: 'nul\0' }, 'command'],
      [{ sessionId: '' }, 'sessionId'],
    ]
    const fresh = createNodePtyProvider({
      loadNodePty: () => {
        throw new Error('node-pty must not be loaded for a refused spawn')
      },
    })
    const children = liveChildrenOf(process.pid)
    for (const [options, option] of bad) {
      const error = await fresh.spawn(options as never).catch((e: unknown) => e)
      expect(isNodePtyOptionError(error), option).toBe(true)
      expect((error as { option: string }).option).toBe(option)
      expect((error as Error).message).toContain(`\`${option}\``)
    }
    expect(liveChildrenOf(process.pid)).toEqual(children)
    expect(await fresh.listProcesses()).toEqual([])
    await fresh.dispose()
  })

  it('inherits process.env without the host-terminal variables, also when it is handed to node-pty as is', async () => {
    const saved = { TMUX: process.env['TMUX'], COLUMNS: process.env['COLUMNS'], PTYKIT_KEEP: process.env['PTYKIT_KEEP'] }
    process.env['TMUX'] = 'host-tmux'
    process.env['COLUMNS'] = '999'
    process.env['PTYKIT_KEEP'] = 'kept'
    try {
      const script = 'echo "[${TMUX-unset}|${COLUMNS-unset}|${PTYKIT_KEEP-unset}]"'
      const plain = await provider.spawn({ file: '/bin/sh', args: ['-c', script] })
      const withEnv = await provider.spawn({ file: '/bin/sh', args: ['-c', script], env: { EXTRA: '1' } })
      await waitFor(() => (log.exits(plain.id).length > 0 && log.exits(withEnv.id).length > 0 ? true : undefined), 'both exits')
      expect(log.output(plain.id)).toContain('[unset|unset|kept]')
      expect(log.output(withEnv.id)).toContain('[unset|unset|kept]')
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    }
  })

  it('loads node-pty once, lazily, and reports the spawn to onPtySpawnCommitted once the process exists', async () => {
    const childrenAtCommit: number[][] = []
    const result = await provider.spawn({
      file: 'cat',
      onPtySpawnCommitted: () => {
        childrenAtCommit.push(liveChildrenOf(process.pid))
      },
    })
    // Called exactly once, when the process already existed.
    expect(childrenAtCommit).toHaveLength(1)
    expect(childrenAtCommit[0]).toContain(result.pid)
    expect(isDead(result.pid!)).toBe(false)
    expect(result).toMatchObject({ isReattach: false, cols: 80, rows: 24, providerSequence: { value: 0, generation: 'reset' } })
    expect(result.exitedBeforeSpawnReply).toBeUndefined()
    await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    expect(loads).toBe(1)
    await provider.shutdown(result.id, { immediate: true })
  })

  it('mints a fresh incarnation per spawn, also when a session id is reused after an exit', async () => {
    const first = await provider.spawn({ sessionId: 'reused', isNewSession: true, file: '/bin/sh', args: ['-c', 'exit 0'] })
    await log.exitOf('reused')
    const second = await provider.spawn({ sessionId: 'reused', isNewSession: true, file: 'cat' })
    expect(second.id).toBe('reused')
    expect(second.incarnationId).not.toBe(first.incarnationId)
    await provider.shutdown('reused', { immediate: true })
    expect(log.exits('reused').map((e) => e.incarnationId)).toEqual([first.incarnationId, second.incarnationId])
  })

  it('answers a liveness probe about an incarnation: false for an earlier one under a reused id, never true about its successor', async () => {
    const first = await provider.spawn({ sessionId: 'probed', isNewSession: true, file: '/bin/sh', args: ['-c', 'exit 0'] })
    await log.exitOf('probed')
    const second = await provider.spawn({ sessionId: 'probed', isNewSession: true, file: 'cat' })
    // By id: the process the id holds now. About the first incarnation: it ended (its exit was delivered).
    expect(await provider.probeLiveness('probed')).toBe(true)
    expect(await provider.probeLiveness('probed', { incarnationId: second.incarnationId! })).toBe(true)
    expect(await provider.probeLiveness('probed', { incarnationId: first.incarnationId! })).toBe(false)
    await provider.shutdown('probed', { immediate: true })
    expect(await provider.probeLiveness('probed', { incarnationId: second.incarnationId! })).toBe(false)
  })

  it('passes env and envToDelete to the child, and runs the default shell when no file is named', async () => {
    const result = await provider.spawn({
      file: '/bin/sh',
      args: ['-c', 'echo "A=$PTYKIT_A B=${PTYKIT_B-unset} TERM=$TERM"'],
      env: { PTYKIT_A: 'one', PTYKIT_B: 'two' },
      envToDelete: ['PTYKIT_B'],
    })
    await log.exitOf(result.id)
    expect(log.output(result.id)).toContain('A=one B=unset TERM=xterm-256color')
    const shell = await provider.spawn({ args: ['-c', 'exit 7'] })
    expect((await log.exitOf(shell.id)).cause).toEqual({ kind: 'exited', exitCode: 7 })
  })

  it('writes the startup command into the shell once it runs', async () => {
    const result = await provider.spawn({ file: '/bin/sh', args: ['-i'], command: 'echo LAUNCHED-$((40 + 2)); exit 5' })
    expect((await log.exitOf(result.id)).cause).toEqual({ kind: 'exited', exitCode: 5 })
    expect(log.output(result.id)).toContain('LAUNCHED-42')
  })
})

describe('node-pty provider: disposed while a spawn is being wired', () => {
  it("stops that spawn's whole session as dispose stops every other: no job of it is left running", async () => {
    // The session is wired one microtask after the fork (provider-spawn.ts), and after every other
    // fork of the turn: the first spawn's child runs its job while the second forks. A dispose from
    // a callback in that window must still find the first session and stop it, jobs and all
    // (helper-103's repro: the first version killed the leader only, and the job ran on).
    const jobDir = mkdtempSync(join(tmpdir(), 'ptykit-wiring-'))
    const pidFile = join(jobDir, 'job.pid')
    let calls = 0
    let disposing: Promise<void> | undefined
    let first: NodePtyTerminal | undefined
    let firstWiredWhenSecondForked: boolean | undefined
    const own: NodePtyProvider = createNodePtyProvider({
      loadNodePty: nodePtyAround((spawn, ...args) => {
        calls += 1
        if (calls === 1) {
          first = spawn(...args)
          queueMicrotask(() => {
            disposing = own.dispose()
          })
          return first
        }
        firstWiredWhenSecondForked = own.getPid('first') !== null
        const until = Date.now() + 5_000
        while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
          if (Date.now() > until) throw new Error('the job never started')
        }
        return spawn(...args)
      }),
    })
    try {
      const job = `trap '' HUP TERM; sleep 60 & echo $! > ${pidFile}; wait`
      const settled = await Promise.allSettled([
        own.spawn({ sessionId: 'first', file: '/bin/sh', args: ['-c', job] }),
        own.spawn({ sessionId: 'second', file: '/bin/sh', args: ['-c', 'sleep 60'] }),
      ])
      expect(firstWiredWhenSecondForked).toBe(false)
      // Both forked before the dispose (the second's check ran before the disposing callback):
      // both are started, and stopped by the dispose.
      expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled'])
      await disposing
      expect(isDead(first!.pid)).toBe(true)
      const jobPid = Number(readFileSync(pidFile, 'utf8').trim())
      await waitFor(() => (isDead(jobPid) ? true : undefined), "the first session's job to be stopped")
    } finally {
      await disposing
      rmSync(jobDir, { recursive: true, force: true })
    }
  })

  it('frees a caller-named id once its session is wired, not after a failed commit hook rolls the spawn back', async () => {
    // helper-103's repro: the id was held until the rollback stop ended, after the exit was
    // delivered, so a respawn from the exit listener was refused `pty_id_in_use`.
    const own = createNodePtyProvider({ loadNodePty: () => import('node-pty') })
    let respawn: Promise<unknown> | undefined
    own.onExit(({ id }) => {
      if (id === 'held' && respawn === undefined) {
        respawn = own.spawn({ sessionId: 'held', isNewSession: true, file: '/bin/sh', args: ['-c', 'sleep 60'] }).catch((error: unknown) => error)
      }
    })
    try {
      const failed = await own
        .spawn({
          sessionId: 'held',
          file: '/bin/sh',
          args: ['-c', 'sleep 60'],
          onPtySpawnCommitted: () => {
            throw new Error('hook failed')
          },
        })
        .catch((error: unknown) => error)
      expect((failed as Error).message).toBe('hook failed')
      expect(respawn).toBeDefined()
      expect(await respawn).toMatchObject({ id: 'held', isReattach: false })
    } finally {
      await own.dispose()
    }
  })
})

describe('node-pty provider: two spawns under one session id at once', () => {
  it('starts one process: the other is refused pty_id_in_use, whatever the order of their awaits', async () => {
    const children = liveChildrenOf(process.pid)
    const [a, b] = await Promise.allSettled([
      provider.spawn({ sessionId: 'same-at-once', isNewSession: true, file: '/bin/sh', args: ['-c', 'sleep 60'] }),
      provider.spawn({ sessionId: 'same-at-once', isNewSession: true, file: '/bin/sh', args: ['-c', 'sleep 60'] }),
    ])
    const started = [a, b].filter((result) => result.status === 'fulfilled')
    const refused = [a, b].flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []))
    expect(started).toHaveLength(1)
    expect(refused.map((error) => isNodePtyProviderError(error) && error.code)).toEqual(['pty_id_in_use'])
    expect(liveChildrenOf(process.pid).filter((pid) => !children.includes(pid))).toHaveLength(1)
    await provider.shutdown('same-at-once', { immediate: true })
  })
})

describe('node-pty provider: attach', () => {
  it('attaches only to a live PTY of the expected incarnation; another live incarnation is pty_live_other_incarnation, a missing PTY a typed absence', async () => {
    const live = await provider.spawn({ sessionId: 'attach-me', file: 'cat' })
    const attached = await provider.spawn({ sessionId: 'attach-me', attachOnly: true, expectedIncarnationId: live.incarnationId! })
    expect(attached).toMatchObject({ id: 'attach-me', pid: live.pid, incarnationId: live.incarnationId, isReattach: true })
    expect(attached.providerSequence?.generation).toBe('continued')

    const wrong = await provider
      .spawn({ sessionId: 'attach-me', attachOnly: true, expectedIncarnationId: 'older' as never })
      .catch((e: unknown) => e)
    expect(isNodePtyProviderError(wrong) && wrong.code).toBe('pty_live_other_incarnation')
    expect((wrong as { liveIncarnationId?: string }).liveIncarnationId).toBe(live.incarnationId)

    const missing = await provider.spawn({ sessionId: 'nobody', attachOnly: true }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(missing) && missing.code).toBe('pty_absent')

    const clash = await provider.spawn({ sessionId: 'attach-me', isNewSession: true, file: 'cat' }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(clash) && clash.code).toBe('pty_id_in_use')

    await provider.shutdown('attach-me', { immediate: true })
    await log.exitOf('attach-me')
    const gone = await provider.spawn({ sessionId: 'attach-me', attachOnly: true }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(gone) && gone.code).toBe('pty_absent')
  })
})

describe('node-pty provider: I/O, size and inspection', () => {
  it('settles writes: accepted while live, pty_exited after the exit, pty_not_found for an unknown id', async () => {
    const result = await provider.spawn({ file: 'cat' })
    expect(provider.write(result.id, 'hello-cat\r')).toEqual({ kind: 'accepted' })
    await log.until(result.id, () => (log.output(result.id).match(/hello-cat/g) ?? []).length >= 2, 'echo and cat’s copy')
    await provider.shutdown(result.id)
    expect(provider.write(result.id, 'late\r')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(provider.write('no-such-pty', 'x')).toEqual({ kind: 'refused', reason: 'pty_not_found' })
  })

  it('resizes, reads the size back, and the program in the PTY sees it', async () => {
    const result = await promptedShell(dir)
    expect(provider.resize(result.id, 100, 30)).toBe(true)
    expect(provider.getSize?.(result.id)).toEqual({ cols: 100, rows: 30 })
    provider.write(result.id, 'stty size\r')
    await log.until(result.id, () => log.output(result.id).includes('30 100'), '`stty size` answering 30 100')
    expect(() => provider.resize(result.id, 0, 30)).toThrow(/`cols`/)
    expect(provider.resize('no-such-pty', 10, 10)).toBe(false)
    await provider.shutdown(result.id)
    expect(provider.resize(result.id, 10, 10)).toBe(false)
    expect(provider.getSize?.(result.id)).toBeNull()
  })

  it('reads cwd, foreground process and children from the OS, following the foreground job', async () => {
    const result = await promptedShell(dir)
    expect(await provider.getCwd(result.id)).toBe(dir)
    expect(await provider.getForegroundProcess(result.id)).toBe('sh')
    expect(await provider.hasChildProcesses(result.id)).toBe(false)
    provider.write(result.id, `cd '${sub}' && sleep 30\r`)
    await waitFor(async () => ((await provider.getForegroundProcess(result.id)) === 'sleep' ? true : undefined), 'sleep in the foreground')
    expect(await provider.getCwd(result.id)).toBe(sub)
    expect(await provider.hasChildProcesses(result.id)).toBe(true)
    const [row] = (await provider.listProcesses()).filter((r) => r.id === result.id)
    expect(row).toMatchObject({ id: result.id, hostId: 'local', incarnationId: result.incarnationId, pid: result.pid, cwd: sub, title: 'sleep' })
    await provider.shutdown(result.id)
    expect(await provider.getCwd(result.id)).toBeNull()
    expect(await provider.getForegroundProcess(result.id)).toBeNull()
    expect(await provider.hasChildProcesses(result.id)).toBeNull()
  })

  it('lists live PTYs with their scope, slot and claim keys, and answers liveness from ownership', async () => {
    const result = await provider.spawn({ file: 'cat', scopeId: 'scope-1', slotKey: 'slot-1', claimKey: 'claim-1' })
    // Right after the spawn the child may not have exec'd `cat` yet: the title follows it.
    const row = await waitFor(async () => {
      const found = (await provider.listProcesses({ timeoutMs: 2_000 })).find((r) => r.id === result.id)
      return found?.title === 'cat' ? found : undefined
    }, 'the listing row titled cat')
    expect(row).toMatchObject({ scopeId: 'scope-1', slotKey: 'slot-1', claimKey: 'claim-1', pid: result.pid })
    expect(provider.hasPty?.(result.id)).toBe(true)
    expect(await provider.probeLiveness?.(result.id)).toBe(true)
    expect(provider.getPid(result.id)).toBe(result.pid)
    await provider.shutdown(result.id)
    expect(provider.hasPty?.(result.id)).toBe(false)
    expect(await provider.probeLiveness?.(result.id)).toBe(false)
    expect(await provider.probeLiveness?.('no-such-pty')).toBe(false)
    expect((await provider.listProcesses()).some((r) => r.id === result.id)).toBe(false)
  })
})

/** A stand-in node-pty whose terminals are driven by the test (no process behind them). */
function standIn(behaviour: { exitDuringSpawn?: boolean; writeThrows?: boolean; subscribeThrows?: boolean } = {}) {
  const terminals: Array<
    NodePtyTerminal & { exit(code: number, signal?: number): void; output(data: string): void; kills: Array<string | undefined> }
  > = []
  const module: NodePtyModule = {
    spawn(_file, _args, options) {
      let exitListener: ((event: { exitCode: number; signal?: number }) => void) | null = null
      let dataListener: ((data: string) => void) | null = null
      const kills: Array<string | undefined> = []
      const terminal = {
        pid: 999_999_999,
        cols: options.cols,
        rows: options.rows,
        kills,
        onData(listener: (data: string) => void) {
          if (behaviour.subscribeThrows === true) throw new Error('cannot subscribe')
          dataListener = listener
          return { dispose() {} }
        },
        onExit(listener: (event: { exitCode: number; signal?: number }) => void) {
          exitListener = listener
          if (behaviour.exitDuringSpawn === true) listener({ exitCode: 0, signal: 9 })
          return { dispose() {} }
        },
        write() {
          if (behaviour.writeThrows === true) throw new Error('EBADF')
        },
        resize() {},
        pause() {},
        resume() {},
        kill(signal?: string) {
          kills.push(signal)
        },
        exit(code: number, signal?: number) {
          exitListener?.(signal === undefined ? { exitCode: code } : { exitCode: code, signal })
        },
        output(data: string) {
          dataListener?.(data)
        },
      }
      terminals.push(terminal)
      return terminal
    },
  }
  return { module, terminals }
}

describe('node-pty provider: edge cases through a stand-in node-pty', () => {
  it('flags an exit seen before the spawn replied', async () => {
    const fake = standIn({ exitDuringSpawn: true })
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve({ default: fake.module }) })
    const ownLog = new PtyEventLog(own)
    const result = await own.spawn({ file: '/bin/sh' })
    expect(result.exitedBeforeSpawnReply).toBe(true)
    expect(ownLog.exits(result.id)[0]?.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(own.hasPty(result.id)).toBe(false)
    expect(await own.listProcesses()).toEqual([])
    expect(own.write(result.id, 'x')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    await own.dispose()
  })

  it('reports an exit without a status (some Windows hosts) as the unverified sentinel, never a made-up number', async () => {
    const fake = standIn()
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module), platform: 'win32' })
    const ownLog = new PtyEventLog(own)
    const result = await own.spawn({ file: 'cmd.exe' })
    fake.terminals[0]!.exit(undefined as unknown as number)
    const exit = ownLog.exits(result.id)[0]
    expect(exit?.code).toBe(UNVERIFIED_PROCESS_EXIT_CODE)
    expect(exit?.cause).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    await own.dispose()
  })

  it('settles a write that threw inside node-pty as unverifiable (bytes may have left)', async () => {
    const fake = standIn({ writeThrows: true })
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module), platform: 'win32' })
    const result = await own.spawn({ file: 'whatever.exe' })
    expect(own.write(result.id, 'x')).toEqual({ kind: 'unverifiable', reason: 'provider_threw_after_handoff', bytesHandedToTransport: true })
    fake.terminals[0]!.exit(0)
    await own.dispose()
  })

  it('on Windows: stops through node-pty’s kill() (no signals), reads nothing from the OS, and rejects at the deadline', async () => {
    const fake = standIn()
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module), platform: 'win32' })
    const ownLog = new PtyEventLog(own)
    const result = await own.spawn({ file: 'cmd.exe' })
    const error = await own.shutdown(result.id, { timeoutMs: 50 }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(error) && error.code).toBe('shutdown_timeout')
    expect(fake.terminals[0]!.kills.length).toBeGreaterThan(0)
    expect(fake.terminals[0]!.kills.every((signal) => signal === undefined)).toBe(true)
    expect(await own.getCwd(result.id)).toBeNull()
    expect(await own.getForegroundProcess(result.id)).toBeNull()
    expect(await own.hasChildProcesses(result.id)).toBeNull()
    // A Windows exit has no signal: code 1 is exited(1).
    fake.terminals[0]!.exit(1)
    expect(ownLog.exits(result.id)[0]?.cause).toEqual({ kind: 'exited', exitCode: 1 })
    await own.dispose()
  })

  it('a stop joined with a longer deadline is not failed at the first caller’s shorter one', async () => {
    const fake = standIn()
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module), platform: 'win32' })
    const result = await own.spawn({ file: 'cmd.exe' })
    const short = own.shutdown(result.id, { timeoutMs: 30 }).then(
      () => 'resolved',
      (e: unknown) => (isNodePtyProviderError(e) ? e.code : 'other'),
    )
    const long = own.shutdown(result.id, { timeoutMs: 10_000 }).then(
      () => 'resolved',
      (e: unknown) => (isNodePtyProviderError(e) ? e.code : 'other'),
    )
    // The process ends only after the short deadline has passed, well within the long one.
    await expect(short).resolves.toBe('shutdown_timeout')
    await new Promise((resolve) => setTimeout(resolve, 100))
    fake.terminals[0]!.exit(1)
    await expect(long).resolves.toBe('resolved')
    await own.dispose()
  })

  it('a listener that throws neither stops the other listeners nor strands the PTY; its error is rethrown apart', async () => {
    const fake = standIn()
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module) })
    const baseline = process.listenerCount('SIGCHLD')
    const seen: string[] = []
    own.onData(() => {
      throw new Error('data listener bug')
    })
    own.onExit(() => {
      throw new Error('exit listener bug')
    })
    own.onData(({ data }) => seen.push(`data:${data}`))
    own.onExit(({ cause }) => seen.push(`exit:${JSON.stringify(cause)}`))
    const result = await own.spawn({ file: '/bin/sh' })
    // Capture what the provider rethrows on its own microtask (it would otherwise fail the run).
    const rethrown: Array<() => void> = []
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      rethrown.push(callback)
    })
    try {
      fake.terminals[0]!.output('hello')
      fake.terminals[0]!.exit(2)
    } finally {
      spy.mockRestore()
    }
    expect(seen).toEqual(['data:hello', 'exit:{"kind":"exited","exitCode":2}'])
    expect(rethrown).toHaveLength(2)
    expect(rethrown[0]).toThrow('data listener bug')
    expect(rethrown[1]).toThrow('exit listener bug')
    // The PTY is fully released: no entry, refused writes, no SIGCHLD listener left.
    expect(own.hasPty(result.id)).toBe(false)
    expect(own.write(result.id, 'x')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(await own.listProcesses()).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, NODE_PTY_DEATH_WATCH_IDLE_MS + 30))
    expect(process.listenerCount('SIGCHLD')).toBe(baseline)
    await own.dispose()
  })

  it('kills the process when wiring it up fails after node-pty started it, and rejects the spawn', async () => {
    const fake = standIn({ subscribeThrows: true })
    const own = createNodePtyProvider({ loadNodePty: () => Promise.resolve(fake.module) })
    const error = await own.spawn({ file: '/bin/sh' }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(error) && error.code).toBe('spawn_failed')
    expect(fake.terminals).toHaveLength(1)
    expect(fake.terminals[0]!.kills).toEqual(['SIGKILL'])
    expect(await own.listProcesses()).toEqual([])
    await own.dispose()
  })

  it('refuses malformed provider options at creation', () => {
    expect(() => createNodePtyProvider({ hangupGraceMs: -1 })).toThrow(/`hangupGraceMs`/)
    expect(() => createNodePtyProvider({ drainOutputAtExit: 'yes' as never })).toThrow(/`drainOutputAtExit`/)
    expect(() => createNodePtyProvider({ name: '' })).toThrow(/`name`/)
  })
})
