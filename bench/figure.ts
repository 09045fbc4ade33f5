/**
 * One row of the benchmark: what was measured on each side, the pairwise comparison, the target
 * and the verdict. Plain data, so `--json` and `bench/results.json` are this type serialized.
 */
import type { PairedSamples } from './alternate.js'
import { summarize, type Summary } from './stats.js'

/**
 * What a figure is judged on.
 * - `ratio-at-least` / `ratio-at-most`: the median of the per-pair ratios ptykit ÷ raw.
 * - `overhead-at-most`: the median of the per-pair differences ptykit − raw (an absolute cost,
 *   where a ratio would hide a small overhead inside a large common base).
 * - `value-at-most` / `value-exactly`: ptykit's own median (a budget that holds whatever raw does).
 * - `none`: reported only.
 */
export type Target =
  | { kind: 'ratio-at-least'; value: number }
  | { kind: 'ratio-at-most'; value: number }
  | { kind: 'overhead-at-most'; value: number }
  | { kind: 'value-at-most'; value: number }
  | { kind: 'value-exactly'; value: number }
  | { kind: 'none' }

/**
 * The verdict: `pass` / `miss` against the target, `report` for a figure without a target, and
 * `unjudged` in `--quick` mode, whose sizes are far too small to mean anything.
 */
export type Verdict = 'pass' | 'miss' | 'report' | 'unjudged'

/** One benchmark row. */
export type FigureResult = {
  /** Stable machine name (`throughput`, `spawn-first-byte`, …); the smoke test keys on it. */
  id: string
  /** The row's label in the table. */
  name: string
  /** The unit of the `ptykit` and `raw` values (`MB/s`, `ms`, `B/PTY`, …). */
  unit: string
  /** What the raw side is (`node-pty`, or the fake provider alone for the pipeline cost). */
  baseline: string
  /** ptykit's samples, one per pair. */
  ptykit: Summary
  /** The baseline's samples, one per pair. */
  raw: Summary
  /** Per-pair ratios ptykit ÷ raw; `null` when a raw sample is ≤ 0 and a ratio means nothing. */
  ratio: Summary | null
  /** Per-pair differences ptykit − raw, in `unit`. */
  difference: Summary
  /** The target, as data. */
  target: Target
  /** The target as the issue words it. */
  targetText: string
  /** The verdict. */
  verdict: Verdict
  /** The raw samples, so a reader can redo the statistics. */
  samples: { ptykit: number[]; raw: number[] }
  /** Anything a reader needs to interpret the row (method details, byte counts, known causes). */
  notes: string[]
  /** Extra measurements, figure-specific. */
  details: Record<string, unknown>
}

/** Inputs of {@link makeFigure}. */
export type FigureSpec = {
  /** See {@link FigureResult.id}. */
  id: string
  /** See {@link FigureResult.name}. */
  name: string
  /** See {@link FigureResult.unit}. */
  unit: string
  /** See {@link FigureResult.baseline}. Default `'node-pty'`. */
  baseline?: string
  /** See {@link FigureResult.target}. */
  target: Target
  /** See {@link FigureResult.targetText}. */
  targetText: string
  /** See {@link FigureResult.notes}. */
  notes?: string[]
  /** See {@link FigureResult.details}. */
  details?: Record<string, unknown>
  /** An extra condition the verdict needs besides the target (for example "0 bytes lost"). */
  alsoRequires?: boolean
}

/** Applies a target to the summaries; `null` when the target does not judge. */
export function meetsTarget(target: Target, ratio: Summary | null, difference: Summary, ptykit: Summary): boolean | null {
  switch (target.kind) {
    case 'ratio-at-least':
      return ratio !== null && ratio.median >= target.value
    case 'ratio-at-most':
      return ratio !== null && ratio.median <= target.value
    case 'overhead-at-most':
      return difference.median <= target.value
    case 'value-at-most':
      return ptykit.median <= target.value
    case 'value-exactly':
      return ptykit.min === target.value && ptykit.max === target.value
    case 'none':
      return null
  }
}

/** Builds a row from paired samples, judging it unless `judge` is false (quick mode). */
export function makeFigure(spec: FigureSpec, samples: PairedSamples, judge: boolean): FigureResult {
  const ptykit = summarize(samples.ptykit)
  const raw = summarize(samples.raw)
  const ratio = samples.ratios.length > 0 ? summarize(samples.ratios) : null
  const difference = summarize(samples.differences)
  const met = meetsTarget(spec.target, ratio, difference, ptykit)
  let verdict: Verdict
  if (!judge) verdict = 'unjudged'
  else if (met === null) verdict = spec.alsoRequires === false ? 'miss' : 'report'
  else verdict = met && spec.alsoRequires !== false ? 'pass' : 'miss'
  return {
    id: spec.id,
    name: spec.name,
    unit: spec.unit,
    baseline: spec.baseline ?? 'node-pty',
    ptykit,
    raw,
    ratio,
    difference,
    target: spec.target,
    targetText: spec.targetText,
    verdict,
    samples: { ptykit: samples.ptykit, raw: samples.raw },
    notes: spec.notes ?? [],
    details: spec.details ?? {},
  }
}
