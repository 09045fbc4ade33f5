/**
 * Sizes and counts of every figure, for the full run and for the `--quick` smoke run, plus the
 * command-line parser. The full sizes are the issue's; the quick ones only exercise the code paths.
 */

/** Sizes and counts for one run of the whole benchmark. */
export type BenchConfig = {
  /** `full` judges targets; `quick` exercises every code path and judges nothing. */
  mode: 'full' | 'quick'
  /** Output throughput: bytes the child writes per sample, and pairs. */
  throughput: { bytes: number; pairs: number }
  /** Sequential spawn figures: spawns per sample (one sample per side per pair), and pairs. */
  sequentialSpawns: { perSample: number; pairs: number }
  /** Concurrent spawns: PTYs spawned at once per round (one round per side per pair), and pairs. */
  concurrentSpawns: { atOnce: number; pairs: number }
  /** Write → echo: round trips per sample, and pairs. */
  writeEcho: { perSample: number; pairs: number }
  /** Memory per idle PTY: idle PTYs opened per child process, settle time before reading, pairs. */
  idleMemory: { ptys: number; settleMs: number; pairs: number }
  /** Flood: bytes the child writes, the consumer's acknowledgement rate in bytes/s, and pairs. */
  flood: { bytes: number; ackBytesPerSecond: number; pairs: number }
  /** Pipeline cost: fake spawn+exit cycles per sample, and pairs. */
  pipeline: { cyclesPerSample: number; pairs: number }
  /**
   * Spawn blocking: the host's ballasts (`heap`: JS heap grown to `bytes`; `buffer`: a filled
   * off-heap Buffer of `bytes`), and pairs per ballast.
   */
  spawnBlocking: { ballasts: readonly { kind: 'heap' | 'buffer'; bytes: number }[]; pairs: number }
  /**
   * Stops at scale and idle PTYs at scale (issues 13, 18): PTYs per phase, rounds (one child runs
   * them all), and how long a phase lets things settle (idle before the kills; the lag window is 2×).
   */
  massStop: { ptys: number; rounds: number; settleMs: number }
}

/** 1 MB as the reference baseline counts it (10^6 bytes), so MB/s figures are comparable. */
export const MB = 1e6

/** 1 MiB, for memory budgets (the issue states them in KiB/MiB). */
export const MIB = 1024 * 1024

/** The sizes. About 4 minutes on the reference 2-core machine. */
export const FULL_CONFIG: BenchConfig = {
  mode: 'full',
  // 20 pairs of 100 MB (10 before 4 Dec; 5 of 200 MB before 2 Dec): an even count, so half the
  // pairs run each side first (see bench/alternate.ts). On the EPYC VM the same code's median moved
  // 3–5 % between runs an hour apart with 10 pairs (per-pair ratios 0.82–1.20), wider than the 2 %
  // the rows are judged on; 20 pairs cost ~2 more minutes.
  throughput: { bytes: 100 * MB, pairs: 20 },
  // 20 and 10 pairs (were 10 and 5): these rows' per-pair ratios spread ±8 % (p10–p90) on this VM,
  // as wide as the margin they are judged on; each costs seconds, not minutes.
  sequentialSpawns: { perSample: 20, pairs: 20 },
  // 20 pairs (10 before 4 Dec): the rounds' ratios spread ±5–10 %, the target's margin is 3 %.
  concurrentSpawns: { atOnce: 50, pairs: 20 },
  writeEcho: { perSample: 100, pairs: 10 },
  idleMemory: { ptys: 200, settleMs: 500, pairs: 5 },
  flood: { bytes: 300 * MB, ackBytesPerSecond: 20 * MB, pairs: 5 },
  pipeline: { cyclesPerSample: 2000, pairs: 10 },
  spawnBlocking: {
    ballasts: [
      { kind: 'heap', bytes: 40 * MIB },
      { kind: 'heap', bytes: 1024 * MIB },
      { kind: 'buffer', bytes: 1024 * MIB },
    ],
    pairs: 20,
  },
  massStop: { ptys: 1000, rounds: 1, settleMs: 500 },
}

/** Tiny sizes: every code path runs, in well under 30 s, and nothing is judged. */
export const QUICK_CONFIG: BenchConfig = {
  mode: 'quick',
  throughput: { bytes: 2 * MB, pairs: 2 },
  sequentialSpawns: { perSample: 3, pairs: 2 },
  concurrentSpawns: { atOnce: 5, pairs: 2 },
  writeEcho: { perSample: 10, pairs: 2 },
  idleMemory: { ptys: 10, settleMs: 100, pairs: 2 },
  flood: { bytes: 2 * MB, ackBytesPerSecond: 8 * MB, pairs: 2 },
  pipeline: { cyclesPerSample: 50, pairs: 2 },
  spawnBlocking: {
    ballasts: [
      { kind: 'heap', bytes: 40 * MIB },
      { kind: 'heap', bytes: 64 * MIB },
      { kind: 'buffer', bytes: 64 * MIB },
    ],
    pairs: 2,
  },
  massStop: { ptys: 3, rounds: 2, settleMs: 50 },
}

/** What the command line asked for. */
export type CliOptions = {
  /** The sizes to run. */
  config: BenchConfig
  /** Print the results as JSON on stdout (progress and the table go to stderr). */
  json: boolean
  /** Where to write the results file; `null` for none. Default `bench/results.json` in a full run. */
  out: string | null
  /** Only these figure groups (by id prefix), or all when empty. */
  only: string[]
  /** Exit with status 1 when a judged target is missed. */
  strict: boolean
}

/** The default results file of a full run (git-ignored). */
export const DEFAULT_RESULTS_FILE = 'bench/results.json'

const USAGE =
  'Usage: npm run bench -- [--quick] [--json] [--out FILE | --no-out] [--only id,id] [--pairs N] [--strict]'

/**
 * Parses the arguments after `--`.
 *
 * @throws TypeError on an unknown flag or a bad value — the message carries the usage line.
 */
export function parseCli(argv: readonly string[]): CliOptions {
  let quick = false
  let json = false
  let out: string | null | undefined
  let only: string[] = []
  let pairs: number | undefined
  let strict = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    const value = (): string => {
      const v = argv[++i]
      if (v === undefined) throw new TypeError(`Expected a value after \`${arg}\`. ${USAGE}`)
      return v
    }
    if (arg === '--quick') quick = true
    else if (arg === '--json') json = true
    else if (arg === '--strict') strict = true
    else if (arg === '--no-out') out = null
    else if (arg === '--out') out = value()
    else if (arg === '--only') only = value().split(',').filter((s) => s.length > 0)
    else if (arg === '--pairs') {
      const raw = value()
      const n = Number(raw)
      if (!Number.isInteger(n) || n < 1) {
        throw new TypeError(`Expected the \`--pairs\` option to be a positive integer, got ${raw} (string). ${USAGE}`)
      }
      pairs = n
    } else throw new TypeError(`Unknown argument ${JSON.stringify(arg)}. ${USAGE}`)
  }
  let config = quick ? QUICK_CONFIG : FULL_CONFIG
  if (pairs !== undefined) config = withPairs(config, pairs)
  return { config, json, out: out === undefined ? (quick ? null : DEFAULT_RESULTS_FILE) : out, only, strict }
}

/** `config` with every figure's pair count set to `pairs`. */
function withPairs(config: BenchConfig, pairs: number): BenchConfig {
  return {
    ...config,
    throughput: { ...config.throughput, pairs },
    sequentialSpawns: { ...config.sequentialSpawns, pairs },
    concurrentSpawns: { ...config.concurrentSpawns, pairs },
    writeEcho: { ...config.writeEcho, pairs },
    idleMemory: { ...config.idleMemory, pairs },
    flood: { ...config.flood, pairs },
    pipeline: { ...config.pipeline, pairs },
    spawnBlocking: { ...config.spawnBlocking, pairs },
    massStop: { ...config.massStop, rounds: pairs },
  }
}
