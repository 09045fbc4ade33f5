/**
 * CPU per MB of output, per process, for the three ways the throughput figures move a flood:
 * raw in-process node-pty, the controller over the in-process node-pty provider, and the
 * controller over the pty host (where the host is a process of its own). Not part of
 * `npm run bench`: wall-clock throughput on a shared machine is noisy, CPU time per MB is not, so
 * this is how a change to the data path proves what it removed.
 *
 * ```sh
 * npx tsx --tsconfig bench/tsconfig.dist.json bench/pty-host-cpu.ts [MB per flood] [floods per side] [sides]
 * npx tsx --tsconfig bench/tsconfig.dist.json bench/pty-host-cpu.ts 100 4 host --host-cpu-prof /tmp/prof
 * ```
 *
 * Defaults: 100 MB per flood, 4 floods per side, sides `raw,ptykit,host`. `--host-node-args '<flags>'`
 * adds node flags to the host's command (e.g. `--trace-gc`), `--host-log <file>` appends its
 * stdout and stderr to a file, `--host-args '<flags>'` adds host flags (e.g. `--history-chars 65536`), `--host-main <file>` runs
 * another build's host (an A/B of host-side changes: the protocol must be the same). Each side runs one
 * warm-up flood first. Prints, per side, the median over floods of: the app's CPU ms/MB
 * (`process.cpuUsage`, all threads) and, for `host`, the pty host's (`/proc/<pid>/stat` utime +
 * stime, all threads), their sum, and the wall-clock MB/s. `--host-cpu-prof <dir>` starts the host
 * under `--cpu-prof` (its profile is written when it exits: the script stops it with SIGTERM).
 * `--host-detail` also prints, per MB, the host's user and system time, its minor page faults and
 * its CPU by thread (main, V8 workers, libuv pool, …: `/proc/<pid>/task/<tid>/stat`), and the same
 * for the app (`/proc/self`) and for raw node-pty's app. `--ack-mb-per-s <rate>` makes the app a
 * slow consumer (the controller sides acknowledge at most that many MB per second since the spawn,
 * instead of every chunk at once), so flow control holds the PTY. `--host-strace <file prefix>` runs
 * `strace -c -p <each host thread>` over each measured flood (`<prefix>.<n>`: the host's syscalls by
 * kind; traced, the figures above are not the untraced ones).
 * Runs the published build (`dist/`), as `npm run bench` does: build it first (`npm run build`).
 */
import { spawn as spawnChild } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './child.js'
import { MB } from './config.js'
import { collectGarbage } from './gc.js'
import { createPtyHostSide } from './pty-host-side.js'
import { createPtykitSide, type PtykitSide } from './ptykit-side.js'
import { BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { median, nowMs } from './stats.js'
import { processCpuMs, processDetail, reportDetail, subtractDetail, type ProcessDetail } from './pty-host-cpu-detail.js'
import { floodCommand, rawSample } from './figures/throughput.js'

const FLAGS_WITH_VALUES = ['--host-cpu-prof', '--host-node-args', '--host-log', '--host-args', '--host-main', '--host-strace', '--ack-mb-per-s']
const positional = process.argv.slice(2).filter((arg, index, all) => !arg.startsWith('--') && !FLAGS_WITH_VALUES.includes(all[index - 1] ?? ''))
const flag = (name: string): string | undefined => {
  const index = process.argv.indexOf(name)
  return index >= 0 ? process.argv[index + 1] : undefined
}
const hostProfileDir = flag('--host-cpu-prof')
const hostNodeArgs = (flag('--host-node-args') ?? '').split(' ').filter((arg) => arg.length > 0)
const hostLog = flag('--host-log')
const hostArgs = (flag('--host-args') ?? '').split(' ').filter((arg) => arg.length > 0)
const detail = process.argv.includes('--host-detail')
const stracePrefix = flag('--host-strace')
const ackMbPerSecond = flag('--ack-mb-per-s') === undefined ? null : Number(flag('--ack-mb-per-s'))
if (ackMbPerSecond !== null && !(ackMbPerSecond > 0)) throw new TypeError(`Expected --ack-mb-per-s to be a positive number, got ${flag('--ack-mb-per-s')}`)
let straceRuns = 0
const megabytes = Number(positional[0] ?? 100)
const floods = Number(positional[1] ?? 4)
const sides = (positional[2] ?? 'raw,ptykit,host').split(',')
if (!Number.isFinite(megabytes) || megabytes <= 0) throw new TypeError(`Expected MB per flood to be a positive number, got ${positional[0]}`)
if (!Number.isInteger(floods) || floods < 1) throw new TypeError(`Expected floods per side to be a positive integer, got ${positional[1]}`)
for (const side of sides) if (!['raw', 'ptykit', 'host'].includes(side)) throw new TypeError(`Expected sides among raw, ptykit, host, got ${side}`)
const bytes = Math.round(megabytes * MB)

/** utime + stime of `pid` (all its threads), in ms. */
function appCpuMs(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

type Sample = { appMsPerMb: number; hostMsPerMb: number; mbps: number; appDetail?: ProcessDetail; hostDetail?: ProcessDetail }

/** Start `strace -f -c` on `pid` (its summary goes to `<prefix>.<n>`); resolves once it is attached. Returns its stopper. */
async function startStrace(pid: number): Promise<() => Promise<void>> {
  const out = `${stracePrefix}.${straceRuns++}`
  // Each of the host's threads, not `-f`: the PTYs' processes (the producer) are not the host's cost.
  const threads = readdirSync(`/proc/${pid}/task`).flatMap((tid) => ['-p', tid])
  const child = spawnChild('strace', ['-c', '-o', out, ...threads], { stdio: ['ignore', 'ignore', 'pipe'] })
  child.on('error', (error) => {
    throw new Error(`strace failed to start (${error.message}): install it (apt-get install strace)`)
  })
  // strace prints "attached" for each thread on stderr: wait for the first.
  await new Promise<void>((resolve) => child.stderr.once('data', () => resolve()))
  await new Promise((resolve) => setTimeout(resolve, 200))
  return () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve())
      child.kill('SIGINT')
    })
}

async function controllerFlood(side: PtykitSide, hostPid: () => number | null): Promise<Sample> {
  collectGarbage()
  const { file, args } = floodCommand(bytes)
  const pid = hostPid()
  const stopStrace = stracePrefix !== undefined && pid !== null ? await startStrace(pid) : null
  const host0 = pid === null ? 0 : processCpuMs(pid)
  const hostDetail0 = detail && pid !== null ? processDetail(pid) : null
  const appDetail0 = detail ? processDetail('self') : null
  const app0 = appCpuMs()
  const t0 = nowMs()
  const handle = await side.controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
  const tracked = side.tracker.get(handle.id)
  // A slow app: acknowledges what it received, at most `ackMbPerSecond` since the spawn.
  let acked = 0
  const acking =
    ackMbPerSecond === null
      ? null
      : setInterval(() => {
          const allowed = Math.floor(Math.min(tracked.chars, ((nowMs() - t0) / 1000) * ackMbPerSecond * MB))
          if (allowed > acked) side.controller.acknowledgeData(handle.id, allowed - acked)
          acked = Math.max(acked, allowed)
        }, 10)
  await tracked.exited
  if (acking !== null) clearInterval(acking)
  side.tracker.forget(handle.id)
  const app = appCpuMs() - app0
  const host = pid === null ? 0 : processCpuMs(pid) - host0
  const appDetail = appDetail0 === null ? undefined : subtractDetail(processDetail('self'), appDetail0)
  const hostDetail = hostDetail0 === null || pid === null ? undefined : subtractDetail(processDetail(pid), hostDetail0)
  await stopStrace?.()
  const mb = tracked.chars / MB
  if (tracked.chars !== bytes) console.error(`  short flood: ${tracked.chars} of ${bytes} chars`)
  const sample: Sample = { appMsPerMb: app / mb, hostMsPerMb: host / mb, mbps: mb / (((tracked.lastDataAt ?? t0) - t0) / 1000) }
  if (appDetail !== undefined) sample.appDetail = appDetail
  if (hostDetail !== undefined) sample.hostDetail = hostDetail
  return sample
}

async function rawFlood(): Promise<Sample> {
  const appDetail0 = detail ? processDetail('self') : null
  const app0 = appCpuMs()
  const sample = await rawSample(bytes)
  const result: Sample = { appMsPerMb: (appCpuMs() - app0) / (sample.received / MB), hostMsPerMb: 0, mbps: sample.mbps }
  if (appDetail0 !== null) result.appDetail = subtractDetail(processDetail('self'), appDetail0)
  return result
}

function report(name: string, samples: Sample[]): void {
  const app = median(samples.map((s) => s.appMsPerMb))
  const host = median(samples.map((s) => s.hostMsPerMb))
  const sum = median(samples.map((s) => s.appMsPerMb + s.hostMsPerMb))
  const mbps = median(samples.map((s) => s.mbps))
  console.log(`${name.padEnd(7)} app ${app.toFixed(2)} ms/MB  host ${host.toFixed(2)} ms/MB  sum ${sum.toFixed(2)} ms/MB  ${mbps.toFixed(1)} MB/s  (${samples.length} floods of ${megabytes} MB)`)
  if (detail) {
    reportDetail('  app', samples.map((s) => s.appDetail).filter((d) => d !== undefined), megabytes)
    if (name === 'host') reportDetail('  host', samples.map((s) => s.hostDetail).filter((d) => d !== undefined), megabytes)
  }
}

async function runSide(name: string): Promise<void> {
  const samples: Sample[] = []
  if (name === 'raw') {
    await rawFlood()
    for (let i = 0; i < floods; i++) samples.push(await rawFlood())
    return report(name, samples)
  }
  if (name === 'ptykit') {
    const side = createPtykitSide(undefined, { acknowledge: ackMbPerSecond === null })
    try {
      await controllerFlood(side, () => null)
      for (let i = 0; i < floods; i++) samples.push(await controllerFlood(side, () => null))
    } finally {
      await side.dispose()
    }
    return report(name, samples)
  }
  const nodeArgs = [...hostNodeArgs, ...(hostProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${hostProfileDir}`])]
  const hostMain = flag('--host-main') ?? join(REPO_ROOT, 'dist/pty-host/host-main.js')
  // With a log, through a shell that `exec`s node (the lock still names node's pid) with stderr and stdout appended to it.
  const hostCommand =
    hostLog === undefined
      ? { file: process.execPath, args: [...nodeArgs, hostMain, ...hostArgs] }
      : { file: '/bin/sh', args: ['-c', `exec "$0" "$@" >>'${hostLog}' 2>&1`, process.execPath, ...nodeArgs, hostMain, ...hostArgs] }
  const side = createPtyHostSide({ hostCommand, stopSignal: hostProfileDir === undefined ? 'SIGKILL' : 'SIGTERM', acknowledge: ackMbPerSecond === null })
  try {
    await controllerFlood(side, () => null) // Starts the host; warm-up.
    for (let i = 0; i < floods; i++) samples.push(await controllerFlood(side, side.hostPid))
  } finally {
    await side.dispose()
  }
  report(name, samples)
}

for (const side of sides) await runSide(side)
