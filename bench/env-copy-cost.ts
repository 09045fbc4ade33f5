/**
 * What a copy of `process.env` costs, the copy node-pty makes before every fork
 * (`utils.assign({}, process.env)`: `Object.keys`, then one read per variable, each through Node's
 * environment interceptor), against the same copy of a plain object — warm (back to back) and cold
 * (after an idle wait, as a sequential spawn meets it). Not a test and not part of `npm run bench`:
 *
 * ```sh
 * npx tsx bench/env-copy-cost.ts [ROUNDS=300] [IDLE_MS=8]
 * ```
 */
import { median } from './stats.js'

const ROUNDS = Number(process.argv[2] ?? 300)
const IDLE_MS = Number(process.argv[3] ?? 8)

/** node-pty's copy (lib/utils.js `assign`). */
function assign(target: Record<string, string | undefined>, source: Record<string, string | undefined>): Record<string, string | undefined> {
  for (const key of Object.keys(source)) target[key] = source[key]
  return target
}

/** Microseconds one call of `work` takes. */
function timeUs(work: () => void): number {
  const start = process.hrtime.bigint()
  work()
  return Number(process.hrtime.bigint() - start) / 1000
}

const snapshot = { ...process.env }
const cold = { processEnv: [] as number[], plainObject: [] as number[] }
for (let round = 0; round < ROUNDS; round++) {
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  cold.processEnv.push(timeUs(() => assign({}, process.env)))
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  cold.plainObject.push(timeUs(() => assign({}, snapshot)))
}
const warm = {
  processEnv: median(Array.from({ length: ROUNDS }, () => timeUs(() => assign({}, process.env)))),
  plainObject: median(Array.from({ length: ROUNDS }, () => timeUs(() => assign({}, snapshot)))),
}
process.stdout.write(`${Object.keys(process.env).length} variables; medians of ${ROUNDS} copies\n`)
process.stdout.write(`cold (after ${IDLE_MS} ms idle): process.env ${median(cold.processEnv).toFixed(1)} µs, a plain object ${median(cold.plainObject).toFixed(1)} µs\n`)
process.stdout.write(`warm: process.env ${warm.processEnv.toFixed(1)} µs, a plain object ${warm.plainObject.toFixed(1)} µs\n`)
