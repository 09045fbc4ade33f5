/**
 * The pty host at scale, ending by ending: 140 PTYs that end in 14 different ways at once (their
 * own codes and signals, operator stops and kills, an outside SIGKILL, one across a stop) get the
 * verdicts node-pty gives the same programs (test/cross-provider-verdicts.test.ts is the one-PTY
 * version), and leave nothing behind in the host; and 150 PTYs that end while their app is away,
 * or while the next app re-attaches, are each reported exactly once — by `listExits()` or by an
 * exit event — with their true cause, their output complete and in order.
 */
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyProvider } from 'ptykit/contracts'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, hostPid, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A controller over `provider` that records each PTY's output, the output at its exit, and its exits. */
function recorded(provider: PtyProvider): {
  controller: PtyController
  output: Map<string, string>
  outputAtExit: Map<string, string>
  exits: Map<string, PtyControllerExitEvent[]>
} {
  const controller = createPtyController({ provider })
  const output = new Map<string, string>()
  const outputAtExit = new Map<string, string>()
  const exits = new Map<string, PtyControllerExitEvent[]>()
  controller.on('data', ({ ptyId, data }) => {
    output.set(ptyId, (output.get(ptyId) ?? '') + data)
    controller.acknowledgeData(ptyId, data.length)
  })
  controller.on('exit', (event) => {
    outputAtExit.set(event.ptyId, output.get(event.ptyId) ?? '')
    exits.set(event.ptyId, [...(exits.get(event.ptyId) ?? []), event])
  })
  return { controller, output, outputAtExit, exits }
}

/** The host's open file descriptors. */
const fdsOf = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length

/** How a PTY ends, after it printed READY: on its own (`act` absent), or by what the test does. */
type Ending = { name: string; script: string; act?: 'stop' | 'kill' | 'outside' | 'outside-during-stop'; tail?: string }

const ENDINGS: Ending[] = [
  { name: 'exit 0', script: 'echo READY; printf T-zero; exit 0', tail: 'T-zero' },
  { name: 'exit 3', script: 'echo READY; exit 3' },
  { name: 'exit 130', script: 'echo READY; exit 130' },
  { name: 'kill -INT $$', script: 'echo READY; kill -INT $$' },
  { name: 'kill -TERM $$', script: 'echo READY; kill -TERM $$' },
  { name: 'kill -SEGV $$', script: 'ulimit -c 0; echo READY; kill -SEGV $$' },
  { name: '20 kB then kill -KILL $$', script: "echo READY; head -c 20000 /dev/zero | tr '\\0' x; printf T-kill; kill -KILL $$", tail: 'T-kill' },
  { name: 'exec false', script: 'echo READY; exec false' },
  { name: 'exec into exit 7', script: "echo READY; exec /bin/sh -c 'echo B; exit 7'", tail: 'B\r\n' },
  { name: 'stopAndWait, HUP- and TERM-proof', script: "trap '' HUP TERM; echo READY; while :; do sleep 0.2; done", act: 'stop' },
  { name: 'stopAndWait', script: 'echo READY; exec sleep 60', act: 'stop' },
  { name: 'controller.kill', script: 'echo READY; exec sleep 60', act: 'kill' },
  { name: 'outside SIGKILL', script: 'echo READY; exec sleep 60', act: 'outside' },
  { name: 'outside SIGKILL across a stop', script: "trap 'echo GOT-HUP' HUP; trap '' TERM; echo READY; while :; do sleep 0.2; done", act: 'outside-during-stop' },
]

const EACH = 10

/**
 * Spawns EACH PTYs of every ending at once through `bench`, ends them all at once, and answers the
 * verdicts by ending name (every distinct exit list seen), after checking what must hold for any provider.
 */
async function endAll(bench: ReturnType<typeof recorded>): Promise<Record<string, string[]>> {
  const { controller, output, outputAtExit, exits } = bench
  const ptys = await Promise.all(
    Array.from({ length: ENDINGS.length * EACH }, async (_, index) => {
      const ending = ENDINGS[index % ENDINGS.length]!
      const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', ending.script], cols: 80, rows: 24 })
      return { ending, id: reply.id, pid: reply.pid! }
    }),
  )
  expect(new Set(ptys.map((pty) => pty.id)).size).toBe(ptys.length)
  const printed = (id: string, text: string) => ((output.get(id) ?? '').includes(text) ? true : undefined)
  await waitFor(() => (ptys.every((pty) => printed(pty.id, 'READY')) ? true : undefined), 'every READY', 30_000)
  const stops = await Promise.all(
    ptys.map(async (pty) => {
      if (pty.ending.act === 'stop') return controller.stopAndWait(pty.id, { timeoutMs: 30_000 })
      if (pty.ending.act === 'kill') controller.kill(pty.id)
      if (pty.ending.act === 'outside') process.kill(pty.pid, 'SIGKILL')
      if (pty.ending.act === 'outside-during-stop') {
        const stopped = controller.stopAndWait(pty.id, { timeoutMs: 30_000 })
        await waitFor(() => printed(pty.id, 'GOT-HUP'), `GOT-HUP of ${pty.id}`, 30_000)
        process.kill(pty.pid, 'SIGKILL')
        return stopped
      }
      return true
    }),
  )
  expect(stops.every((verified) => verified)).toBe(true)
  await waitFor(() => (ptys.every((pty) => exits.has(pty.id)) ? true : undefined), 'every exit', 30_000)
  await waitFor(() => (ptys.every((pty) => isDead(pty.pid)) ? true : undefined), 'every PTY process gone', 10_000)
  const verdicts: Record<string, Set<string>> = {}
  const tails: string[] = []
  for (const pty of ptys) {
    const events = exits.get(pty.id)!
    ;(verdicts[pty.ending.name] ??= new Set()).add(JSON.stringify(events.map((event) => event.cause)))
    if (pty.ending.tail !== undefined && !outputAtExit.get(pty.id)!.endsWith(pty.ending.tail)) tails.push(`${pty.ending.name}: ${JSON.stringify(outputAtExit.get(pty.id)!.slice(-20))}`)
  }
  expect(tails).toEqual([])
  return Object.fromEntries(Object.entries(verdicts).map(([name, seen]) => [name, [...seen].sort()]))
}

describe('pty host at scale: endings', () => {
  it(`${ENDINGS.length * EACH} PTYs ending ${ENDINGS.length} ways at once: node-pty's verdicts, once each, then no session, process or fd left in the host`, async () => {
    const { socketPath } = hostFixture(cleanups)
    const provider = providerOn(socketPath)
    cleanups.push(() => provider.dispose())
    const bench = recorded(provider)
    cleanups.push(() => bench.controller.dispose())
    // One PTY starts the host; the host's fds once it ended are the baseline.
    const starter = await bench.controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    await waitFor(() => bench.exits.get(starter.id), 'the first PTY to end', 10_000)
    expect(await provider.listProcesses()).toEqual([])
    const host = hostPid(socketPath)!
    const fdsBefore = fdsOf(host)

    const local = createNodePtyProvider()
    cleanups.push(async () => local.dispose?.())
    const localBench = recorded(local)
    cleanups.push(() => localBench.controller.dispose())

    const [viaHost, viaNodePty] = [await endAll(bench), await endAll(localBench)]
    expect(viaHost).toEqual(viaNodePty)
    // Each ending one verdict, once each PTY: no ending mixes two causes under load.
    expect(Object.values(viaHost).every((seen) => seen.length === 1 && JSON.parse(seen[0]!).length === 1)).toBe(true)
    expect(viaHost['outside SIGKILL']).toEqual([JSON.stringify([{ kind: 'signaled', signal: 9 }])])
    expect(viaHost['stopAndWait']).toEqual([JSON.stringify([{ kind: 'operator_close' }])])

    expect(await provider.listProcesses()).toEqual([])
    await waitFor(() => (fdsOf(host) <= fdsBefore ? true : undefined), `the host's fds back to ${fdsBefore} (now ${fdsOf(host)})`, 10_000)
  }, 120_000)

  it('150 PTYs ending while the app is away, while the next attaches and after: each end reported once (listExits or an exit event), true, output whole and in order', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const first = providerOn(socketPath)
    const firstBench = recorded(first)
    const LINES = 15
    // Each prints READY, waits for its group's mark (a file), prints LINES numbered lines, then ends
    // its way: group `away` ends while no app is attached, `racing` while the next app attaches,
    // `after` once it has attached. `runs` does not end.
    const marks = { away: join(dir, 'away'), racing: join(dir, 'racing'), after: join(dir, 'after') }
    const groups = ['away', 'racing', 'after'] as const
    const groupOf = (index: number) => groups[Math.floor(index / fates.length) % groups.length]!
    const lines = (index: number) =>
      `while [ ! -e ${marks[groupOf(index)]} ]; do sleep 0.05; done; i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo "p${index}-n$i"; sleep 0.02; done`
    const fates = [
      { name: 'runs', script: () => 'echo READY; exec sleep 60', cause: null },
      { name: 'exit code', script: (i: number) => `echo READY; ${lines(i)}; exit ${1 + (i % 100)}`, cause: (i: number) => ({ kind: 'exited', exitCode: 1 + (i % 100) }) },
      { name: 'exit 0', script: (i: number) => `echo READY; ${lines(i)}; exit 0`, cause: () => ({ kind: 'exited', exitCode: 0 }) },
      { name: 'kill -TERM $$', script: (i: number) => `echo READY; ${lines(i)}; kill -TERM $$`, cause: () => ({ kind: 'signaled', signal: 15 }) },
      { name: 'outside SIGKILL while away', script: () => 'echo READY; exec sleep 60', cause: () => ({ kind: 'signaled', signal: 9 }) },
    ] as const
    const ptys = await Promise.all(
      Array.from({ length: 150 }, async (_, index) => {
        const fate = fates[index % fates.length]!
        const reply = await firstBench.controller.spawn({ file: '/bin/sh', args: ['-c', fate.script(index)], cols: 80, rows: 24 })
        return { index, fate, group: fate.name === 'outside SIGKILL while away' ? 'away' : groupOf(index), id: reply.id, pid: reply.pid!, incarnationId: reply.incarnationId }
      }),
    )
    await waitFor(() => (ptys.every((pty) => (firstBench.output.get(pty.id) ?? '').includes('READY')) ? true : undefined), 'every READY', 30_000)
    await first.detach()
    await firstBench.controller.dispose({ stopPtys: false })
    expect(firstBench.exits.size).toBe(0)
    for (const pty of ptys) if (pty.fate.name === 'outside SIGKILL while away') process.kill(pty.pid, 'SIGKILL')
    writeFileSync(marks.away, '')
    const endsAway = ptys.filter((pty) => pty.fate.cause !== null && pty.group === 'away')
    await waitFor(() => (endsAway.every((pty) => isDead(pty.pid)) ? true : undefined), 'the PTYs that end while away', 30_000)

    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    // What ended while away left its last screen (60 small screens: within the exited-history
    // budget; later ends release the oldest, so this is asked before any other PTY ends).
    expect((await next.listExits()).length).toBe(endsAway.length)
    const screens = await Promise.all(endsAway.map(async (pty) => ({ pty, screen: (await next.getBufferSnapshot(pty.id))!.data })))
    expect(screens.filter(({ pty, screen }) => !screen.includes(pty.fate.name === 'outside SIGKILL while away' ? 'READY' : `p${pty.index}-n${LINES}`)).map(({ pty }) => pty.index)).toEqual([])
    writeFileSync(marks.racing, '')
    const bench = recorded(next)
    cleanups.push(() => bench.controller.dispose())
    const attached = await Promise.all(ptys.map((pty) => bench.controller.attach(pty.id)))
    // Attached: those still running; not: those that ended while away (the racing ones either way).
    for (const [k, pty] of ptys.entries()) {
      if (pty.fate.cause === null || pty.group === 'after') expect({ pty: pty.index, attached: attached[k] }).toEqual({ pty: pty.index, attached: true })
      if (pty.fate.cause !== null && pty.group === 'away') expect({ pty: pty.index, attached: attached[k] }).toEqual({ pty: pty.index, attached: false })
    }
    writeFileSync(marks.after, '')
    await waitFor(
      () => (ptys.every((pty, k) => pty.fate.cause === null || !attached[k] || bench.exits.has(pty.id)) ? true : undefined),
      'the exit of every attached PTY that ends',
      30_000,
    )
    const exitsListed = new Map((await next.listExits()).map((exit) => [exit.id, exit]))
    const wrong: string[] = []
    for (const [k, pty] of ptys.entries()) {
      const events = bench.exits.get(pty.id) ?? []
      if (pty.fate.cause === null) {
        if (attached[k] !== true || events.length !== 0) wrong.push(`${pty.index} runs: attached ${attached[k]}, exits ${JSON.stringify(events)}`)
        continue
      }
      const want = JSON.stringify(pty.fate.cause(pty.index))
      const listed = exitsListed.get(pty.id)
      if (listed === undefined || JSON.stringify(listed.cause) !== want || listed.incarnationId !== pty.incarnationId) wrong.push(`${pty.index} ${pty.fate.name}: listExits ${JSON.stringify(listed)}`)
      if (attached[k]) {
        // Attached while it ran: one exit event, its true cause, after all its lines in order.
        if (events.length !== 1 || JSON.stringify(events[0]!.cause) !== want) wrong.push(`${pty.index} ${pty.fate.name}: exit events ${JSON.stringify(events)}`)
        const numbers = [...(bench.outputAtExit.get(pty.id) ?? '').matchAll(new RegExp(`p${pty.index}-n(\\d+)`, 'g'))].map((m) => Number(m[1]))
        if (pty.fate.name !== 'outside SIGKILL while away' && numbers.join() !== Array.from({ length: LINES }, (_, n) => n + 1).join()) {
          wrong.push(`${pty.index} ${pty.fate.name}: lines ${numbers.join()}`)
        }
      } else {
        if (events.length !== 0) wrong.push(`${pty.index} ${pty.fate.name}: not attached, yet exit events ${JSON.stringify(events)}`)
      }
    }
    expect(wrong).toEqual([])
    // The exits that happened while away are not events of the next app; each PTY is in exactly one list.
    const running = await next.listProcesses()
    const runningIds = running.map((row) => row.id).sort()
    expect(runningIds).toEqual(ptys.filter((pty) => pty.fate.cause === null).map((pty) => pty.id).sort())

    const stops = await Promise.all(running.map((row) => bench.controller.stopAndWait(row.id, { timeoutMs: 30_000 })))
    expect(stops.every((verified) => verified)).toBe(true)
    expect(await next.listProcesses()).toEqual([])
    await waitFor(() => (ptys.every((pty) => isDead(pty.pid)) ? true : undefined), 'every PTY process gone', 10_000)
  }, 120_000)
})
