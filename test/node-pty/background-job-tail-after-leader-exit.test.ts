/**
 * A background job that outlives the PTY's leader and keeps the terminal (it ignores the hang-up)
 * writes the PTY's last output. Its output written before node-pty's 200 ms timer is documented as
 * delivered before the exit (docs/node-pty-provider.md, "The drain guarantee"): the job's own end
 * hangs the master up, and libuv 1.46's early end of file (POLLHUP plus a short read) must not
 * drop its tail there either — a raw `pty.fork()` reader gets every byte.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { PtyBytesEvent, PtyExitEvent } from 'ptykit/contracts'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind } from './pty-test-support.js'

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
const SCRIPT = `trap '' HUP; (cat '${payload}'; printf END) & exit 0`
const RUNS = 12

/** One spawn: how many bytes (chars, in string output) arrived before its exit, and whether the last were `END`. */
async function runOnce(provider: NodePtyProvider): Promise<string> {
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
    await provider.spawn({ file: '/bin/sh', args: ['-c', SCRIPT] })
    await exited
  } finally {
    offData()
    offBytes?.()
    offExit()
  }
  return `${received} ${tail}`
}

describe('a background job that writes after its leader exited', () => {
  for (const output of ['string', 'bytes'] as const) {
    it(`delivers every byte of its output before the exit (${output} output)`, async () => {
      const provider = createNodePtyProvider({ output })
      providers.push(provider)
      const sizes: string[] = []
      for (let run = 0; run < RUNS; run += 1) sizes.push(await runOnce(provider))
      expect(sizes).toEqual(Array.from({ length: RUNS }, () => `${SIZE + 3} END`))
    })
  }
})
