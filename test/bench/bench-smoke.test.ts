import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/** A guard against a hung `--quick` run (and a build of dist/ when it is stale), not a speed check. */
const SMOKE_TIMEOUT_MS = 360_000

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Every figure row `npm run bench` must print, by id (the spawn-blocking rows carry the heap size). */
const EXPECTED_IDS = [
  'throughput',
  'throughput-non-acking',
  'spawn-first-byte',
  'spawn-exit',
  'spawn-exit-no-drain',
  'concurrent-spawns',
  'concurrent-spawns-faults',
  'write-echo',
  'write-echo-batched',
  'write-echo-batched-vs-raw',
  'byte-path',
  'byte-path-vs-node-pty',
  'byte-path-vs-node-pty-bytes',
  'data-batching',
  'idle-memory-rss',
  'idle-memory-heap',
  'idle-memory-heap-committed',
  'idle-memory-external',
  'flood-rss',
  'flood-lost',
  'pipeline-cost',
  'mass-kill-exit',
  'mass-kill-operator-close',
  'mass-kill-stop-unverified',
  'mass-kill-shutdown-failed',
  'mass-dispose-survivors',
  'scale-rss',
  'scale-fds',
  'scale-lag',
  'scale-list',
  'scale-stop-all',
  'scale-left',
]

type Summary = { n: number; min: number; p10: number; median: number; p90: number; max: number }
type Figure = {
  id: string
  name: string
  unit: string
  ptykit: Summary
  raw: Summary
  ratio: Summary | null
  target: { kind: string }
  difference: Summary
  verdict: string
  samples: { ptykit: number[]; raw: number[] }
}
type Results = { mode: string; figures: Figure[]; errors: unknown[]; machine: Record<string, unknown> }

function runQuickBench(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The command a user runs (`--silent`: npm's banner would precede the JSON on stdout). It runs
    // the built package, building dist/ first when it is missing or older than the sources.
    execFile(
      'npm',
      ['run', '--silent', 'bench', '--', '--quick', '--json'],
      { cwd: REPO_ROOT, timeout: SMOKE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
  })
}

const isSummary = (s: Summary): boolean =>
  [s.min, s.p10, s.median, s.p90, s.max].every((x) => typeof x === 'number' && Number.isFinite(x)) && s.n >= 1

describe('npm run bench -- --quick --json', () => {
  it(
    'exits 0 and reports every figure with numeric ptykit, raw and ratio values (speed is not asserted)',
    async () => {
      const { code, stdout, stderr } = await runQuickBench()
      expect(code, stderr.slice(-4000)).toBe(0)
      const results = JSON.parse(stdout) as Results
      expect(results.mode).toBe('quick')
      expect(results.errors).toEqual([])
      const ids = results.figures.map((f) => f.id)
      for (const id of EXPECTED_IDS) expect(ids).toContain(id)
      // Three spawn-blocking rows: a small and a large JS heap, and an off-heap Buffer.
      expect(ids.filter((id) => id.startsWith('spawn-blocking-heap-'))).toHaveLength(2)
      expect(ids.filter((id) => id.startsWith('spawn-blocking-buffer-'))).toHaveLength(1)
      for (const figure of results.figures) {
        expect(isSummary(figure.ptykit), `${figure.id} ptykit`).toBe(true)
        expect(isSummary(figure.raw), `${figure.id} raw`).toBe(true)
        // A ratio is absent only where a raw sample is 0 (bytes lost, an RSS page count) — never
        // on a figure judged by its ratio.
        if (figure.target.kind.startsWith('ratio-') || figure.ratio !== null) {
          expect(figure.ratio !== null && isSummary(figure.ratio), `${figure.id} ratio`).toBe(true)
        }
        expect(isSummary(figure.difference), `${figure.id} difference`).toBe(true)
        expect(figure.samples.ptykit.length).toBe(figure.samples.raw.length)
        expect(figure.samples.ptykit.length).toBeGreaterThanOrEqual(2)
        // Quick sizes are too small to judge anything.
        expect(figure.verdict).toBe('unjudged')
      }
      // The flood rows count bytes exactly: quick mode still loses none on the ptykit side.
      const lost = results.figures.find((f) => f.id === 'flood-lost')
      expect(lost?.samples.ptykit.every((b) => b === 0)).toBe(true)
      // The stop rows count processes in /proc: even at quick sizes nothing may outlive a dispose
      // or a stopAndWait unreported.
      for (const id of ['mass-dispose-survivors', 'scale-left']) {
        expect(results.figures.find((f) => f.id === id)?.samples.ptykit, id).toEqual([0, 0])
      }
      expect(typeof results.machine['nodePty']).toBe('string')
    },
    SMOKE_TIMEOUT_MS + 10_000,
  )
})
