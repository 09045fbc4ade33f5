// 240 real terminals driven as an IDE extension's async callbacks drive their handles: calls made
// from inside the terminal's own `data` and `exit` listeners, twice, from a timer after the end, a
// respawn under the same session from inside the exit listener, and calls during and after the
// controller's dispose. Every answer is true (no `true` for a stop that did not happen, every exit
// cause the one the evidence supports), nothing throws or rejects unhandled, no error is reported,
// and no process is left. (`terminals-at-scale.test.ts` streams and stops; this one is about the
// calls that arrive from inside a terminal's own listeners, which no other test makes on real PTYs.)
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyTerminal } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, liveChildrenOf, waitFor } from './pty-test-support.js'

/** Terminals at once: the scale users run (200–300 PTYs on one controller). */
const TERMINALS = 240

/** The six ways the terminals are driven (index modulo this). */
const GROUPS = 6

/** A scale test's own time limit: 240 forks on a loaded 2-core machine take tens of seconds. */
const SCALE_TEST_TIMEOUT_MS = 180_000

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined

expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
})

/**
 * Each program waits for a line (so nothing ends before its listeners are on), echoes it, then ends
 * on its own (`exit N`) or idles far past the test (`exec sleep`: only a stop ends it).
 */
function program(group: number): string {
  const tail = group === 1 ? 'exit 6' : group === 2 ? 'exit 7' : 'exec sleep 600'
  return `read line; printf 'got:%s' "$line"; ${tail}`
}

describe('terminal handles called from their own listeners, at scale (node-pty)', () => {
  it(`${TERMINALS} terminals: kills, stops, writes and respawns from inside their listeners and after, each answered truly`, async () => {
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const live = controller
    const errors: string[] = []
    live.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    const answers = new Map<string, unknown[]>()
    const answer = (what: string, value: unknown): void => {
      answers.set(what, [...(answers.get(what) ?? []), value])
    }
    const pending: PromiseLike<unknown>[] = []
    const respawned: Promise<PtyTerminal>[] = []
    const terminals: PtyTerminal[] = []

    const drive = (terminal: PtyTerminal, group: number): void => {
      switch (group) {
        case 0: { // kill twice from inside the first data listener: one stop, committed
          let first = true
          terminal.onData(() => {
            if (!first) return
            first = false
            answer('kills inside data', [terminal.kill(), terminal.kill()])
          })
          break
        }
        case 1: // ended on its own: every call from inside its exit listener
          terminal.onExit(({ cause }) => {
            answer('inside own exit', { cause, kill: terminal.kill(), write: terminal.write('x'), resize: terminal.resize(50, 10) })
            pending.push(terminal.stop().then((verified) => answer('stop inside own exit', verified)))
            pending.push(Promise.resolve(terminal.writeWithSettlement('x')).then((settlement) => answer('settled inside own exit', settlement)))
            pending.push(terminal[Symbol.asyncDispose]().then(() => answer('asyncDispose inside own exit', 'done')))
            pending.push(terminal.output().next().then((result) => answer('output() inside own exit', result)))
          })
          break
        case 2: // ended on its own: respawned under its session id from inside its exit listener
          terminal.onExit(() => {
            respawned.push(live.spawnTerminal({ file: '/bin/sh', args: ['-c', 'exec sleep 600'], sessionId: terminal.id }))
          })
          break
        case 3: { // two stops and the scope's dispose at once, from inside the first data listener
          let first = true
          terminal.onData(() => {
            if (!first) return
            first = false
            pending.push(Promise.all([terminal.stop(), terminal.stop(), terminal[Symbol.asyncDispose]()]).then((verdicts) => answer('stops inside data', verdicts)))
          })
          break
        }
        case 4: // a kill from a timer; calls from a later timer, once it ended
          setTimeout(() => {
            answer('kill from a timer', terminal.kill())
            pending.push(
              terminal.exited.then(async () => {
                await sleep(10)
                answer('after its end', { write: terminal.write('x'), kill: terminal.kill(), resize: terminal.resize(50, 10) })
                answer('stop after its end', await terminal.stop())
              }),
            )
          }, 20)
          break
        default: // left running for the controller's dispose
      }
    }

    for (let start = 0; start < TERMINALS; start += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, offset) => {
          const group = (start + offset) % GROUPS
          // Driven in the turn the handle is handed over, before any output can come.
          return live.spawnTerminal({ file: '/bin/sh', args: ['-c', program(group)], sessionId: `late-${start + offset}` }).then((terminal) => {
            drive(terminal, group)
            return terminal
          })
        }),
      )
      terminals.push(...batch)
    }
    for (const terminal of terminals) expect(terminal.write('go\r')).toBe(true)

    const ofGroup = (group: number): PtyTerminal[] => terminals.filter((_, index) => index % GROUPS === group)
    for (const group of [0, 1, 2, 3, 4]) await Promise.all(ofGroup(group).map((terminal) => terminal.exited))
    await waitFor(() => (respawned.length === TERMINALS / GROUPS ? true : undefined), 'every respawn asked for', 60_000)
    const replacements = await Promise.all(respawned)
    await Promise.all(pending)
    await waitFor(() => (answers.get('stop after its end')?.length === TERMINALS / GROUPS ? true : undefined), 'the late calls', 60_000)
    await Promise.all(pending)

    const perGroup = TERMINALS / GROUPS
    expect(answers.get('kills inside data')).toEqual(Array(perGroup).fill([true, true]))
    expect(answers.get('inside own exit')).toEqual(Array(perGroup).fill({ cause: { kind: 'exited', exitCode: 6 }, kill: false, write: false, resize: false }))
    expect(answers.get('stop inside own exit')).toEqual(Array(perGroup).fill(true))
    expect(answers.get('settled inside own exit')).toEqual(Array(perGroup).fill({ kind: 'refused', reason: 'pty_exited' }))
    expect(answers.get('asyncDispose inside own exit')).toHaveLength(perGroup)
    expect(answers.get('output() inside own exit')).toEqual(Array(perGroup).fill({ done: true, value: undefined }))
    expect(answers.get('stops inside data')).toEqual(Array(perGroup).fill([true, true, undefined]))
    expect(answers.get('kill from a timer')).toEqual(Array(perGroup).fill(true))
    expect(answers.get('after its end')).toEqual(Array(perGroup).fill({ write: false, kill: false, resize: false }))
    expect(answers.get('stop after its end')).toEqual(Array(perGroup).fill(true))

    // The replaced handles are fenced: nothing they are asked reaches the process behind the id now.
    for (const [index, old] of ofGroup(2).entries()) {
      const replacement = replacements.find((terminal) => terminal.id === old.id)
      expect(replacement).toBeDefined()
      expect(replacement).not.toBe(old)
      expect(replacement?.pid).not.toBe(old.pid)
      expect(live.terminal(old.id)).toBe(replacement)
      expect([old.write('x'), old.kill(), old.resize(50, 10)]).toEqual([false, false, false])
      expect(old.writeWithSettlement('x')).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
      await expect(old.stop()).resolves.toBe(true) // its own process ended: nothing left to stop
      expect(isDead(replacement!.pid!), `replacement ${index} runs`).toBe(false)
    }

    // The dispose stops what runs; a stop asked meanwhile answers its verdict.
    const disposing = live.dispose()
    const stoppedByDispose = await Promise.all([...ofGroup(5), ...replacements].map((terminal) => terminal.stop()))
    await disposing
    expect(stoppedByDispose.filter((verified) => !verified)).toEqual([])

    const causes = async (list: PtyTerminal[]): Promise<string[]> => [...new Set(await Promise.all(list.map(async (terminal) => JSON.stringify((await terminal.exited).cause))))]
    expect(await causes(ofGroup(0))).toEqual(['{"kind":"operator_close"}'])
    expect(await causes(ofGroup(1))).toEqual(['{"kind":"exited","exitCode":6}'])
    expect(await causes(ofGroup(2))).toEqual(['{"kind":"exited","exitCode":7}'])
    expect(await causes([...ofGroup(3), ...ofGroup(4), ...ofGroup(5), ...replacements])).toEqual(['{"kind":"operator_close"}'])

    // After the dispose: every call answers without a throw, and no stop is claimed that did not happen.
    for (const terminal of [...terminals, ...replacements]) {
      expect([terminal.write('x'), terminal.kill(), terminal.resize(50, 10)]).toEqual([false, false, false])
      terminal.acknowledgeData(10)
      terminal.onData(() => undefined)()
      terminal.onExit(() => undefined)()
      await expect(terminal.output().next()).resolves.toEqual({ done: true, value: undefined })
      await expect(terminal.stop()).resolves.toBe(true)
      await terminal[Symbol.asyncDispose]()
    }
    await provider.dispose()
    await sleep(20) // an unhandled rejection is announced after the turn it happened in
    process.off('unhandledRejection', onUnhandled)
    expect(unhandled).toEqual([])
    expect(errors).toEqual([])
    expect([...terminals, ...replacements].filter((terminal) => !isDead(terminal.pid!))).toEqual([])
    expect([...terminals, ...replacements].flatMap((terminal) => liveChildrenOf(terminal.pid!))).toEqual([])
  }, SCALE_TEST_TIMEOUT_MS)
})
