import { execFileSync } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { isSshProviderError, knownHostsName, lookUpKnownHosts } from 'ptykit/ssh'
import { SSH_SIGNAL_NUMBERS, sshSignalNumber } from '../../src/ssh/ssh-signal-table.js'
import { planSshStopSchedule, stopSshSession } from '../../src/ssh/ssh-stop.js'
import { createRemoteLaunch, shellQuote } from '../../src/ssh/remote-launch.js'
import { isSshOptionError } from '../../src/ssh/ssh-option-error.js'
import { LaunchMarkerScanner } from '../../src/ssh/remote-launch.js'
import { loadSsh2Module } from '../../src/ssh/ssh2-module.js'
import type { SshConnectionKeeper } from '../../src/ssh/ssh-connection-keeper.js'
import { SSH_END_READ_OUT_BUDGET_BYTES, SshPtySession as SshPtySessionClass, type SshPtySession } from '../../src/ssh/ssh-pty-session.js'
import { probeLostSession } from '../../src/ssh/ssh-lost-sessions.js'
import { shutdownSshPty } from '../../src/ssh/ssh-shutdown.js'
import type { PtyExitEvent } from 'ptykit/contracts'
import { SshConnection, type ChannelExitStatus } from '../../src/ssh/ssh-connection.js'
import { createSshQueries } from '../../src/ssh/ssh-queries.js'
import { SshSessionTable } from '../../src/ssh/ssh-session-table.js'
import { spawnSshPty } from '../../src/ssh/ssh-spawn.js'

/** A fake host key blob in SSH wire format: string type, then random bytes. */
function keyBlob(type: string, body: Uint8Array): Buffer {
  const name = Buffer.from(type, 'latin1')
  const length = Buffer.alloc(4)
  length.writeUInt32BE(name.length)
  return Buffer.concat([length, name, Buffer.from(body)])
}
const keyArb = fc.record({
  type: fc.constantFrom('ssh-ed25519', 'ecdsa-sha2-nistp256'),
  body: fc.uint8Array({ minLength: 8, maxLength: 48 }),
})
const hostArb = fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}$/)
const portArb = fc.integer({ min: 1, max: 65_535 })

describe('the signal table', () => {
  it('maps every RFC 4254 signal name, with or without SIG, to its Linux number', () => {
    const rfc = { ABRT: 6, ALRM: 14, FPE: 8, HUP: 1, ILL: 4, INT: 2, KILL: 9, PIPE: 13, QUIT: 3, SEGV: 11, TERM: 15, USR1: 10, USR2: 12 }
    for (const [name, number] of Object.entries(rfc)) {
      expect(sshSignalNumber(name)).toBe(number)
      expect(sshSignalNumber(`SIG${name}`)).toBe(number)
    }
    const numbers = Object.values(SSH_SIGNAL_NUMBERS)
    expect(new Set(numbers).size).toBe(numbers.length)
  })

  it('never guesses a number for a name outside the table', () => {
    fc.assert(
      fc.property(fc.string(), (name) => {
        const bare = name.startsWith('SIG') ? name.slice(3) : name
        fc.pre(!Object.prototype.hasOwnProperty.call(SSH_SIGNAL_NUMBERS, bare))
        expect(sshSignalNumber(name)).toBeNull()
      }),
    )
  })
})

describe('known_hosts lookup', () => {
  it('matches a listed key, contradicts another key of the same type, and is silent for other hosts', () => {
    fc.assert(
      fc.property(keyArb, keyArb, hostArb, hostArb, portArb, (key, other, host, otherHost, port) => {
        const blob = keyBlob(key.type, key.body)
        const otherBlob = keyBlob(key.type, other.body)
        fc.pre(!blob.equals(otherBlob) && host !== otherHost)
        const name = knownHostsName(host, port)
        const line = (n: string, b: Buffer) => `${n} ${key.type} ${b.toString('base64')}\n`
        expect(lookUpKnownHosts(line(name, blob), name, blob)).toBe('match')
        expect(lookUpKnownHosts(line(name, otherBlob), name, blob)).toBe('mismatch')
        expect(lookUpKnownHosts(line(knownHostsName(otherHost, port), blob), name, blob)).toBe('unknown')
        // Hashed entries (HashKnownHosts yes) name the same host.
        const salt = randomBytes(20)
        const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`
        expect(lookUpKnownHosts(line(hashed, blob), name, blob)).toBe('match')
        expect(lookUpKnownHosts(`@revoked ${line(name, blob)}${line(name, blob)}`, name, blob)).toBe('mismatch')
      }),
    )
  })
})

describe('the stop schedule', () => {
  it('starts at 0, strictly increases, ends with KILL, and keeps the KILL reserve before the deadline', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.nat(20_000), fc.nat(2_000), fc.nat(2_000), fc.nat(2_000), (immediate, deadlineAfterMs, hangupGraceMs, terminateGraceMs, killReserveMs) => {
        const steps = planSshStopSchedule({ immediate, deadlineAfterMs, hangupGraceMs, terminateGraceMs, killReserveMs })
        expect(steps[0]?.atMs).toBe(0)
        expect(steps.at(-1)?.signal).toBe('KILL')
        for (let i = 1; i < steps.length; i++) expect(steps[i]!.atMs).toBeGreaterThan(steps[i - 1]!.atMs)
        expect(steps.at(-1)!.atMs).toBeLessThanOrEqual(Math.max(0, deadlineAfterMs - killReserveMs))
        if (immediate) expect(steps).toEqual([{ signal: 'KILL', atMs: 0 }])
        else if (deadlineAfterMs - killReserveMs >= hangupGraceMs + terminateGraceMs && hangupGraceMs > 0 && terminateGraceMs > 0) {
          expect(steps.map((step) => step.signal)).toEqual(['HUP', 'TERM', 'KILL'])
        }
      }),
    )
  })
})

describe('the launch marker', () => {
  it('is found and stripped wherever the chunks split it, and the rest of the output is kept', () => {
    const nonce = 'a1b2c3d4e5f60718'
    const marker = `\u001b]ptykit-ssh;${nonce};4242;987654;0b1d2c3e-aaaa-4bbb-8ccc-0123456789ab\u0007`
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.array(fc.nat(), { maxLength: 4 }), (after, cuts) => {
        const text = marker + after
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
        const scanner = new LaunchMarkerScanner(nonce)
        let out = ''
        let last = 0
        for (const point of [...points, text.length]) {
          out += scanner.push(text.slice(last, point))
          last = point
        }
        expect(scanner.marker).toEqual({ pid: 4242, startTime: '987654', bootId: '0b1d2c3e-aaaa-4bbb-8ccc-0123456789ab' })
        expect(out).toBe(after)
      }),
    )
  })

  it('adopted without it (found by its nonce): delivers what was held, and strips the marker should it come late, wherever the chunks split it', () => {
    const nonce = 'a1b2c3d4e5f60718'
    const marker = `\u001b]ptykit-ssh;${nonce};4242;987654;0b1d2c3e-aaaa-4bbb-8ccc-0123456789ab\u0007`
    const adopted = { pid: 4242, startTime: '987654', bootId: null }
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }),
        fc.string({ unit: 'grapheme' }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 4 }),
        (before, after, late, cuts) => {
          const scanner = new LaunchMarkerScanner(nonce)
          // A login rc's output came, and no marker (yet).
          expect(scanner.push(before)).toBe('')
          let out = scanner.adopt(adopted)
          expect(scanner.marker).toEqual(adopted)
          const text = (late ? marker : '') + after
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
          let last = 0
          for (const point of [...points, text.length]) {
            out += scanner.push(text.slice(last, point))
            last = point
          }
          // At the channel's close, whatever was held as a marker's possible start is output.
          out += scanner.takePending()
          expect(out).toBe(before + after)
        },
      ),
    )
  })
})

describe('shell quoting', () => {
  it('round-trips any string through a real /bin/sh', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).filter((s) => !s.includes('\0')), (value) => {
        expect(execFileSync('/bin/sh', ['-c', `printf '%s' ${shellQuote(value)}`], { encoding: 'utf8' })).toBe(value)
      }),
      { numRuns: 40 },
    )
  })
})

describe('the launch options a program receives', () => {
  /** The refusal `createRemoteLaunch` throws for `options`. */
  function refusal(options: Record<string, unknown>): { option: string; message: string } {
    try {
      createRemoteLaunch(options as never)
    } catch (error) {
      if (isSshOptionError(error)) return { option: error.option, message: error.message }
      throw error
    }
    throw new Error(`accepted ${JSON.stringify(options)}`)
  }

  it("refuses an envToDelete that is a string: its characters are not variable names ('PATH' would unset P, A, T and H)", () => {
    expect(refusal({ file: '/bin/sh', envToDelete: 'PATH' })).toEqual({ option: 'envToDelete', message: expect.stringContaining('an array of variable names') })
  })

  it('refuses an env that is a Map (its variables would be dropped), never showing its values', () => {
    const { option, message } = refusal({ file: '/bin/sh', env: new Map([['TOKEN', 'secret-value']]) })
    expect(option).toBe('env')
    expect(message).toContain('got [redacted] (Map)')
    expect(message).not.toContain('secret-value')
  })
})

describe('loading ssh2', () => {
  it('fails with ssh2_unavailable and an install hint when ssh2 is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package 'ssh2'"), { code: 'ERR_MODULE_NOT_FOUND' })
    const failure = await loadSsh2Module(() => Promise.reject(missing)).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('ssh2_unavailable')
    expect((failure as Error).message).toContain('npm install ssh2')
    const wrong = await loadSsh2Module(() => Promise.resolve({})).catch((error: unknown) => error)
    expect(isSshProviderError(wrong) && wrong.code).toBe('ssh2_unavailable')
    expect(typeof (await loadSsh2Module()).Client).toBe('function')
  })
})

describe('listing membership only', () => {
  /** A table of `count` live sessions on a connection that counts the remote commands it runs. */
  function liveSessions(count: number): { table: SshSessionTable; commands: () => number } {
    let commands = 0
    const connection = {
      lost: false,
      run: async () => {
        commands += 1
        return { code: 0, stdout: 'fg=vim\nfgcwd=/srv\ncwd=/home\nchildren=\n', stderr: '' }
      },
    }
    const table = new SshSessionTable()
    for (let index = 0; index < count; index += 1) {
      const id = `pty-${index}`
      // The fields a listing row and an inspection read; the rest of a session is not reached.
      const session = { id, incarnationId: `inc-${index}`, state: 'live', connection, marker: { pid: 100 + index, startTime: '1', bootId: null }, launch: { file: '/bin/sh' } }
      table.sessions.set(id, session as unknown as SshPtySession)
    }
    return { table, commands: () => commands }
  }
  const queriesOver = (table: SshSessionTable) =>
    createSshQueries({ hostId: 'ssh:test', table, keeper: { isConnected: () => true } as unknown as SshConnectionKeeper, assertNotDisposed: () => {} })

  it('answers every live PTY without a remote command when asked for membership only, and inspects otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 12 }), async (count) => {
        const membership = liveSessions(count)
        const rows = await queriesOver(membership.table).listProcesses({ membershipOnly: true })
        expect(rows.map((row) => [row.id, row.incarnationId, row.cwd])).toEqual(Array.from({ length: count }, (_, index) => [`pty-${index}`, `inc-${index}`, null]))
        expect(membership.commands()).toBe(0)

        const full = liveSessions(count)
        const fullRows = await queriesOver(full.table).listProcesses()
        expect(fullRows.map((row) => [row.id, row.cwd, row.title])).toEqual(Array.from({ length: count }, (_, index) => [`pty-${index}`, '/srv', 'vim']))
        expect(full.commands()).toBe(count)
      }),
      { numRuns: 20 },
    )
  })
})

describe('a session channel whose command ends at once', () => {
  it('keeps an exit that ssh2 reports in the same parse as the channel opening, before the caller resumes', async () => {
    // ssh2 parses every packet of one socket read synchronously: the exec callback, then (for a
    // command that ended already) the channel's `exit` — before a caller awaiting the channel runs.
    const client = {
      exec(_command: string, _options: unknown, callback: (error: Error | undefined, channel: EventEmitter) => void) {
        const channel = new EventEmitter()
        callback(undefined, channel)
        channel.emit('exit', null, 'KILL')
        channel.emit('exit', 0) // A second report does not replace the first.
      },
    }
    const connection = new (SshConnection as unknown as new (client: unknown, socket: unknown) => SshConnection)(client, new EventEmitter())
    const opened = await connection.openChannel('kill -9 $$', undefined)
    expect(opened.exitStatus()).toEqual({ code: null, signal: 'KILL' })
  })
})

/**
 * A live session on a fake channel (which records the server's exit report as `openChannel` does,
 * and whether reading is paused); its exits are collected.
 */
function liveSession(hooksOf: (table: SshSessionTable) => unknown = (table) => table.sessionHooks, onOwedStopLost?: () => void): {
  session: SshPtySession
  channel: EventEmitter & { reading: boolean; signals: string[]; signal: (name: string) => void }
  connection: { lost: boolean; closedOnPurpose?: boolean; run?: (script: string) => Promise<unknown> }
  table: SshSessionTable
  exits: PtyExitEvent[]
  loseConnection(): void
} {
  const noop = () => undefined
  const channel = Object.assign(new EventEmitter(), {
    reading: true,
    stderr: Object.assign(new EventEmitter(), { resume: noop }),
    pause: () => void (channel.reading = false),
    resume: () => void (channel.reading = true),
    signals: [] as string[],
    signal: (name: string) => void channel.signals.push(name),
    close: noop,
  })
  let reported: ChannelExitStatus | null = null
  channel.on('exit', (code: number | null, signal?: string) => void (reported ??= { code, signal }))
  const connection: ReturnType<typeof liveSession>['connection'] = { lost: false }
  const table = new SshSessionTable(onOwedStopLost)
  const launch = { command: 'sh', nonce: 'n', cols: 80, rows: 24, file: null, startupCommand: undefined }
  const fields = { id: 'p', incarnationId: 'i', channel, exitStatus: () => reported, connection, launch, scopeId: undefined, slotKey: undefined, claimKey: undefined }
  const session = new (SshPtySessionClass as unknown as new (fields: unknown, hooks: unknown) => SshPtySession)(fields, hooksOf(table))
  table.sessions.set('p', session)
  const exits: PtyExitEvent[] = []
  table.exitListeners.add((event) => exits.push(event))
  session.marker = { pid: 4242, startTime: '1', bootId: 'boot' }
  session.state = 'live'
  session.release()
  const loseConnection = () => {
    connection.lost = true
    table.markLost(connection as unknown as SshConnection)
  }
  return { session, channel, connection, table, exits, loseConnection }
}

/** A live session on a fake channel, then lost with its connection. */
function lostSession(): ReturnType<typeof liveSession> {
  const live = liveSession()
  live.loseConnection()
  return live
}
/** With no connection open to ask, a proven end still answers: the probe `false`, a stop resolves at once. */
async function expectDeadWithNoConnection(session: SshPtySession, table: SshSessionTable): Promise<void> {
  const noConnection = { openConnection: () => null, holdForStop: () => () => undefined } as unknown as SshConnectionKeeper
  expect(await probeLostSession(session, noConnection)).toBe(false)
  const timings = { hangupGraceMs: 100, terminateGraceMs: 100, shutdownDeadlineMs: 1_000 }
  await expect(shutdownSshPty(table, noConnection, timings, session.id, {})).resolves.toBeUndefined()
}

describe('a write to an SSH PTY settles what is true of its bytes', () => {
  /** {@link liveSession} whose channel records what was written to it. */
  function writableSession() {
    const live = liveSession()
    const written: string[] = []
    Object.assign(live.channel, { write: (data: string) => written.push(data) > 0 })
    return { ...live, written }
  }

  it('a live PTY: accepted, handed to its channel', () => {
    const { session, written } = writableSession()
    expect(session.write('ls\r')).toEqual({ kind: 'accepted' })
    expect(written).toEqual(['ls\r'])
  })

  it('a PTY lost with its connection: refused, nothing handed to a transport (as the pty host refuses it)', () => {
    const { session, written, loseConnection } = writableSession()
    loseConnection()
    // Before: unverifiable/transport_lost (bytesHandedToTransport: false) — "nobody can tell",
    // though it is proven that nothing was sent: there is no channel to send it on.
    expect(session.write('ls\r')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(written).toEqual([])
  })

  it('a PTY whose channel the stop is closing: refused (ssh2 drops what is written to a closing channel)', () => {
    const { session, written } = writableSession()
    session.closeChannel()
    // Before: accepted, and the bytes went nowhere.
    expect(session.write('ls\r')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(written).toEqual([])
  })

  it('a PTY whose channel the server closed without an exit report, its close still behind unread output: refused, nothing written', () => {
    const { session, channel, written } = writableSession()
    // ssh2 ends the channel's writable side at the server's CHANNEL_CLOSE and emits 'close' only
    // once its output is read out (a paused PTY: much later). Before: accepted, the bytes went nowhere.
    Object.assign(channel, { writableEnded: true })
    expect(session.write('ls\r')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(written).toEqual([])
  })

  it('a PTY whose end the server reported, its exit still behind output: refused as exited (as node-pty refuses once the exit is known)', () => {
    const { session, channel, written } = writableSession()
    channel.emit('exit', 3)
    // Before: accepted — to a channel whose program is dead.
    expect(session.write('ls\r')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(written).toEqual([])
  })
})

describe('a resize of an SSH PTY says whether the window-change could go out', () => {
  function resizableSession() {
    const live = liveSession()
    const sent: string[] = []
    Object.assign(live.channel, { setWindow: (rows: number, cols: number) => void sent.push(`${cols}x${rows}`) })
    return { ...live, sent }
  }

  it('a live PTY: true, sent, remembered', () => {
    const { session, sent } = resizableSession()
    expect(session.resize(100, 30)).toBe(true)
    expect(sent).toEqual(['100x30'])
    expect([session.cols, session.rows]).toEqual([100, 30])
  })

  it.each([
    ['its channel being closed by a stop', (live: ReturnType<typeof resizableSession>) => live.session.closeChannel()],
    ['its end reported by the server', (live: ReturnType<typeof resizableSession>) => void live.channel.emit('exit', 0)],
    ['its connection dropped', (live: ReturnType<typeof resizableSession>) => live.loseConnection()],
  ])('%s: false, nothing sent, the size kept (before: true for the first two)', (_what, make) => {
    const live = resizableSession()
    make(live)
    expect(live.session.resize(100, 30)).toBe(false)
    expect(live.sent).toEqual([])
    expect([live.session.cols, live.session.rows]).toEqual([80, 24])
  })
})

const UNREPORTED = { id: 'p', incarnationId: 'i', code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } }

describe('a lost PTY proven gone whose channel has not closed yet', () => {
  it('answers dead and is stopped at once, even when no connection is open any more', async () => {
    // The window between a look that proved the program gone (its exit then waits for the channel
    // to hand over what it received) and the channel's close. If the judging connection drops in
    // it too, nothing needs a judge: the end is proven.
    const { session, channel, table, exits } = lostSession()
    expect(session.settleGone()).toBe(true)
    expect(session.endProven).toBe(true)
    // Before: both asked for a judge first — the probe answered null, the stop rejected transport_lost.
    await expectDeadWithNoConnection(session, table)
    expect(exits).toEqual([])
    channel.emit('close')
    // Proven gone before the stop was asked for: it ended on its own (before: no such flag, so a
    // controller took the stop for its cause).
    expect(exits).toEqual([{ ...UNREPORTED, diedBeforeStopRequest: true }])
  })

  it('keeps a stop asked for before the proof as the cause', () => {
    const { session, channel, exits } = lostSession()
    session.beginStop()
    session.settleGone()
    channel.emit('close')
    expect(exits).toEqual([UNREPORTED])
  })
})

// Found by an audit (helper-211): a stop's last step closes the channel; a stop whose deadline
// passed before that close landed rejected shutdown_timeout and was not owed, while one whose close
// landed in time rejected transport_lost and was owed — carried out once a connection was back. A
// program that ignores the hang-up ran on after the late close: nothing stopped it but the disposal.
describe('a stop of a live PTY whose deadline passes before its program is seen gone', () => {
  /** A keeper for a PTY whose own connection stays open (no other is ever asked for). */
  const ownConnectionKeeper = { openConnection: () => null, holdForStop: () => () => undefined, isConnected: () => true } as unknown as SshConnectionKeeper
  const timings = { hangupGraceMs: 100, terminateGraceMs: 100, shutdownDeadlineMs: 1_000 }

  it('is owed whether its channel\'s close landed before the deadline (transport_lost) or not yet (shutdown_timeout)', async () => {
    for (const closeLands of [true, false]) {
      const owedLost = vi.fn()
      const { session, channel, connection, table } = liveSession(undefined, owedLost)
      // The side shell never answers (a look cannot prove anything); the signals go unheeded.
      connection.run = async () => null
      // The close the stop's last step asks for: answered at once, or not before the deadline.
      ;(channel as unknown as { close: () => void }).close = () => void (closeLands && setImmediate(() => channel.emit('close')))
      const onStopOwed = vi.fn()
      const refusal = await shutdownSshPty(table, ownConnectionKeeper, timings, 'p', { timeoutMs: 1_000 }, { onStopOwed }).then(
        () => null,
        (error: unknown) => error,
      )
      expect(isSshProviderError(refusal) && refusal.code, String(refusal)).toBe(closeLands ? 'transport_lost' : 'shutdown_timeout')
      await new Promise((resolve) => setImmediate(resolve))
      expect(session.stopOwed, `close landed: ${closeLands}`).toBe(true)
      expect(onStopOwed).toHaveBeenCalled()
      if (!closeLands) {
        // The late close: the PTY is lost now, its connection open — a look is asked for, after
        // which the owed stop is carried out (nothing else would ask: no connection dropped or opened).
        expect(owedLost).not.toHaveBeenCalled()
        channel.emit('close')
        expect(session.state).toBe('lost')
        expect(owedLost).toHaveBeenCalledTimes(1)
      }
    }
  })

  it('is not owed when the program is proven gone (what is left of its session could not be looked at)', async () => {
    const { session, channel, connection, table } = liveSession()
    connection.run = async () => null
    const onStopOwed = vi.fn()
    // The server reported the end (by the stop's KILL); the channel's close is still to come.
    ;(channel as unknown as { signal: (name: string) => void }).signal = (name) => void (name === 'KILL' && channel.emit('exit', null, 'KILL'))
    const refusal = await shutdownSshPty(table, ownConnectionKeeper, timings, 'p', { timeoutMs: 1_000 }, { onStopOwed }).then(
      () => null,
      (error: unknown) => error,
    )
    expect(isSshProviderError(refusal) && refusal.code, String(refusal)).toBe('shutdown_timeout')
    await new Promise((resolve) => setImmediate(resolve))
    expect(session.endProven).toBe(true)
    expect(session.stopOwed).toBe(false)
    expect(onStopOwed).not.toHaveBeenCalled()
  })
})

// Found by an audit (helper-211): a shutdown of a lost PTY refused as provider_disposed (the
// provider disposed, or being disposed) was not noted as a stop request. A look on its way when the
// disposal began may still prove the program gone while the disposal runs: its exit then said
// diedBeforeStopRequest — that its end was known before the request, which nobody knew.
describe('a shutdown of a lost PTY refused after the disposal', () => {
  it('is noted as a stop request: the exit of its program proven gone later claims neither flag', async () => {
    const { session, channel, table, exits } = lostSession()
    const noConnection = { openConnection: () => null, holdForStop: () => () => undefined, isConnected: () => false } as unknown as SshConnectionKeeper
    const timings = { hangupGraceMs: 100, terminateGraceMs: 100, shutdownDeadlineMs: 1_000 }
    await expect(shutdownSshPty(table, noConnection, timings, 'p', {}, { isDisposed: () => true })).rejects.toMatchObject({ code: 'provider_disposed', ptyId: 'p' })
    // The look already on its way answers: gone.
    expect(session.settleGone()).toBe(true)
    channel.emit('close')
    expect(exits).toEqual([UNREPORTED])
  })
})

describe('a program whose end the server reported', () => {
  it('is read to its end: a pause in force resumes and later pauses are ignored, so its exit is not held', () => {
    const { session, channel, exits } = liveSession()
    session.pause()
    expect(channel.reading).toBe(false)
    channel.emit('exit', 7)
    // Before: the channel stayed paused, and the exit (published at the close, after the output
    // the pause held) waited for a consumer that had stopped reading.
    expect(channel.reading).toBe(true)
    session.pause()
    expect(channel.reading).toBe(true)
    channel.emit('close')
    expect(exits).toEqual([{ id: 'p', incarnationId: 'i', code: 7, cause: { kind: 'exited', exitCode: 7 }, diedBeforeStopRequest: true }])
  })

  it('reads past a pause only up to a budget: a background job still writing after the end is throttled again', () => {
    const { session, channel, exits } = liveSession()
    session.pause()
    channel.emit('exit', 0)
    expect(channel.reading).toBe(true)
    // The tail ssh2 buffered behind the pause and the window in flight: read out.
    channel.emit('data', Buffer.alloc(SSH_END_READ_OUT_BUDGET_BYTES - 1, 'x'))
    expect(channel.reading).toBe(true)
    // More than a dead program can have left: a live writer (a server that keeps the channel open
    // past the report may let it write on). Before: read for good, buffered without bound in the app.
    channel.emit('data', Buffer.alloc(1, 'x'))
    expect(channel.reading).toBe(false)
    session.resume()
    expect(channel.reading).toBe(true)
    channel.emit('close')
    expect(exits).toHaveLength(1)
  })

  it('just before its connection dropped, the channel still open: the reported exit at the close, and a stop resolves with no connection', async () => {
    const { session, channel, table, exits, loseConnection } = liveSession()
    channel.emit('exit', null, 'TERM')
    loseConnection()
    expect(session.state).toBe('lost')
    expect(session.endProven).toBe(true)
    // No connection to judge it: the server's report is the proof.
    await expectDeadWithNoConnection(session, table)
    expect(exits).toEqual([])
    channel.emit('close')
    expect(exits).toEqual([{ id: 'p', incarnationId: 'i', code: 143, cause: { kind: 'signaled', signal: 15 }, diedBeforeStopRequest: true }])
  })
})

describe('a program whose end the server reported after a stop was asked for', () => {
  // The sweep script's answer when it found nothing of the session but the leader.
  const nothingLeft = async () => ({ stdout: 'r 0 ok\nend\n', code: 0 })
  const timings = { immediate: false, hangupGraceMs: 2_000, terminateGraceMs: 2_000 }

  it('killed by a signal the stop never sent: it died on its own, its cause is kept (diedBeforeStopRequest)', async () => {
    const { session, channel, connection, exits } = liveSession()
    connection.run = nothingLeft
    // The server's report of an outside `kill -9` crosses the stop's hang-up on the wire.
    channel.signal = (name: string) => {
      channel.signals.push(name)
      setTimeout(() => {
        channel.emit('exit', null, 'SIGKILL')
        channel.emit('close')
      }, 5)
    }
    await stopSshSession(session, { ...timings, deadlineEpochMs: Date.now() + 5_000 })
    expect(channel.signals).toEqual(['HUP'])
    // Before: no flag — the controller published an operator close for a program the stop never reached.
    expect(exits).toEqual([{ id: 'p', incarnationId: 'i', code: 137, cause: { kind: 'signaled', signal: 9 }, diedBeforeStopRequest: true }])
  })

  it('killed by a signal the stop had sent by the report (its own KILL crossing an outside one), or by its hang-up: the stop\'s', () => {
    for (const [sent, reported] of [
      [['HUP', 'TERM', 'KILL'], 'SIGKILL'],
      [['HUP'], 'SIGHUP'],
      // Closing the channel hangs the terminal up.
      [['KILL', 'HUP'], 'HUP'],
    ] as const) {
      const { session, channel, exits } = liveSession()
      session.beginStop()
      for (const signal of sent) session.noteStopSignal(signal)
      channel.emit('exit', null, reported)
      channel.emit('close')
      expect(exits, `${sent.join(',')} then ${reported}`).toHaveLength(1)
      expect(exits[0]!.diedBeforeStopRequest, `${sent.join(',')} then ${reported}`).toBeUndefined()
      // Said outright: a stop made on the provider itself (no controller asked) is an operator close too.
      expect(exits[0]!.stopRequestedBeforeDeath, `${sent.join(',')} then ${reported}`).toBe(true)
    }
  })

  it('a KILL sent only after the report does not count; an exit code, another signal or one outside the table is no evidence', () => {
    const late = liveSession()
    late.session.beginStop()
    late.session.noteStopSignal('HUP')
    late.channel.emit('exit', null, 'SIGKILL')
    late.session.noteStopSignal('KILL')
    late.channel.emit('close')
    expect(late.exits[0]).toMatchObject({ cause: { kind: 'signaled', signal: 9 }, diedBeforeStopRequest: true })
    expect(late.exits[0]!.stopRequestedBeforeDeath).toBeUndefined()
    // PIPE, ABRT, TERM: what the stop's hang-up may cause at one remove (a pipe's reader it ended, a
    // HUP handler that aborts) — the death came after the stop request, so it stays the stop's.
    for (const report of [[0], [1], [null, 'SIGWHATEVER'], [null, 'SIGPIPE'], [null, 'SIGABRT'], [null, 'SIGTERM']] as const) {
      const { session, channel, exits } = liveSession()
      session.beginStop()
      session.noteStopSignal('HUP')
      channel.emit('exit', ...report)
      channel.emit('close')
      expect(exits[0]!.diedBeforeStopRequest, JSON.stringify(report)).toBeUndefined()
      expect(exits[0]!.stopRequestedBeforeDeath, JSON.stringify(report)).toBe(true)
    }
  })
})

describe('a stop whose connection the provider closed itself', () => {
  // A dropped connection hung its sessions up, and no look can tell more: the leader's exit ends
  // the stop (documented). A connection the provider closed (its disposal, or — before 6 Dec — an
  // extra connection closed as its last PTY channel closed, in the middle of the stop) is no such
  // evidence: what is left of the session is unknown.
  it('is not verified by the leader\'s exit alone: it times out, saying the side shell did not answer', async () => {
    const { session, channel, connection } = liveSession()
    channel.emit('exit', 0)
    channel.emit('close')
    Object.assign(connection, { lost: true, closedOnPurpose: true, run: async () => null })
    const stop = stopSshSession(session, { immediate: false, deadlineEpochMs: Date.now() + 400, hangupGraceMs: 50, terminateGraceMs: 50 })
    await expect(stop).rejects.toMatchObject({ code: 'shutdown_timeout', message: expect.stringMatching(/could not be looked at/) })
  })
})

/**
 * What `spawnSshPty` runs on, over a fake `keeper`: a session table whose data and exits are
 * written down in `heard`, and the launches given up in `abandoned`.
 */
function spawnContextOver(keeper: unknown, launchTimeoutMs: number) {
  const table = new SshSessionTable()
  const heard: string[] = []
  table.dataListeners.add((event) => heard.push(`data ${event.data}`))
  table.exitListeners.add((event) => heard.push(`exit ${event.id}`))
  const abandoned = new Set<string>()
  const context = {
    hostId: 'ssh:test',
    table,
    keeper: keeper as SshConnectionKeeper,
    abandonedLaunches: { add: (added: string) => void abandoned.add(added), remove: (removed: string) => void abandoned.delete(removed) },
    terminalName: 'xterm',
    launchTimeoutMs,
    timings: { hangupGraceMs: 100, terminateGraceMs: 100, shutdownDeadlineMs: 1_000 },
    assertNotDisposed: () => undefined,
    disposal: () => null,
    holdConnection: <T>(work: () => Promise<T>) => work(),
  }
  return { context, table, heard, abandoned }
}

describe('a launch whose start was not seen within launchTimeoutMs', () => {
  /**
   * A spawn on a fake channel that never shows the launch marker in time; `answerKill` says
   * whether the server answers the `KILL` request with the program's end (OpenSSH ignores it for
   * root). Returns the spawn's failure, the requests the channel got in order, and what the
   * provider's listeners heard.
   */
  async function launchNotSeen(answerKill: boolean) {
    const requests: string[] = []
    const channel = Object.assign(new EventEmitter(), {
      stderr: Object.assign(new EventEmitter(), { resume: () => undefined }),
      pause: () => undefined,
      resume: () => undefined,
      write: () => true,
      signal: (name: string) => {
        requests.push(`signal ${name}`)
        if (answerKill) setTimeout(() => channel.emit('exit', null, name), 5)
      },
      close: () => {
        requests.push('close')
        // A marker still in flight, read after the spawn gave up: it must announce nothing.
        channel.emit('data', Buffer.from(`\x1b]ptykit-ssh;${nonce};4242;1;boot\x07late output`))
        channel.emit('close')
      },
    })
    let reported: ChannelExitStatus | null = null
    channel.on('exit', (code: number | null, signal?: string) => void (reported ??= { code, signal }))
    const connection = { lost: false }
    let nonce = ''
    const keeper = {
      connect: async () => connection,
      openPtyChannel: async (command: string) => {
        nonce = /ptykit-ssh;([0-9a-f]+);/.exec(command)?.[1] ?? ''
        return { connection, opened: { channel, exitStatus: () => reported } }
      },
    }
    const { context, table, heard, abandoned } = spawnContextOver(keeper, 1_000)
    const failure = await spawnSshPty(context, { file: '/bin/sh' }).catch((error: unknown) => error)
    return { failure, requests, heard, table, abandoned: [...abandoned], nonce }
  }

  it('kills what it may have started before closing, and says not started once the server reported the end', async () => {
    const { failure, requests, heard, table, abandoned } = await launchNotSeen(true)
    expect(isSshProviderError(failure) && failure.code).toBe('spawn_failed')
    expect((failure as { processMayExist: boolean }).processMayExist).toBe(false)
    // Before: the channel was closed and nothing else (a program ignoring the hangup survived).
    expect(requests).toEqual(['signal KILL', 'close'])
    expect(heard).toEqual([])
    expect(table.sessions.size).toBe(0)
    // Its end is proven: nothing is left to look for.
    expect(abandoned).toEqual([])
  })

  it('says the program may exist when the server never reported its end (a root login ignores the request)', async () => {
    const { failure, requests, heard, abandoned, nonce } = await launchNotSeen(false)
    expect(isSshProviderError(failure) && failure.code).toBe('spawn_failed')
    // Before: a plain spawn_failed, which a controller reports as outcome not_started.
    expect((failure as { processMayExist: boolean }).processMayExist).toBe(true)
    expect((failure as Error).message).toContain('may run on the server')
    expect(requests).toEqual(['signal KILL', 'close'])
    expect(heard).toEqual([])
    // It may run with no pid to reach it by: it is looked for by its launch's nonce.
    expect(abandoned).toEqual([nonce])
  })
})

describe('a spawn whose channel open is unanswered at launchTimeoutMs', () => {
  /**
   * A spawn whose keeper holds the open: `sent` says whether the open went out (then it is answered
   * only when the test calls `answer`, with a channel whose KILL request the server answers with
   * the program's end), or whether it waits for a connection with room until the spawn gives up.
   */
  function heldOpen(sent: boolean) {
    const requests: string[] = []
    const channel = Object.assign(new EventEmitter(), {
      stderr: Object.assign(new EventEmitter(), { resume: () => undefined }),
      pause: () => undefined,
      resume: () => undefined,
      write: () => true,
      signal: (name: string) => {
        requests.push(`signal ${name}`)
        setTimeout(() => channel.emit('exit', null, name), 5)
      },
      close: () => {
        requests.push('close')
        channel.emit('close')
      },
    })
    let reported: ChannelExitStatus | null = null
    channel.on('exit', (code: number | null, signal?: string) => void (reported ??= { code, signal }))
    const connection = { lost: false }
    let answer: () => void = () => undefined
    let openSettled: () => void = () => undefined
    const settled = new Promise<void>((resolve) => (openSettled = resolve))
    const keeper = {
      connect: async () => connection,
      openPtyChannel: (_command: string, _pty: unknown, { giveUp, onRequest }: { giveUp: AbortSignal; onRequest: (state: 'sent' | 'refused') => void }) =>
        new Promise((resolve, reject) => {
          if (sent) {
            onRequest('sent')
            answer = () => resolve({ connection, opened: { channel, exitStatus: () => reported } })
          } else {
            // Waiting for a connection with room: the open never goes out once the spawn gave up.
            giveUp.addEventListener('abort', () => reject(new Error('given up before the open was sent')))
          }
        }).finally(() => setImmediate(openSettled)),
    }
    const { context, table, heard, abandoned } = spawnContextOver(keeper, 300)
    return { context, requests, heard, table, abandoned, answer: () => answer(), settled }
  }

  it('an open that went out: rejects at the timeout saying the program may exist; answered late, its launch is killed and its channel closed, never a PTY', async () => {
    const held = heldOpen(true)
    const calledAt = performance.now()
    const failure = await spawnSshPty(held.context, { file: '/bin/sh', sessionId: 'late' }).catch((error: unknown) => error)
    // Before: it waited for the channel, however long the link stayed frozen.
    expect(performance.now() - calledAt).toBeLessThan(300 + 1_000)
    expect(isSshProviderError(failure) && failure.code).toBe('spawn_failed')
    expect((failure as Error).message).toContain('within 300 ms')
    expect((failure as { processMayExist: boolean }).processMayExist).toBe(true)
    expect(held.abandoned.size).toBe(1)
    held.answer()
    await held.settled
    await vi.waitFor(() => expect(held.requests).toEqual(['signal KILL', 'close']))
    // Its end was reported: nothing left to look for; nothing was ever announced or held.
    expect(held.abandoned.size).toBe(0)
    expect(held.table.sessions.size).toBe(0)
    expect(held.heard).toEqual([])
  })

  it('an open that had not gone out (no connection with room yet): rejects at the timeout, nothing sent, nothing looked for', async () => {
    const held = heldOpen(false)
    const failure = await spawnSshPty(held.context, { file: '/bin/sh' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('spawn_failed')
    expect((failure as { processMayExist: boolean }).processMayExist).toBe(false)
    await held.settled
    expect(held.abandoned.size).toBe(0)
    expect(held.requests).toEqual([])
    expect(held.table.sessions.size).toBe(0)
  })
})

describe('an SSH stop under a wall clock that jumps (a test mocking Date, NTP stepping it)', () => {
  // The stop's steps and deadline are counted on the timers' clock once the caller's epoch
  // deadline is read: a frozen `Date` kept the sweep polling for ever, past the deadline.
  it('a frozen Date: a stop that cannot be verified still times out at its deadline', async () => {
    const { session, channel, connection } = liveSession()
    channel.emit('exit', 0)
    channel.emit('close')
    Object.assign(connection, { lost: true, closedOnPurpose: true, run: async () => null })
    const now = Date.now()
    const frozen = vi.spyOn(Date, 'now').mockReturnValue(now)
    try {
      const stop = stopSshSession(session, { immediate: false, deadlineEpochMs: now + 400, hangupGraceMs: 50, terminateGraceMs: 50 })
      const outcome = await Promise.race([
        stop.then(
          () => 'resolved',
          (error: { code?: string }) => error.code,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_500)),
      ])
      expect(outcome).toBe('shutdown_timeout')
    } finally {
      frozen.mockRestore()
    }
  })
})

// A review (helper-208) asked what happens when something throws between the steps of an exit or
// of a spawn's channel open. Nothing of the provider's own throws there today (its `onSettled` only
// updates a map and a set; listeners run through a listener set, which catches their throws; its
// `holdConnection` wraps its work in an async function): these tests inject a collaborator that
// throws, and check that the exit still goes out, `settled` resolves, and no id stays "opening".
describe('an SSH PTY whose bookkeeping throws', () => {
  const throwingOnSettled = (table: SshSessionTable) => ({
    ...table.sessionHooks,
    onSettled: () => {
      throw new Error('bookkeeping failed')
    },
  })

  it('still reports its exit and resolves settled when onSettled throws (the error still surfaces)', async () => {
    const { session, channel, exits } = liveSession(throwingOnSettled)
    channel.emit('exit', 3)
    expect(() => channel.emit('close')).toThrow('bookkeeping failed')
    expect(exits).toMatchObject([{ id: 'p', code: 3, cause: { kind: 'exited', exitCode: 3 } }])
    await expect(session.settled).resolves.toBeUndefined()
  })

  it('resolves settled when it is lost and onSettled throws', async () => {
    const { session, loseConnection } = liveSession(throwingOnSettled)
    expect(() => loseConnection()).toThrow('bookkeeping failed')
    expect(session.state).toBe('lost')
    await expect(session.settled).resolves.toBeUndefined()
  })

  it('reports a lost program proven gone when onSettled throws', () => {
    const { session, channel, exits, loseConnection } = liveSession(throwingOnSettled)
    expect(() => loseConnection()).toThrow('bookkeeping failed')
    channel.emit('close')
    expect(() => session.settleGone()).toThrow('bookkeeping failed')
    expect(exits).toMatchObject([{ id: 'p', cause: { kind: 'unknown', reason: 'cause_unreported' } }])
  })

  it('delivers every event held for the spawn reply even when delivering one throws', () => {
    const noop = () => undefined
    const channel = Object.assign(new EventEmitter(), { stderr: Object.assign(new EventEmitter(), { resume: noop }), pause: noop, resume: noop, close: noop })
    let reported: ChannelExitStatus | null = null
    channel.on('exit', (code: number | null, signal?: string) => void (reported ??= { code, signal }))
    const table = new SshSessionTable()
    const heard: string[] = []
    const hooks = {
      emitData: (event: { data: string }) => {
        heard.push(`data ${event.data}`)
        throw new Error('data hook failed')
      },
      emitExit: (event: PtyExitEvent) => void heard.push(`exit ${event.code}`),
      onSettled: table.sessionHooks.onSettled,
    }
    const launch = { command: 'sh', nonce: 'n', cols: 80, rows: 24, file: null, startupCommand: undefined }
    const fields = { id: 'p', incarnationId: 'i', channel, exitStatus: () => reported, connection: { lost: false }, launch, scopeId: undefined, slotKey: undefined, claimKey: undefined }
    const session = new (SshPtySessionClass as unknown as new (fields: unknown, hooks: unknown) => SshPtySession)(fields, hooks)
    // Held until the spawn reply: the marker, then output and the exit in the same packet.
    channel.emit('data', Buffer.from('\x1b]ptykit-ssh;n;4242;1;beef\x07hello'))
    channel.emit('exit', 0)
    channel.emit('close')
    expect(heard).toEqual([])
    expect(() => session.release()).toThrow('data hook failed')
    expect(heard).toEqual(['data hello', 'exit 0'])
  })

  it('leaves no id opening when setting up the channel open throws', async () => {
    const keeper = { connect: async () => ({ lost: false }) }
    const { context, table } = spawnContextOver(keeper, 1_000)
    const throwing = {
      ...context,
      holdConnection: () => {
        throw new Error('hold failed')
      },
    }
    await expect(spawnSshPty(throwing, { file: '/bin/sh', sessionId: 'same' })).rejects.toThrow('hold failed')
    expect(table.openingIds.size).toBe(0)
  })
})


// helper-208: the refusals of a lost PTY said its connection dropped, also when only its channel had closed.
describe('how a lost SSH PTY was lost, as its refusals say it', () => {
  it('names a channel the server closed, one a stop closed, and a dropped connection apart', () => {
    const byServer = liveSession()
    expect(byServer.session.lossDescription).toBeNull()
    byServer.channel.emit('close')
    expect(byServer.session.lossDescription).toBe('the server closed its channel without an exit status (its SSH connection is still open)')
    byServer.connection.lost = true
    expect(byServer.session.lossDescription).toBe('the server closed its channel without an exit status, and its SSH connection has closed since')

    const byStop = liveSession()
    byStop.session.closeChannel()
    byStop.channel.emit('close')
    expect(byStop.session.lossDescription).toBe("its channel closed at the provider's request without an exit status (its SSH connection is still open)")

    const dropped = liveSession()
    dropped.loseConnection()
    expect(dropped.session.lossDescription).toBe('its SSH connection dropped')
  })
})
