// The rule of `PtyProvider.dispose` for requests already on their way: one the disposal cut off is
// refused `provider_disposed`, as a call after it is — never an answer (`[]`, `null`) that the
// disposal's closing of the connection made up. (The pty host's are checked in
// test/pty-host/provider-disposed-before-controller.test.ts.)
import { describe, expect, it } from 'vitest'
import { outcome } from '../support/bad-input.js'
import { loopbackProvider } from './loopback-provider.js'
import { isAlive } from './ssh-test-support.js'

const TAG = `cut-off-by-dispose-${process.pid}`

describe('SSH: calls on their way when dispose() begins', () => {
  it('each answers what was true, or is refused provider_disposed (never transport_lost, never a made-up answer)', async () => {
    const loopback = await loopbackProvider(TAG)
    const { provider } = loopback
    try {
      const reply = await loopback.spawnTagged('exec sleep 600')
      await loopback.waitForSleeps(1)
      const calls = {
        listProcesses: provider.listProcesses(),
        probeLiveness: provider.probeLiveness(reply.id),
        getCwd: provider.getCwd(reply.id),
        getForegroundProcess: provider.getForegroundProcess(reply.id),
        hasChildProcesses: provider.hasChildProcesses(reply.id),
      }
      const disposing = provider.dispose()
      const answers = Object.fromEntries(await Promise.all(Object.entries(calls).map(async ([name, call]) => [name, await outcome(() => call)] as const)))
      await disposing
      for (const [name, answer] of Object.entries(answers)) {
        if (answer.how === 'rejected') {
          expect(answer.value, name).toMatchObject({ code: 'provider_disposed' })
          continue
        }
        // Answered: what was true then — a listing taken before the disposal's stop (the PTY in it), a
        // probe or a query of the PTY that the disposal's own stop ended (`false`, `null`: as for any
        // ended PTY), never a made-up "gone" about a program that runs.
        if (name === 'listProcesses') expect((answer.value as { id: string }[]).map((row) => row.id), name).toContain(reply.id)
        if (name === 'probeLiveness' && answer.value === false) expect(isAlive(reply.pid!), name).toBe(false)
      }
    } finally {
      await loopback.close()
    }
  }, 60_000)
})
