/**
 * The printed table: one line per figure with ptykit's value, raw's value, the ratio (median and
 * p10–p90 of the per-pair ratios), the target and the verdict.
 */
import type { FigureResult } from './figure.js'
import type { MachineInfo } from './machine.js'

/** Everything a run produces; `--json` prints it and `bench/results.json` stores it. */
export type BenchResults = {
  /** `full` or `quick`. */
  mode: 'full' | 'quick'
  /** ISO time the run started. */
  startedAt: string
  /** Wall time of the whole run, ms. */
  durationMs: number
  /** Where it ran. */
  machine: MachineInfo
  /** Every row, in table order. */
  figures: FigureResult[]
}

/** Units of rows that count things (processes, PTYs, errors, fds): printed as whole numbers. */
const COUNT_UNITS = new Set(['PTYs', 'errors', 'processes', 'fds'])

function formatValue(value: number, unit: string): string {
  if (COUNT_UNITS.has(unit)) return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`
  if (unit === 'B/PTY' || unit === 'B') {
    const perPty = unit === 'B/PTY' ? '/PTY' : ''
    return Math.abs(value) >= 1024 ? `${(value / 1024).toFixed(2)} KiB${perPty}` : `${value.toFixed(0)} B${perPty}`
  }
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3
  return `${value.toFixed(digits)} ${unit}`
}

/** Renders the results as a fixed-width table (also valid Markdown). */
export function renderTable(results: BenchResults): string {
  const header = ['figure', 'ptykit', 'raw', 'ratio (p10–p90)', 'ptykit − raw', 'target', 'result']
  const rows = results.figures.map((f) => [
    f.name,
    formatValue(f.ptykit.median, f.unit),
    `${formatValue(f.raw.median, f.unit)}${f.baseline === 'node-pty' ? '' : ` (${f.baseline})`}`,
    f.ratio === null ? 'n/a' : `${f.ratio.median.toFixed(3)}× (${f.ratio.p10.toFixed(3)}–${f.ratio.p90.toFixed(3)})`,
    formatValue(f.difference.median, f.unit),
    f.targetText,
    f.verdict,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)))
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`
  const m = results.machine
  return [
    `ptykit ${m.ptykit} vs node-pty ${m.nodePty} — ${results.mode} run, ${(results.durationMs / 1000).toFixed(0)} s — ` +
      `Node ${m.node} (libuv ${m.libuv}), ${m.kernel}, ${m.nproc} CPU (${m.cpuModel}), ${(m.totalMemory / 2 ** 30).toFixed(1)} GiB`,
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    'Values are medians of per-pair samples; ratio = ptykit ÷ raw per pair (median, p10–p90).',
    ...(results.mode === 'quick' ? ['Quick mode: sizes are tiny and nothing is judged.'] : []),
  ].join('\n')
}
