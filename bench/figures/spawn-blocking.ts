/**
 * Spawn blocking the host: the app's own longest task during one spawn (its main thread's CPU
 * time within one event-loop gap, from schedstat; the wall-clock gap is in the notes), with the
 * host's memory at each ballast, raw node-pty against ptykit (both run alternately in the same
 * ballasted child).
 */
import { runChild } from '../child.js'
import { MIB, type BenchConfig } from '../config.js'
import { pairedSamples } from '../alternate.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { median } from '../stats.js'
import type { SpawnBlockingChildResult } from './spawn-blocking-child.js'

const CHILD = 'bench/figures/spawn-blocking-child.ts'

/** Heap headroom above the ballast, so the child never dies of its own ballast. */
export const SPAWN_BLOCKING_HEAP_HEADROOM_MIB = 512

function sizeLabel(bytes: number): string {
  return bytes >= 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(0)} GiB` : `${(bytes / MIB).toFixed(0)} MiB`
}

/** One result from a raw-only child's raw samples and a ptykit-only child's ptykit samples (the same ballast). */
function mergeSides(raw: SpawnBlockingChildResult, ptykit: SpawnBlockingChildResult): SpawnBlockingChildResult {
  const sides = <T>(of: (r: SpawnBlockingChildResult) => { raw: T[]; ptykit: T[] }) => ({ raw: of(raw).raw, ptykit: of(ptykit).ptykit })
  return {
    ...ptykit,
    stalls: pairedSamples(ptykit.stalls.ptykit, raw.stalls.raw),
    ownMs: pairedSamples(ptykit.ownMs.ptykit, raw.ownMs.raw),
    syncCallMs: sides((r) => r.syncCallMs),
    busyMs: sides((r) => r.busyMs),
    ranInLongestMs: sides((r) => r.ranInLongestMs),
    waitedInLongestMs: sides((r) => r.waitedInLongestMs),
  }
}

/** Measures one spawn-blocking row per ballast. */
export async function measureSpawnBlocking(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ballasts, pairs } = config.spawnBlocking
  const rows: FigureResult[] = []
  // The pty-host rows (full runs only, heap ballasts): the same spawn through the pty host provider,
  // whose fork happens in the host process (target: ≤ 0.5 ms at 40 MiB and at 1 GiB).
  const sides = [
    ...ballasts.map((ballast) => ({ ...ballast, side: 'ptykit' as const })),
    ...(config.mode === 'full' ? ballasts.filter((ballast) => ballast.kind === 'heap').map((ballast) => ({ ...ballast, side: 'pty-host' as const })) : []),
  ]
  for (const { kind, bytes, side } of sides) {
    const maxOld = Math.ceil(bytes / MIB) + SPAWN_BLOCKING_HEAP_HEADROOM_MIB
    const run = (sides: 'ptykit' | 'pty-host' | 'raw') =>
      runChild<SpawnBlockingChildResult>(CHILD, [kind, String(bytes), String(pairs), sides], { nodeFlags: [`--max-old-space-size=${maxOld}`] })
    // Through the pty host, each side in a child of its own (spawn-blocking-child.ts says why).
    const r = side === 'ptykit' ? await run('ptykit') : mergeSides(await run('raw'), await run('pty-host'))
    const label = `${kind === 'heap' ? `${sizeLabel(bytes)} JS heap` : `${sizeLabel(bytes)} Buffer`}${side === 'pty-host' ? ', through the pty host' : ''}`
    const memory = `heapUsed ${(r.heapUsed / MIB).toFixed(0)} MiB, RSS ${(r.rss / MIB).toFixed(0)} MiB`
    log(
      `  spawn blocking with ${label} (${memory}): app's own longest task raw ${median(r.ownMs.raw).toFixed(2)} ms, ` +
        `ptykit ${median(r.ownMs.ptykit).toFixed(2)} ms; longest wall-clock gap raw ${median(r.stalls.raw).toFixed(2)} ms, ` +
        `ptykit ${median(r.stalls.ptykit).toFixed(2)} ms`,
    )
    rows.push(
      makeFigure(
        {
          id: `spawn-blocking-${kind}-${Math.round(bytes / MIB)}mib${side === 'pty-host' ? '-pty-host' : ''}`,
          name: `spawn blocking the host (${label})`,
          unit: 'ms',
          target: { kind: 'none' },
          targetText: 'report',
          notes: [
            `The app's own longest task: the most time the app's main thread ran on a CPU between two turns of its event loop (setImmediate probe, Linux schedstat${r.readsSchedstat ? '' : ' unavailable here: the wall-clock gap'}), from the spawn call to the exit event of sh -c 'exit 0'; ${pairs} spawns per side ${side === 'pty-host' ? 'in two children, one per side, each' : 'alternating in one child'} holding ${label} of ballast (${memory}).`,
            `Longest wall-clock gap between two turns (median): raw ${median(r.stalls.raw).toFixed(2)} ms, ptykit ${median(r.stalls.ptykit).toFixed(2)} ms; of it the app's thread waited for a CPU raw ${median(r.waitedInLongestMs.raw).toFixed(2)} ms, ptykit ${median(r.waitedInLongestMs.ptykit).toFixed(2)} ms, and ran raw ${median(r.ranInLongestMs.raw).toFixed(2)} ms, ptykit ${median(r.ranInLongestMs.ptykit).toFixed(2)} ms (the rest it slept: blocked, or its CPU was taken by the hypervisor).`,
            ...(side === 'pty-host'
              ? [
                  'Each side in a child process of its own with the same ballast, the raw one first: an app on the pty host never forks, and an in-process fork slows whatever the process runs next (measured at 40 MiB: the first pty-host spawn after a raw fork 0.41–0.64 ms own task, the next ones 0.25–0.33 ms), so raw samples in the same process would be counted into the pty host\'s figure. Pairs are by index, not by time.',
                ]
              : []),
            `Synchronous part of the spawn call (median): raw ${median(r.syncCallMs.raw).toFixed(2)} ms, ptykit ${median(r.syncCallMs.ptykit).toFixed(2)} ms (ptykit forks later, inside its async pipeline — the block moves, it does not go away).`,
            `Most process CPU time (every thread: V8's helpers count) within one probe gap (median): raw ${median(r.busyMs.raw).toFixed(2)} ms, ptykit ${median(r.busyMs.ptykit).toFixed(2)} ms.`,
          ],
          details: {
            kind,
            bytes,
            heapUsed: r.heapUsed,
            rss: r.rss,
            syncCallMs: r.syncCallMs,
            busyMs: r.busyMs,
            wallClockGapMs: r.stalls,
            ranInLongestMs: r.ranInLongestMs,
            waitedInLongestMs: r.waitedInLongestMs,
          },
        },
        r.ownMs,
        config.mode === 'full',
      ),
    )
  }
  return rows
}
