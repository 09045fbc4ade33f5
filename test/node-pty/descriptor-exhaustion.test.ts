// A host that runs out of file descriptors (each PTY holds one): spawns refused with an error that
// says so, stops and listings that stay truthful, and everything working again once descriptors
// return. A stop's sweep finds a session's processes in the process table (a child that called
// `setsid` is found only there): a table that could not be read proves no process gone.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { requirePrlimit } from '../support/prlimit.js'
import { expectNoChildLeftBehind, isDead, killIfStill, liveChildrenOf, processIdentity, waitFor, type ProcessIdentity } from './pty-test-support.js'

/**
 * The node arguments of the fixture run in a fresh process. Bundled here, at the file's top: the
 * bundler's service process then exists before the children are counted.
 */
const FIRST_SPAWN_ARGS = nodeArgsFor(resolve(import.meta.dirname, 'fixtures/first-spawn-without-descriptors.ts'))

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined
let job: ProcessIdentity | null = null
let crowd: ChildProcess | undefined

expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
})

afterEach(async () => {
  killIfStill(job)
  if (crowd?.pid !== undefined && crowd.exitCode === null && crowd.signalCode === null) {
    process.kill(-crowd.pid, 'SIGKILL')
    await new Promise((resolve) => crowd!.once('exit', resolve))
  }
  crowd = undefined
  await controller?.dispose()
  await provider?.dispose()
  controller = undefined
  provider = undefined
})

/** This process's open-file limits, from /proc/self/limits. */
function openFileLimits(): { soft: string; hard: string } {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'))
  const [soft, hard] = line!.slice('Max open files'.length).trim().split(/\s+/)
  return { soft: soft!, hard: hard! }
}

/**
 * Run `during` with only `spare` descriptors free: the soft limit is lowered to `spare` above what
 * is open (with `fill`, the spare ones are then taken with /dev/null), and both are undone afterwards.
 */
async function withDescriptorsToSpare<T>(spare: number, fill: boolean, during: () => Promise<T>): Promise<T> {
  // Restoring the limit runs prlimit: its spawn needs a few descriptors of its own.
  expect(spare).toBeGreaterThanOrEqual(32)
  const { soft, hard } = openFileLimits()
  const open = readdirSync('/proc/self/fd').length
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${open + spare}:${hard}`])
  const filler: number[] = []
  try {
    while (fill) filler.push(openSync('/dev/null', 'r'))
  } catch {
    // EMFILE: every descriptor is taken.
  }
  try {
    return await during()
  } finally {
    for (const fd of filler) closeSync(fd)
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${soft}:${hard}`])
  }
}

/**
 * A controller over a new provider, and a PTY whose shell started a `setsid` child (a session of
 * its own, found by the sweep while descriptors are free: a child of the leader); its pid.
 */
async function spawnWithSetsidJob(): Promise<{ id: string; pid: number }> {
  provider = createNodePtyProvider()
  controller = createPtyController({ provider })
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'setsid sleep 1000 & echo "job=$!"; wait'] })
  const pid = Number(await waitFor(() => /job=(\d+)/.exec(output)?.[1], 'the job pid'))
  job = processIdentity(pid)
  await waitFor(() => (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' ? true : undefined), 'setsid to exec sleep')
  return { id, pid }
}

describe('out of descriptors (node-pty)', () => {
  beforeAll(requirePrlimit)

  it('a spawn is refused naming the descriptor limit, leaves nothing behind, and works again once descriptors return', async () => {
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const exits: string[] = []
    controller.on('exit', ({ cause }) => exits.push(JSON.stringify(cause)))
    // node-pty is loaded by a first spawn, as in a host that already runs PTYs.
    const first = await controller.spawn({ file: '/bin/sh', args: ['-c', 'read line; exit 4'] })
    const fdsBefore = readdirSync('/proc/self/fd').length

    const refused = await withDescriptorsToSpare(32, true, () => controller!.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] }).then(() => null, (error: unknown) => error))
    expect(refused).toMatchObject({ code: 'provider_spawn_failed' })
    expect((refused as Error).message).toMatch(/file descriptor.*EMFILE/)
    expect(readdirSync('/proc/self/fd').length).toBe(fdsBefore)
    expect((await controller.listProcesses()).map((row) => row.id)).toEqual([first.id])

    // The PTY that did start still works and ends with its own cause; a new spawn works.
    expect(controller.write(first.id, 'go\r', 'driving')).toBe(true)
    await waitFor(() => (exits.length > 0 ? true : undefined), 'the first PTY to exit')
    expect(exits).toEqual([JSON.stringify({ kind: 'exited', exitCode: 4 })])
    const again = await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 5'] })
    expect(again.id).not.toBe(first.id)
  })

  it("a new provider's first spawn made out of descriptors is refused naming them, and the next spawn loads node-pty", async () => {
    // A fresh process: this worker may have loaded node-pty already. Node remembers a package.json
    // it could not read (EMFILE) as absent, so a load tried out of descriptors failed as "not
    // installed" — and so did every later one.
    const { stdout } = await promisify(execFile)('prlimit', ['--nofile=256:256', process.execPath, ...FIRST_SPAWN_ARGS], { timeout: 15_000 })
    const { first, second } = JSON.parse(stdout) as { first: { code?: string; message?: string }; second: { ok?: true; code?: string; message?: string } }
    expect(first.code).toBe('spawn_failed')
    expect(first.message).toMatch(/file descriptor.*EMFILE/)
    expect(second).toEqual({ ok: true })
  })

  it('a stop is not verified while a setsid child of the PTY lives', async () => {
    const { id, pid } = await spawnWithSetsidJob()

    const verified = await withDescriptorsToSpare(32, true, () => controller!.stopAndWait(id, { deadlineMs: Date.now() + 1_500 }))
    const jobAlive = !isDead(pid)
    expect({ verified, jobAlive }).not.toEqual({ verified: true, jobAlive: true })
  })

  it('a stop begun out of descriptors waits for them before it hangs up, then sweeps the whole session', async () => {
    // Descriptors come back 100 ms into the stop. Hanging up the leader without having read the
    // table lost its setsid child for good (reparented once the leader died), and a later table
    // then "proved" the session gone: verified, with the child alive.
    const { id, pid } = await spawnWithSetsidJob()

    const { stopping } = await withDescriptorsToSpare(32, true, async () => {
      const stopping = controller!.stopAndWait(id, { deadlineMs: Date.now() + 3_000 })
      await new Promise((resolve) => setTimeout(resolve, 100))
      return { stopping } // not awaited here: the descriptors come back while it runs
    })
    const verified = await stopping
    expect({ verified, jobAlive: !isDead(pid) }).toEqual({ verified: true, jobAlive: false })
  })

  it('a stop sweeps a session when the process table is larger than the descriptors left, and lists every PTY whole', async () => {
    // More processes than descriptors to spare: a scan that opened every /proc/<pid>/stat at once ran out.
    crowd = spawn('/bin/sh', ['-c', 'i=0; while [ $i -lt 120 ]; do sleep 1000 & i=$((i+1)); done; wait'], { stdio: 'ignore', detached: true })
    const crowdPid = crowd.pid!
    await waitFor(() => (liveChildrenOf(crowdPid).length === 120 ? true : undefined), 'the crowd of sleeps', 15_000)
    const { id, pid } = await spawnWithSetsidJob()
    const others = await Promise.all(Array.from({ length: 60 }, () => controller!.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 1000'] })))

    const { rows, verified } = await withDescriptorsToSpare(48, false, async () => ({
      rows: await controller!.listProcesses(),
      verified: await controller!.stopAndWait(id, { deadlineMs: Date.now() + 3_000 }),
    }))
    expect(rows.length).toBe(others.length + 1)
    expect(rows.filter((row) => row.cwd === null).map((row) => row.id)).toEqual([])
    expect({ verified, jobAlive: !isDead(pid) }).toEqual({ verified: true, jobAlive: false })
  })
})
