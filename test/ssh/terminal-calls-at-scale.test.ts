// SSH terminals driven as a host app's async callbacks drive them, at the scale users run, over a
// server with OpenSSH's stock `MaxSessions 10` (so over several connections): each terminal ends
// another way — `exit n`, a signal sent from outside, a kill or a stop from inside its own data
// listener, the controller's dispose — and is called from inside its own exit listener, after its
// end and after the dispose. Every answer is true (the exact cause across the wire, no `true` for
// a stop that did not happen), nothing throws or rejects unhandled, no error is reported, nothing
// of the login is left on the server, and no socket of the provider is left once disposed.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyTerminal } from 'ptykit/controller'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd({ maxSessions: 10 })

/** Terminals at once: the scale users run over one SSH host. */
const TERMINALS = 150

/** The six ways the terminals end (index modulo this). */
const GROUPS = 6

/** Each PTY's processes carry this tag in their environment (the test finds them on the loopback "remote"). */
const TAG = `calls-at-scale-${process.pid}`

/** Each waits for a line (so nothing ends before its listeners are on), then ends or idles. */
function program(group: number): string {
  const tail = group === 0 ? 'exit 7' : 'exec sleep 600'
  return `read line; printf 'got:%s\\n' "$line"; ${tail}`
}

describe('SSH terminals called from their own listeners, at scale', () => {
  it(`${TERMINALS} terminals over several connections: each ending answered truly, nothing left`, async () => {
    let provider: SshProvider | undefined
    let controller: PtyController | undefined
    try {
      provider = createSshProvider(sshOptions(sshd()))
      controller = createPtyController({ providers: { 'ssh:loopback': provider } })
      const live = controller
      const errors: string[] = []
      live.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
      const unhandled: unknown[] = []
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
      process.on('unhandledRejection', onUnhandled)
      const answers = new Map<string, unknown[]>()
      const answer = (what: string, value: unknown): void => void answers.set(what, [...(answers.get(what) ?? []), value])
      const pending: PromiseLike<unknown>[] = []
      const insideOwnExit = (terminal: PtyTerminal, what: string): void => {
        terminal.onExit(({ cause }) => {
          answer(what, { cause, kill: terminal.kill(), write: terminal.write('x'), resize: terminal.resize(50, 10), hasPty: live.hasPty(terminal.id) })
          terminal.acknowledgeData(5)
          pending.push(terminal.stop().then((verified) => answer(`${what}: stop`, verified)))
          pending.push(Promise.resolve(terminal.writeWithSettlement('x')).then((settlement) => answer(`${what}: settled`, settlement)))
          pending.push(live.getCwd(terminal.id).then((cwd) => answer(`${what}: cwd`, cwd)))
          pending.push(live.listProcesses('ssh:loopback').then((rows) => answer(`${what}: listed`, rows.some((row) => row.id === terminal.id))))
        })
      }

      const drive = (terminal: PtyTerminal, group: number): void => {
        switch (group) {
          case 0: // ends on its own (exit 7)
            insideOwnExit(terminal, 'exited')
            break
          case 1: { // killed from outside (loopback: the remote pid is this machine's) once it printed
            insideOwnExit(terminal, 'signaled')
            let done = false
            terminal.onData(({ data }) => {
              if (done || !data.includes('got:')) return
              done = true
              process.kill(terminal.pid!, 'SIGTERM')
            })
            break
          }
          case 2: { // kill twice from inside the first data listener after the line: one stop, committed
            let done = false
            terminal.onData(({ data }) => {
              if (done || !data.includes('got:')) return
              done = true
              answer('kills inside data', [terminal.kill(), terminal.kill()])
            })
            break
          }
          case 3: { // two stops at once from inside the first data listener after the line
            let done = false
            terminal.onData(({ data }) => {
              if (done || !data.includes('got:')) return
              done = true
              pending.push(Promise.all([terminal.stop(), terminal.stop()]).then((verdicts) => answer('stops inside data', verdicts)))
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

      const terminals: PtyTerminal[] = []
      for (let start = 0; start < TERMINALS; start += 30) {
        const batch = await Promise.all(
          Array.from({ length: 30 }, (_, offset) => {
            const group = (start + offset) % GROUPS
            return live
              .spawnTerminal({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', program(group)], env: { PTYKIT_SWEEP_TAG: TAG } })
              .then((terminal) => {
                drive(terminal, group)
                return terminal
              })
          }),
        )
        terminals.push(...batch)
      }
      // Over many connections: the server allows 10 sessions on each, the side shell takes one (the
      // terminals of group 4 may have ended already).
      expect(sshd().connections()).toBeGreaterThanOrEqual(Math.ceil(((TERMINALS / GROUPS) * (GROUPS - 1)) / 9))
      // Group 4 is killed from a timer meanwhile; the others each read their line.
      for (const [index, terminal] of terminals.entries()) if (index % GROUPS !== 4) expect(terminal.write('go\r')).toBe(true)

      const ofGroup = (group: number): PtyTerminal[] => terminals.filter((_, index) => index % GROUPS === group)
      for (const group of [0, 1, 2, 3, 4]) await Promise.all(ofGroup(group).map((terminal) => terminal.exited))
      await Promise.all(pending)
      await Promise.all(pending)

      const perGroup = TERMINALS / GROUPS
      const inside = (cause: unknown) => ({ cause, kill: false, write: false, resize: false, hasPty: false })
      expect(answers.get('exited')).toEqual(Array(perGroup).fill(inside({ kind: 'exited', exitCode: 7 })))
      expect(answers.get('signaled')).toEqual(Array(perGroup).fill(inside({ kind: 'signaled', signal: 15 })))
      for (const what of ['exited', 'signaled']) {
        expect(answers.get(`${what}: stop`)).toEqual(Array(perGroup).fill(true))
        expect(answers.get(`${what}: settled`)).toEqual(Array(perGroup).fill({ kind: 'refused', reason: 'pty_exited' }))
        expect(answers.get(`${what}: cwd`)).toEqual(Array(perGroup).fill(null))
        expect(answers.get(`${what}: listed`)).toEqual(Array(perGroup).fill(false))
      }
      expect(answers.get('kills inside data')).toEqual(Array(perGroup).fill([true, true]))
      expect(answers.get('stops inside data')).toEqual(Array(perGroup).fill([true, true]))
      expect(answers.get('kill from a timer')).toEqual(Array(perGroup).fill(true))
      expect(answers.get('after its end')).toEqual(Array(perGroup).fill({ write: false, kill: false, resize: false }))
      expect(answers.get('stop after its end')).toEqual(Array(perGroup).fill(true))

      // The ones still running are inspected through their connection's side shell, on every connection.
      const inspected = await Promise.all(ofGroup(5).map(async (terminal) => [await live.getCwd(terminal.id), await live.getForegroundProcess(terminal.id)]))
      expect(inspected.filter(([cwd, foreground]) => cwd !== '/home/ptykit-ssh' || foreground !== 'sleep')).toEqual([])

      // The dispose stops what runs; a stop asked meanwhile answers its verdict.
      const disposing = live.dispose()
      const stoppedByDispose = await Promise.all(ofGroup(5).map((terminal) => terminal.stop()))
      await disposing
      expect(stoppedByDispose).toEqual(Array(perGroup).fill(true))

      const causes = async (list: PtyTerminal[]): Promise<string[]> => [...new Set(await Promise.all(list.map(async (terminal) => JSON.stringify((await terminal.exited).cause))))]
      expect(await causes(ofGroup(0))).toEqual(['{"kind":"exited","exitCode":7}'])
      expect(await causes(ofGroup(1))).toEqual(['{"kind":"signaled","signal":15}'])
      expect(await causes([...ofGroup(2), ...ofGroup(3), ...ofGroup(4), ...ofGroup(5)])).toEqual(['{"kind":"operator_close"}'])

      // After the controller's and the provider's dispose: every call of the controller answers, nothing throws.
      await provider.dispose()
      for (const terminal of terminals) {
        expect([terminal.write('x'), terminal.kill(), terminal.resize(50, 10)]).toEqual([false, false, false])
        terminal.acknowledgeData(10)
        await expect(terminal.stop()).resolves.toBe(true)
        // The provider itself, as a host app holding it may still call it from a late callback:
        // refused `provider_disposed`, naming the method (the rule of `PtyProvider.dispose`).
        const disposed = (method: string) => ({ code: 'provider_disposed', message: expect.stringContaining(`\`${method}\``) })
        expect(() => provider!.write(terminal.id, 'x')).toThrow(expect.objectContaining(disposed('write')))
        expect(() => provider!.resize(terminal.id, 50, 10)).toThrow(expect.objectContaining(disposed('resize')))
        expect(() => provider!.hasPty(terminal.id)).toThrow(expect.objectContaining(disposed('hasPty')))
        await expect(provider.probeLiveness(terminal.id)).rejects.toMatchObject(disposed('probeLiveness'))
        await expect(provider.shutdown(terminal.id)).rejects.toMatchObject(disposed('shutdown'))
        await expect(provider.getCwd(terminal.id)).rejects.toMatchObject(disposed('getCwd'))
      }
      await expect(provider.listProcesses()).rejects.toMatchObject({ code: 'provider_disposed' })
      // The server's per-connection processes exit right after the client closed.
      await waitFor(() => (sshd().connections() === 0 ? true : undefined), 'the server to see every connection closed', 5_000)
      await sleep(20) // an unhandled rejection is announced after the turn it happened in
      process.off('unhandledRejection', onUnhandled)
      expect(unhandled).toEqual([])
      expect(errors).toEqual([])
      expect(taggedProcesses(TAG)).toEqual([])
      // Nothing of the provider keeps the app alive.
      expect(process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap')).toEqual([])
    } finally {
      await controller?.dispose()
      await provider?.dispose()
      killTagged(TAG)
    }
  }, 240_000)
})
