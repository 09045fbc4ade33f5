// Bad input at the SSH provider's own methods answers as every provider's refusal does
// (test/cross-provider-refusals.test.ts): a `TypeError` with `code: 'invalid_option'`, the
// argument or option it refuses (`option`), the value as given (`value`), and a message naming
// both. Found by an audit (helper-204): until 7 Dec `write(id, 5)`, `writeBytes(id, 'x')`, a
// listener that is no function and a malformed option bag threw a plain `TypeError` without `code`
// or `option`; a non-string id was read as an unknown PTY (`shutdown(5)` resolved); a `shutdown`
// given `{ immediate: 'yes' }` started a graceful stop; and `terminalName: 'a b'` was accepted and
// sent as the remote's `$TERM`, which no terminfo entry can be named.
import { describe, expect, it } from 'vitest'
import { createSshProvider, isSshOptionError, type SshProvider } from 'ptykit/ssh'
import { describeValue } from '../../src/contracts/describe-value.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

// Nothing is listening on port 9 (discard): the refusals come before any connection.
const offline = { host: '127.0.0.1', port: 9, username: 'nobody', privateKey: 'unused', hostVerifier: () => false, hostId: 'ssh:offline', connectTimeoutMs: 200 } as const

/** How `call` settled: the refusal's shape, or what it returned. */
async function refusal(call: () => unknown): Promise<unknown> {
  try {
    const value = await call()
    return { returned: value }
  } catch (error) {
    // SSH's own refusal, or the shared checks' (a wait budget's, by `resolveWaitDeadline`): the same shape.
    const typed = isSshOptionError(error) || (error instanceof TypeError && (error as { code?: unknown }).code === 'invalid_option')
    if (!typed) return { threw: error }
    const refused = error as TypeError & { code: string; option: string; value: unknown }
    expect(refused).toBeInstanceOf(TypeError)
    expect(refused.message).toContain(`\`${refused.option}\``)
    expect(refused.message).toContain(describeValue(refused.value))
    return { code: refused.code, option: refused.option, value: refused.value }
  }
}

describe('SSH provider: malformed arguments of its calls', () => {
  const cases: Array<[string, (provider: SshProvider) => unknown, string, unknown]> = [
    ['write: data not a string', (p) => p.write('a', 5 as never), 'data', 5],
    ['write: id not a string', (p) => p.write(5 as never, 'x'), 'ptyId', 5],
    ['writeBytes: bytes not a Uint8Array', (p) => p.writeBytes('a', 'x' as never), 'bytes', 'x'],
    ['writeBytes: id not a string', (p) => p.writeBytes(null as never, Buffer.from('x')), 'ptyId', null],
    ['resize: id not a string', (p) => p.resize(5 as never, 80, 24), 'ptyId', 5],
    ['resize: cols', (p) => p.resize('a', 0, 24), 'cols', 0],
    ['shutdown: id not a string', (p) => p.shutdown(5 as never), 'ptyId', 5],
    ['shutdown: options not an object', (p) => p.shutdown('a', 'SIGTERM' as never), 'options', 'SIGTERM'],
    ['shutdown: options null', (p) => p.shutdown('a', null as never), 'options', null],
    ['shutdown: immediate not a boolean', (p) => p.shutdown('a', { immediate: 'yes' as never }), 'immediate', 'yes'],
    ['shutdown: deadlineMs not a number', (p) => p.shutdown('a', { deadlineMs: '5000' as never }), 'deadlineMs', '5000'],
    ['shutdown: timeoutMs NaN', (p) => p.shutdown('a', { timeoutMs: Number.NaN }), 'timeoutMs', Number.NaN],
    ['shutdown: expectedIncarnationId not a string', (p) => p.shutdown('a', { expectedIncarnationId: 5 as never }), 'expectedIncarnationId', 5],
    ['shutdown: keepHistory not a boolean', (p) => p.shutdown('a', { keepHistory: 1 as never }), 'keepHistory', 1],
    ['pauseProducer: id not a string', (p) => p.pauseProducer(5 as never), 'ptyId', 5],
    ['resumeProducer: id not a string', (p) => p.resumeProducer(5 as never), 'ptyId', 5],
    ['hasPty: id not a string', (p) => p.hasPty(5 as never), 'ptyId', 5],
    ['getPid: id not a string', (p) => p.getPid({} as never), 'ptyId', {}],
    ['probeLiveness: id not a string', (p) => p.probeLiveness(5 as never), 'ptyId', 5],
    ['probeLiveness: options not an object', (p) => p.probeLiveness('a', 'b' as never), 'options', 'b'],
    ['probeLiveness: incarnationId too long', (p) => p.probeLiveness('a', { incarnationId: 'i'.repeat(129) as never }), 'incarnationId', 'i'.repeat(129)],
    ['probeLiveness: incarnationId not a string', (p) => p.probeLiveness('a', { incarnationId: 5 as never }), 'incarnationId', 5],
    ['getCwd: id not a string', (p) => p.getCwd(5 as never), 'ptyId', 5],
    ['getForegroundProcess: id not a string', (p) => p.getForegroundProcess(5 as never), 'ptyId', 5],
    ['hasChildProcesses: id not a string', (p) => p.hasChildProcesses(5 as never), 'ptyId', 5],
    ['listProcesses: options not an object', (p) => p.listProcesses(7 as never), 'options', 7],
    ['listProcesses: deadlineMs not a number', (p) => p.listProcesses({ deadlineMs: 'soon' as never }), 'deadlineMs', 'soon'],
    ['onData: listener not a function', (p) => p.onData('f' as never), 'listener', 'f'],
    ['onExit: listener not a function', (p) => p.onExit(undefined as never), 'listener', undefined],
  ]

  it.each(cases)('%s: invalid_option naming it and showing the value', async (_name, call, option, value) => {
    const provider = createSshProvider(offline)
    try {
      expect(await refusal(() => call(provider))).toEqual({ code: 'invalid_option', option, value })
    } finally {
      await provider.dispose()
    }
  })

  it('well-formed calls about an unknown PTY still answer as before', async () => {
    const provider = createSshProvider(offline)
    try {
      expect(provider.write('nope', 'x')).toEqual({ kind: 'refused', reason: 'pty_not_found' })
      expect(provider.hasPty('nope')).toBe(false)
      expect(provider.resize('nope', 80, 24)).toBe(false)
      await expect(provider.shutdown('nope', { immediate: true, timeoutMs: 1_000, expectedIncarnationId: 'i' as never })).resolves.toBeUndefined()
      expect(await provider.probeLiveness('nope', { incarnationId: 'i' as never })).toBe(false)
    } finally {
      await provider.dispose()
    }
  })

  it.each(['a b', 'xterm\n', 'xterm\u0000', '../../etc/passwd', 'x'.repeat(129), '-xterm', 'xterm|vt100'])('terminalName %j: refused, naming it', (terminalName) => {
    let thrown: unknown
    try {
      createSshProvider({ ...offline, terminalName })
    } catch (error) {
      thrown = error
    }
    expect(isSshOptionError(thrown) && { code: thrown.code, option: thrown.option, value: thrown.value }).toEqual({ code: 'invalid_spawn_option', option: 'terminalName', value: terminalName })
  })

  it.each(['xterm-256color', 'screen.xterm-256color', 'vt100', 'rxvt-unicode', 'ms-vt100+', 'tmux_256'])('terminalName %j: accepted', async (terminalName) => {
    await createSshProvider({ ...offline, terminalName }).dispose()
  })
})

const sshd = useSshd()
const TAG = `call-argument-refusals-${process.pid}`

describe('SSH provider: malformed arguments about a live PTY', () => {
  it('are refused and leave it running: a malformed stop starts no stop, a malformed write sends nothing', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    const output: string[] = []
    provider.onData((event) => output.push(event.data))
    try {
      const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', 'echo ready; exec cat'], env: { PTYKIT_SWEEP_TAG: TAG } })
      await waitFor(() => (output.join('').includes('ready') ? true : undefined), 'the program to start')
      expect(await refusal(() => provider.shutdown(reply.id, { immediate: 'yes' as never }))).toMatchObject({ option: 'immediate' })
      expect(await refusal(() => provider.write(reply.id, 42 as never))).toMatchObject({ option: 'data' })
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(isAlive(reply.pid!)).toBe(true)
      expect(provider.hasPty(reply.id)).toBe(true)
      expect(output.join('')).not.toContain('42')
      expect(await provider.write(reply.id, 'ping\n')).toEqual({ kind: 'accepted' })
      await waitFor(() => (output.join('').includes('ping') ? true : undefined), 'the echo')
      await provider.shutdown(reply.id, { timeoutMs: 5_000 })
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await provider.dispose()
      killTagged(TAG)
    }
  }, 30_000)
})
