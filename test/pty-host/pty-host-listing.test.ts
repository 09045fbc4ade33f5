import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: listings', () => {
  it('passes membershipOnly to the host: the rows keep every identity field and skip the OS reads of cwd and title', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    // The process (sleep, once the shell execs it) titles the full row; a membership row falls back to the file's name.
    const reply = await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'], cwd: '/tmp', claimKey: 'agent-1', scopeId: 'ws', slotKey: 'pane-1' })
    cleanups.push(() => app.shutdown(reply.id, { immediate: true }))

    const full = await waitFor(async () => (await app.listProcesses()).find((row) => row.title === 'sleep'), 'the shell to exec sleep')
    expect(full).toMatchObject({ id: reply.id, incarnationId: reply.incarnationId, pid: reply.pid, cwd: '/tmp', claimKey: 'agent-1', scopeId: 'ws', slotKey: 'pane-1' })
    const membership = await app.listProcesses({ membershipOnly: true })
    // Before: the flag did not cross the wire, and the host read /proc for every row anyway (what a
    // burst of claim spawns, each listing its owners, paid for).
    expect(membership).toEqual([{ ...full, cwd: null, title: 'sh' }])
  })
})
