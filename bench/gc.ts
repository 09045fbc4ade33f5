/**
 * A forced garbage collection without `--expose-gc` on the command line (`npm run bench` runs
 * plain `tsx`), so each throughput sample starts from a collected heap on both sides.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Collects garbage now (a full, synchronous GC). */
export const collectGarbage: () => void = (() => {
  const existing = (globalThis as { gc?: () => void }).gc
  if (typeof existing === 'function') return existing
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
})()
