/**
 * The same endings through a controller over each bundled real provider — node-pty, the pty host
 * and SSH (OpenSSH on loopback) — must give the same verdicts, built from each one's evidence; the
 * differences are the documented ones (docs/exit-causes.md, "Across providers"), and this file pins
 * them both. Each provider stops with 10 s graces, so a stop's own SIGKILL is far from the test's
 * outside one.
 */
import { describe, expect, it } from 'vitest'
import type { TerminalExitCause } from 'ptykit/exit-cause'
import { isDead, waitFor } from './node-pty/pty-test-support.js'
import { useSshd } from './ssh/ssh-test-support.js'
import { useProviderBench } from './support/provider-bench.js'

const GRACES = { hangupGraceMs: 10_000, terminateGraceMs: 10_000 }
const sshd = useSshd()

const kinds = ['node-pty', 'pty host', 'ssh'] as const
type Kind = (typeof kinds)[number]

/** A controller over a fresh provider of `kind` (stops with {@link GRACES}), recording exits and output. */
function useBench(kind: Kind) {
  return useProviderBench(kind, sshd, {
    graces: GRACES,
    extend: ({ controller }) => {
      const output = new Map<string, string>()
      const outputAtExit = new Map<string, string>()
      controller.on('data', ({ ptyId, data }) => {
        output.set(ptyId, (output.get(ptyId) ?? '') + data)
        controller.acknowledgeData(ptyId, data.length)
      })
      controller.on('exit', (event) => outputAtExit.set(event.ptyId, output.get(event.ptyId) ?? ''))
      return { name: kind, output, outputAtExit }
    },
  })
}

const sh = (script: string) => ({ file: '/bin/sh', args: ['-c', script] })
const exited = (exitCode: number): TerminalExitCause => ({ kind: 'exited', exitCode })
const signaled = (signal: number): TerminalExitCause => ({ kind: 'signaled', signal })
const OPERATOR_CLOSE: TerminalExitCause = { kind: 'operator_close' }
const UNREPORTED: TerminalExitCause = { kind: 'unknown', reason: 'cause_unreported' }

/** Endings that need no more than a spawn: the script, the verdict per provider, the output that must precede the exit. */
const ENDINGS: Array<{ name: string; script: string; cause: TerminalExitCause | Record<Kind, TerminalExitCause>; tail?: string }> = [
  { name: 'exit 0', script: 'printf T-zero; exit 0', cause: exited(0), tail: 'T-zero' },
  { name: 'exit 3', script: 'exit 3', cause: exited(3) },
  { name: 'exit 130 (a code, not SIGINT)', script: 'exit 130', cause: exited(130) },
  { name: 'kill -INT $$', script: 'kill -INT $$', cause: signaled(2) },
  { name: 'kill -TERM $$', script: 'kill -TERM $$', cause: signaled(15) },
  { name: 'kill -HUP $$', script: 'kill -HUP $$', cause: signaled(1) },
  { name: 'kill -SEGV $$, no core', script: 'ulimit -c 0; kill -SEGV $$', cause: signaled(11) },
  { name: '200 kB, a marker, kill -KILL $$', script: "head -c 200000 /dev/zero | tr '\\0' x; printf T-kill; kill -KILL $$", cause: signaled(9), tail: 'T-kill' },
  // OpenSSH names only the RFC's 13 signals: BUS crosses as "SIG@openssh.com", number unknown.
  { name: 'kill -BUS $$', script: 'ulimit -c 0; kill -BUS $$', cause: { 'node-pty': signaled(7), 'pty host': signaled(7), ssh: UNREPORTED } },
  { name: 'exec into another program', script: "echo A; exec /bin/sh -c 'echo B; exit 7'", cause: exited(7), tail: 'B\r\n' },
  { name: 'false (exits at once)', script: 'exec false', cause: exited(1) },
]

// The three providers' suites run at once (`concurrent`: each has its own controller, provider and
// host, and its PTYs are found by id); within one provider the tests run in order (`sequential`),
// as they always did.
describe.each(kinds)('cross-provider verdicts: %s', { concurrent: true }, (kind) => {
  const b = useBench(kind)

  async function spawn(script: string) {
    return b().controller.spawn({ hostId: b().hostId, ...sh(script) })
  }
  const exitOf = (id: string) => waitFor(() => b().exits.find((e) => e.ptyId === id), `the exit of ${id} (${kind})`, 15_000)
  const ready = (id: string, text = 'READY') => waitFor(() => ((b().output.get(id) ?? '').includes(text) ? true : undefined), `${text} from ${id} (${kind})`, 15_000)

  /** What every provider answers about a PTY whose exit was published. */
  async function expectEnded(id: string): Promise<void> {
    expect(b().controller.hasPty(id)).toBe(false)
    expect(await b().controller.probePtyLiveness(id)).toBe(false)
    expect(await b().controller.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect((await b().controller.listProcesses(b().hostId)).some((row) => row.id === id)).toBe(false)
  }

  it.sequential('ends on its own: the verdict of each ending, its output first, then the ended answers', async () => {
    const replies = await Promise.all(ENDINGS.map((ending) => spawn(ending.script)))
    for (const [index, ending] of ENDINGS.entries()) {
      const reply = replies[index]!
      const exit = await exitOf(reply.id)
      const want = 'kind' in ending.cause ? ending.cause : (ending.cause as Record<Kind, TerminalExitCause>)[kind]
      expect({ ending: ending.name, cause: exit.cause }).toEqual({ ending: ending.name, cause: want })
      expect(exit.incarnationId).toBe(reply.incarnationId)
      if (ending.tail !== undefined) expect(b().outputAtExit.get(reply.id)?.endsWith(ending.tail), `${ending.name}: the tail before the exit`).toBe(true)
      await expectEnded(reply.id)
    }
  })

  it.sequential('killed from outside: signaled(9) — also when the kill crosses a stop whose hang-up was sent', async () => {
    const plain = await spawn('echo READY; exec sleep 30')
    const crossing = await spawn("trap 'echo GOT-HUP' HUP; trap '' TERM; echo READY; while :; do sleep 0.05; done")
    await Promise.all([ready(plain.id), ready(crossing.id)])
    process.kill(plain.pid!, 'SIGKILL')
    expect((await exitOf(plain.id)).cause).toEqual(signaled(9))
    const stopped = b().controller.stopAndWait(crossing.id, { timeoutMs: 30_000 })
    await ready(crossing.id, 'GOT-HUP')
    process.kill(crossing.pid!, 'SIGKILL')
    expect(await stopped).toBe(true)
    expect((await exitOf(crossing.id)).cause).toEqual(signaled(9))
    await expectEnded(crossing.id)
  })

  it.sequential('stopped by the operator: a HUP- and TERM-proof program, and a stopped (SIGSTOP) one, are operator closes, verified and dead', async () => {
    const proof = await spawn("trap '' HUP TERM; echo READY; while :; do sleep 0.05; done")
    const frozen = await spawn('echo READY; exec sleep 30')
    await Promise.all([ready(proof.id), ready(frozen.id)])
    process.kill(frozen.pid!, 'SIGSTOP')
    // Stopped is not dead: every answer still says live.
    expect(b().controller.hasPty(frozen.id)).toBe(true)
    expect(await b().controller.probePtyLiveness(frozen.id)).toBe(true)
    const answers = await Promise.all([proof, frozen].map((reply) => b().controller.stopAndWait(reply.id, { timeoutMs: 5_000 })))
    expect(answers).toEqual([true, true])
    for (const reply of [proof, frozen]) {
      expect((await exitOf(reply.id)).cause).toEqual(OPERATOR_CLOSE)
      expect(isDead(reply.pid!)).toBe(true)
      await expectEnded(reply.id)
    }
  })

  it.sequential('a program that closes its stdout, stderr and stdin runs on: live until its own exit(4)', async () => {
    const reply = await spawn('echo READY; exec 0<&- 1>&- 2>&-; sleep 1; exit 4')
    await ready(reply.id)
    expect(b().controller.hasPty(reply.id)).toBe(true)
    expect(await b().controller.probePtyLiveness(reply.id)).toBe(true)
    expect((await exitOf(reply.id)).cause).toEqual(exited(4))
  })

  it.sequential('an id no host ever held: stopAndWait true (its absence verified by the listing, as the seed origin verifies a stop), kill false, and the provider\'s shutdown resolves (already gone)', async () => {
    // The host can be asked (SSH connects on its first spawn; a host that cannot be listed is doubt: false).
    await exitOf((await spawn('exit 0')).id)
    const id = `never-spawned-${kind.replace(' ', '-')}`
    // The seed origin's stopAndWait: "true only if the stop was verified by inventory" — a fresh
    // listing without the id (and, for a host whose listing is not authoritative, its probe's
    // `false`); its shutdown of an id already gone is no failure. kill: nothing to dispatch a stop to.
    expect(await b().controller.stopAndWait(id, { timeoutMs: 10_000 })).toBe(true)
    expect(b().controller.kill(id)).toBe(false)
    await expect(b().provider.shutdown(id)).resolves.toBeUndefined()
    await expect(b().provider.shutdown(id, { immediate: true })).resolves.toBeUndefined()
    expect(b().controller.hasPty(id)).not.toBe(true)
    expect(b().exits.filter((exit) => exit.ptyId === id)).toEqual([])
  })

  it.sequential('input the provider still holds when the PTY is killed: each write says whether its bytes reached it — accepted, partial_write, or refused pty_exited — never a plain accepted for dropped bytes', async () => {
    const { controller } = b()
    const reply = await spawn('echo READY; exec sleep 30')
    await ready(reply.id)
    // `sleep` reads nothing: the terminal's input buffer takes a few KiB (SSH: sshd's window some
    // MiB more), the provider holds the rest of the 8 MB, and the small write behind it all of it.
    const typed = controller.writeWithSettlement(reply.id, 'typed before the paste\r', 'driving')
    const paste = controller.writeWithSettlement(reply.id, 'p'.repeat(8 * 1024 * 1024), 'driving')
    const behind = controller.writeWithSettlement(reply.id, 'typed behind the paste\r', 'driving')
    // Until 7 Dec all three said accepted at once, and the held bytes went with the PTY unreported.
    expect(await typed).toEqual({ kind: 'accepted' })
    expect(paste).toBeInstanceOf(Promise)
    expect(controller.write(reply.id, 'x', 'driving')).toBe(true) // held too: the boolean says handed over
    // The pty host's pieces (and SSH's window) reach the far side before the kill. A second, not
    // 300 ms: on a loaded machine (a CI run beside a build) the host had taken none of the paste's
    // bytes by then, and truly answered refused('pty_exited') — none of them had left.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    process.kill(reply.pid!, 'SIGKILL')
    const settled = await Promise.all([paste, behind])
    expect(settled).toEqual([
      { kind: 'unverifiable', reason: 'partial_write', bytesHandedToTransport: true },
      { kind: 'refused', reason: 'pty_exited' },
    ])
    expect((await exitOf(reply.id)).cause).toEqual(signaled(9))
    await expectEnded(reply.id)
  }, 30_000)

  it.sequential('input the provider holds for a program that reads it later: accepted once the last byte reached the PTY, the writes behind it too', async () => {
    const { controller } = b()
    const reply = await spawn("stty raw -echo; echo READY; sleep 1; exec sh -c 'head -c 8388631 >/dev/null; echo ALL-READ; sleep 30'")
    await ready(reply.id)
    const paste = controller.writeWithSettlement(reply.id, 'p'.repeat(8 * 1024 * 1024), 'driving')
    const behind = controller.writeWithSettlement(reply.id, 'typed behind the paste\r', 'driving')
    expect(paste).toBeInstanceOf(Promise)
    expect(await Promise.all([paste, behind])).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }])
    await ready(reply.id, 'ALL-READ')
    expect(await controller.stopAndWait(reply.id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)

  it.sequential('a missing program: the spawn rejects as not started, the `file` option refused (every provider alike: see cross-provider-refusals.test.ts)', async () => {
    for (const file of ['/nonexistent/ptykit-program', 'ptykit-no-such-program']) {
      await expect(b().controller.spawn({ hostId: b().hostId, file })).rejects.toMatchObject({ code: 'invalid_spawn_options', option: 'file', value: file, outcome: 'not_started' })
    }
  })
})
