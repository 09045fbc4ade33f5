import { inspect } from 'node:util'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyExitEvent } from 'ptykit/contracts'
import { isPtySpawnError, type PtySpawnError } from 'ptykit/spawn'
import { createSshProvider, isSshOptionError, isSshProviderError, sshKeyFingerprint, type SshProvider, type SshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { SSH_TEST_KEY_PASSPHRASE, startSshd } from './sshd-fixture.js'
import { isAlive, killRunning, processesRunning, ssh2HoldingLaunchOutput, sshOptions, useSshd } from './ssh-test-support.js'

// What must NOT connect, what must not leak, and what a dropped link does to live PTYs.
const sshd = useSshd()
const providers: SshProvider[] = []
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.dispose()))
})
function track(provider: SshProvider): SshProvider {
  providers.push(provider)
  return provider
}

/**
 * The real `ssh2`, whose first PTY channel's output — the launch marker first — reaches the
 * provider only once the provider sent a `signal` request on that channel (the `KILL` of a launch
 * it gave up): a launch marker in flight as the launch timeout passes, whatever the machine's load.
 * (Until 7 Dec it waited for a timer of the launch timeout's exact length, which the spawn no
 * longer arms: its timeout counts from the call.)
 */
function markerAfterKillRequest(): { loadSsh2: () => Promise<unknown> } {
  return {
    loadSsh2: ssh2HoldingLaunchOutput({
      onSignal: (name, send, release) => {
        send(name)
        // After the turn: the spawn has given the launch up before its marker comes.
        setImmediate(release)
      },
    }),
  }
}

const hostFingerprint = (): string => sshKeyFingerprint(Buffer.from(sshd().hostPublicKey.split(' ')[1]!, 'base64'))

describe('SSH provider: host keys and credentials', () => {
  it('refuses a changed host key with host_key_changed, naming the fingerprint', async () => {
    const provider = track(createSshProvider(sshOptions(sshd(), undefined, { knownHostsPath: sshd().wrongKnownHostsPath })))
    const failure = await provider.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('host_key_changed')
    expect((failure as Error).message).toContain(hostFingerprint())
    expect((failure as { fingerprint?: string }).fingerprint).toBe(hostFingerprint())
  })

  it('refuses an unknown host key (no silent trust on first use), and trusts it only when opted in by name', async () => {
    const knownHostsPath = path.join(sshd().dir, `known_hosts_empty_${process.pid}`)
    writeFileSync(knownHostsPath, '')
    const strict = track(createSshProvider(sshOptions(sshd(), undefined, { knownHostsPath })))
    const failure = await strict.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('host_key_unknown')
    expect((failure as Error).message).toContain(hostFingerprint())

    const tofu = track(createSshProvider(sshOptions(sshd(), undefined, { knownHostsPath, hostKeyPolicy: 'trust-on-first-use' })))
    const exits: number[] = []
    tofu.onExit((event) => exits.push(event.code))
    await tofu.spawn({ file: '/bin/sh', args: ['-c', 'exit 6'] })
    await waitFor(() => (exits.includes(6) ? true : undefined), 'the exit')
    // Recorded: a strict provider now accepts the key.
    const later = track(createSshProvider(sshOptions(sshd(), undefined, { knownHostsPath })))
    await expect(later.listProcesses().catch(() => 'down')).resolves.toBe('down')
    await later.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
  })

  it('asks a hostVerifier, and refuses with host_key_rejected when it says no', async () => {
    const seen: string[] = []
    const provider = track(
      createSshProvider(sshOptions(sshd(), undefined, { knownHostsPath: undefined, hostVerifier: (key) => (seen.push(key.fingerprint), false) })),
    )
    const failure = await provider.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('host_key_rejected')
    expect(seen).toEqual([hostFingerprint()])
  })

  it('refuses a key the server does not authorize with auth_failed, without the key in the message', async () => {
    const provider = track(createSshProvider(sshOptions(sshd(), undefined, { privateKey: sshd().wrongClientKey })))
    const failure = await provider.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('auth_failed')
    const keyBody = sshd().wrongClientKey.split('\n')[1]!
    expect(String((failure as Error).message)).not.toContain(keyBody)
  })

  it('logs in with an encrypted key and its passphrase; a wrong passphrase is never echoed', async () => {
    const good = track(createSshProvider(sshOptions(sshd(), undefined, { privateKey: sshd().clientKey, passphrase: SSH_TEST_KEY_PASSPHRASE })))
    const exits: number[] = []
    good.onExit((event) => exits.push(event.code))
    await good.spawn({ file: '/bin/sh', args: ['-c', 'exit 9'] })
    await waitFor(() => (exits.includes(9) ? true : undefined), 'the exit')
    const secret = 'not-the-passphrase-3141'
    const bad = track(createSshProvider(sshOptions(sshd(), undefined, { privateKey: sshd().clientKey, passphrase: secret })))
    const failure = await bad.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
    expect(isSshProviderError(failure) && failure.code).toBe('auth_failed')
    expect(JSON.stringify({ message: (failure as Error).message, cause: String((failure as Error).cause) })).not.toContain(secret)
  }, 30_000)

  it('refuses bad options with a typed error naming the option, before connecting', () => {
    const base = sshOptions(sshd())
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ port: 0 }, 'port'],
      [{ host: '' }, 'host'],
      [{ knownHostsPath: undefined }, 'knownHostsPath'],
      [{ privateKey: undefined }, 'privateKey'],
      [{ hostKeyPolicy: 'yolo' }, 'hostKeyPolicy'],
      [{ passphrase: 42 }, 'passphrase'],
      [{ launchTimeoutMs: 0 }, 'launchTimeoutMs'],
      [{ hangupGraceMs: 1e20 }, 'hangupGraceMs'],
      // 0 would fail every attempt at once, or (keepaliveCountMax) drop an idle link at its first keepalive.
      [{ connectTimeoutMs: 0 }, 'connectTimeoutMs'],
      [{ handshakeTimeoutMs: 0 }, 'handshakeTimeoutMs'],
      [{ keepaliveCountMax: 0 }, 'keepaliveCountMax'],
      [{ shutdownDeadlineMs: 0 }, 'shutdownDeadlineMs'],
    ]
    for (const [patch, option] of cases) {
      const error = (() => {
        try {
          createSshProvider({ ...base, ...patch } as never)
          return null
        } catch (caught) {
          return caught
        }
      })()
      expect(isSshOptionError(error) && error.option).toBe(option)
      // The message says what is expected of what it refuses (before: "non-negative" for a refused 0).
      if (patch[option] === 0 && option !== 'port') expect((error as Error).message).toContain('a positive integer, got 0')
    }
    // 0 keepalive interval is documented: no keepalives.
    expect(() => createSshProvider({ ...base, keepaliveIntervalMs: 0 })).not.toThrow()
    const secretError = (() => {
      try {
        createSshProvider({ ...base, passphrase: 12345 as never })
      } catch (caught) {
        return caught as Error
      }
      return null
    })()
    expect(secretError?.message).toContain('[redacted]')
    // The refused value is kept, except a secret's.
    expect(secretError).toMatchObject({ code: 'invalid_spawn_option', option: 'passphrase', value: undefined })
  })

  it('a spawn option it refuses reaches a controller caller as invalid_spawn_options naming the option and the value', async () => {
    const provider = track(createSshProvider(sshOptions(sshd())))
    const controller = createPtyController({ provider })
    try {
      const error = await controller.spawn({ file: '/bin/true', cwd: 42 as never }).catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'invalid_spawn_options', option: 'cwd', value: 42, outcome: 'not_started' })
      expect(isSshOptionError((error as Error).cause)).toBe(true)
      // An environment value may be a secret: named, never shown nor kept.
      const envError = await controller.spawn({ file: '/bin/true', env: { TOKEN: 4242424242 as never } }).catch((caught: unknown) => caught)
      expect(envError).toMatchObject({ code: 'invalid_spawn_options', option: 'env.TOKEN', value: undefined, outcome: 'not_started' })
      expect(inspect(envError, { depth: 10 })).not.toContain('4242424242')
      expect(isSshOptionError((envError as Error).cause)).toBe(true)
    } finally {
      await controller.dispose()
    }
  })

  it('refuses a program that cannot start as the local providers do — an option error naming `file`, saying why — before anything is committed', async () => {
    // Until 7 Dec this was `spawn_failed` ("cannot run …: not an executable file"), where node-pty
    // and the pty host refuse the option (`invalid_spawn_option`, `file`): the same bad spawn gave
    // another error class and code per provider. The remote shell checks, then says which option.
    const provider = track(createSshProvider(sshOptions(sshd())))
    for (const [file, why] of [
      ['/no/such/program', 'it does not exist'],
      ['/etc/passwd', 'it is not executable'],
      ['/etc', 'it is not a regular file'],
      ['ptykit-no-such-program', 'no executable of that name on the PATH'],
    ] as const) {
      const failure = await provider.spawn({ file }).catch((error: unknown) => error)
      expect(isSshOptionError(failure) && { code: failure.code, option: failure.option, value: failure.value }).toEqual({ code: 'invalid_spawn_option', option: 'file', value: file })
      expect((failure as Error).message).toBe(
        `Expected the \`file\` option to be an executable file (a path, or a name found on PATH), got ${JSON.stringify(file)} (string): ${why} on ssh:loopback`,
      )
    }
    expect(await provider.listProcesses()).toEqual([])
  })

  it('refuses a NUL in a launch string naming the option, and the connection and its other PTYs carry on', async () => {
    const provider = track(createSshProvider(sshOptions(sshd())))
    const running = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'] })
    for (const [options, option] of [
      [{ file: '/bin/e\0cho' }, 'file'],
      [{ file: '/bin/echo', args: ['a', 'b\0c'] }, 'args[1]'],
      [{ cwd: '/tmp\0x' }, 'cwd'],
      [{ env: { A: 'x\0y' } }, 'env.A'],
    ] as const) {
      const refused = await provider.spawn(options).catch((error: unknown) => error)
      expect(isSshOptionError(refused) && refused.option).toBe(option)
    }
    expect(provider.hasPty(running.id)).toBe(true)
    expect(await provider.probeLiveness(running.id)).toBe(true)
    await provider.shutdown(running.id, { immediate: true })
  })

  it('answers a liveness probe about an incarnation: false for an earlier one under a reused id, never true about its successor', async () => {
    const provider = track(createSshProvider(sshOptions(sshd())))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const first = await provider.spawn({ sessionId: 'probed', isNewSession: true, file: '/bin/sh', args: ['-c', 'exit 0'] })
    await waitFor(async () => (exits.some((event) => event.incarnationId === first.incarnationId) ? true : undefined), 'the first exit')
    const second = await provider.spawn({ sessionId: 'probed', isNewSession: true, file: '/bin/sh', args: ['-c', 'sleep 30'] })
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect(await provider.probeLiveness('probed')).toBe(true)
    expect(await provider.probeLiveness('probed', { incarnationId: second.incarnationId! })).toBe(true)
    expect(await provider.probeLiveness('probed', { incarnationId: first.incarnationId! })).toBe(false)
    await provider.shutdown('probed', { immediate: true })
  })

  it('refuses a missing cwd, or one that is no directory, as an option error naming `cwd`, and leaves nothing held', async () => {
    const provider = track(createSshProvider(sshOptions(sshd())))
    for (const [cwd, why] of [
      ['/no/such/dir', 'it does not exist'],
      ['/etc/passwd', 'it is not a directory'],
    ] as const) {
      const failure = await provider.spawn({ file: '/bin/true', cwd }).catch((error: unknown) => error)
      expect(isSshOptionError(failure) && { code: failure.code, option: failure.option, value: failure.value }).toEqual({ code: 'invalid_spawn_option', option: 'cwd', value: cwd })
      expect((failure as Error).message).toBe(`Expected the \`cwd\` option to be an existing directory, got ${JSON.stringify(cwd)} (string): ${why} on ssh:loopback`)
    }
    expect(await provider.listProcesses()).toEqual([])
  })

  it('stops a program whose start it did not see within launchTimeoutMs, and says not_started only once the server reported its end', async () => {
    // The launch timeout passes while the launch marker is held — and meanwhile the program, which
    // ignores the hangup a closed channel sends, has started on the server.
    const late = markerAfterKillRequest()
    const provider = track(createSshProvider(sshOptions(sshd(), undefined, { launchTimeoutMs: 3_000, loadSsh2: late.loadSsh2 })))
    const controller = createPtyController({ provider })
    // Three digits after the point: no other run's program name is this one's with more after it.
    const program = `sleep 3${process.pid}.${String(Date.now() % 1000).padStart(3, '0')}`
    const failure = await controller.spawn({ file: '/bin/sh', args: ['-c', `trap '' HUP; exec ${program}`] }).catch((error: unknown) => error)
    try {
      expect(isPtySpawnError(failure) && failure.code, JSON.stringify(failure)).toBe('provider_spawn_failed')
      const cause = (failure as PtySpawnError).cause
      expect(isSshProviderError(cause) && cause.code).toBe('spawn_failed')
      // Before: the channel was closed and nothing else — the program survived the hangup, and the
      // spawn said not_started. Now it is killed, and the server's report of its end proves it.
      await waitFor(() => (processesRunning(program).length === 0 ? true : undefined), `no ${program} left on the server`, 5_000)
      expect((cause as SshProviderError).processMayExist).toBe(false)
      expect((failure as PtySpawnError).outcome).toBe('not_started')
      expect(await provider.listProcesses()).toEqual([])
    } finally {
      // This program only, by pid (before: `pkill -f`, whose `.` killed any character's match machine-wide).
      killRunning(program)
      await controller.dispose()
    }
  }, 30_000)
})

describe('SSH provider: sshd killed mid-session', () => {
  it('makes live PTYs unverifiable (no exit, no hang), refuses their writes (nothing sent), and drops the host from the listing scope', async () => {
    // Its own server: this test kills it.
    const server = await startSshd()
    const provider = createSshProvider(sshOptions(server, undefined, { reconnectMaxAttempts: 2 }))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    try {
      const reply = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', "trap '' HUP; while :; do sleep 0.2; done"] })
      expect(await controller.probePtyLiveness(reply.id)).toBe(true)
      expect((await controller.listProcessesWithHostScope()).hostIds).toEqual(['ssh:loopback'])

      await server.killAll()
      await waitFor(() => (provider.hasPty(reply.id) === null ? true : undefined), 'the PTY to become unverifiable')
      expect(await controller.probePtyLiveness(reply.id)).toBe(null)
      // No channel to hand them to: refused, nothing sent (before 7 Dec: unverifiable/transport_lost,
      // "nobody can tell", while the pty host refused the same write).
      expect(await controller.writeWithSettlement(reply.id, 'echo hi\r', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
      expect((await controller.listProcessesWithHostScope()).hostIds).toEqual([])
      // A stop cannot reach it: not verified, and never a false exit.
      expect(await controller.stopAndWait(reply.id)).toBe(false)
      expect(exits.filter((event) => event.cause.kind !== 'unknown')).toEqual([])
      // A new spawn fails fast with a typed error rather than hanging.
      const failure = await provider.spawn({ file: '/bin/true' }).catch((error: unknown) => error)
      expect(isSshProviderError(failure)).toBe(true)
      // Why unverifiable and not exited: the program ignores HUP, so it outlived the link (loopback:
      // its host is this machine). Clean it up here, as nobody else can.
      expect(isAlive(reply.pid!)).toBe(true)
      process.kill(reply.pid!, 'SIGKILL')
    } finally {
      await controller.dispose()
      await provider.dispose()
      await server.stop()
    }
  }, 60_000)
})

describe('SSH provider: a server that stops answering for a while', () => {
  // How long sshd is frozen: longer than the ~3 s (1 s × 2) keepalive budget the tests once used, far
  // shorter than the provider's default (15 s × 3).
  const STALL_MS = 4_000

  it('within the keepalive budget, the connection holds and the exit that happened meanwhile arrives with its cause', async () => {
    const provider = track(createSshProvider(sshOptions(sshd())))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.5; exit 5'] })
    // The program exits while its sshd is frozen: the exit status waits in the server.
    await sshd().stall(STALL_MS)
    const exit = await waitFor(() => exits.find((event) => event.id === reply.id), 'the exit after the stall', 15_000)
    expect(exit.cause).toEqual({ kind: 'exited', exitCode: 5 })
    expect(provider.isConnected()).toBe(true)
  }, 30_000)

  it('past interval × (countMax + 1), keepalive drops the link: the PTY becomes unverifiable, never a false exit', async () => {
    const provider = track(createSshProvider(sshOptions(sshd(), undefined, { keepaliveIntervalMs: 500, keepaliveCountMax: 1, reconnectMaxAttempts: 0 })))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.5; exit 5'] })
    await sshd().stall(STALL_MS)
    await waitFor(() => (provider.hasPty(reply.id) === null ? true : undefined), 'the PTY to become unverifiable')
    // The program did exit (loopback: its host is this machine), but its status never crossed the
    // dropped link: the provider reports no exit rather than a guessed one.
    await waitFor(() => (isAlive(reply.pid!) ? undefined : true), 'the remote program to end', 15_000)
    expect(exits).toEqual([])
  }, 30_000)
})
