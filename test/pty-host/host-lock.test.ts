/**
 * The host lock between processes: two apps that start a host at the same moment (two IDE windows
 * restored together) must end with one host, never two — two hosts on one socket path split the
 * sessions between them, and the loser's sessions are unreachable once its socket file is replaced.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { acquireHostLock, ptyHostPaths } from '../../src/pty-host/socket-security.js'

const CONTENDER = fileURLToPath(new URL('./fixtures/lock-contender.ts', import.meta.url))
const CONTENDERS = 4
const ROUNDS = 36

type Outcome = { round: number; outcome: string }

/** A pid no process has (the child has exited and been reaped). */
function deadPid(): number {
  const gone = spawnSync('true')
  if (gone.pid === undefined) throw new Error('could not start `true`')
  return gone.pid
}

/** What a lock looked like before its round: none, a dead host's, or an empty file (a host of 0.1.0 killed between creating its lock and writing its pid). */
type LeftOver = 'none' | 'dead-host' | 'empty'
const LEFT_OVERS: readonly LeftOver[] = ['none', 'dead-host', 'empty']

const children: ChildProcess[] = []
let dir = ''

/** A fresh private directory for this test (removed after it). */
function freshDir(): string {
  dir = mkdtempSync(join(tmpdir(), 'ptykit-lock-'))
  return dir
}

/** The host files of a socket in a fresh directory. */
function freshLockPaths(): ReturnType<typeof ptyHostPaths> {
  return ptyHostPaths(join(freshDir(), 'host.sock'))
}

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  if (dir !== '') rmSync(dir, { recursive: true, force: true })
  dir = ''
})

function startContender(sockets: readonly string[]): { child: ChildProcess; lines: string[]; ready: Promise<void>; done: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CONTENDER, JSON.stringify(sockets)], { stdio: ['pipe', 'pipe', 'pipe'] })
  children.push(child)
  const lines: string[] = []
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d
  })
  let buffered = ''
  const waiters = new Map<string, () => void>()
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffered += d
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      lines.push(line)
      waiters.get(line)?.()
    }
  })
  const waitFor = (line: string): Promise<void> =>
    new Promise((resolve, reject) => {
      waiters.set(line, resolve)
      child.once('exit', (code) => reject(new Error(`lock contender exited (${String(code)}) before '${line}': ${stderr}`)))
    })
  return { child, lines, ready: waitFor('ready'), done: waitFor('done') }
}

describe('the pty host lock, taken by several processes at once', () => {
  it('has exactly one winner per socket, whether the lock was absent, left by a dead host, or left empty', async () => {
    const root = freshDir()
    const sockets = Array.from({ length: ROUNDS }, (_, round) => join(root, `round-${round}.sock`))
    sockets.forEach((socketPath, round) => {
      const leftOver = LEFT_OVERS[round % LEFT_OVERS.length]
      if (leftOver === 'dead-host') writeFileSync(`${socketPath}.lock`, String(deadPid()))
      if (leftOver === 'empty') writeFileSync(`${socketPath}.lock`, '')
    })
    const contenders = Array.from({ length: CONTENDERS }, () => startContender(sockets))
    await Promise.all(contenders.map((c) => c.ready))
    const start = performance.timeOrigin + performance.now() + 200
    for (const c of contenders) c.child.stdin!.write(`${start}\n`)
    await Promise.all(contenders.map((c) => c.done))

    for (let round = 0; round < ROUNDS; round++) {
      const outcomes = contenders.map((c) => {
        const line = c.lines.find((l) => l.startsWith('{') && (JSON.parse(l) as Outcome).round === round)
        return { pid: c.child.pid, outcome: line === undefined ? 'no answer' : (JSON.parse(line) as Outcome).outcome }
      })
      const winners = outcomes.filter((o) => o.outcome === 'won')
      const context = `round ${round} (lock ${LEFT_OVERS[round % LEFT_OVERS.length]}): ${JSON.stringify(outcomes)}`
      expect(winners, context).toHaveLength(1)
      expect(outcomes.filter((o) => o.outcome !== 'won').map((o) => o.outcome), context).toEqual(Array(CONTENDERS - 1).fill('host_already_running'))
      expect(readFileSync(`${sockets[round]}.lock`, 'utf8').split('\n')[0], context).toBe(String(winners[0]!.pid))
    }
  }, 60_000)
})

describe('taking over a stale lock', () => {
  it('waits for no one while another process is breaking it: that one becomes the host', () => {
    const paths = freshLockPaths()
    writeFileSync(paths.lockPath, String(deadPid()))
    writeFileSync(`${paths.lockPath}.break`, '1')
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running', message: expect.stringContaining('another host is starting') }))
    // The stale lock is left to the breaker's holder.
    expect(existsSync(paths.lockPath)).toBe(true)
  })

  it('removes a breaker abandoned by a process that died while breaking, then takes the lock', () => {
    const paths = freshLockPaths()
    writeFileSync(paths.lockPath, String(deadPid()))
    writeFileSync(`${paths.lockPath}.break`, '1')
    const longAgo = new Date(Date.now() - 60_000)
    utimesSync(`${paths.lockPath}.break`, longAgo, longAgo)
    const release = acquireHostLock(paths)
    expect(readFileSync(paths.lockPath, 'utf8').split('\n')[0]).toBe(String(process.pid))
    expect(existsSync(`${paths.lockPath}.break`)).toBe(false)
    release()
    expect(existsSync(paths.lockPath)).toBe(false)
  })

  it('leaves no temporary file behind, won or refused', () => {
    const paths = freshLockPaths()
    const release = acquireHostLock(paths)
    const ownLock = readFileSync(paths.lockPath, 'utf8')
    writeFileSync(paths.lockPath, String(process.ppid)) // a live holder (this process's parent)
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running' }))
    writeFileSync(paths.lockPath, ownLock)
    release()
    expect(readdirSync(dirname(paths.socketPath))).toEqual([])
  })
})

/** The start time `/proc/<pid>/stat` gives `pid` (clock ticks since boot). */
function startTimeOf(pid: number | 'self'): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

describe('who holds a lock', () => {
  it('writes the pid alone, and its start time in a second link to the same file; the release removes both', () => {
    const paths = freshLockPaths()
    const release = acquireHostLock(paths)
    expect(readFileSync(paths.lockPath, 'utf8')).toBe(String(process.pid))
    const link = `${paths.lockPath}.held-${process.pid}-${startTimeOf('self')}`
    expect(statSync(link).ino).toBe(statSync(paths.lockPath).ino)
    release()
    expect(readdirSync(dirname(paths.lockPath)).filter((name) => name.includes('.lock'))).toEqual([])
  })

  it('a host of ptykit before 4 Dec sees the lock held: it read the pid as Number(content.trim()), and a start time beside it made NaN — a lock it took for stale, removing it and the live host\'s socket', () => {
    const paths = freshLockPaths()
    const release = acquireHostLock(paths)
    // That host's whole rule (7e68780 … 650a772): a live pid holds the lock, anything else is stale.
    const holder = Number(readFileSync(paths.lockPath, 'utf8').trim())
    expect(Number.isSafeInteger(holder) && holder > 0).toBe(true)
    expect(holder).toBe(process.pid)
    release()
  })

  it('reads the start time only from a link to the lock\'s own file: a stray link left by a dead host says nothing', async () => {
    const paths = freshLockPaths()
    const other = spawn('sleep', ['30'], { stdio: 'ignore' })
    children.push(other)
    await new Promise((resolve) => other.once('spawn', resolve))
    const pid = other.pid!
    const started = startTimeOf(pid)
    // The lock of a host with this pid that started at another time: the pid was reused since.
    writeFileSync(paths.lockPath, String(pid))
    linkSync(paths.lockPath, `${paths.lockPath}.held-${pid}-${Number(started) + 1}`)
    acquireHostLock(paths)()
    // A stray link (another file) naming another start time: the lock is the pid alone, which runs.
    writeFileSync(paths.lockPath, String(pid))
    writeFileSync(`${paths.lockPath}.held-${pid}-${Number(started) + 1}`, String(pid))
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running' }))
    // Its link names the holder's own start time: held.
    rmSync(paths.lockPath)
    writeFileSync(paths.lockPath, String(pid))
    linkSync(paths.lockPath, `${paths.lockPath}.held-${pid}-${started}`)
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running', message: expect.stringContaining(`pid ${pid}`) }))
  })

  it('refuses while the holder runs, and takes over a lock whose pid now belongs to another process', async () => {
    const paths = freshLockPaths()
    const other = spawn('sleep', ['30'], { stdio: 'ignore' })
    children.push(other)
    await new Promise((resolve) => other.once('spawn', resolve))
    const pid = other.pid!
    const started = startTimeOf(pid)

    writeFileSync(paths.lockPath, `${pid}\n${started}`)
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running', message: expect.stringContaining(`pid ${pid}`) }))
    // A lock of 0.1.0 (the pid alone) cannot tell: a live pid holds it.
    writeFileSync(paths.lockPath, String(pid))
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running' }))

    // The host that wrote this lock started at another time: the pid was reused since it died.
    writeFileSync(paths.lockPath, `${pid}\n${Number(started) + 1}`)
    const release = acquireHostLock(paths)
    expect(readFileSync(paths.lockPath, 'utf8').split('\n')[0]).toBe(String(process.pid))
    release()
  })

  it('refuses a second host in the process that holds the lock, and takes a lock an earlier process with this pid left', () => {
    const paths = freshLockPaths()
    const release = acquireHostLock(paths)
    expect(() => acquireHostLock(paths)).toThrow(expect.objectContaining({ code: 'host_already_running', message: expect.stringContaining(`pid ${process.pid}`) }))
    release()
    writeFileSync(paths.lockPath, `${process.pid}\n${Number(startTimeOf('self')) + 1}`)
    acquireHostLock(paths)()
    writeFileSync(paths.lockPath, String(process.pid))
    acquireHostLock(paths)()
    expect(existsSync(paths.lockPath)).toBe(false)
  })
})
