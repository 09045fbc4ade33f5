/**
 * Spawn → first byte: `echo hi`, sequential spawns, from the spawn call to the first chunk at the
 * listener.
 */
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { createPtykitSide } from '../ptykit-side.js'
import { alternateSequentialSpawns } from './sequential-spawn.js'

/** Measures the spawn → first byte figure. */
export async function measureSpawnFirstByte(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  const { perSample, pairs } = config.sequentialSpawns
  const side = createPtykitSide()
  try {
    const samples = await alternateSequentialSpawns({
      file: '/bin/echo',
      args: ['hi'],
      milestone: 'first-byte',
      perSample,
      pairs,
      side,
      log,
      label: 'spawn → first byte',
    })
    return makeFigure(
      {
        id: 'spawn-first-byte',
        name: 'spawn → first byte',
        unit: 'ms',
        target: { kind: 'ratio-at-most', value: 1.03 },
        targetText: '≤ 1.03× raw',
        notes: [
          `/bin/echo hi, ${perSample * pairs} sequential spawns per side (${pairs} alternating blocks of ${perSample}); each sample is a block's median.`,
        ],
      },
      samples,
      config.mode === 'full',
    )
  } finally {
    await side.dispose()
  }
}
