/**
 * Pipeline cost: spawn+exit cycles per second through the controller over the fake provider (no
 * OS, no PTY), against the same fake provider driven directly. The difference is the controller's
 * own per-spawn work: the spawn pipeline, registration, fencing, exit settlement and events.
 */
import { createPtyController } from 'ptykit/controller'
import { createFakePtyProvider } from 'ptykit/testing'
import { alternate } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { nowMs } from '../stats.js'

/** Every fake spawn prints one chunk and exits 0, like `echo hi`. */
const CYCLE_SCRIPT = { output: ['hi\r\n'], exit: { exitCode: 0 } }

const LAUNCH = { file: '/bin/echo', args: ['hi'], cols: 80, rows: 24 }

/** Measures the pipeline-cost figure. */
export async function measurePipelineCost(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  const { cyclesPerSample, pairs } = config.pipeline

  // Baseline: the fake provider alone, one fresh provider per sample so its call log stays small.
  const providerAlone = async (): Promise<number> => {
    const provider = createFakePtyProvider({ defaultScript: CYCLE_SCRIPT })
    let waiting: { id: string; resolve: () => void } | null = null
    const exited = new Set<string>()
    provider.onExit((event) => {
      if (waiting !== null && event.id === waiting.id) waiting.resolve()
      else exited.add(event.id)
    })
    const t0 = nowMs()
    for (let i = 0; i < cyclesPerSample; i++) {
      const { id } = await provider.spawn(LAUNCH)
      if (!exited.delete(id)) {
        await new Promise<void>((resolve) => {
          waiting = { id, resolve }
        })
        waiting = null
      }
    }
    const rate = cyclesPerSample / ((nowMs() - t0) / 1000)
    await provider.dispose()
    return rate
  }

  const throughController = async (): Promise<number> => {
    const provider = createFakePtyProvider({ defaultScript: CYCLE_SCRIPT })
    const controller = createPtyController({ provider })
    let waiting: { id: string; resolve: () => void } | null = null
    const exited = new Set<string>()
    controller.on('exit', (event) => {
      if (waiting !== null && event.ptyId === waiting.id) waiting.resolve()
      else exited.add(event.ptyId)
    })
    const t0 = nowMs()
    for (let i = 0; i < cyclesPerSample; i++) {
      const { id } = await controller.spawn(LAUNCH)
      if (!exited.delete(id)) {
        await new Promise<void>((resolve) => {
          waiting = { id, resolve }
        })
        waiting = null
      }
    }
    const rate = cyclesPerSample / ((nowMs() - t0) / 1000)
    await controller.dispose()
    return rate
  }

  const samples = await alternate({
    pairs,
    raw: providerAlone,
    ptykit: throughController,
    onPair: (i, raw, ptykit) => log(`  pipeline pair ${i}: fake alone ${raw.toFixed(0)}/s, through controller ${ptykit.toFixed(0)}/s`),
  })
  return makeFigure(
    {
      id: 'pipeline-cost',
      name: 'pipeline cost (fake provider)',
      unit: 'cycles/s',
      baseline: 'fake provider alone',
      target: { kind: 'none' },
      targetText: 'report',
      notes: [
        `${cyclesPerSample} sequential spawn+exit cycles per sample (one output chunk each); the baseline drives the same fake provider without the controller.`,
        `Controller cost per cycle ≈ 1000/ptykit − 1000/baseline ms.`,
      ],
    },
    samples,
    config.mode === 'full',
  )
}
