/**
 * The figure groups of `npm run bench`, in table order. Imported by `run.ts` only once `dist/` is
 * known to be current: these modules import `ptykit/*`, which resolves to the build.
 */
import type { BenchConfig } from './config.js'
import type { FigureResult } from './figure.js'
import { measureBytePath } from './figures/byte-path.js'
import { measureConcurrentSpawns } from './figures/concurrent-spawns.js'
import { measureDataBatching } from './figures/data-batching.js'
import { measureFlood } from './figures/flood.js'
import { measureIdleMemory } from './figures/idle-memory.js'
import { measureMassStop, measureScale } from './figures/mass-stop.js'
import { measurePipelineCost } from './figures/pipeline-cost.js'
import { measureSpawnBlocking } from './figures/spawn-blocking.js'
import { measureSsh } from './figures/ssh.js'
import { measureSpawnExit } from './figures/spawn-exit.js'
import { measureSpawnFirstByte } from './figures/spawn-first-byte.js'
import { measureNonAckingThroughput, measurePtyHostThroughput, measureThroughput } from './figures/throughput.js'
import { measurePtyHostWriteEcho, measureWriteEcho } from './figures/write-echo.js'

/** Where a figure group writes its progress lines. */
export type Log = (line: string) => void

/** One figure group: its id (what `--only` selects by) and how to measure it. */
export type Group = { id: string; run: (config: BenchConfig, log: Log) => Promise<FigureResult | FigureResult[]> }

/** The figure groups, in table order; `--only` selects by these ids. */
export const FIGURE_GROUPS: readonly Group[] = [
  { id: 'throughput', run: measureThroughput },
  { id: 'throughput-non-acking', run: measureNonAckingThroughput },
  { id: 'spawn-first-byte', run: measureSpawnFirstByte },
  { id: 'spawn-exit', run: measureSpawnExit },
  { id: 'concurrent-spawns', run: measureConcurrentSpawns },
  { id: 'write-echo', run: measureWriteEcho },
  { id: 'byte-path', run: measureBytePath },
  { id: 'data-batching', run: measureDataBatching },
  { id: 'throughput-pty-host', run: measurePtyHostThroughput },
  { id: 'write-echo-pty-host', run: measurePtyHostWriteEcho },
  { id: 'idle-memory', run: measureIdleMemory },
  { id: 'flood', run: measureFlood },
  { id: 'pipeline-cost', run: measurePipelineCost },
  { id: 'spawn-blocking', run: measureSpawnBlocking },
  { id: 'ssh', run: measureSsh },
  { id: 'mass-stop', run: measureMassStop },
  { id: 'scale', run: measureScale },
]
