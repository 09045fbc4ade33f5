/**
 * A background job that outlives the PTY's leader and keeps the terminal (it ignores the hang-up)
 * writes the PTY's last output. Its output written before node-pty's 200 ms timer is documented as
 * delivered before the exit (docs/node-pty-provider.md, "The drain guarantee"): the job's own end
 * hangs the master up, and libuv 1.46's early end of file (POLLHUP plus a short read) must not
 * drop its tail there either — a raw `pty.fork()` reader gets every byte.
 *
 * Only a job done writing within those 200 ms is covered: a loaded machine that holds the job (or
 * this process) back for longer lets the timer end the PTY first, by design. Each run therefore
 * notes when the leader ended and when the job was done (`/proc/uptime`, read by the shell's own
 * builtins: no fork on the way out), and a run whose job was done more than 200 ms after its
 * leader is not counted, whatever it delivered: another one is run in its place.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { PtyBytesEvent, PtyExitEvent } from 'ptykit/contracts'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, waitFor } from './pty-test-support.js'

const dir = mkdtempSync(join(tmpdir(), 'ptykit-bg-tail-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const providers: NodePtyProvider[] = []
expectNoChildLeftBehind(async () => {
  for (const provider of providers.splice(0)) await provider.dispose()
})

/** 100 KB without `\n` (ONLCR leaves it alone), then `END`, written by a job after its leader exited. */
const SIZE = 100_000
const payload = join(dir, 'payload')
writeFileSync(payload, Buffer.alloc(SIZE, 0x62))
/** The script of run `mark`: the leader notes its end in `<mark>.leader`, the job when it is done in `<mark>.job` (seconds since boot, to 10 ms). */
const script = (mark: string): string =>
  `trap '' HUP; (cat '${payload}'; printf END; read t _ </proc/uptime; echo "$t" >'${mark}.job') & read t _ </proc/uptime; echo "$t" >'${mark}.leader'; exit 0`
const RUNS = 12
/** node-pty's destroy timer after the leader's exit: output written later is not promised before the exit. */
const NODE_PTY_DESTROY_TIMER_MS = 200
/** The step of `/proc/uptime`: a difference of two readings is within this of the real one. */
const UPTIME_STEP_MS = 10
/** How many runs whose job was late may be run again, in all, before the machine is called too slow for the test. */
const LATE_RUNS_ALLOWED = RUNS

/** The seconds since boot the script of run `mark` noted in `<mark>.<who>`, once the whole line is there. */
async function notedAt(mark: string, who: 'leader' | 'job'): Promise<number> {
  const line = await waitFor(() => {
    const path = `${mark}.${who}`
    const text = existsSync(path) ? readFileSync(path, 'utf8') : ''
    return text.endsWith('\n') ? text : undefined
  }, `the ${who} of the run to note its time`)
  return Number(line.trim())
}

/** How long after its leader ended the job of run `mark` was done writing, in ms (`/proc/uptime` counts in 10 ms steps: within 10 ms of the real figure). */
async function jobLateByMs(mark: string): Promise<number> {
  return Math.round(((await notedAt(mark, 'job')) - (await notedAt(mark, 'leader'))) * 1_000)
}

/**
 * One spawn: how many bytes (chars, in string output) arrived before its exit, and whether the last
 * were `END`; and how long after its leader the job was done writing. The run counts only when
 * that was surely within node-pty's timer (`late`: it may not have been).
 */
async function runOnce(provider: NodePtyProvider, mark: string): Promise<{ size: string; lateByMs: number; late: boolean }> {
  let received = 0
  let tail = ''
  const note = (chunk: string | Buffer): void => {
    received += chunk.length
    tail = (tail + chunk.toString('latin1')).slice(-3)
  }
  const offData = provider.onData((event) => note(event.data))
  const offBytes = provider.onBytes?.((event: PtyBytesEvent) => note(Buffer.from(event.bytes)))
  let offExit = (): void => undefined
  try {
    const exited = new Promise<PtyExitEvent>((resolve) => {
      offExit = provider.onExit(resolve)
    })
    await provider.spawn({ file: '/bin/sh', args: ['-c', script(mark)] })
    await exited
  } finally {
    offData()
    offBytes?.()
    offExit()
  }
  // The job may outlive the exit (its output cut short): its note is waited for.
  const lateByMs = await jobLateByMs(mark)
  return { size: `${received} ${tail}`, lateByMs, late: lateByMs + UPTIME_STEP_MS > NODE_PTY_DESTROY_TIMER_MS }
}

describe('a background job that writes after its leader exited', () => {
  for (const output of ['string', 'bytes'] as const) {
    it(`delivers every byte of its output before the exit (${output} output)`, async () => {
      const provider = createNodePtyProvider({ output })
      providers.push(provider)
      const sizes: string[] = []
      const jobsDoneAfterMs: number[] = []
      let late = 0
      for (let run = 0; sizes.length < RUNS; run += 1) {
        const { size, lateByMs, late: wasLate } = await runOnce(provider, join(dir, `${output}-${run}`))
        jobsDoneAfterMs.push(lateByMs)
        if (!wasLate) sizes.push(size)
        else if (++late > LATE_RUNS_ALLOWED) throw new Error(`${late} of ${run + 1} jobs were done writing ${NODE_PTY_DESTROY_TIMER_MS} ms or more after their leader: this machine is too loaded for the test`)
      }
      expect(sizes, `each job done writing this long after its leader (ms): ${jobsDoneAfterMs.join(' ')}`).toEqual(Array.from({ length: RUNS }, () => `${SIZE + 3} END`))
    })
  }
})
