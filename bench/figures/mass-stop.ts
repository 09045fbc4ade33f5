/**
 * Stops at scale (issue 13) and 1 000 idle PTYs on one controller (issue 18): counts, not speeds.
 * One fresh child process runs every phase (`mass-stop-child.ts`); this side only turns its
 * results into rows and, whatever happened, SIGKILLs every process that still carries the run's
 * marker, so a failed or hung run leaves nothing behind.
 */
import { runChild } from '../child.js'
import type { BenchConfig } from '../config.js'
import { pairedSamples } from '../alternate.js'
import { makeFigure, type FigureResult, type FigureSpec } from '../figure.js'
import type { MassStopChildResult } from './mass-stop-child.js'
import { killMarkedProcesses, newMark, SPAWN_CONCURRENCY } from './mass-stop-processes.js'

const CHILD = 'bench/figures/mass-stop-child.ts'

/**
 * Longest the child may run: spawning 1 000 PTYs four times takes minutes on a loaded 2-core
 * machine (forks slow down as PTYs accumulate), far beyond the bench's default child timeout.
 */
export const MASS_STOP_CHILD_TIMEOUT_MS = 15 * 60_000

/** The baseline label of rows raw node-pty has no counterpart for (it issues no stop verdicts). */
const NO_RAW = 'n/a: 0'



type Stops = { kill: NonNullable<MassStopChildResult['kill']>; dispose: NonNullable<MassStopChildResult['dispose']> }
type Scale = NonNullable<MassStopChildResult['scale']>

/** Runs the child for `phases`; whatever happens, SIGKILLs every process of the run afterwards. */
async function runPhases(config: BenchConfig, phases: 'stops' | 'scale', log: (line: string) => void): Promise<MassStopChildResult[]> {
  const { ptys: n, rounds, settleMs } = config.massStop
  const mark = newMark()
  try {
    return await runChild<MassStopChildResult[]>(CHILD, [String(n), String(rounds), String(settleMs), mark, phases], {
      timeoutMs: MASS_STOP_CHILD_TIMEOUT_MS,
    })
  } finally {
    const swept = killMarkedProcesses(mark)
    if (swept > 0) log(`  swept ${swept} processes of the run left alive after the child ended`)
  }
}

const row = (spec: FigureSpec, ptykit: number[], raw: number[], judge: boolean): FigureResult => makeFigure(spec, pairedSamples(ptykit, raw), judge)

/** Measures the stop rows (issue 13): concurrent kills, and a dispose of mixed trees. */
export async function measureMassStop(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ptys: n, rounds, settleMs } = config.massStop
  const results: Stops[] = (await runPhases(config, 'stops', log)).map((r) => {
    if (r.kill === undefined || r.dispose === undefined) throw new Error('the mass-stop child printed no stop phases')
    return { kill: r.kill, dispose: r.dispose }
  })
  const judge = config.mode === 'full'
  const of = <T>(pick: (r: Stops) => T): T[] => results.map(pick)
  const zeros = of(() => 0)
  for (const [i, r] of results.entries()) {
    log(
      `  round ${i}: kill → exit raw ${r.kill.rawMedianMs.toFixed(1)} ms, ptykit ${r.kill.ptykitMedianMs.toFixed(1)} ms; ` +
        `causes ${JSON.stringify(r.kill.causes)}, errors ${JSON.stringify(r.kill.errors)}; dispose ${r.dispose.disposeMs.toFixed(0)} ms, ` +
        `${r.dispose.survivors} survivors (${r.dispose.survivorsNamed} named)`,
    )
  }
  const kills = `${n} idle \`/bin/sleep 600\` PTYs, spawned ${SPAWN_CONCURRENCY} at a time, idle ${settleMs} ms, then all killed in one synchronous loop; one sample per round (${rounds} rounds).`
  const disposeDetails = of((r) => r.dispose)
  return [
    row(
      {
        id: 'mass-kill-exit',
        name: `${n} concurrent kills: kill → exit (median)`,
        unit: 'ms',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [kills, 'Per round, the median over the PTYs of kill call → (first) exit event; raw: `IPty.kill()` (SIGHUP) → `onExit`.'],
        details: { rawExited: of((r) => r.kill.rawExited) },
      },
      of((r) => r.kill.ptykitMedianMs),
      of((r) => r.kill.rawMedianMs),
      judge,
    ),
    row(
      {
        id: 'mass-kill-operator-close',
        name: `${n} concurrent kills: operator_close exits`,
        unit: 'PTYs',
        baseline: 'node-pty: exits seen',
        target: { kind: 'value-exactly', value: n },
        targetText: `${n} of ${n}`,
        notes: ['First exit cause of each PTY; the raw column counts raw node-pty exit events after `kill()` (it has no cause).', `Causes per round: ${of((r) => JSON.stringify(r.kill.causes)).join('; ')}`],
        details: { causes: of((r) => r.kill.causes) },
      },
      of((r) => r.kill.causes['operator_close'] ?? 0),
      of((r) => r.kill.rawExited),
      judge,
    ),
    row(
      {
        id: 'mass-kill-stop-unverified',
        name: `${n} concurrent kills: stop_unverified exits`,
        unit: 'PTYs',
        baseline: NO_RAW,
        target: { kind: 'value-exactly', value: 0 },
        targetText: '0',
        notes: ['PTYs that got an `unknown/stop_unverified` exit at any time (also when the real exit followed).'],
      },
      of((r) => r.kill.stopUnverified),
      zeros,
      judge,
    ),
    row(
      {
        id: 'mass-kill-shutdown-failed',
        name: `${n} concurrent kills: shutdown_failed errors`,
        unit: 'errors',
        baseline: NO_RAW,
        target: { kind: 'value-exactly', value: 0 },
        targetText: '0',
        notes: [`Controller \`error\` events with code \`shutdown_failed\`; all codes per round: ${of((r) => JSON.stringify(r.kill.errors)).join('; ')}; processes alive after the exits: ${of((r) => r.kill.survivors).join(', ')}.`],
        details: { errors: of((r) => r.kill.errors), survivors: of((r) => r.kill.survivors) },
      },
      of((r) => r.kill.errors['shutdown_failed'] ?? 0),
      zeros,
      judge,
    ),
    row(
      {
        id: 'mass-dispose-survivors',
        name: `dispose() of ${n} mixed trees: unreported survivors`,
        unit: 'processes',
        baseline: NO_RAW,
        target: { kind: 'value-exactly', value: 0 },
        targetText: '0 (or named on error)',
        notes: [
          `${n} PTYs rotating \`exec sleep 600\`, \`trap "" HUP; sleep 600 & wait\` and \`trap "" HUP TERM; sleep 600 & wait\`, each ready (trap set, sleep started), then \`controller.dispose()\`; processes of the run (found by an environment marker in /proc, zombies excluded) alive when it resolved and not named by pid on \`error\`.`,
          `Per round: dispose took ${disposeDetails.map((d) => `${d.disposeMs.toFixed(0)} ms`).join(', ')}; survivors ${disposeDetails.map((d) => `${d.survivors} (${d.survivorsNamed} named)`).join(', ')}; errors ${disposeDetails.map((d) => JSON.stringify(d.errors)).join('; ')}.`,
        ],
        details: { dispose: disposeDetails },
      },
      disposeDetails.map((d) => d.survivors - d.survivorsNamed),
      zeros,
      judge,
    ),
  ]
}

/** Measures the scale rows (issue 18): 1 000 idle PTYs on one controller, in a process of their own. */
export async function measureScale(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ptys: n, settleMs } = config.massStop
  const scale: Scale[] = (await runPhases(config, 'scale', log)).map((r) => {
    if (r.scale === undefined) throw new Error('the mass-stop child printed no scale phase')
    return r.scale
  })
  const judge = config.mode === 'full'
  const zeros = scale.map(() => 0)
  for (const [i, s] of scale.entries()) {
    log(`  round ${i}: list ${s.listMs.toFixed(0)} ms (${s.listed}), stop all ${s.stopAllMs.toFixed(0)} ms, ${s.stoppedTrue} true, ${s.left} left`)
  }
  return [
    row(
      {
        id: 'scale-rss',
        name: `${n} idle PTYs on one controller: RSS`,
        unit: 'MiB',
        baseline: 'same process before',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [
          `One controller, ${n} × \`/bin/sleep 600\`; each value read after ${2 * settleMs} ms idle; the difference ÷ ${n} is the whole per-PTY cost at this scale (young-generation growth included). Heap before → after: ${scale.map((s) => `${(s.before.heapUsed / 2 ** 20).toFixed(1)} → ${(s.after.heapUsed / 2 ** 20).toFixed(1)} MiB`).join(', ')}.`,
        ],
        details: { before: scale.map((s) => s.before), after: scale.map((s) => s.after) },
      },
      scale.map((s) => s.after.rss / 2 ** 20),
      scale.map((s) => s.before.rss / 2 ** 20),
      judge,
    ),
    row(
      {
        id: 'scale-fds',
        name: `${n} idle PTYs on one controller: open fds`,
        unit: 'fds',
        baseline: 'same process before',
        target: { kind: 'none' },
        targetText: 'report',
        notes: ['Entries of /proc/self/fd.'],
      },
      scale.map((s) => s.after.fds),
      scale.map((s) => s.before.fds),
      judge,
    ),
    row(
      {
        id: 'scale-lag',
        name: `${n} idle PTYs on one controller: event-loop lag p99`,
        unit: 'ms',
        baseline: 'same process before',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [`\`monitorEventLoopDelay\` (1 ms resolution) over ${2 * settleMs} ms idle; max before → after: ${scale.map((s) => `${s.before.lagMaxMs.toFixed(1)} → ${s.after.lagMaxMs.toFixed(1)} ms`).join(', ')}.`],
      },
      scale.map((s) => s.after.lagP99Ms),
      scale.map((s) => s.before.lagP99Ms),
      judge,
    ),
    row(
      {
        id: 'scale-list',
        name: `${n} idle PTYs: listProcesses()`,
        unit: 'ms',
        baseline: NO_RAW,
        target: { kind: 'none' },
        targetText: 'report',
        notes: [`Entries listed: ${scale.map((s) => s.listed).join(', ')}.`],
      },
      scale.map((s) => s.listMs),
      zeros,
      judge,
    ),
    row(
      {
        id: 'scale-stop-all',
        name: `${n} idle PTYs: stopAndWait of all`,
        unit: 'ms',
        baseline: NO_RAW,
        target: { kind: 'none' },
        targetText: 'report',
        notes: [`${n} concurrent \`stopAndWait(id)\` with the default deadline, until all resolved; answered true: ${scale.map((s) => s.stoppedTrue).join(', ')}.`],
        details: { stoppedTrue: scale.map((s) => s.stoppedTrue) },
      },
      scale.map((s) => s.stopAllMs),
      zeros,
      judge,
    ),
    row(
      {
        id: 'scale-left',
        name: `${n} idle PTYs: processes left after stopAndWait`,
        unit: 'processes',
        baseline: NO_RAW,
        target: { kind: 'value-exactly', value: 0 },
        targetText: '0',
        notes: ['Processes of the run alive in /proc once every `stopAndWait` resolved.'],
      },
      scale.map((s) => s.left),
      zeros,
      judge,
    ),
  ]
}
