import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { commandOf, isDead, killAndSpinUntilDead, waitFor } from '../node-pty/pty-test-support.js'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { fakeHost, inProcessHost, providerOn, useCleanups } from './pty-host-test-support.js'

// What a pty host reports of a process that ended on its own must be what in-process node-pty
// reports: an outside SIGKILL is `signaled(9)` even when the app's stop of it was on its way, and a
// process that died while its exit is still on its way is not attached to as if it ran.

const cleanups = useCleanups()

async function appOnHost(): Promise<{ app: PtyHostProvider; exits: PtyControllerExitEvent[]; output: Map<string, string>; controller: ReturnType<typeof createPtyController> }> {
  const { socketPath } = await inProcessHost(cleanups)
  const app = providerOn(socketPath, { autoStart: false })
  cleanups.push(() => app.dispose())
  const controller = createPtyController({ provider: app })
  cleanups.push(() => controller.dispose())
  const exits: PtyControllerExitEvent[] = []
  const output = new Map<string, string>()
  controller.on('exit', (event) => exits.push(event))
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
  return { app, exits, output, controller }
}

describe('pty host: exit evidence of a process that ended on its own', () => {
  it('an outside SIGKILL, then the app kills the PTY at once: signaled(9), not an operator close', async () => {
    const { exits, output, controller } = await appOnHost()
    for (let round = 0; round < 5; round++) {
      const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'] })
      await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
      killAndSpinUntilDead(reply.pid!)
      controller.kill(reply.id)
      const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
      expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    }
  })

  it('an outside SIGKILL while the app’s stop is under way (its hang-up sent, its SIGKILL not): signaled(9), not an operator close', async () => {
    // Long graces on the host: the stop's own SIGKILL is 20 s away, far past the outside one.
    const { socketPath } = await inProcessHost(cleanups, { nodePty: { hangupGraceMs: 10_000, terminateGraceMs: 10_000 } })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const exits: PtyControllerExitEvent[] = []
    let output = ''
    controller.on('exit', (event) => exits.push(event))
    controller.on('data', ({ data }) => (output += data))
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap 'echo GOT-HUP' HUP; trap '' TERM; echo READY; while :; do sleep 0.05; done"] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    const stopped = controller.stopAndWait(reply.id, { timeoutMs: 30_000 })
    await waitFor(() => (output.includes('GOT-HUP') ? true : undefined), 'the stop’s hang-up to reach the shell')
    process.kill(reply.pid!, 'SIGKILL')
    expect(await stopped).toBe(true)
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
  })

  it('the app kills a running PTY: still an operator close', async () => {
    const { exits, output, controller } = await appOnHost()
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'] })
    await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    expect(await controller.stopAndWait(reply.id, { timeoutMs: 5_000 })).toBe(true)
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'operator_close' })
    expect(isDead(reply.pid!)).toBe(true)
  })

  it('an attach while the spawn of that id is still starting is not refused as if the process had exited', async () => {
    // node-pty loads slowly on this host, so the session exists before its process does.
    const { socketPath } = await inProcessHost(cleanups, {
      nodePty: {
        loadNodePty: async () => {
          await new Promise((resolve) => setTimeout(resolve, 300))
          return import('node-pty')
        },
      },
    })
    const first = providerOn(socketPath, { autoStart: false })
    const second = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => first.dispose(), () => second.dispose())
    const spawning = first.spawn({ sessionId: 'shared', isNewSession: true, file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const attached = await second.spawn({ sessionId: 'shared', attachOnly: true }).catch((error: unknown) => error)
    expect(attached).not.toMatchObject({ message: expect.stringMatching(/has exited/) })
    const spawned = await spawning
    expect(isDead(spawned.pid!)).toBe(false)
    await first.shutdown('shared', { immediate: true })
  })

  it('a process killed while its output is held: the host reads the tail out at the death, then reports signaled(9); an attach is refused as absent', async () => {
    const { app, exits, output, controller } = await appOnHost()
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; read line; echo "after-$line"; exec sleep 30'] })
    await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    // The host stops reading the PTY: what the shell prints next waits in the kernel.
    app.pauseProducer(reply.id)
    await app.write(reply.id, 'held\r')
    await waitFor(() => (commandOf(reply.pid!) === 'sleep' ? true : undefined), 'the shell to print and exec sleep')
    killAndSpinUntilDead(reply.pid!)

    // Nobody resumes: a dead process has nothing left to throttle, so its tail and its exit come
    // at the death (before: held until a resume, or a stop). The output arrives first.
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit, with no resume')
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(output.get(reply.id)).toContain('after-held')
    await expect(app.spawn({ sessionId: reply.id, attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent' })
  })
})

describe('pty host: the exits an app learns after it was away', () => {
  it('listExits gives a new app the cause of every session that ended while no app watched, and whether a stop ended it', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const first = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => first.dispose())
    const endings = ['exit 0', 'exit 3', 'kill -9 $$']
    const ended = await Promise.all(endings.map((ending) => first.spawn({ file: '/bin/sh', args: ['-c', `sleep 0.2; ${ending}`] })))
    const stopped = await first.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    const running = await first.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    await first.shutdown(stopped.id)
    // The first app goes away and leaves its sessions running; they end while no app is connected.
    await first.detach()
    await waitFor(() => ([...ended, stopped].every((reply) => isDead(reply.pid!)) ? true : undefined), 'the sessions to end')

    const second = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => second.dispose())
    // An attach cannot tell it: an ended session is absent to it.
    await expect(second.attach(ended[1]!.id)).rejects.toMatchObject({ code: 'pty_absent' })
    const exits = await waitFor(async () => {
      const listed = await second.listExits()
      return [...ended, stopped].every((reply) => listed.some((exit) => exit.id === reply.id)) ? listed : undefined
    }, 'the host to remember every exit')
    const exitOf = (id: string) => exits.find((exit) => exit.id === id)
    expect(ended.map((reply) => exitOf(reply.id)?.cause)).toEqual([
      { kind: 'exited', exitCode: 0 },
      { kind: 'exited', exitCode: 3 },
      { kind: 'signaled', signal: 9 },
    ])
    for (const reply of ended) {
      expect(exitOf(reply.id)).toMatchObject({ incarnationId: reply.incarnationId, diedBeforeStopRequest: true })
      expect(exitOf(reply.id)?.stopRequestedBeforeDeath).toBeUndefined()
    }
    // The stop reached the host before the end: the host says so (`stopRequestedBeforeDeath`), so
    // it reads as the operator close it was (the host's cause is the signal that ended it).
    expect(exitOf(stopped.id)).toMatchObject({ incarnationId: stopped.incarnationId, cause: { kind: 'signaled', signal: 1 }, stopRequestedBeforeDeath: true })
    expect(exitOf(stopped.id)?.diedBeforeStopRequest).toBeUndefined()
    // A session still running is not among the exits.
    expect(exitOf(running.id)).toBeUndefined()
    await second.shutdown(running.id, { immediate: true })
  })

  it('listExits starts no host and never answers an empty list for one that is not there', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(`${socketPath}.none`, { autoStart: false, connectTimeoutMs: 500 })
    cleanups.push(() => app.dispose())
    await expect(app.listExits()).rejects.toMatchObject({ code: 'host_unavailable' })
  })

  it('a host of ptykit 0.1.0 (its welcome lists no methods) is never sent `exits`, which would drop the connection: protocol_mismatch', async () => {
    const methods: unknown[] = []
    const host = await fakeHost((message, socket) => {
      methods.push(message.method)
      socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result: [] }))
    })
    cleanups.push(() => host.close())
    const app = providerOn(host.socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    await expect(app.listExits()).rejects.toMatchObject({ code: 'protocol_mismatch', message: expect.stringMatching(/older ptykit.*stopPtyHost\(\{ socketPath: /) })
    expect(methods).not.toContain('exits')
    expect(app.connected).toBe(true)
    await expect(app.listProcesses()).resolves.toEqual([])
  })

  it('an `exits` answer that is not a list of exit messages is a host_error, never an empty list', async () => {
    for (const result of [null, { exits: [] }, [{ type: 'exit', ptyId: 'a' }]]) {
      const host = await fakeHost((message, socket) => {
        socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result }))
      }, { welcome: { methods: ['list', 'exits'] } })
      cleanups.push(() => host.close())
      const app = providerOn(host.socketPath, { autoStart: false })
      cleanups.push(() => app.dispose())
      await expect(app.listExits()).rejects.toMatchObject({ code: 'host_error', message: expect.stringMatching(/not a list of exit messages/) })
    }
  })

  it('a `list` answer that is not a list is a host_error, never an empty (authoritative) listing', async () => {
    for (const result of [null, { processes: [] }, 'none']) {
      const host = await fakeHost((message, socket) => {
        socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result }))
      }, { welcome: { methods: ['list'] } })
      cleanups.push(() => host.close())
      const app = providerOn(host.socketPath, { autoStart: false })
      cleanups.push(() => app.dispose())
      // Before: read as [], which proves every PTY of the host gone.
      await expect(app.listProcesses()).rejects.toMatchObject({ code: 'host_error', message: expect.stringMatching(/not a list of processes/) })
    }
  })
})

describe('pty host: a stop that reached the host from another app, or from an earlier run of this one', () => {
  // The PTY survives its HUP and TERM (the trap prints them) and dies of the host's SIGKILL about
  // a second after the stop: long enough for the app that asked to go away and another to attach.
  const STUBBORN = ['-c', "trap 'echo HUPPED' HUP; trap 'echo TERMED' TERM; echo READY; while :; do sleep 0.05; done"]

  /** A controller over its own provider on `socketPath`, with its exits and output. */
  function appAt(socketPath: string): { provider: PtyHostProvider; controller: ReturnType<typeof createPtyController>; exits: PtyControllerExitEvent[]; output: Map<string, string> } {
    const provider = providerOn(socketPath, { autoStart: false })
    const controller = createPtyController({ provider })
    cleanups.push(() => provider.dispose(), () => controller.dispose())
    const exits: PtyControllerExitEvent[] = []
    const output = new Map<string, string>()
    controller.on('exit', (event) => exits.push(event))
    controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
    return { provider, controller, exits, output }
  }

  it('a restarted app that re-attached a PTY an earlier run had stopped sees its end as the operator close it was, not the signal', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const run1 = appAt(socketPath)
    const reply = await run1.controller.spawn({ file: '/bin/sh', args: STUBBORN })
    await waitFor(() => ((run1.output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    expect(run1.controller.kill(reply.id)).toBe(true)
    // The stop reached the host (the trap ran); the first run goes away before the PTY dies.
    await waitFor(() => ((run1.output.get(reply.id) ?? '').includes('HUPPED') ? true : undefined), 'the hang-up')
    await run1.provider.detach()
    await run1.controller.dispose({ stopPtys: false })

    const run2 = appAt(socketPath)
    expect(await run2.controller.attach(reply.id)).toBe(true)
    const exit = await waitFor(() => run2.exits.find((e) => e.ptyId === reply.id), 'the exit', 10_000)
    expect(isDead(reply.pid!)).toBe(true)
    expect(exit).toMatchObject({ incarnationId: reply.incarnationId, cause: { kind: 'operator_close' } })
  })

  it('a PTY another app stopped is an operator close to the app that spawned it too', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const owner = appAt(socketPath)
    const other = appAt(socketPath)
    const reply = await owner.controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'] })
    await waitFor(() => ((owner.output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    // The other app does not track the PTY: its stop asks the host, which stops it at once.
    expect(await other.controller.stopAndWait(reply.id, { timeoutMs: 5_000 })).toBe(true)
    const exit = await waitFor(() => owner.exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit).toMatchObject({ incarnationId: reply.incarnationId, cause: { kind: 'operator_close' } })
  })
})

describe('pty host: the stop flags of an exit message, as the app reads them', () => {
  it('only a host that says a stop reached it makes an operator close: an older host’s silence proves no stop, and diedBeforeStopRequest wins', async () => {
    // Each spawn's `file` names the flags its exit carries; every exit is a hang-up's signal.
    const flags: Record<string, Record<string, boolean>> = {
      silent: {},
      stopped: { stopRequestedBeforeDeath: true },
      died: { diedBeforeStopRequest: true },
      both: { diedBeforeStopRequest: true, stopRequestedBeforeDeath: true },
    }
    const host = await fakeHost((message, socket) => {
      if (message.type !== 'request' || message.method !== 'spawn') return
      const v = PTY_HOST_PROTOCOL_VERSION
      const params = message.params as { sessionId: string; file: string }
      const incarnationId = `inc-${params.file}`
      socket.write(encodeFrame({ v, type: 'reply', id: message.id, ok: true, result: { pid: 1, incarnationId } }))
      const exit = { v, type: 'exit', ptyId: params.sessionId, code: 0, cause: { kind: 'signaled', signal: 1 }, incarnationId, ...flags[params.file] }
      setTimeout(() => socket.write(encodeFrame(exit)), 50)
    })
    cleanups.push(() => host.close())
    const app = providerOn(host.socketPath, { autoStart: false })
    cleanups.push(() => app.detach())
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose({ stopPtys: false }))
    const causes = new Map<string, unknown>()
    controller.on('exit', ({ incarnationId, cause }) => causes.set(String(incarnationId).slice('inc-'.length), cause))
    for (const file of Object.keys(flags)) await controller.spawn({ file })
    await waitFor(() => (causes.size === 4 ? true : undefined), 'the four exits')
    expect(Object.fromEntries(causes)).toEqual({
      silent: { kind: 'signaled', signal: 1 },
      stopped: { kind: 'operator_close' },
      died: { kind: 'signaled', signal: 1 },
      both: { kind: 'signaled', signal: 1 },
    })
  })
})
