// A host app that keeps a terminal's id across restarts respawns under it from inside the exit
// listener (an IDE's "restart the task on exit"). Found by an audit (helper-200): on the SSH
// provider that respawn was refused `pty_id_in_use` ("its exit is still being delivered") — the
// session left the provider's table only after every exit listener had run, and the controller's
// spawn reaches the provider from inside that listener — where the node-pty provider accepts it.
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyTerminal } from 'ptykit/controller'
import type { PtySpawnResult } from 'ptykit/contracts'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const TAG = `respawn-${process.pid}`
const env = { PTYKIT_SWEEP_TAG: TAG }

describe('SSH: a respawn under the same id from inside the exit listener', () => {
  it('through the controller: the terminal runs again under its id, the old handle fenced', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
    try {
      const terminals = await Promise.all(
        // Each waits for a line, so its exit listener is on before it ends.
        [0, 1, 2].map((index) => controller.spawnTerminal({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'read line; exit 6'], sessionId: `task-${index}`, env })),
      )
      const respawned: Promise<PtyTerminal | string>[] = []
      for (const terminal of terminals) {
        terminal.onExit(() => {
          respawned.push(
            controller
              .spawnTerminal({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'exec sleep 600'], sessionId: terminal.id, env })
              .catch((error: unknown) => `${(error as { code?: string }).code}: ${(error as Error).message}`),
          )
        })
        terminal.write('go\r')
      }
      await Promise.all(terminals.map((terminal) => terminal.exited))
      await waitFor(() => (respawned.length === terminals.length ? true : undefined), 'every respawn asked for')
      const replacements = await Promise.all(respawned)
      expect(replacements.filter((replacement) => typeof replacement === 'string')).toEqual([])
      expect((replacements as PtyTerminal[]).map((replacement) => replacement.id).sort()).toEqual(['task-0', 'task-1', 'task-2'])
      for (const replacement of replacements as PtyTerminal[]) {
        const index = Number(replacement.id.slice('task-'.length))
        expect(controller.terminal(replacement.id)).toBe(replacement)
        expect(isAlive(replacement.pid!)).toBe(true)
        expect(terminals[index]!.write('x')).toBe(false) // the old handle reaches nothing now
      }
      expect(await Promise.all((replacements as PtyTerminal[]).map((replacement) => replacement.stop()))).toEqual([true, true, true])
      expect(errors).toEqual([])
    } finally {
      await controller.dispose()
      await provider.dispose()
      killTagged(TAG)
    }
  }, 60_000)

  it('on the provider itself, from its own onExit listener: the new PTY starts under the id', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    try {
      const respawned: Promise<PtySpawnResult | string>[] = []
      const answersInside: unknown[] = []
      provider.onExit((event) => {
        if (event.id !== 'task' || respawned.length > 0) return
        // Inside the exit listener: the PTY is over, and its id is free.
        answersInside.push(provider.hasPty('task'), provider.resize('task', 50, 10))
        respawned.push(
          provider
            .spawn({ sessionId: 'task', file: '/bin/sh', args: ['-c', 'exec sleep 600'], env })
            .catch((error: unknown) => `${(error as { code?: string }).code}: ${(error as Error).message}`),
        )
      })
      const first = await provider.spawn({ sessionId: 'task', file: '/bin/sh', args: ['-c', 'read line; exit 6'], env })
      await provider.write('task', 'go\r')
      await waitFor(() => (respawned.length === 1 ? true : undefined), 'the respawn')
      expect(answersInside).toEqual([false, false])
      const second = await respawned[0]!
      expect(typeof second === 'string' ? second : second.id).toBe('task')
      expect((second as PtySpawnResult).incarnationId).not.toBe(first.incarnationId)
      expect(provider.hasPty('task')).toBe(true)
      expect(await provider.write('task', 'x')).toEqual({ kind: 'accepted' })
      await provider.shutdown('task')
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await provider.dispose()
      killTagged(TAG)
    }
  }, 60_000)
})
