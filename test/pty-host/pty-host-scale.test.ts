/**
 * The pty host at the scale hosts run it: 200 PTYs through one controller, an app that goes away
 * and comes back, and every PTY's end reported with its true cause — nothing left running.
 */
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, isAlive, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const PTYS = 200

/** What each PTY does after printing its ready line, by index. */
type Fate = 'stop' | 'killed' | 'exits'

const fateOf = (index: number): Fate => (['stop', 'killed', 'exits'] as const)[index % 3]!
/** The exit code of an `exits` PTY: varied, so a code attributed to the wrong PTY shows. */
const exitCodeOf = (index: number): number => 1 + (index % 50)

describe('pty host at scale', () => {
  it(`runs ${PTYS} PTYs through a controller, survives the app going away, and reports each end truly`, async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))

    // The first app: spawns every PTY at once, sees each one's ready line, then goes away.
    const first = providerOn(socketPath)
    const firstController = createPtyController({ provider: first })
    const printed = new Map<string, string>()
    firstController.on('data', ({ ptyId, data }) => printed.set(ptyId, (printed.get(ptyId) ?? '') + data))
    // Each PTY prints its index, then waits for a line: `exit` makes an `exits` PTY end with its code.
    const spawned = await Promise.all(
      Array.from({ length: PTYS }, async (_, index) => {
        const reply = await firstController.spawn({
          file: '/bin/sh',
          args: ['-c', `printf 'ready-%d\\n' ${index}; while read line; do [ "$line" = exit ] && exit ${exitCodeOf(index)}; printf 'echo-%d:%s\\n' ${index} "$line"; done`],
          cols: 80,
          rows: 24,
        })
        return { index, id: reply.id, pid: reply.pid! }
      }),
    )
    expect(new Set(spawned.map((s) => s.id)).size).toBe(PTYS)
    for (const s of spawned) {
      await waitFor(() => ((printed.get(s.id) ?? '').includes(`ready-${s.index}\r\n`) ? true : undefined), `PTY ${s.index}'s ready line`, 20_000)
    }
    // The app goes away and keeps its sessions: the provider detaches, the controller lets go without stopping.
    const firstEnds: unknown[] = []
    firstController.on('exit', (event) => firstEnds.push(event))
    firstController.on('error', (error) => firstEnds.push(error))
    await first.detach()
    await firstController.dispose({ stopPtys: false })
    expect(firstEnds).toEqual([])
    const host = hostPid(socketPath)!
    expect(isAlive(host)).toBe(true)
    expect(spawned.every((s) => isAlive(s.pid))).toBe(true)

    // The next app: lists every PTY, attaches to all, and talks to each.
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.dispose())
    const controller = createPtyController({ provider: next })
    cleanups.push(() => controller.dispose())
    const listed = await next.listProcesses()
    expect(new Set(listed.map((row) => row.id))).toEqual(new Set(spawned.map((s) => s.id)))

    const seen = new Map<string, string>()
    controller.on('data', ({ ptyId, data }) => seen.set(ptyId, (seen.get(ptyId) ?? '') + data))
    const exits = new Map<string, PtyControllerExitEvent[]>()
    controller.on('exit', (event) => exits.set(event.ptyId, [...(exits.get(event.ptyId) ?? []), event]))
    const attached = await Promise.all(spawned.map((s) => controller.attach(s.id)))
    expect(attached.every((ok) => ok)).toBe(true)
    // The replay brings each PTY's output from its first byte; then each answers a line of its own.
    for (const s of spawned) expect(controller.write(s.id, `hi-${s.index}\r`, 'driving')).toBe(true)
    for (const s of spawned) {
      await waitFor(() => ((seen.get(s.id) ?? '').includes(`echo-${s.index}:hi-${s.index}\r\n`) ? true : undefined), `PTY ${s.index}'s echo`, 20_000)
      expect(seen.get(s.id)!.startsWith(`ready-${s.index}\r\n`)).toBe(true)
    }

    // Each ends its own way, all at once.
    const ends = spawned.map(async (s) => {
      const fate = fateOf(s.index)
      if (fate === 'stop') expect(await controller.stopAndWait(s.id)).toBe(true)
      else if (fate === 'killed') process.kill(s.pid, 'SIGKILL')
      else controller.write(s.id, 'exit\r', 'driving')
    })
    await Promise.all(ends)
    await waitFor(() => (spawned.every((s) => exits.has(s.id)) ? true : undefined), 'every exit event', 30_000)

    const wrong: string[] = []
    for (const s of spawned) {
      const events = exits.get(s.id)!
      const fate = fateOf(s.index)
      const expected =
        fate === 'stop' ? { kind: 'operator_close' } : fate === 'killed' ? { kind: 'signaled', signal: 9 } : { kind: 'exited', exitCode: exitCodeOf(s.index) }
      if (events.length !== 1 || JSON.stringify(events[0]!.cause) !== JSON.stringify(expected)) {
        wrong.push(`PTY ${s.index} (${fate}): ${JSON.stringify(events.map((e) => e.cause))}`)
      }
    }
    expect(wrong).toEqual([])
    await waitFor(() => (spawned.every((s) => isDead(s.pid)) ? true : undefined), 'every PTY process to be gone', 10_000)
    expect(await next.listProcesses()).toEqual([])
  }, 120_000)
})
