import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createSshProvider, type SshProvider, type SshProviderOptions } from 'ptykit/ssh'
import type { Ssh2Channel, Ssh2Client, Ssh2PtyRequest } from '../../src/ssh/ssh2-module.js'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { startSshLinkProxy, type SshLinkProxy } from './ssh-link-proxy.js'
import { SSH_TEST_USER, startSshd, type SshdFixture } from './sshd-fixture.js'

/** Start one sshd for the file (beforeAll) and stop it after (afterAll); returns a getter. */
export function useSshd(options: Parameters<typeof startSshd>[0] = {}): () => SshdFixture {
  let fixture: SshdFixture | undefined
  beforeAll(async () => {
    fixture = await startSshd(options)
  }, 30_000)
  afterAll(async () => {
    await fixture?.stop()
  })
  return () => {
    if (fixture === undefined) throw new Error('the sshd fixture did not start')
    return fixture
  }
}

/** Provider options that log in to the fixture as `user` with the unencrypted authorized key. */
export function sshOptions(
  fixture: SshdFixture,
  user: string = SSH_TEST_USER,
  extra: { [K in keyof SshProviderOptions]?: SshProviderOptions[K] | undefined } = {},
): SshProviderOptions {
  const options = {
    host: fixture.host,
    port: fixture.port,
    username: user,
    privateKey: fixture.clientKeyPlain,
    knownHostsPath: fixture.knownHostsPath,
    hostId: 'ssh:loopback',
    // The provider's keepalive defaults (15 s × 3), not a tight budget: with 1 s × 2 a sshd
    // descheduled for ~3 s on a loaded machine dropped the connection, and a dropped connection
    // is, by design, no exit — the test then waited in vain for one (ssh-provider.failures.test.ts
    // reproduces both outcomes with a frozen sshd). A killed sshd is noticed at once anyway.
    ...extra,
  }
  // Why: an explicit `undefined` (a test removing an option) must drop the key.
  for (const key of Object.keys(options) as Array<keyof typeof options>) if (options[key] === undefined) delete options[key]
  return options as SshProviderOptions
}

/**
 * The remote pid of `pid` runs (loopback: the remote is this machine): it exists and is neither
 * a zombie nor being reaped. A program whose sshd session was killed is reparented to pid 1,
 * which in this sandbox reaps late: its zombie answers `kill -0` but runs nothing.
 */
export function isAlive(pid: number): boolean {
  return !isDead(pid)
}

/** A live process of a PTY: its pid, name, process group and session. */
export type TaggedProcess = { pid: number; comm: string; pgrp: number; session: number }

/**
 * The live processes whose environment holds `PTYKIT_SWEEP_TAG=<tag>` (loopback: the remote is this
 * machine, so a test finds a PTY's processes by a variable its launch exported — inherited by
 * everything the PTY starts).
 */
export function taggedProcesses(tag: string): TaggedProcess[] {
  const entry = `PTYKIT_SWEEP_TAG=${tag}\0`
  const found: TaggedProcess[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (!readFileSync(`/proc/${name}/environ`, 'latin1').includes(entry) || !isAlive(Number(name))) continue
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      found.push({ pid: Number(name), comm: readFileSync(`/proc/${name}/comm`, 'utf8').trim(), pgrp: Number(fields[2]), session: Number(fields[3]) })
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** SIGKILL every live process {@link taggedProcesses} finds (a test's clean-up). */
export function killTagged(tag: string): void {
  for (const { pid } of taggedProcesses(tag)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * The live processes on this machine (loopback: the remote's) whose command line — its arguments
 * joined by spaces, as `pgrep -f` shows it — holds `commandLine` as it is written: a literal
 * string, not `pgrep -f`'s regular expression, where the `.` of `sleep 3<pid>.<ms>` matched any
 * character in any process of the machine.
 */
export function processesRunning(commandLine: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').replace(/\0$/, '').split('\0')
      if (argv.join(' ').includes(commandLine) && isAlive(Number(name))) found.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** SIGKILL the processes {@link processesRunning} finds running `commandLine`, by pid (a test's clean-up). */
export function killRunning(commandLine: string): void {
  for (const pid of processesRunning(commandLine)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * A provider and controller (host `ssh:loopback`) on `fixture`'s sshd through a fresh
 * {@link startSshLinkProxy} proxy, connected — one PTY spawned, the side shell warm — and idle,
 * so the next chunks through the proxy are the next spawn's. Disposed through `cleanups`.
 */
export async function providerThroughProxy(
  fixture: SshdFixture,
  cleanups: Array<() => Promise<void> | void>,
  extra: Partial<SshProviderOptions> = {},
): Promise<{ proxy: SshLinkProxy; provider: SshProvider; controller: PtyController }> {
  const proxy = await startSshLinkProxy(fixture)
  cleanups.push(() => proxy.close())
  const hostKey = fixture.hostPublicKey.split(' ')[1]
  const provider = createSshProvider({
    ...sshOptions(fixture, undefined, { knownHostsPath: undefined, hostVerifier: ({ keyBase64 }) => keyBase64 === hostKey, ...extra }),
    port: proxy.port,
  })
  const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
  controller.on('error', () => undefined)
  cleanups.push(async () => {
    await controller.dispose()
    await provider.dispose()
  })
  const { id } = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['300'] })
  expect(await provider.listProcesses()).toHaveLength(1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  expect(controller.hasPty(id)).toBe(true)
  return { proxy, provider, controller }
}

/**
 * Spawn `options` through `proxy` with the link lost mid-spawn: the channel open, pty request and
 * `exec` request reach the server, whose replies after `serverChunksToPass` more chunks are held;
 * once `ran()` (the program ran on the server) every connection is dropped. Resolves with what the
 * spawn rejected with (`null` had it succeeded).
 */
export async function spawnWithLinkLost(
  proxy: SshLinkProxy,
  controller: PtyController,
  options: Parameters<PtyController['spawn']>[0],
  ran: () => boolean,
  serverChunksToPass = 0,
): Promise<unknown> {
  proxy.holdServerAfter(3, serverChunksToPass)
  const spawning = controller.spawn(options).then(
    () => null,
    (error: unknown) => error,
  )
  // Both: the program can run (and say so) before the server's reply to its exec request has
  // come through — dropped then, the reply to pass would be lost too (a loaded machine).
  await waitFor(() => (ran() && proxy.holding ? true : undefined), `the program ran on the server, and ${serverChunksToPass} chunk(s) of its replies passed`, 10_000)
  proxy.dropAll()
  return spawning
}

/**
 * The real `ssh2` (a provider's `loadSsh2`), with one hook on the first PTY channel: its output —
 * the launch marker first — is held from the provider until `release` is called, which
 * `onSignal` decides on each `signal` request the provider sends on that channel (`send` passes
 * the request on; a request not passed on is dropped, as OpenSSH drops them for a root login);
 * `opened` runs as the channel is handed over. Held output is delivered in order, once.
 */
export function ssh2HoldingLaunchOutput(hooks: {
  onSignal: (name: string, send: (name: string) => void, release: () => void) => void
  opened?: () => void
}): () => Promise<unknown> {
  return async () => {
    const ssh2 = (await import('ssh2')) as unknown as { Client: new () => Ssh2Client }
    let armed = true
    class HoldingClient extends ssh2.Client {
      override exec(command: string, options: { pty?: Ssh2PtyRequest | false }, callback: (error: Error | undefined, channel: Ssh2Channel) => void): boolean {
        if (!armed || options.pty === undefined || options.pty === false) return super.exec(command, options, callback)
        armed = false
        return super.exec(command, options, (error, channel) => {
          if (error !== undefined && error !== null) return callback(error, channel)
          const held: (() => void)[] = []
          let holding = true
          const release = (): void => {
            holding = false
            for (const deliver of held.splice(0)) deliver()
          }
          const send = channel.signal.bind(channel)
          ;(channel as { signal(name: string): void }).signal = (name) => hooks.onSignal(name, send, release)
          const on = channel.on.bind(channel) as (event: string, listener: (...args: never[]) => void) => Ssh2Channel
          ;(channel as { on: typeof on }).on = (event, listener) => {
            if (event !== 'data') return on(event, listener)
            const reader = listener as (chunk: Buffer) => void
            return on('data', (chunk: Buffer) => (holding ? held.push(() => reader(chunk)) : reader(chunk)))
          }
          hooks.opened?.()
          callback(error, channel)
        })
      }
    }
    return { Client: HoldingClient }
  }
}
