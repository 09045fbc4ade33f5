/**
 * Write → echo: one short token written to `cat` on a PTY in raw mode without echo, timed until
 * cat's copy arrives at the listener; one long-lived `cat` per side.
 */
import { alternate } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { createPtyHostSide } from '../pty-host-side.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { median, nowMs } from '../stats.js'

/** `cat` behind `stty raw -echo`: byte-wise, no tty echo, so exactly one copy comes back. */
const CAT_ARGS = ['-c', 'stty raw -echo; echo READY; exec cat']

/** Longest wait for one echo or for READY: far above the ~0.1 ms round trip, so only a hang trips it. */
export const ECHO_TIMEOUT_MS = 10_000

/** An echo endpoint: write a string, and get told when text arrives. */
type Endpoint = {
  write(data: string): void
  /** Resolves with `nowMs()` once everything received since the last call contains `needle`. */
  waitFor(needle: string): Promise<number>
  feed(data: string): void
}

function endpoint(write: (data: string) => void): Endpoint {
  let buffer = ''
  let waiter: { needle: string; resolve: (at: number) => void } | null = null
  const check = (): void => {
    if (waiter !== null && buffer.includes(waiter.needle)) {
      const w = waiter
      waiter = null
      buffer = ''
      w.resolve(nowMs())
    }
  }
  return {
    write,
    feed: (data) => {
      buffer += data
      check()
    },
    waitFor: (needle) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no echo of ${needle} within ${ECHO_TIMEOUT_MS} ms`)), ECHO_TIMEOUT_MS)
        waiter = {
          needle,
          resolve: (at) => {
            clearTimeout(timer)
            resolve(at)
          },
        }
        check()
      }),
  }
}

/** `gapMs` > 0: a quiet spell before each write (the batched row measures an echo after idle). */
async function block(e: Endpoint, perSample: number, counter: { n: number }, gapMs = 0): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < perSample; i++) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs))
    const token = `tok${String(counter.n++).padStart(6, '0')}`
    const arrived = e.waitFor(token)
    const t0 = nowMs()
    e.write(`${token}\n`)
    times.push((await arrived) - t0)
  }
  return median(times)
}

/**
 * Measures the write → echo figure, and the echo after a quiet spell with `dataBatchMs: 5` (issue
 * 18.4: coalescing must leave an idle PTY's first byte unchanged — judged against the same
 * controller without it; its ratio to raw node-pty after the same quiet spell is reported beside).
 */
export async function measureWriteEcho(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  return [await measureWriteEchoOf(config, log, 'in-process'), ...(await measureBatchedWriteEcho(config, log))]
}

/** The `dataBatchMs` of the batched write → echo rows (VS Code's window). */
export const WRITE_ECHO_BATCH_MS = 5

/**
 * Measures write → echo through the pty host provider (issue 16), against raw in-process
 * node-pty: the write and its echo each cross the socket. Full runs only, as the other pty host rows.
 */
export async function measurePtyHostWriteEcho(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  if (config.mode !== 'full') return []
  return [await measureWriteEchoOf(config, log, 'pty-host')]
}

/** A `cat` on a raw node-pty PTY as an {@link Endpoint}, the promise of its READY, and how to kill it. */
function rawEndpoint(): { raw: Endpoint; ready: Promise<number>; close: () => Promise<void> } {
  const rawPty = pty.spawn('/bin/sh', CAT_ARGS, rawSpawnOptions())
  const raw = endpoint((d) => rawPty.write(d))
  rawPty.onData((d) => raw.feed(d))
  const exited = rawExit(rawPty)
  return {
    raw,
    ready: raw.waitFor('READY'),
    close: async () => {
      rawPty.kill('SIGKILL')
      await exited
    },
  }
}

/** A `cat` on a PTY of `side`'s controller, as an {@link Endpoint} once it printed READY. */
async function controllerEndpoint(side: PtykitSide): Promise<Endpoint> {
  let ptykitId: string | null = null
  const ptykit = endpoint((d) => {
    // `write` settles synchronously for node-pty; the figure runs to the echo, as a host sees it.
    if (!side.controller.write(ptykitId as string, d, 'driving')) throw new Error('the controller did not accept a write')
  })
  // Output can arrive before spawn() resolves; keep it until the id is known.
  let early = ''
  side.controller.on('data', (event: { ptyId: string; data: string }) => {
    if (ptykitId === null) early += event.data
    else if (event.ptyId === ptykitId) ptykit.feed(event.data)
  })
  const ready = ptykit.waitFor('READY')
  const handle = await side.controller.spawn({ file: '/bin/sh', args: CAT_ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  ptykitId = handle.id
  ptykit.feed(early)
  await ready
  return ptykit
}

/**
 * The two `dataBatchMs` rows, from one controller with `dataBatchMs: 5`, one without and raw
 * node-pty, each echo after a quiet spell of twice the window (so it meets no open window: the
 * leading edge). Judged: with against without `dataBatchMs` — what coalescing costs an idle PTY's
 * echo. Reported: with `dataBatchMs` against raw node-pty after the same quiet spell — the whole
 * path run cold (the write and the output path of the controller and provider, after the process
 * idled), which the back-to-back write → echo row does not see.
 */
async function measureBatchedWriteEcho(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { perSample, pairs } = config.writeEcho
  const gapMs = 2 * WRITE_ECHO_BATCH_MS
  const batchedSide = createPtykitSide(undefined, undefined, { dataBatchMs: WRITE_ECHO_BATCH_MS })
  const plainSide = createPtykitSide()
  const { raw, ready: rawReady, close: closeRaw } = rawEndpoint()
  try {
    const [batched, plain] = await Promise.all([controllerEndpoint(batchedSide), controllerEndpoint(plainSide)])
    await rawReady
    const counter = { n: 0 }
    const quiet = `each echo after ${gapMs} ms of quiet (twice the window), so it is published at once (the window's leading edge), not after ${WRITE_ECHO_BATCH_MS} ms`
    const blocks = `${perSample * pairs} round trips per side through \`stty raw -echo; exec cat\` (${pairs} alternating blocks of ${perSample}); each sample is a block's median.`
    const againstOff = await alternate({
      pairs,
      raw: () => block(plain, perSample, counter, gapMs),
      ptykit: () => block(batched, perSample, counter, gapMs),
      onPair: (i, r, p) => log(`  write → echo after quiet, dataBatchMs vs off pair ${i}: off ${r.toFixed(3)} ms, dataBatchMs ${p.toFixed(3)} ms`),
    })
    const againstRaw = await alternate({
      pairs,
      raw: () => block(raw, perSample, counter, gapMs),
      ptykit: () => block(batched, perSample, counter, gapMs),
      onPair: (i, r, p) => log(`  write → echo after quiet, dataBatchMs vs raw pair ${i}: raw ${r.toFixed(3)} ms, ptykit ${p.toFixed(3)} ms`),
    })
    return [
      makeFigure(
        {
          id: 'write-echo-batched',
          name: `write → echo after quiet, dataBatchMs ${WRITE_ECHO_BATCH_MS} vs off`,
          unit: 'ms',
          baseline: 'the same controller, dataBatchMs off',
          target: { kind: 'ratio-at-most', value: 1.05 },
          targetText: '≤ 1.05× (echo unchanged when idle)',
          notes: [`Both sides controllers over node-pty providers, one with \`dataBatchMs: ${WRITE_ECHO_BATCH_MS}\`; ${quiet}.`, blocks],
        },
        againstOff,
        config.mode === 'full',
      ),
      makeFigure(
        {
          id: 'write-echo-batched-vs-raw',
          name: `write → echo after quiet, dataBatchMs ${WRITE_ECHO_BATCH_MS} vs raw`,
          unit: 'ms',
          target: { kind: 'none' },
          targetText: 'report',
          notes: [
            `ptykit side: the controller with \`dataBatchMs: ${WRITE_ECHO_BATCH_MS}\`; raw node-pty waits as long; ${quiet}.`,
            blocks,
            'After a quiet spell every path runs cold: the controller and provider add ~20–40 µs to the write call and the output path here (7 Dec), with or without dataBatchMs; back to back (the write → echo row) they cost less than node-pty\'s thread-pool write.',
          ],
        },
        againstRaw,
        config.mode === 'full',
      ),
    ]
  } finally {
    await closeRaw()
    await batchedSide.dispose()
    await plainSide.dispose()
  }
}

async function measureWriteEchoOf(
  config: BenchConfig,
  log: (line: string) => void,
  variant: 'in-process' | 'pty-host',
): Promise<FigureResult> {
  const { perSample, pairs } = config.writeEcho
  const ptyHost = variant === 'pty-host'
  const side: PtykitSide = ptyHost ? createPtyHostSide() : createPtykitSide()
  const { raw, ready: rawReady, close: closeRaw } = rawEndpoint()
  try {
    const ptykit = await controllerEndpoint(side)
    await rawReady
    const counter = { n: 0 }
    const samples = await alternate({
      pairs,
      raw: () => block(raw, perSample, counter),
      ptykit: () => block(ptykit, perSample, counter),
      onPair: (i, r, p) => log(`  write → echo${ptyHost ? ' (pty host)' : ''} pair ${i}: raw ${r.toFixed(3)} ms, ptykit ${p.toFixed(3)} ms`),
    })
    return makeFigure(
      {
        id: ptyHost ? 'write-echo-pty-host' : 'write-echo',
        name: ptyHost ? 'write → echo, through the pty host' : 'write → echo',
        unit: 'ms',
        target: ptyHost ? { kind: 'none' } : { kind: 'ratio-at-most', value: 1.05 },
        targetText: ptyHost ? 'report' : '≤ 1.05× raw',
        notes: [
          ...(ptyHost ? ['ptykit side: the controller over `createPtyHostProvider` (host started from the build, `dist/pty-host/host-main.js`), against raw in-process node-pty.'] : []),
          `${perSample * pairs} round trips per side through \`stty raw -echo; exec cat\` (${pairs} alternating blocks of ${perSample}); each sample is a block's median.`,
          'ptykit writes with `controller.write(id, data, \'driving\')`; the time runs from the write call to the echo at the listener.',
        ],
      },
      samples,
      config.mode === 'full',
    )
  } finally {
    await closeRaw()
    await side.dispose()
  }
}
