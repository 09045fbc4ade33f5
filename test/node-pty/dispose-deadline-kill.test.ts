/**
 * A node-pty provider used directly (no pty host) whose `dispose()` deadline passes while a PTY
 * runs a program that ignores the hang-up and SIGTERM — a program whose only end is a SIGKILL.
 *
 * Found: the stop sends its SIGKILL from its own loop, after an asynchronous look at the process
 * table, and a deadline that passed first (`shutdownDeadlineMs: 0` here, a loaded machine in
 * practice) resolved `dispose()` before it went out. An app that then ends — as the node-pty guide
 * tells one with `killOnProcessExit: false` (a worker thread's) to: dispose, then exit — never sent
 * it: the program and its children ran on, nobody's. (The pty host's close had the same hole, and
 * killed what was left itself; its provider then read that death as another's kill,
 * `diedBeforeStopRequest`, which the host stripped again.) Now `dispose()` SIGKILLs, synchronously
 * and as its own stop, what its stops left at the deadline: nothing is left when it resolves, and
 * the exit says the provider's stop (`stopRequestedBeforeDeath`), not another's kill — and it is
 * heard before `dispose()` resolves (bounded, `NODE_PTY_DISPOSE_KILL_REAP_MS`): node-pty has reaped
 * the leader by then, as an app that ends its worker thread at once needs.
 * (Linux: the checks read `/proc`.)
 */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { PtyExitEvent } from '../../src/contracts/index.js'
import { createNodePtyProvider, type NodePtyProvider } from '../../src/node-pty/index.js'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { isDead, killSessionMembers, sessionMembers, waitFor } from './pty-test-support.js'

const APP = resolve(import.meta.dirname, 'fixtures', 'app-disposes-then-exits.ts')

/** A program that ignores the hang-up and SIGTERM, its loop's `sleep` beside it. */
const STUBBORN = ['-c', "trap '' HUP TERM; echo READY; while :; do sleep 1; done"]


const leaders: number[] = []
const providers: NodePtyProvider[] = []
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.dispose()
  for (const sid of leaders.splice(0)) {
    killSessionMembers(sid)
  }
})

describe('node-pty dispose() whose deadline passes with a program that ignores the hang-up and SIGTERM', () => {
  it('has SIGKILLed it by the time it resolves, as its own stop: the exit is the stop’s, and nothing of the session is left', async () => {
    const provider = createNodePtyProvider({ shutdownDeadlineMs: 0 })
    providers.push(provider)
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    let output = ''
    provider.onData(({ data }) => (output += data))
    const { id, pid } = await provider.spawn({ file: '/bin/sh', args: STUBBORN })
    leaders.push(pid!)
    await waitFor(() => (output.includes('READY') && sessionMembers(pid!).length >= 2 ? true : undefined), 'the loop to run its sleep')
    await provider.dispose()
    // Read in the very turn dispose() resolved in: its SIGKILL went out, and its exit was heard —
    // node-pty reaped the leader (an app may end at once: a worker thread torn down while one of its
    // PTYs dies aborts the process). Before, the stop's own SIGKILL had not been sent yet.
    expect(isDead(pid!)).toBe(true)
    expect(exits).toHaveLength(1)
    const exit = exits[0]
    expect(exit).toMatchObject({ id, cause: { kind: 'signaled', signal: 9 }, stopRequestedBeforeDeath: true })
    expect(exit).not.toHaveProperty('diedBeforeStopRequest')
    await waitFor(() => (sessionMembers(pid!).length === 0 ? true : undefined), 'the session to be gone', 5_000)
  })

  it('leaves nothing running when the app exits as soon as dispose() resolved (killOnProcessExit: false)', async () => {
    const child = spawn(process.execPath, [...nodeArgsFor(APP), '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let printed = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
    try {
      const line = await waitFor(() => /^\{"pid".*\}$/m.exec(printed)?.[0], 'the app to print its PTY’s leader', 30_000)
      const { pid } = JSON.parse(line) as { pid: number }
      leaders.push(pid)
      await waitFor(() => (sessionMembers(pid).length >= 2 ? true : undefined), 'the loop to run its sleep')
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(printed).toContain('disposed')
      // The SIGKILL went out before the app exited: nothing of the session is left (its processes
      // die as the kernel delivers it — a few ms; before, they ran on for good).
      await waitFor(() => (sessionMembers(pid).length === 0 && isDead(pid) ? true : undefined), 'the session to be gone', 5_000)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }, 30_000)
})
