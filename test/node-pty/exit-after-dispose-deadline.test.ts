/**
 * An exit the disposal caused that comes after `dispose()`'s deadline. Found at scale (one
 * controller over three hosts, 100 local PTYs, load average ~15 on 2 cores): the disposal's stops
 * reached their deadline before ~100 killed PTYs' exits were delivered, `dispose()` then cleared
 * its exit listeners, and the exits were dropped — the controller published each PTY
 * `unknown/stop_unverified`, and a `stopAndWait` refused `provider_disposed` waited its whole
 * budget for the disposal's exit and answered `false` (126 such in one run), although the
 * disposal had killed every process.
 *
 * Simulated without load: `shutdownDeadlineMs: 0` gives the disposal's stops a deadline already
 * past ("signal and check once"), so each gives up before its SIGKILL has even gone out, and the
 * exit always comes after `dispose()` gave up on it. The program ignores HUP and TERM, as the
 * scale test's slowest PTYs did. Since the thirty-first session the disposal SIGKILLs such a
 * program itself at its deadline and waits (up to `NODE_PTY_DISPOSE_KILL_REAP_MS`) for its exit, so
 * a real process's exit comes before `dispose()` resolves; an exit later still (a process the
 * kernel holds) is played by a stand-in terminal whose exit comes when the test says.
 */
import { spawn as spawnChild, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { createNodePtyProvider, NODE_PTY_DISPOSE_LATE_EXIT_MS, type NodePtyModule, type NodePtyProvider } from '../../src/node-pty/index.js'
import type { PtyExitEvent } from '../../src/contracts/index.js'
import { disposeAdvancingReapWait, expectNoChildLeftBehind, isDead, standInTerminal, waitFor } from './pty-test-support.js'

const providers: NodePtyProvider[] = []
let idle: ChildProcess | undefined
afterEach(async () => {
  vi.useRealTimers()
  // Waited for: a SIGKILLed process is not dead at once on a loaded machine, and the file's
  // no-child-left check runs right after this.
  if (idle !== undefined && idle.exitCode === null && idle.signalCode === null) {
    const exited = once(idle, 'exit')
    idle.kill('SIGKILL')
    await exited
  }
  idle = undefined
})
expectNoChildLeftBehind(async () => {
  for (const provider of providers.splice(0)) await provider.dispose()
})

/** How many providers the process-wide exit guard holds now (as idle-provider-not-retained.test.ts reads it). */
function guarded(): number {
  const registry = (globalThis as Record<symbol, { killers: Set<unknown> } | undefined>)[Symbol.for('ptykit.processExitGuard.v1')]
  return registry?.killers.size ?? 0
}

/** A PTY that ignores the hang-up and SIGTERM, and says when it does. */
const STUBBORN = ['-c', "trap '' HUP TERM; echo READY; exec sleep 600"]

function providerGivingUpAtOnce(): NodePtyProvider {
  const provider = createNodePtyProvider({ shutdownDeadlineMs: 0 })
  providers.push(provider)
  return provider
}

describe('node-pty dispose(): an exit that comes after its deadline', () => {
  it('is waited for NODE_PTY_DISPOSE_LATE_EXIT_MS, which ptykit/node-pty exports as the docs name it (30 s)', () => {
    expect(NODE_PTY_DISPOSE_LATE_EXIT_MS).toBe(30_000)
  })

  it('is still reported, as the stop it was (stopRequestedBeforeDeath), and the provider lets go once it came', async () => {
    const before = guarded()
    const provider = providerGivingUpAtOnce()
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    let output = ''
    provider.onData(({ data }) => (output += data))
    const { id, pid } = await provider.spawn({ file: '/bin/sh', args: STUBBORN })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    await provider.dispose()
    // The disposal's stop gave up before its kill had gone out; its own SIGKILL at the deadline
    // (since the thirty-first session) was reaped before it resolved — the exit is here already.
    const exit = exits[0]
    expect(exit).toMatchObject({ id, cause: { kind: 'signaled', signal: 9 }, stopRequestedBeforeDeath: true })
    expect(isDead(pid!)).toBe(true)
    // Once its last owed exit came, the provider lets go (no exit guard registration keeps it alive).
    expect(guarded()).toBe(before)
  })

  it('reaches the controller: a stopAndWait refused provider_disposed answers true, the exit an operator close', async () => {
    const provider = providerGivingUpAtOnce()
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    let output = ''
    controller.on('data', ({ data }) => (output += data))
    const { id, pid } = await controller.spawn({ file: '/bin/sh', args: STUBBORN })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    await provider.dispose()
    await expect(controller.stopAndWait(id, { timeoutMs: 5_000 })).resolves.toBe(true)
    expect(exits.map((event) => [event.ptyId, event.cause])).toEqual([[id, { kind: 'operator_close' }]])
    expect(isDead(pid!)).toBe(true)
    await controller.dispose()
  })

  it(`is waited for ${NODE_PTY_DISPOSE_LATE_EXIT_MS} ms at most: an exit that never comes does not keep the provider`, async () => {
    // A stand-in terminal whose exit never comes unless the test says so, naming a real process
    // (in a session of its own, so the disposal's kill reaches it alone).
    idle = spawnChild('/bin/sleep', ['60'], { stdio: 'ignore', detached: true })
    const pid = idle.pid as number
    let exitNow = (): void => {}
    const module: NodePtyModule = {
      spawn(_file, _args, options) {
        const { terminal, exit } = standInTerminal(pid, options)
        exitNow = () => exit({ exitCode: 0, signal: 9 })
        return terminal
      },
    }
    const before = guarded()
    const provider = createNodePtyProvider({ platform: 'linux', drainOutputAtExit: false, sweepSession: false, shutdownDeadlineMs: 0, loadNodePty: () => Promise.resolve(module) })
    providers.push(provider)
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    await provider.spawn({ file: '/bin/sh' })
    expect(guarded()).toBe(before + 1)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    await disposeAdvancingReapWait(provider)
    // Its exit is owed: still listened for, and the process still this provider's (the exit guard).
    expect(guarded()).toBe(before + 1)
    vi.advanceTimersByTime(NODE_PTY_DISPOSE_LATE_EXIT_MS - 1)
    expect(guarded()).toBe(before + 1)
    vi.advanceTimersByTime(1)
    expect(guarded()).toBe(before)
    vi.useRealTimers()
    // Past the bound the provider has let go: an exit now reaches nobody.
    exitNow()
    expect(exits).toEqual([])
  })
})
