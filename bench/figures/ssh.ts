/**
 * SSH rows: the `ptykit/ssh` provider (through the controller) beside OpenSSH's own client
 * (`ssh -tt`) over the same throwaway loopback sshd, as ratios:
 * - throughput of a 100 MB output (first byte to exit, so both sides exclude their login);
 * - write → echo of a short token to `cat` behind `stty raw -echo`.
 *
 * Needs root and `sshd` (it starts `test/ssh/sshd-fixture.ts`). Skipped in `--quick` mode (part of
 * `npm test`), with a printed note: a login costs seconds there and would measure nothing.
 */
import { spawn as spawnChild } from 'node:child_process'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider } from 'ptykit/ssh'
import { SSH_TEST_USER, startSshd, type SshdFixture } from '../../test/ssh/sshd-fixture.js'
import { alternate } from '../alternate.js'
import { MB, type BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { median, nowMs } from '../stats.js'

/** The output size of the SSH throughput row (the 100 MB). */
export const SSH_BENCH_BYTES = 100 * MB
/** Measured pairs of each SSH row: a 100 MB pair takes seconds on each side. */
export const SSH_BENCH_PAIRS = 3
/** Echo round trips per write → echo sample. */
export const SSH_BENCH_ECHOES_PER_SAMPLE = 50
/** Longest wait for one run or echo: only a hang trips it. */
const SSH_BENCH_TIMEOUT_MS = 120_000

const FLOOD = (bytes: number): string => `head -c ${bytes} /dev/zero | tr '\\0' x`
const CAT = "stty raw -echo; echo READY; exec cat"

function sshClientArgs(fixture: SshdFixture, command: string): string[] {
  return [
    '-tt',
    '-i', fixture.clientKeyPlainPath,
    '-o', `UserKnownHostsFile=${fixture.knownHostsPath}`,
    '-o', 'StrictHostKeyChecking=yes',
    '-o', 'BatchMode=yes',
    '-o', 'LogLevel=ERROR',
    '-p', String(fixture.port),
    `${SSH_TEST_USER}@${fixture.host}`,
    command,
  ]
}

/** One side: start `command`, feed every output chunk to `onData`; resolves at its exit. */
type Side = {
  run(command: string, onData: (text: string) => void): { write(data: string): void; stop(): Promise<void>; exited: Promise<void> }
  close(): Promise<void>
}

function openSshClientSide(fixture: SshdFixture): Side {
  return {
    run(command, onData) {
      const child = spawnChild('ssh', sshClientArgs(fixture, command), { stdio: ['pipe', 'pipe', 'ignore'] })
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', onData)
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
      return {
        write: (data) => child.stdin.write(data),
        stop: async () => {
          child.kill('SIGTERM')
          await exited
        },
        exited,
      }
    },
    close: async () => undefined,
  }
}

function openPtykitSide(fixture: SshdFixture): Side {
  const provider = createSshProvider({
    host: fixture.host,
    port: fixture.port,
    username: SSH_TEST_USER,
    privateKey: fixture.clientKeyPlain,
    knownHostsPath: fixture.knownHostsPath,
    hostId: 'ssh:bench',
  })
  const controller = createPtyController({ providers: { 'ssh:bench': provider } })
  const listeners = new Map<string, (text: string) => void>()
  const exits = new Map<string, () => void>()
  controller.on('data', ({ ptyId, data }) => {
    listeners.get(ptyId)?.(data)
    controller.acknowledgeData(ptyId, data.length)
  })
  controller.on('exit', ({ ptyId }) => exits.get(ptyId)?.())
  return {
    run(command, onData) {
      let id: string | null = null
      const pendingWrites: string[] = []
      const exited = new Promise<void>((resolve, reject) => {
        controller
          .spawn({ hostId: 'ssh:bench', file: '/bin/sh', args: ['-c', command] })
          .then((reply) => {
            id = reply.id
            listeners.set(reply.id, onData)
            exits.set(reply.id, resolve)
            for (const data of pendingWrites.splice(0)) controller.write(reply.id, data, 'driving')
          })
          .catch(reject)
      })
      return {
        write: (data) => (id === null ? pendingWrites.push(data) : controller.write(id, data, 'driving')),
        stop: async () => {
          if (id !== null) await controller.stopAndWait(id)
        },
        exited,
      }
    },
    close: async () => {
      await controller.dispose()
      await provider.dispose()
    },
  }
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${SSH_BENCH_TIMEOUT_MS} ms`)), SSH_BENCH_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer))
}

/** MB/s of one flood, first byte to exit; throws when bytes were lost. */
async function floodSample(side: Side, bytes: number): Promise<number> {
  let received = 0
  let firstAt: number | null = null
  const run = side.run(FLOOD(bytes), (text) => {
    firstAt ??= nowMs()
    received += text.length
  })
  await withTimeout(run.exited, 'flood')
  const elapsed = nowMs() - (firstAt ?? nowMs())
  // `ssh -tt` adds its own CR/LF handling nowhere here (no newlines): the counts must match.
  if (received < bytes) throw new Error(`flood lost bytes: ${received} of ${bytes}`)
  return bytes / MB / (elapsed / 1000)
}

/** Median ms of write → echo round trips to `cat`. */
async function echoSample(side: Side, count: number): Promise<number> {
  let buffer = ''
  let waiter: { needle: string; resolve: () => void } | null = null
  const run = side.run(CAT, (text) => {
    buffer += text
    if (waiter !== null && buffer.includes(waiter.needle)) {
      const w = waiter
      waiter = null
      buffer = ''
      w.resolve()
    }
  })
  const waitFor = (needle: string): Promise<void> =>
    withTimeout(
      new Promise<void>((resolve) => {
        waiter = { needle, resolve }
        if (buffer.includes(needle)) {
          waiter = null
          buffer = ''
          resolve()
        }
      }),
      `echo of ${needle}`,
    )
  await waitFor('READY')
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const token = `tok${String(i).padStart(5, '0')}`
    const arrived = waitFor(token)
    const t0 = nowMs()
    run.write(token)
    await arrived
    times.push(nowMs() - t0)
  }
  // Raw mode: ^C and ^D are data to cat, so the session is stopped instead.
  await withTimeout(run.stop(), 'stopping cat')
  return median(times)
}

/** Measures the SSH rows (none in quick mode). */
export async function measureSsh(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  if (config.mode === 'quick') {
    log('  skipped in --quick mode: the SSH rows need root and sshd, and a login costs seconds (run `npm run bench -- --only ssh`)')
    return []
  }
  const fixture = await startSshd()
  const client = openSshClientSide(fixture)
  const ptykit = openPtykitSide(fixture)
  try {
    const throughput = await alternate({
      pairs: SSH_BENCH_PAIRS,
      raw: () => floodSample(client, SSH_BENCH_BYTES),
      ptykit: () => floodSample(ptykit, SSH_BENCH_BYTES),
      onPair: (i, raw, ours) => log(`  throughput pair ${i + 1}: ssh -tt ${raw.toFixed(1)} MB/s, ptykit/ssh ${ours.toFixed(1)} MB/s`),
    })
    const echo = await alternate({
      pairs: SSH_BENCH_PAIRS,
      raw: () => echoSample(client, SSH_BENCH_ECHOES_PER_SAMPLE),
      ptykit: () => echoSample(ptykit, SSH_BENCH_ECHOES_PER_SAMPLE),
      onPair: (i, raw, ours) => log(`  write-echo pair ${i + 1}: ssh -tt ${raw.toFixed(2)} ms, ptykit/ssh ${ours.toFixed(2)} ms`),
    })
    return [
      makeFigure(
        {
          id: 'ssh-throughput',
          name: 'SSH throughput, 100 MB output',
          unit: 'MB/s',
          baseline: 'ssh -tt',
          target: { kind: 'none' },
          targetText: 'reported: ptykit/ssh (ssh2, pure JS) beside the OpenSSH client',
          notes: ['first byte to exit on both sides, over the same loopback sshd; ptykit acknowledges every chunk (flow control on)'],
        },
        throughput,
        true,
      ),
      makeFigure(
        {
          id: 'ssh-write-echo',
          name: 'SSH write → echo',
          unit: 'ms',
          baseline: 'ssh -tt',
          target: { kind: 'none' },
          targetText: 'reported: ptykit/ssh beside the OpenSSH client',
          notes: [`median of ${SSH_BENCH_ECHOES_PER_SAMPLE} round trips to cat behind stty raw -echo, per sample`],
        },
        echo,
        true,
      ),
    ]
  } finally {
    await ptykit.close()
    await fixture.stop()
  }
}
