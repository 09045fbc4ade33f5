/**
 * What one page fault costs this machine after a fork, the unit every spawn row pays in (issue
 * 18): a `Buffer` of PAGES pages is written once per page without a fork, then after node-pty
 * forked a child that is still alive (`sleep`), then after one that has exited (`true`), each time
 * with the faults counted. A fork write-protects every page of the parent; the first write to
 * each page afterwards faults, whether or not the child still shares it. Not a test and not part
 * of `npm run bench`:
 *
 * ```sh
 * npx tsx bench/fault-cost.ts [PAGES=5000]
 * ```
 */
import { pty } from './raw-pty.js'

const PAGES = Number(process.argv[2] ?? 5000)
const PAGE_BYTES = 4096
const buffer = Buffer.alloc(PAGES * PAGE_BYTES, 1)

/** Write one byte in every page: the time per page, the faults taken. */
function writeEveryPage(): { perPageUs: number; faults: number } {
  const faultsBefore = process.resourceUsage().minorPageFault
  const start = process.hrtime.bigint()
  for (let page = 0; page < PAGES; page++) buffer[page * PAGE_BYTES] = ((buffer[page * PAGE_BYTES] as number) + 1) & 255
  const elapsedNs = Number(process.hrtime.bigint() - start)
  return { perPageUs: elapsedNs / PAGES / 1000, faults: process.resourceUsage().minorPageFault - faultsBefore }
}

function report(label: string, { perPageUs, faults }: { perPageUs: number; faults: number }): void {
  // Per fault only where the faults are the time: every page faulted.
  const perFault = faults >= PAGES ? `, ${((perPageUs * PAGES) / faults).toFixed(2)} µs per fault` : ''
  process.stdout.write(`${label.padEnd(34)} ${perPageUs.toFixed(3)} µs per page, ${faults} faults${perFault}\n`)
}

report('no fork', writeEveryPage())
const alive = pty.spawn('sleep', ['5'], {})
report('after a fork, the child alive', writeEveryPage())
report('  the same pages again', writeEveryPage())
alive.kill()
const done = pty.spawn('true', [], {})
await new Promise<void>((resolve) => done.onExit(() => resolve()))
report('after a fork, the child exited', writeEveryPage())
report('  the same pages again', writeEveryPage())
