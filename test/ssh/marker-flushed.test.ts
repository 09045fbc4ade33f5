import { chmodSync, existsSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { SSH_SLOW_RC_USER, slowLoginRc } from './sshd-fixture.js'
import { isAlive, killTagged, processesRunning, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

// Found in CI under load (docs/ssh-provider.md, 7 Dec): a program that flushes its terminal's
// output as it starts (tmux's client: `tcflush(fd, TCIOFLUSH)`) discards on Linux the launch marker
// sshd had not read yet. No marker came, and the spawn failed at the launch timeout although the
// program ran. Made deterministic here: sshd is frozen (SIGSTOP) while the login's rc sleeps, so the
// preamble prints its marker into a PTY nobody reads; the program waits until its sshd is stopped,
// flushes, writes, and only then is sshd let go on.
const sshd = useSshd()
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * The program: waits until its parent (the session's sshd) is stopped, flushes the terminal's
 * output (unless `flush` is false), touches `mark`, prints, sleeps.
 */
function flushingProgram(mark: string, flush = true): string {
  return [
    'import os, termios, time',
    'pp = os.getppid()',
    'def stopped():',
    '    try:',
    "        return open('/proc/%d/stat' % pp).read().rsplit(') ', 1)[1].split()[0] == 'T'",
    '    except OSError:',
    '        return False',
    'while not stopped():',
    '    time.sleep(0.01)',
    flush ? 'termios.tcflush(1, termios.TCOFLUSH)' : 'pass',
    `open(${JSON.stringify(mark)}, 'w').close()`,
    "os.write(1, b'after-flush\\r\\n')",
    'time.sleep(300)',
  ].join('\n')
}

/** Spawn the program with sshd frozen from the login's rc until the program (flushing or not) ran, and check the PTY it started. */
async function spawnWithMarkerUnread(flush: boolean): Promise<void> {
  const fixture = sshd()
  const provider: SshProvider = createSshProvider(sshOptions(fixture, SSH_SLOW_RC_USER, { launchTimeoutMs: 8_000 }))
  const tag = `flush${process.pid}x${Date.now()}`
  const dir = mkdtempSync(path.join(tmpdir(), 'ptykit-flush-'))
  chmodSync(dir, 0o777)
  const mark = path.join(dir, 'flushed')
  let thaw = (): void => undefined
  cleanups.push(async () => {
    thaw()
    await provider.dispose()
    killTagged(tag)
    rmSync(dir, { recursive: true, force: true })
  })
  // Connected, the side shell warm, before logins get slow.
  await provider.spawn({ file: '/bin/sleep', args: ['300'], env: { PTYKIT_SWEEP_TAG: tag } })
  await provider.listProcesses()
  // An unusual length, so this rc's sleep is told from any other.
  const sleepArg = '1.37'
  const undoSlow = slowLoginRc(fixture, Number(sleepArg))
  cleanups.push(undoSlow)
  let output = ''
  provider.onData(({ data }) => (output += data))
  const spawning = provider.spawn({ file: 'python3', args: ['-c', flushingProgram(mark, flush)], env: { PTYKIT_SWEEP_TAG: tag } }).then(
    (result) => result,
    (error: unknown) => error,
  )
  await waitFor(() => (processesRunning(`sleep ${sleepArg}`).length > 0 ? true : undefined), 'the launch\'s login rc sleeps', 10_000)
  const [rcSleep] = processesRunning(`sleep ${sleepArg}`)
  const terminal = readlinkSync(`/proc/${rcSleep}/fd/0`)
  thaw = fixture.freeze()
  undoSlow()
  // A reader's buffer full (a pty master's holds 4 KiB): what comes next — the marker — waits in
  // the kernel's buffer before it, where a flush on the terminal discards it. A slow sshd on a
  // loaded machine, with its read buffer full or the kernel's worker not yet run, is no different.
  // Written from here as a login rc's output before the marker would be.
  writeFileSync(terminal, 'x'.repeat(8192))
  // The marker, printed while sshd was stopped, is discarded by the program's flush (if it flushes).
  await waitFor(() => (existsSync(mark) ? true : undefined), 'the program flushed its terminal output', 10_000)
  thaw()
  const result = await spawning
  if (result instanceof Error) throw result
  const program = taggedProcesses(tag).filter((process) => process.comm.startsWith('python'))
  expect(program).toHaveLength(1)
  expect(result).toMatchObject({ pid: program[0]!.pid, isReattach: false })
  await waitFor(() => (output.includes('after-flush') ? true : undefined), 'the output written after the flush', 10_000)
  // What was held back (the filler the reader had not taken when the marker was due) comes first.
  expect(output.startsWith('xxxx')).toBe(true)
  // Not flushed: all of it, the marker stripped from between.
  if (!flush) expect(output.startsWith(`${'x'.repeat(8192)}after-flush`)).toBe(true)
  expect(output).not.toContain('ptykit-ssh')
  expect(isAlive(program[0]!.pid)).toBe(true)
}

describe('SSH spawn of a program that flushes its terminal output as it starts', () => {
  it('starts the PTY from the launch found by its nonce: the program\'s pid, its output after the flush', () => spawnWithMarkerUnread(true), 40_000)

  it('keeps output before a marker that was not flushed, and strips the marker (a login rc that prints)', () => spawnWithMarkerUnread(false), 40_000)
})
