/**
 * A host ported from the seed origin, member by member (helper-138): answers a provider gives for
 * a PTY that ended or whose id was respawned while it answered are not passed off as the PTY's;
 * `attach` answers only for the host asked; `supportsForegroundProcessEvidence(null)` is the local
 * host, as `listProcesses(null)` is.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { deferred } from '../support/deferred.js'
import { createHarness } from './controller-harness.js'

describe('inspectProcess({ expectedIncarnationId }) answers only about that incarnation', () => {
  it('stale expected incarnation ⇒ unavailable; unknown id ⇒ unavailable; exited ⇒ unavailable', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawn({})
    h.provider.setProcessInfo('same', { foregroundProcess: 'bash', hasChildProcesses: false })
    expect(await h.controller.inspectProcess('same', { expectedIncarnationId: first.incarnationId! })).toEqual({ foregroundProcess: 'bash', hasChildProcesses: null })
    expect((await h.controller.inspectProcess('nope')).unavailable).toBe(true)
    h.provider.emitExit('same', { exitCode: 0 })
    await h.settle()
    expect((await h.controller.inspectProcess('same')).unavailable).toBe(true)
    h.provider.scriptNextSpawn({ id: 'same' })
    const second = await h.controller.spawn({})
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect((await h.controller.inspectProcess('same', { expectedIncarnationId: first.incarnationId! })).unavailable).toBe(true)
  })

  it('a respawn under the same id while the read is in flight: the answer is not passed off as the expected incarnation’s', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    const first = await h.controller.spawn({})
    const read = deferred<string | null>()
    h.provider.getForegroundProcess = () => read.promise
    const inspecting = h.controller.inspectProcess('same', { expectedIncarnationId: first.incarnationId!, scanChildProcesses: true })
    // The expected incarnation ends, and another process takes the id, before the provider answers.
    h.provider.emitExit('same', { exitCode: 0 })
    await h.settle()
    h.provider.scriptNextSpawn({ id: 'same' })
    await h.controller.spawn({})
    read.resolve('vim') // the new process's foreground
    const answer = await inspecting
    expect(answer.unavailable).toBe(true)
  })
})

describe('confirmForegroundProcess / confirmShellForeground: null / false on doubt', () => {
  it('a PTY that exits while the confirmation is in flight is not confirmed (false, null)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const read = deferred<{ foregroundProcess: string; shellForeground: boolean } | null>()
    h.provider.confirmForeground = () => read.promise
    const shell = h.controller.confirmShellForeground(id)
    h.provider.emitExit(id, { exitCode: 0 })
    await h.settle()
    expect(h.controller.hasPty(id)).toBe(false)
    read.resolve({ foregroundProcess: 'bash', shellForeground: true })
    // Seed: "true only when the host confirmed the shell itself is in the foreground; false otherwise, also on doubt".
    expect(await shell).toBe(false)
  })

  it('confirmForegroundProcess of a PTY that was respawned under its id while in flight is null', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'same' })
    await h.controller.spawn({})
    const read = deferred<{ foregroundProcess: string; shellForeground: boolean } | null>()
    h.provider.confirmForeground = () => read.promise
    const name = h.controller.confirmForegroundProcess('same')
    h.provider.emitExit('same', { exitCode: 0 })
    await h.settle()
    h.provider.scriptNextSpawn({ id: 'same' })
    await h.controller.spawn({})
    read.resolve({ foregroundProcess: 'vim', shellForeground: false })
    expect(await name).toBeNull()
  })
})

describe('attach: false on doubt (absent session, SSH-scoped id, non-daemon provider)', () => {
  it('unknown id ⇒ false, nothing tracked', async () => {
    const local = createFakePtyProvider()
    const controller = createPtyController({ provider: local })
    expect(await controller.attach('never')).toBe(false)
    expect(controller.hasPty('never')).toBe(false)
    expect(controller.inventory().allLivePtyIds.size).toBe(0)
    await controller.dispose()
  })

  it('an id live on an SSH host is not attached as a local session (attach(id) names no host)', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'r' })
    const other = createPtyController({ providers: { local, 'ssh:box': remote } })
    const { id } = await other.spawn({ hostId: 'ssh:box' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    // Seed: attach is the local daemon's; an SSH-scoped id is a doubt ⇒ false.
    expect(await controller.attach(id)).toBe(false)
    await other.dispose({ stopPtys: false })
    await controller.dispose({ stopPtys: false })
  })

  it('attach(id, { hostId: "local" }) of a PTY tracked live on another host does not answer true for the local host', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'r' })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    const { id } = await controller.spawn({ hostId: 'ssh:box' })
    expect(local.hasPty(id)).toBe(false)
    expect(await controller.attach(id, { hostId: 'local' })).toBe(false)
    await controller.dispose()
  })
})

describe('supportsForegroundProcessEvidence(hostId?) takes the host as listProcesses does', () => {
  it('null is the local host, as listProcesses(null) is (the seed origin passes connectionId null for local)', async () => {
    const controller = createPtyController({ provider: createFakePtyProvider() })
    await expect(controller.listProcesses(null)).resolves.toEqual([])
    await expect(controller.supportsForegroundProcessEvidence(null as never)).resolves.toBe(true)
    await controller.dispose()
  })
})

describe('questions to a live PTY: an answer that outlived the PTY is not passed off as its', () => {
  it('getForegroundProcess and getCwd of a PTY that exits while the provider answers are null', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const name = deferred<string | null>()
    const cwd = deferred<string | null>()
    h.provider.getForegroundProcess = () => name.promise
    h.provider.getCwd = () => cwd.promise
    const asking = [h.controller.getForegroundProcess(id), h.controller.getCwd(id)]
    h.provider.emitExit(id, { exitCode: 0 })
    await h.settle()
    name.resolve('vim')
    cwd.resolve('/home/x')
    expect(await Promise.all(asking)).toEqual([null, null])
  })
})

describe('hasPty / probePtyLiveness of an ended id while this controller brings it up again', () => {
  it('answer null (not false) while a respawn of the id is in flight, true once it is published, false again after a failed one', async () => {
    const h = createHarness()
    await h.controller.spawn({ sessionId: 'S', isNewSession: true })
    h.provider.emitExit('S', { exitCode: 0 })
    await h.settle()
    expect(h.controller.hasPty('S')).toBe(false)
    h.provider.scriptNextSpawn({ id: 'S', hang: true })
    const respawn = h.controller.spawn({ sessionId: 'S', isNewSession: true })
    await h.settle()
    // The provider holds a live process under the id already: "absent" is not proven.
    expect(h.provider.hasPty('S')).toBe(true)
    expect(h.controller.hasPty('S')).toBeNull()
    expect(await h.controller.probePtyLiveness('S')).toBeNull()
    h.provider.releaseSpawn('S')
    await h.settle()
    await respawn
    expect(h.controller.hasPty('S')).toBe(true)
    // Ended again, and a respawn that fails: back to false once it failed.
    h.provider.emitExit('S', { exitCode: 0 })
    await h.settle()
    h.provider.scriptNextSpawn({ fail: new Error('no') })
    await expect(h.controller.spawn({ sessionId: 'S', isNewSession: true })).rejects.toThrow()
    expect(h.controller.hasPty('S')).toBe(false)
    expect(await h.controller.probePtyLiveness('S')).toBe(false)
  })
})
