/**
 * Every controller event names the host of the PTY it is about. Before, only `spawn` carried
 * `hostId`: an IDE extension with one controller over several hosts had to keep its own id→host
 * map to tell on which host a PTY that ended ran — and once a PTY's id was reused on another host,
 * that map (and the controller's own `terminal(id)`) named the new host, not the one the ended
 * incarnation ran on.
 */
import { describe, expect, it } from 'vitest'
import type { ExecutionHostId } from '../../src/contracts/index.js'
import { createPtyController, STOP_UNCONFIRMED_AFTER_MS, type PtyController, type PtyControllerEvents } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { fakeWithTestDrivenEvents } from '../support/test-driven-events.js'

type HostedEventType = Exclude<keyof PtyControllerEvents, 'error'>
type Seen = { type: HostedEventType; ptyId: string; hostId: ExecutionHostId | undefined; incarnationId: string | undefined }

/** Every event but `error`, as `{ type, ptyId, hostId, incarnationId }`, in emission order. */
function recordHosts(controller: PtyController): Seen[] {
  const seen: Seen[] = []
  const types: HostedEventType[] = ['spawn', 'data', 'bytes', 'outputLoss', 'exit', 'liveness', 'inputModesReset']
  for (const type of types) {
    controller.on(type, (event: { ptyId: string; hostId?: ExecutionHostId; incarnationId?: string }) => {
      seen.push({ type, ptyId: event.ptyId, hostId: event.hostId, incarnationId: event.incarnationId })
    })
  }
  return seen
}

function twoHosts() {
  const clock = createManualClock()
  const local = createFakePtyProvider({ idPrefix: 'l-', scheduling: 'manual' })
  const remote = createFakePtyProvider({ idPrefix: 'r-', hostId: 'ssh:box', scheduling: 'manual' })
  const controller = createPtyController({ providers: { local, 'ssh:box': remote }, clock })
  return { clock, local, remote, controller, seen: recordHosts(controller) }
}

describe('controller events name their host', () => {
  it('data, outputLoss, inputModesReset, liveness and exit of PTYs on two hosts each name the host the PTY runs on', async () => {
    const { clock, local, remote, controller, seen } = twoHosts()
    const onLocal = await controller.spawn({})
    const onRemote = await controller.spawn({ hostId: 'ssh:box' })
    local.emitData(onLocal.id, 'a')
    remote.emitData(onRemote.id, 'b')
    local.emitOutputLoss(onLocal.id, 3)
    remote.emitOutputLoss(onRemote.id, 3)
    await controller.resetInputModes(onLocal.id)
    await controller.resetInputModes(onRemote.id)
    // The remote PTY's stop is never confirmed: `liveness` unverifiable, then a `stop_unverified` exit.
    remote.setShutdownBehaviour(onRemote.id, 'never_confirm')
    controller.kill(onRemote.id)
    await remote.settle()
    clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    // The local one exits: `liveness` exited, then its exit.
    local.emitExit(onLocal.id, { exitCode: 3 })
    await local.settle()

    const hostOf = new Map([
      [onLocal.id, 'local'],
      [onRemote.id, 'ssh:box'],
    ])
    expect(seen.filter((event) => event.hostId !== hostOf.get(event.ptyId))).toEqual([])
    const kinds = (ptyId: string) => [...new Set(seen.filter((event) => event.ptyId === ptyId).map((event) => event.type))].sort()
    const expected = ['data', 'exit', 'inputModesReset', 'liveness', 'outputLoss', 'spawn']
    expect(kinds(onLocal.id)).toEqual(expected)
    expect(kinds(onRemote.id)).toEqual(expected)
    expect(seen.find((event) => event.type === 'exit' && event.ptyId === onRemote.id)).toMatchObject({ hostId: 'ssh:box' })
    // The remote process still runs (its stop went unconfirmed): let dispose's stop of it confirm.
    remote.setShutdownBehaviour(onRemote.id, 'confirm')
    const disposed = controller.dispose()
    for (let i = 0; i < 20 && clock.nextTimerAt() !== null; i++) {
      await remote.settle()
      clock.advance(Math.max(0, clock.nextTimerAt()! - clock.now()))
    }
    await disposed
  })

  it('coalesced output (`dataBatchMs`) names its host too', async () => {
    const clock = createManualClock()
    const local = createFakePtyProvider({ idPrefix: 'l-', scheduling: 'manual' })
    const remote = createFakePtyProvider({ idPrefix: 'r-', hostId: 'ssh:box', scheduling: 'manual' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote }, clock, dataBatchMs: 5 })
    const data: [string, string, ExecutionHostId][] = []
    controller.on('data', (event) => data.push([event.ptyId, event.data, event.hostId]))
    const onLocal = await controller.spawn({})
    const onRemote = await controller.spawn({ hostId: 'ssh:box' })
    local.emitData(onLocal.id, 'a')
    local.emitData(onLocal.id, 'b')
    remote.emitData(onRemote.id, 'c')
    clock.advance(5)
    // The first chunk goes out at once, the next one of its window (`b`) when the window closes.
    expect(data).toEqual([
      [onLocal.id, 'a', 'local'],
      [onRemote.id, 'c', 'ssh:box'],
      [onLocal.id, 'b', 'local'],
    ])
    await controller.dispose()
  })

  it('bytes output names the host of the PTY that produced it', async () => {
    const local = fakeWithTestDrivenEvents({ idPrefix: 'l-', scheduling: 'manual' })
    const remote = fakeWithTestDrivenEvents({ idPrefix: 'r-', hostId: 'ssh:box', scheduling: 'manual' })
    const controller = createPtyController({ providers: { local: local.provider, 'ssh:box': remote.provider }, clock: createManualClock() })
    const bytes: [string, ExecutionHostId][] = []
    controller.on('bytes', (event) => bytes.push([event.ptyId, event.hostId]))
    const onLocal = await controller.spawn({})
    const onRemote = await controller.spawn({ hostId: 'ssh:box' })
    remote.channels.bytes.fire({ id: onRemote.id, bytes: new Uint8Array([0x72]), incarnationId: onRemote.incarnationId! })
    local.channels.bytes.fire({ id: onLocal.id, bytes: new Uint8Array([0x6c]), incarnationId: onLocal.incarnationId! })
    expect(bytes).toEqual([
      [onRemote.id, 'ssh:box'],
      [onLocal.id, 'local'],
    ])
    await controller.dispose()
  })

  it('an id reused on another host: the ended incarnation\'s events and handle name the old host, the new one\'s the new host', async () => {
    const { local, remote, controller, seen } = twoHosts()
    const old = await controller.spawn({ sessionId: 'same' })
    const oldTerminal = controller.terminal('same')!
    local.emitData('same', 'old')
    local.emitExit('same', { exitCode: 1 })
    await local.settle()
    const restarted = await controller.spawn({ sessionId: 'same', hostId: 'ssh:box' })
    expect(restarted.id).toBe('same')
    expect(controller.terminal('same')?.hostId).toBe('ssh:box')
    remote.emitData('same', 'new')
    remote.emitExit('same', { exitCode: 2 })
    await remote.settle()

    expect(seen.filter((event) => event.type !== 'liveness').map(({ type, hostId, incarnationId }) => [type, hostId, incarnationId])).toEqual([
      ['spawn', 'local', old.incarnationId],
      ['data', 'local', old.incarnationId],
      ['exit', 'local', old.incarnationId],
      ['spawn', 'ssh:box', restarted.incarnationId],
      ['data', 'ssh:box', restarted.incarnationId],
      ['exit', 'ssh:box', restarted.incarnationId],
    ])
    expect(seen.filter((event) => event.type === 'liveness').map(({ hostId, incarnationId }) => [hostId, incarnationId])).toEqual([
      ['local', old.incarnationId],
      ['ssh:box', restarted.incarnationId],
    ])
    // The old incarnation's handle still says where it ran, read after the id moved host.
    expect(await oldTerminal.exited).toMatchObject({ incarnationId: old.incarnationId, hostId: 'local', code: 1 })
    await controller.dispose()
  })
})
