/**
 * Order statistics for the benchmark: medians and spreads, never means, because a shared
 * 2-core machine produces outliers that would drag a mean anywhere.
 */

/** The summary of one series: its size, median and spread. */
export type Summary = {
  /** Number of samples. */
  n: number
  /** Smallest sample. */
  min: number
  /** 10th percentile (linear interpolation). */
  p10: number
  /** Median (linear interpolation between the two middle samples). */
  median: number
  /** 90th percentile (linear interpolation). */
  p90: number
  /** Largest sample. */
  max: number
}

/**
 * The `q`-quantile of `values` with linear interpolation between neighbours (the same rule as
 * the reference scripts, so figures are comparable with `node-pty-baseline.md`).
 *
 * @throws TypeError when `q` is outside [0, 1] or `values` is empty — both are bench bugs.
 */
export function quantile(values: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new TypeError(`Expected the \`q\` argument to be in [0, 1], got ${String(q)} (${typeof q})`)
  if (values.length === 0) throw new TypeError('Expected the `values` argument to hold at least one number, got an empty array')
  const sorted = [...values].sort((a, b) => a - b)
  const position = (sorted.length - 1) * q
  const low = Math.floor(position)
  const high = Math.ceil(position)
  const lowValue = sorted[low] as number
  const highValue = sorted[high] as number
  return lowValue + (highValue - lowValue) * (position - low)
}

/** Median of `values`; see {@link quantile}. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5)
}

/**
 * Median, p10/p90 and min/max of a series.
 *
 * @throws TypeError when `values` is empty.
 */
export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    min: quantile(values, 0),
    p10: quantile(values, 0.1),
    median: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    max: quantile(values, 1),
  }
}

/**
 * Least-squares slope of `ys` against `xs`: the per-unit growth of a measure (bytes of memory per
 * PTY) from several levels, which is less sensitive to one noisy level than a two-point difference.
 *
 * @throws TypeError when the series differ in length or all `xs` are equal.
 */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  if (xs.length !== ys.length || xs.length < 2) {
    throw new TypeError(`Expected two series of equal length ≥ 2, got ${xs.length} and ${ys.length}`)
  }
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  let num = 0
  let den = 0
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] as number) - mx
    num += dx * ((ys[i] as number) - my)
    den += dx * dx
  }
  if (den === 0) throw new TypeError('Expected the `xs` series to hold at least two distinct values')
  return num / den
}

/** Milliseconds since an arbitrary origin, from the monotonic high-resolution clock. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}
