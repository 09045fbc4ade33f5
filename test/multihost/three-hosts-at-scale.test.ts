/**
 * One controller over three hosts — node-pty (`local`), a pty host and SSH (loopback sshd) — at the
 * scale an IDE runs: 100 PTYs per host at once, shells and short jobs mixed. Every exit's cause is
 * true (`exit 3` → exited(3), a kill → operator_close, SIGKILL from outside → signaled(9)), the
 * listing and the inventory agree with what runs, and both disposal orders end everything with no
 * unhandled rejection and no error storm, while callbacks 0–50 ms after each dispose call write,
 * resize, kill, stopAndWait, getCwd, probePtyLiveness and listProcesses (docs/controller.md, "after
 * dispose()"). Measured 7 Dec (2-core machine): 300 spawns in ~1.4 s, each order ~4 s. The SSH host
 * disposed after the others while those callbacks listed: 43 and 116 `shutdown_failed` for its 42
 * PTYs before side-shell scripts were shared (test/ssh/remote-shell-same-script-burst.test.ts).
 *
 * The budgets of what the test asks (the providers' default stop deadlines, a listing's, the late
 * stopAndWait's) are the defaults stretched by how much slower than an idle machine this process
 * runs when the file starts ({@link SLOWDOWN}): 1 on a machine with time to spare, where they are
 * the defaults and a deadline missed is a defect (as the SSH stops behind 12 600 queued scripts
 * were). Before, they were the defaults at any load: above load ~15 on two cores the late calls'
 * stops and listings met them honestly — `shutdown_timeout` for node-pty's and SSH's stops,
 * `did not list its processes within 5000 ms` — and each was one more controller `error` (400+),
 * read as an error storm.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, NODE_PTY_SHUTDOWN_DEADLINE_MS } from 'ptykit/node-pty'
import { createSshProvider, SSH_SHUTDOWN_DEADLINE_MS } from 'ptykit/ssh'
import { LIST_PROCESSES_DEFAULT_DEADLINE_MS } from '../../src/controller/stop-constants.js'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { hostFixture, providerOn, useCleanups } from '../pty-host/pty-host-test-support.js'
import { sshOptions, useSshd } from '../ssh/ssh-test-support.js'

const sshd = useSshd({ maxSessions: 10 })
const cleanups = useCleanups()

/**
 * How many times slower than on an idle machine this process runs now: the wall time of a busy
 * loop over the CPU time it got (the median of three loops of 100 ms of CPU each), at least 1 and
 * at most 20. With N runnable processes of the same priority on two cores it reads about N/2.
 */
function measureSlowdown(): number {
  const ratios: number[] = []
  for (let sample = 0; sample < 3; sample++) {
    const wallStart = performance.now()
    const cpuStart = process.cpuUsage()
    let cpuMs = 0
    while (cpuMs < 100) {
      const used = process.cpuUsage(cpuStart)
      cpuMs = (used.user + used.system) / 1000
    }
    ratios.push((performance.now() - wallStart) / cpuMs)
  }
  const median = ratios.sort((a, b) => a - b)[1]!
  return Math.min(20, Math.max(1, median))
}

/** This run's slowdown, measured once when the file starts (see the header). */
const SLOWDOWN = measureSlowdown()
/** A budget of `defaultMs` on an idle machine, stretched by {@link SLOWDOWN}. */
const budget = (defaultMs: number): number => Math.ceil(defaultMs * SLOWDOWN)

/** PTYs per host. */
const PER_HOST = 100
const HOSTS = ['local', 'pty-host', 'ssh:loopback'] as const

/** The kinds of PTY (index modulo their count), what is done to each, and the exit it must get. */
const KINDS = [
  { args: ['-c', 'exit 3'], act: 'none', cause: 'exited(3)' },
  { args: ['-c', 'exec sleep 600'], act: 'kill', cause: 'operator_close' },
  { args: ['-c', "trap '' HUP; exec sleep 600"], act: 'kill', cause: 'operator_close' },
  { args: ['-c', "trap '' HUP; exec sleep 600"], act: 'sigkill', cause: 'signaled(9)' },
  { args: [], act: 'live', cause: 'operator_close' },
  { args: ['-c', 'exec sleep 600'], act: 'live', cause: 'operator_close' },
  { args: ['-c', "trap '' HUP; exec sleep 600"], act: 'live', cause: 'operator_close' },
] as const

type Pty = { id: string; host: string; kind: (typeof KINDS)[number]; pid: number }

function causeText(cause: { kind: string; exitCode?: number; signal?: number; reason?: string }): string {
  if (cause.kind === 'exited') return `exited(${cause.exitCode})`
  if (cause.kind === 'signaled') return `signaled(${cause.signal})`
  return cause.kind === 'unknown' ? `unknown/${cause.reason}` : cause.kind
}

async function threeHostsRunning() {
  const { socketPath } = hostFixture(cleanups)
  const providers = {
    local: createNodePtyProvider({ shutdownDeadlineMs: budget(NODE_PTY_SHUTDOWN_DEADLINE_MS) }),
    'pty-host': providerOn(socketPath),
    'ssh:loopback': createSshProvider(sshOptions(sshd(), undefined, { shutdownDeadlineMs: budget(SSH_SHUTDOWN_DEADLINE_MS) })),
  }
  const controller: PtyController = createPtyController({ providers })
  cleanups.push(async () => {
    await controller.dispose()
    for (const provider of Object.values(providers)) await provider.dispose()
  })
  const errors: string[] = []
  controller.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
  const exits = new Map<string, string>()
  controller.on('exit', (event) => exits.set(event.ptyId, causeText(event.cause as never)))
  const ptys: Pty[] = []
  await Promise.all(
    HOSTS.flatMap((host) =>
      Array.from({ length: PER_HOST }, async (_, index) => {
        const kind = KINDS[index % KINDS.length]!
        const reply = await controller.spawn({ hostId: host, file: '/bin/sh', args: [...kind.args], cols: 80, rows: 24 })
        ptys.push({ id: reply.id, host, kind, pid: reply.pid! })
      }),
    ),
  )
  for (const pty of ptys) {
    if (pty.kind.act === 'kill') expect(controller.kill(pty.id)).toBe(true)
    if (pty.kind.act === 'sigkill') process.kill(pty.pid, 'SIGKILL')
  }
  const ended = ptys.filter((pty) => pty.kind.act !== 'live')
  await waitFor(() => (ended.every((pty) => exits.has(pty.id)) ? true : undefined), 'the ended PTYs\' exits', 15_000)
  expect(ended.map((pty) => `${pty.host} ${exits.get(pty.id)}`)).toEqual(ended.map((pty) => `${pty.host} ${pty.kind.cause}`))
  const live = ptys.filter((pty) => pty.kind.act === 'live')
  expect(live.filter((pty) => exits.has(pty.id) || isDead(pty.pid))).toEqual([])
  // The listing and the inventory agree with what runs.
  const listing = await controller.listProcessesWithHostScope()
  expect([...listing.hostIds].sort()).toEqual([...HOSTS].sort())
  expect(listing.processes.map((row) => `${row.hostId} ${row.id}`).sort()).toEqual(live.map((pty) => `${pty.host} ${pty.id}`).sort())
  const inventory = controller.inventory()
  expect([...inventory.allLivePtyIds].sort()).toEqual(live.map((pty) => pty.id).sort())
  expect([...inventory.queriedHostIds].sort()).toEqual([...HOSTS].sort())
  expect(errors).toEqual([])
  return { providers, controller, ptys, live, errors, exits }
}

/** What the late calls of a test did: what threw, rejected, what each stopAndWait answered (and which answered `false`). */
type LateCallRecord = { threw: string[]; rejected: string[]; stops: boolean[]; falseStops: string[]; pending: Promise<unknown>[] }

function newLateCallRecord(): LateCallRecord {
  return { threw: [], rejected: [], stops: [], falseStops: [], pending: [] }
}

/** Callbacks 0–50 ms later call the controller about every PTY: records what threw, rejected and what stopAndWait answered. */
function lateCalls(controller: PtyController, ptys: Pty[], record: LateCallRecord, label = ''): void {
  for (const pty of ptys) {
    setTimeout(() => {
      const call = (name: string, run: () => unknown): void => {
        try {
          const answer = run()
          if (answer instanceof Promise) record.pending.push(answer.catch((error: { code?: string }) => void record.rejected.push(`${name}: ${error?.code}`)))
        } catch (error) {
          record.threw.push(`${name}: ${String(error)}`)
        }
      }
      call('write', () => controller.write(pty.id, 'x', 'driving'))
      call('resize', () => controller.resize(pty.id, 100, 30))
      call('kill', () => controller.kill(pty.id))
      call('stopAndWait', () => controller.stopAndWait(pty.id, { timeoutMs: budget(10_000) }).then((verified) => { record.stops.push(verified); if (!verified) record.falseStops.push(`${label}|${pty.host}|${pty.kind.act} ${pty.kind.args.join(' ')}`) }))
      call('getCwd', () => controller.getCwd(pty.id))
      call('probePtyLiveness', () => controller.probePtyLiveness(pty.id))
      call('listProcesses', () => controller.listProcesses(undefined, { timeoutMs: budget(LIST_PROCESSES_DEFAULT_DEADLINE_MS) }))
    }, Math.floor(Math.random() * 51))
  }
}

async function settled(record: { pending: Promise<unknown>[] }): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 100))
  while (record.pending.length > 0) await Promise.all(record.pending.splice(0))
}

describe(`one controller over three hosts, ${PER_HOST} PTYs each`, () => {
  const unhandled = recordUnhandledRejections()

  it('true causes; controller.dispose() then each provider.dispose(): late calls answered, no error, nothing left', async () => {
    const { providers, controller, ptys, live, errors, exits } = await threeHostsRunning()
    const record = newLateCallRecord()
    const disposal = controller.dispose()
    lateCalls(controller, ptys, record, 'after controller.dispose')
    await disposal
    for (const provider of Object.values(providers)) {
      const providerDisposal = provider.dispose()
      lateCalls(controller, ptys, record, `after ${provider.name}.dispose`)
      await providerDisposal
    }
    await settled(record)
    expect(record.threw).toEqual([])
    expect(record.rejected).toEqual([])
    expect(record.falseStops).toEqual([])
    expect(record.stops).toHaveLength(ptys.length * 4)
    expect(live.map((pty) => exits.get(pty.id))).toEqual(live.map(() => 'operator_close'))
    expect(errors).toEqual([])
    await waitFor(() => (ptys.every((pty) => isDead(pty.pid)) ? true : undefined), 'every program to be gone')
    expect(unhandled).toEqual([])
  }, budget(60_000))

  it('true causes; each provider.dispose() first, then controller.dispose(): one error per provider at most, late calls answered, nothing left', async () => {
    const { providers, controller, ptys, live, errors, exits } = await threeHostsRunning()
    const record = newLateCallRecord()
    for (const provider of Object.values(providers)) {
      const providerDisposal = provider.dispose()
      lateCalls(controller, ptys, record, `after ${provider.name}.dispose`)
      await providerDisposal
    }
    const disposal = controller.dispose()
    lateCalls(controller, ptys, record, 'after controller.dispose')
    await disposal
    await settled(record)
    expect(record.threw).toEqual([])
    // A stop begun while its provider is being disposed answers true on a machine with time to
    // spare: a step the provider refuses `provider_disposed` waits for the exit the disposal
    // reports (the race that once answered `false` here, 1 run in ~25, is fixed and guarded by
    // test/controller/stop-during-provider-dispose.test.ts). On an overloaded machine (load
    // average 12–33 on two cores, 7 Dec) such a stop can meet the provider's own stop deadline
    // first — node-pty's 5 s disposal still running, its joined stop refused `shutdown_timeout`
    // — and answer `false`: an honest doubt within its budget, so tolerated here for a stop
    // begun during its own provider's disposal. Any other stop must answer true (a stop begun
    // after its provider's disposal ended: that disposal's exits are reported, late ones too,
    // test/node-pty/exit-after-dispose-deadline.test.ts).
    const order = ['node-pty', 'pty-host', 'ssh']
    const hostOrder = ['local', 'pty-host', 'ssh:loopback']
    const unexplained = record.falseStops.filter((entry) => {
      const [label, host] = entry.split('|')
      const during = order.findIndex((name) => label === `after ${name}.dispose`)
      return during === -1 || hostOrder.indexOf(host!) !== during
    })
    expect(unexplained).toEqual([])
    expect(record.stops).toHaveLength(ptys.length * 4)
    // The one documented rejection: listing every host while the local host's provider is disposed.
    expect(new Set(record.rejected)).toEqual(record.rejected.length === 0 ? new Set() : new Set(['listProcesses: listing_failed']))
    expect(live.map((pty) => exits.get(pty.id))).toEqual(live.map(() => 'operator_close'))
    // At most one error per provider, each saying it was disposed before the controller.
    expect(errors.length).toBeLessThanOrEqual(HOSTS.length)
    for (const error of errors) expect(error).toMatch(/disposed before the controller/)
    await waitFor(() => (ptys.every((pty) => isDead(pty.pid)) ? true : undefined), 'every program to be gone')
    expect(unhandled).toEqual([])
  }, budget(60_000))
})
