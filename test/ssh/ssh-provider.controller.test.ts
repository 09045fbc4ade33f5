import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { readFileSync } from 'node:fs'
import { commandOf, waitFor } from '../node-pty/pty-test-support.js'
import { SSH_TEST_USER } from './sshd-fixture.js'
import { isAlive, sshOptions, useSshd } from './ssh-test-support.js'
import { bytesReadFrom, RAW_HEX_READER } from '../support/raw-hex-reader.js'

// Every exit cause of the issue, through a controller that routes `local` to node-pty and
// `ssh:loopback` to a real OpenSSH server on 127.0.0.1, for a non-root login and a root login.
const sshd = useSshd()

/** The parent pid of a local process (loopback: a remote program's parent is its sshd session process). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

type Setup = { controller: PtyController; provider: SshProvider; exits: PtyControllerExitEvent[]; output: Map<string, string>; outputAtExit: Map<string, string> }

function setUp(user: string, launchTimeoutMs?: number): () => Setup {
  let setup: Setup | undefined
  beforeAll(() => {
    const provider = createSshProvider(sshOptions(sshd(), user, launchTimeoutMs === undefined ? {} : { launchTimeoutMs }))
    const controller = createPtyController({ providers: { local: createNodePtyProvider(), 'ssh:loopback': provider } })
    const exits: PtyControllerExitEvent[] = []
    const output = new Map<string, string>()
    const outputAtExit = new Map<string, string>()
    controller.on('data', ({ ptyId, data }) => {
      output.set(ptyId, (output.get(ptyId) ?? '') + data)
      // A consumer that takes part in flow control: without acks the controller pauses the
      // producer above its high watermark (which the channel window then enforces).
      controller.acknowledgeData(ptyId, data.length)
    })
    controller.on('exit', (event) => {
      outputAtExit.set(event.ptyId, output.get(event.ptyId) ?? '')
      exits.push(event)
    })
    setup = { controller, provider, exits, output, outputAtExit }
  })
  afterAll(async () => {
    await setup?.controller.dispose()
    await setup?.provider.dispose()
  })
  return () => setup!
}

/**
 * The controller's exit event of `ptyId`. On a timeout the error says what the provider knows of
 * the PTY (`hasPty`: `true` live, `null` lost, `false` exited — then the controller dropped the exit)
 * and its output: an exit once went missing under heavy load, cause not yet found.
 */
async function exitOf(s: Setup, ptyId: string, timeoutMs = 15_000): Promise<PtyControllerExitEvent> {
  try {
    return await waitFor(() => s.exits.find((e) => e.ptyId === ptyId), `the exit of ${ptyId}`, timeoutMs)
  } catch (error) {
    const known = `provider.hasPty: ${String(s.provider.hasPty(ptyId))}, output: ${JSON.stringify(s.output.get(ptyId) ?? '')}`
    throw new Error(`${(error as Error).message} (${known})`, { cause: error })
  }
}
const outputOf = (s: Setup, ptyId: string, text: string, timeoutMs = 15_000) =>
  waitFor(() => ((s.output.get(ptyId) ?? '').includes(text) ? true : undefined), `${JSON.stringify(text)} from ${ptyId}`, timeoutMs)

describe('SSH provider (non-root login) under the controller', () => {
  const s = setUp(SSH_TEST_USER)

  it('exit 3 → exited(3); kill -9 $$ → signaled(9); kill -TERM $$ → signaled(15)', async () => {
    const host = { hostId: 'ssh:loopback' }
    const [three, nine, term] = await Promise.all([
      s().controller.spawn({ ...host, file: '/bin/sh', args: ['-c', 'echo three; exit 3'] }),
      s().controller.spawn({ ...host, file: '/bin/sh', args: ['-c', 'kill -9 $$'] }),
      s().controller.spawn({ ...host, file: '/bin/sh', args: ['-c', 'kill -TERM $$'] }),
    ])
    expect((await exitOf(s(), three.id)).cause).toEqual({ kind: 'exited', exitCode: 3 })
    expect(s().outputAtExit.get(three.id)).toBe('three\r\n')
    expect((await exitOf(s(), nine.id)).cause).toEqual({ kind: 'signaled', signal: 9 })
    expect((await exitOf(s(), term.id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(three.incarnationId).toBeDefined()
    expect((await exitOf(s(), three.id)).incarnationId).toBe(three.incarnationId)
  })

  it('a signal OpenSSH cannot name (BUS, SYS, a real-time one) is unknown/cause_unreported, never a guessed number; one it names is exact', async () => {
    // OpenSSH's sig2name knows the RFC's 13 names and sends every other signal as
    // "SIG@openssh.com": the number is gone on the server, so the exit says it does not know.
    const host = { hostId: 'ssh:loopback' }
    const [bus, sys, realtime, usr1] = await Promise.all(
      ['BUS', 'SYS', '34', 'USR1'].map((signal) => s().controller.spawn({ ...host, file: '/bin/sh', args: ['-c', `ulimit -c 0; kill -${signal} $$`] })),
    )
    for (const reply of [bus!, sys!, realtime!]) {
      const exit = await exitOf(s(), reply.id)
      expect(exit.cause).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
      // A death, proven: not the unverified sentinel.
      expect(exit.code).toBe(0)
    }
    expect((await exitOf(s(), usr1!.id)).cause).toEqual({ kind: 'signaled', signal: 10 })
  })

  it('an operator stop of a process that ignores HUP and TERM is verified and reported as operator_close', async () => {
    const reply = await s().controller.spawn({
      hostId: 'ssh:loopback',
      file: '/bin/sh',
      args: ['-c', "trap '' HUP TERM; echo READY; while :; do sleep 0.2; done"],
    })
    await outputOf(s(), reply.id, 'READY')
    expect(isAlive(reply.pid!)).toBe(true)
    expect(await s().controller.stopAndWait(reply.id)).toBe(true)
    expect((await exitOf(s(), reply.id)).cause).toEqual({ kind: 'operator_close' })
    expect(isAlive(reply.pid!)).toBe(false)
  })

  it('a stop requested on the provider itself, not through the controller, is an operator close too', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'] })
    await outputOf(s(), reply.id, 'READY')
    await s().provider.shutdown(reply.id, { timeoutMs: 10_000 })
    expect((await exitOf(s(), reply.id)).cause).toEqual({ kind: 'operator_close' })
    expect(isAlive(reply.pid!)).toBe(false)
  })

  it('a program killed from outside while its output is held: its tail and its signaled(9) exit come with no resume; an attach is refused as absent', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'echo READY; read line; echo "after-$line"; exec sleep 30'] })
    await outputOf(s(), reply.id, 'READY')
    // The app stops reading: what the program prints next waits behind the pause.
    s().provider.pauseProducer(reply.id)
    expect(s().controller.write(reply.id, 'held\r', 'driving')).toBe(true)
    await waitFor(() => (commandOf(reply.pid!) === 'sleep' ? true : undefined), 'the program to print and exec sleep')
    process.kill(reply.pid!, 'SIGKILL')
    // Nobody resumes: a dead program has nothing left to throttle, so the server's report of its end
    // reads the channel out (before: held until a resume, or a stop — up to the controller's flow
    // control ceiling). The output arrives first.
    const exit = await exitOf(s(), reply.id, 5_000)
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(s().outputAtExit.get(reply.id)).toContain('after-held')
    expect(s().provider.hasPty(reply.id)).toBe(false)
    await expect(s().provider.spawn({ sessionId: reply.id, attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent' })
    // A pause asked for after the end changes nothing.
    s().provider.pauseProducer(reply.id)
  })

  // Found by audit (helper-120): a PTY killed from outside, dead before the stop request, was
  // published `operator_close` whenever the server's report of its death had not reached the
  // provider when the stop was asked for (30 of 30 at 60 PTYs under load). The report names a
  // signal the stop never sent — the stop had sent only HUP — so the death was not the stop's.
  // Here the report is held back deterministically: the connection's sshd session process is
  // frozen while the program is killed and the stops are asked for, so it crosses the stop's HUP.
  it('a program killed from outside before the stop request, its end not reported yet: signaled(9), not an operator close', async () => {
    // A long hang-up grace: the stop's TERM and KILL must not follow before the frozen server answers.
    const provider = createSshProvider(sshOptions(sshd(), SSH_TEST_USER, { hangupGraceMs: 4_000, shutdownDeadlineMs: 10_000 }))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    try {
      const [killed, stopped] = await Promise.all([0, 1].map(() => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['600'] })))
      // Both on the provider's one connection: their parent is its sshd session process.
      const server = parentOf(killed!.pid!)
      expect(parentOf(stopped!.pid!)).toBe(server)
      expect(commandOf(server)).toMatch(/^sshd/)
      let verdicts: Promise<boolean[]>
      process.kill(server, 'SIGSTOP')
      try {
        process.kill(killed!.pid!, 'SIGKILL')
        // Dead (a zombie: its parent, frozen, cannot reap it nor report it).
        await waitFor(() => (isAlive(killed!.pid!) ? undefined : true), 'the kill')
        verdicts = Promise.all([killed!, stopped!].map(({ id }) => controller.stopAndWait(id)))
        // The stops' hang-ups are on the wire, ahead of the server's report of the death.
        await new Promise((resolve) => setTimeout(resolve, 300))
      } finally {
        process.kill(server, 'SIGCONT')
      }
      expect(await verdicts).toEqual([true, true])
      const causeOf = (id: string): unknown => exits.find((exit) => exit.ptyId === id)?.cause
      expect(causeOf(killed!.id)).toEqual({ kind: 'signaled', signal: 9 })
      // The stop's own hang-up ended the other one: an operator close.
      expect(causeOf(stopped!.id)).toEqual({ kind: 'operator_close' })
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 30_000)

  // Found by review (helper-125): the rule above first counted any signal no stop had sent as
  // proof of an outside killer; a program the stop's hang-up ends at one remove dies of another.
  it('a program whose pipe reader the stop\'s hang-up ended dies of SIGPIPE after the stop request: an operator close', async () => {
    // The leader ignores HUP (a "reload" signal to it) and writes into a reader of its own group.
    const script = "exec 3> >(cat > /dev/null); trap '' HUP; exec yes >&3"
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/bash', args: ['-c', script] })
    await waitFor(() => (typeof reply.pid === 'number' && isAlive(reply.pid) ? true : undefined), 'the program to run')
    expect(await s().controller.stopAndWait(reply.id)).toBe(true)
    expect((await exitOf(s(), reply.id)).cause).toEqual({ kind: 'operator_close' })
  })

  it('delivers 300 000 bytes written just before the exit, none lost, before the exit', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "head -c 300000 /dev/zero | tr '\\0' x; exit 7"] })
    const exit = await exitOf(s(), reply.id, 30_000)
    expect(exit.cause).toEqual({ kind: 'exited', exitCode: 7 })
    expect(s().outputAtExit.get(reply.id)).toBe('x'.repeat(300_000))
  })

  it('decodes multi-byte UTF-8 split across packets', async () => {
    // 3-byte and 4-byte characters, each written in two halves with a pause between them, so the
    // halves travel in separate SSH packets.
    const script = "printf '\\342\\202'; sleep 0.2; printf '\\254|\\360\\237'; sleep 0.2; printf '\\230\\200|'; sleep 0.2; exit 0"
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', script] })
    await exitOf(s(), reply.id)
    expect(s().outputAtExit.get(reply.id)).toBe('€|😀|')
  })

  it('writes raw bytes (channel.write of a Buffer): all 256 values reach the remote program exactly, in order with strings', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', ...RAW_HEX_READER })
    await outputOf(s(), reply.id, 'READY')
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    const buffer = Buffer.from(all).reverse()
    const expected = Buffer.concat([Buffer.from('<é|'), all, Buffer.from('|\r\n|'), Buffer.from(buffer), Buffer.from('|🙂>')])
    expect(s().controller.write(reply.id, '<é|', 'driving')).toBe(true)
    expect(s().controller.writeWithSettlement(reply.id, all, 'driving')).toEqual({ kind: 'accepted' })
    expect(s().controller.write(reply.id, '|\r\n|', 'driving')).toBe(true)
    expect(s().controller.write(reply.id, buffer, 'driving')).toBe(true)
    buffer.fill(0) // the caller reuses its buffer: what was written is already the provider's
    expect(s().controller.write(reply.id, '|🙂>', 'driving')).toBe(true)
    const got = await waitFor(() => {
      const read = bytesReadFrom(s().output.get(reply.id) ?? '')
      return read !== undefined && read.length >= expected.length ? read : undefined
    }, 'every byte at the remote reader', 15_000)
    expect(got.toString('hex')).toBe(expected.toString('hex'))
    expect(await s().controller.stopAndWait(reply.id)).toBe(true)
    expect(s().provider.writeBytes(reply.id, all)).toEqual({ kind: 'refused', reason: 'pty_exited' })
  })

  it('sends window-change on resize: stty size sees the new size', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', cols: 80, rows: 24 })
    s().controller.write(reply.id, 'stty size\r', 'driving')
    await outputOf(s(), reply.id, '24 80')
    expect(s().controller.resize(reply.id, 132, 43)).toBe(true)
    s().controller.write(reply.id, 'stty size\r', 'driving')
    await outputOf(s(), reply.id, '43 132')
    s().controller.write(reply.id, 'exit 0\r', 'driving')
    expect((await exitOf(s(), reply.id)).cause).toEqual({ kind: 'exited', exitCode: 0 })
  })

  it('reads the remote cwd, foreground process and children from /proc', async () => {
    const reply = await s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', cwd: '/tmp' })
    s().controller.write(reply.id, 'sleep 30\r', 'driving')
    await waitFor(async () => ((await s().controller.getForegroundProcess(reply.id)) === 'sleep' ? true : undefined), 'sleep in the foreground')
    expect(await s().controller.getCwd(reply.id)).toBe('/tmp')
    expect(await s().controller.hasChildProcesses(reply.id)).toBe(true)
    const rows = await s().controller.listProcesses('ssh:loopback')
    expect(rows.find((row) => row.id === reply.id)).toMatchObject({ hostId: 'ssh:loopback', pid: reply.pid, cwd: '/tmp', title: 'sleep' })
    expect(await s().controller.stopAndWait(reply.id)).toBe(true)
  })

  it('runs local and SSH PTYs at once, each routed to its own provider', async () => {
    const [local, remote] = await Promise.all([
      s().controller.spawn({ file: '/bin/sh', args: ['-c', 'echo "local $PTYKIT_WHERE"; exit 4'], env: { PTYKIT_WHERE: 'here' } }),
      s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'echo "remote $PTYKIT_WHERE $(id -un)"; exit 5'], env: { PTYKIT_WHERE: 'there' } }),
    ])
    expect((await exitOf(s(), local.id)).cause).toEqual({ kind: 'exited', exitCode: 4 })
    expect((await exitOf(s(), remote.id)).cause).toEqual({ kind: 'exited', exitCode: 5 })
    expect(s().outputAtExit.get(local.id)).toContain('local here')
    expect(s().outputAtExit.get(remote.id)).toContain(`remote there ${SSH_TEST_USER}`)
    const scope = await s().controller.listProcessesWithHostScope()
    expect(scope.hostIds.sort()).toEqual(['local', 'ssh:loopback'])
  })
})

// A root login runs root's rc files on every exec: on this machine `pyenv init` in /root/.bashrc
// makes each one take 4-8 s under load, hence the wide launch budget.
describe('SSH provider (root login) under the controller', () => {
  const s = setUp('root', 60_000)

  it('stops a HUP- and TERM-ignoring process although OpenSSH ignores signal requests for root; kill -TERM $$ is signaled(15)', async () => {
    const [reply, term] = await Promise.all([
      s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "trap '' HUP TERM; echo READY; while :; do sleep 0.2; done"] }),
      s().controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'kill -TERM $$'] }),
    ])
    expect((await exitOf(s(), term.id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    await outputOf(s(), reply.id, 'READY')
    expect(await s().controller.stopAndWait(reply.id)).toBe(true)
    expect((await exitOf(s(), reply.id)).cause).toEqual({ kind: 'operator_close' })
    expect(isAlive(reply.pid!)).toBe(false)
  }, 90_000)
})
