/**
 * A throwaway OpenSSH server for the SSH provider's tests and bench: `sshd -D -e -f <config>` on
 * 127.0.0.1 and a free port, with a fresh host key, fresh client keys and a per-run
 * authorized_keys, owned (and killed) by the caller. Runs as root (it creates the test user).
 *
 * The port is found free with `listen(0)` and bound by sshd a moment later: anything else on the
 * machine (the other test files' many connections take ephemeral ports from the same range) can
 * take it in between. A first start that finds its port taken tries a fresh one; a restart, which
 * must keep its port (its clients know it), waits a bounded time for it and then names what holds it.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** The sshd binary the fixture runs. */
export const SSHD_PATH = '/usr/sbin/sshd'
/** The non-root user the tests log in as (created when missing). */
export const SSH_TEST_USER = 'ptykit-ssh'
/** The passphrase of the fixture's authorized client key. */
export const SSH_TEST_KEY_PASSPHRASE = 'ptykit-fixture-passphrase'
/** How long sshd gets to say it listens. */
const SSHD_START_TIMEOUT_MS = 10_000
/** How many ports a first start tries, each found free, before it gives up: one taken meanwhile is a race, five in a row is not. */
const SSHD_FIRST_START_PORT_ATTEMPTS = 5
/** How long a restart waits for its own port, taken meanwhile, to be free again (it must keep it: its clients know it). */
const SSHD_RESTART_BIND_TIMEOUT_MS = 10_000
/** The pause between a restart's attempts to bind its port: a connection's ephemeral port is held for its life, not a moment. */
const SSHD_RESTART_BIND_RETRY_MS = 200

/** A running throwaway sshd. */
export type SshdFixture = {
  host: '127.0.0.1'
  port: number
  dir: string
  /** The authorized client key (encrypted with {@link SSH_TEST_KEY_PASSPHRASE}), OpenSSH PEM. */
  clientKey: string
  /** The same key without passphrase (decrypting an OpenSSH key in JS costs ~2 s of bcrypt per connection). */
  clientKeyPlain: string
  /** The same key without passphrase, as a file (for the OpenSSH client in the bench). */
  clientKeyPlainPath: string
  /** A key that is not authorized. */
  wrongClientKey: string
  /** A known_hosts file that lists this server's host key under `[127.0.0.1]:port`. */
  knownHostsPath: string
  /** A known_hosts file that lists a different key for the same host. */
  wrongKnownHostsPath: string
  /** The server's host public key line (`ssh-ed25519 AAAA…`). */
  hostPublicKey: string
  /** What sshd logged so far (for failure messages). */
  log(): string
  /** How many client connections the server holds now (its per-connection sshd processes). */
  connections(): number
  /** Kill the sshd processes of the newest connection: that connection drops, the others go on. */
  killNewestConnection(): void
  /** Kill the listener and every per-connection sshd: connections drop mid-session. */
  killAll(): Promise<void>
  /**
   * {@link SshdFixture.killAll}, then listen again on the same port with the same keys: a server
   * restart. When something took the port meanwhile, waits for it a bounded time, then fails naming
   * the port and what holds it.
   */
  restart(): Promise<void>
  /**
   * Freeze every per-connection sshd (SIGSTOP) for `ms`, then let it go on (SIGCONT): a server
   * that stops answering for a while, as a descheduled sshd on a loaded machine does.
   */
  stall(ms: number): Promise<void>
  /**
   * Freeze every per-connection sshd (SIGSTOP) until the returned thaw is called (SIGCONT): the
   * server reads nothing of its PTYs meanwhile — what a program writes waits in the PTY.
   */
  freeze(): () => void
  /** Stop the server and remove its files. */
  stop(): Promise<void>
}

function requireSshd(): void {
  if (!existsSync(SSHD_PATH)) {
    throw new Error(
      `The SSH provider tests need OpenSSH's server at ${SSHD_PATH}, which is missing. ` +
        'Install it with `apt-get update && apt-get install -y openssh-server` (Debian/Ubuntu), then run the tests again.',
    )
  }
}

/** Create the non-root test user if missing, unlocked for key logins (sshd without PAM refuses locked accounts). */
export function ensureTestUser(): void {
  try {
    execFileSync('id', [SSH_TEST_USER], { stdio: 'ignore' })
  } catch {
    try {
      execFileSync('useradd', ['-m', '-s', '/bin/sh', SSH_TEST_USER], { stdio: 'ignore' })
    } catch (error) {
      // Two test files starting at once (two vitest workers) may both add it: one of them loses.
      try {
        execFileSync('id', [SSH_TEST_USER], { stdio: 'ignore' })
      } catch {
        throw error
      }
    }
  }
  execFileSync('usermod', ['-p', '*', SSH_TEST_USER], { stdio: 'ignore' })
}

/**
 * A second non-root login whose shell is bash, for the tests of a slow login: its `~/.bashrc`
 * (which bash reads for a command sshd runs, before the command) sleeps while the server's flag
 * file says so (see {@link slowLoginRc}), and does nothing otherwise.
 *
 * Not `ptykit-ssh-slowrc`, whose rc file read a machine-wide flag directory
 * (`/tmp/ptykit-slow-rc`): a clone with the earlier fixture rewrites that user's rc file as it
 * runs, and must not undo this one's.
 */
export const SSH_SLOW_RC_USER = 'ptykit-ssh-slowlogin'
/**
 * The variable each fixture's sshd sets in its sessions (`SetEnv`): the path of the server's flag
 * file, in the server's own directory — under the run's scratch directory, removed with the server.
 */
const SLOW_LOGIN_FLAG_VARIABLE = 'PTYKIT_SLOW_LOGIN_FLAG'
/** The flag file's name in the server's directory: it holds the seconds a login sleeps. */
const SLOW_LOGIN_FLAG_FILE = 'slow-login-seconds'
/** The slow-login user's `~/.bashrc`: the same for every run and clone, so their rewrites agree. */
const SLOW_LOGIN_RC = [
  '# ptykit tests: a slow login while the server\'s flag file says so (test/ssh/sshd-fixture.ts)',
  `f="\${${SLOW_LOGIN_FLAG_VARIABLE}:-}"`,
  '[ -n "$f" ] && [ -f "$f" ] && sleep "$(cat "$f")"',
  '',
].join('\n')

/** Create {@link SSH_SLOW_RC_USER} if missing (as {@link ensureTestUser}), and (re)write its `~/.bashrc`. */
export function ensureSlowRcUser(): void {
  try {
    execFileSync('id', [SSH_SLOW_RC_USER], { stdio: 'ignore' })
  } catch {
    try {
      execFileSync('useradd', ['-m', '-s', '/bin/bash', SSH_SLOW_RC_USER], { stdio: 'ignore' })
    } catch (error) {
      try {
        execFileSync('id', [SSH_SLOW_RC_USER], { stdio: 'ignore' })
      } catch {
        throw error
      }
    }
  }
  execFileSync('usermod', ['-p', '*', SSH_SLOW_RC_USER], { stdio: 'ignore' })
  const home = execFileSync('getent', ['passwd', SSH_SLOW_RC_USER], { encoding: 'utf8' }).trim().split(':')[5]!
  const rc = path.join(home, '.bashrc')
  let current: string | undefined
  try {
    current = readFileSync(rc, 'utf8')
  } catch {
    // None yet.
  }
  if (current === SLOW_LOGIN_RC) return
  // Whole or not at all: a login of another test file may be reading it right now.
  const next = `${rc}.ptykit-${process.pid}`
  writeFileSync(next, SLOW_LOGIN_RC, { mode: 0o644 })
  renameSync(next, rc)
}

/**
 * From now on, every session {@link SSH_SLOW_RC_USER} opens on `fixture`'s server (a PTY's, a
 * side shell's) spends `seconds` in the login's rc file before its command runs — as a remote
 * `~/.bashrc` that sleeps does. Returns the undo. The flag is the server's own file, in its
 * directory: no other server (another test file's, another run's) sees it, and
 * {@link SshdFixture.stop} removes it with the directory, undone or not.
 */
export function slowLoginRc(fixture: { dir: string }, seconds: number): () => void {
  ensureSlowRcUser()
  const flag = path.join(fixture.dir, SLOW_LOGIN_FLAG_FILE)
  writeFileSync(flag, String(seconds), { mode: 0o644 })
  return () => rmSync(flag, { force: true })
}

/** A port the OS says is free now (`listen(0)`, closed again): free when asked, not when sshd binds it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** What sshd logs when another socket holds its port (`Bind to port N on 127.0.0.1 failed: Address already in use.`). */
const PORT_TAKEN_LOG = /Address already in use/

/**
 * What holds `port` on this machine now, for a failure message: the sockets `ss` lists with their
 * processes (or `lsof`'s, where `ss` is missing), or a sentence saying none was found.
 */
export function describePortHolders(port: number): string {
  const tools: Array<[string, string[]]> = [
    ['ss', ['-Hantp', `sport = :${port}`]],
    ['lsof', ['-nP', `-iTCP:${port}`]],
  ]
  for (const [tool, args] of tools) {
    const listed = spawnSync(tool, args, { encoding: 'utf8', timeout: 5_000 })
    if (listed.error !== undefined || listed.status !== 0) continue
    const out = listed.stdout.trim()
    return out === '' ? `no socket on port ${port} now (\`${tool} ${args.join(' ')}\` lists none): it was freed meanwhile` : `\`${tool} ${args.join(' ')}\`:\n${out}`
  }
  return `neither ss nor lsof could list what holds port ${port}`
}

function keygen(file: string, passphrase: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'ptykit-fixture', '-f', file], { stdio: 'ignore' })
}

/** Every process's parent and start time (clock ticks since boot), by pid. */
function processTable(): Map<number, { ppid: number; startTime: number }> {
  const table = new Map<number, { ppid: number; startTime: number }>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // After the command's closing parenthesis: 0 state, 1 ppid, … 19 starttime.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      table.set(Number(name), { ppid: Number(fields[1]), startTime: Number(fields[19]) })
    } catch {
      // Gone meanwhile.
    }
  }
  return table
}

/** Every process's parent, by pid. */
function processParents(): Map<number, number> {
  return new Map([...processTable()].map(([pid, { ppid }]) => [pid, ppid]))
}

/**
 * The pids whose parent is `root`, oldest first: by start time, not by pid — pids wrap around
 * (`pid_max` is 32 768 on the CI machines), so a newer process can have a lower pid.
 */
function childrenOf(root: number): number[] {
  return [...processTable()]
    .filter(([, { ppid }]) => ppid === root)
    .sort(([pidA, a], [pidB, b]) => a.startTime - b.startTime || pidA - pidB)
    .map(([pid]) => pid)
}

/** Every pid whose parent chain leads to `root` (not `root` itself). */
function descendantsOf(root: number): number[] {
  const parents = processParents()
  const found: number[] = []
  let frontier = [root]
  while (frontier.length > 0) {
    const next: number[] = []
    for (const [pid, ppid] of parents) if (frontier.includes(ppid)) next.push(pid)
    found.push(...next)
    frontier = next
  }
  return found
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** How {@link startSshd} sets its server up. */
export type SshdOptions = {
  /** The server's `MaxSessions` (default 256; a stock server's is 10). */
  maxSessions?: number
  /** The server's `MaxStartups` (default `100:30:200`). */
  maxStartups?: string
  /**
   * Where a first start gets each port it tries (default: one the OS says is free now). A test of
   * the fixture injects a port it holds, to take it before sshd binds it.
   */
  choosePort?: () => Promise<number>
  /** How long {@link SshdFixture.restart} waits for its port, taken meanwhile (default 10 s). */
  restartBindTimeoutMs?: number
  /**
   * The server's `ChannelTimeout` (none by default), e.g. `session=3`: it closes a channel idle that
   * long without an exit report while the connection stays open (its program gets the pty's hang-up).
   */
  channelTimeout?: string
}

/**
 * Start a throwaway sshd. FAILS (never skips) when sshd is missing, saying how to install it.
 */
export async function startSshd(options: SshdOptions = {}): Promise<SshdFixture> {
  requireSshd()
  ensureTestUser()
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  const dir = mkdtempSync(path.join(tmpdir(), 'ptykit-sshd-'))
  // The test user reads authorized_keys through this directory (sshd drops to the user to read it).
  chmodSync(dir, 0o755)
  const hostKeyPath = path.join(dir, 'host_ed25519')
  const otherHostKeyPath = path.join(dir, 'other_host_ed25519')
  const clientKeyPath = path.join(dir, 'client_ed25519')
  const clientKeyPlainPath = path.join(dir, 'client_plain_ed25519')
  const wrongClientKeyPath = path.join(dir, 'wrong_client_ed25519')
  keygen(hostKeyPath, '')
  keygen(otherHostKeyPath, '')
  keygen(clientKeyPath, SSH_TEST_KEY_PASSPHRASE)
  keygen(wrongClientKeyPath, '')
  // The same key without the passphrase, for the OpenSSH client (which would prompt).
  writeFileSync(clientKeyPlainPath, readFileSync(clientKeyPath))
  chmodSync(clientKeyPlainPath, 0o600)
  execFileSync('ssh-keygen', ['-q', '-p', '-P', SSH_TEST_KEY_PASSPHRASE, '-N', '', '-f', clientKeyPlainPath], { stdio: 'ignore' })
  const authorizedKeysPath = path.join(dir, 'authorized_keys')
  writeFileSync(authorizedKeysPath, readFileSync(`${clientKeyPath}.pub`), { mode: 0o644 })
  chmodSync(authorizedKeysPath, 0o644)

  const hostPublicKey = readFileSync(`${hostKeyPath}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  const otherHostPublicKey = readFileSync(`${otherHostKeyPath}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  const knownHostsPath = path.join(dir, 'known_hosts')
  const wrongKnownHostsPath = path.join(dir, 'known_hosts_wrong')
  const configPath = path.join(dir, 'sshd_config')
  /** Write the files that name the port: the known_hosts files and sshd's config. */
  const writePortFiles = (port: number): void => {
    writeFileSync(knownHostsPath, `[127.0.0.1]:${port} ${hostPublicKey}\n`)
    writeFileSync(wrongKnownHostsPath, `[127.0.0.1]:${port} ${otherHostPublicKey}\n`)
    writeFileSync(
      configPath,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKeyPath}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${authorizedKeysPath}`,
        'UsePAM no',
        'StrictModes no',
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        // The conformance suite and the scale checks open many sessions on one connection; the
        // session-limit tests set a stock server's limit (OpenSSH's default is 10).
        `MaxSessions ${options.maxSessions ?? 256}`,
        `MaxStartups ${options.maxStartups ?? '100:30:200'}`,
        'PrintMotd no',
        'PrintLastLog no',
        'LogLevel VERBOSE',
        ...(options.channelTimeout === undefined ? [] : [`ChannelTimeout ${options.channelTimeout}`]),
        // Where a slow login's rc file looks for this server's flag (see slowLoginRc).
        `SetEnv "${SLOW_LOGIN_FLAG_VARIABLE}=${path.join(dir, SLOW_LOGIN_FLAG_FILE)}"`,
        '',
      ].join('\n'),
    )
  }
  let child: ChildProcess | undefined
  // Why: a test worker that is torn down (a timeout) skips afterAll; the server must not outlive it.
  const killOnExit = (): void => {
    child?.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', killOnExit)
  let log = ''
  /**
   * Start the listener on the port the config names (again, after {@link SshdFixture.killAll}: the
   * same port, keys and config). `port_taken` when sshd exits because another socket holds the port.
   */
  const listen = async (): Promise<'listening' | 'port_taken'> => {
    const started = spawn(SSHD_PATH, ['-D', '-e', '-f', configPath], { stdio: ['ignore', 'ignore', 'pipe'] })
    child = started
    const logBefore = log.length
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        started.kill('SIGKILL')
        reject(new Error(`sshd did not start within ${SSHD_START_TIMEOUT_MS} ms:\n${log}`))
      }, SSHD_START_TIMEOUT_MS)
      started.stderr?.on('data', (chunk: Buffer) => {
        log += chunk.toString()
        if (/Server listening/.test(log.slice(logBefore))) {
          clearTimeout(timer)
          resolve('listening')
        }
      })
      // `close`, not `exit`: its last words (why it could not bind) are read by then.
      started.once('close', (code, signal) => {
        clearTimeout(timer)
        if (PORT_TAKEN_LOG.test(log.slice(logBefore))) resolve('port_taken')
        else reject(new Error(`sshd exited at start (${code ?? signal}):\n${log}`))
      })
    })
  }
  const choosePort = options.choosePort ?? freePort
  let port = 0
  try {
    const tried: string[] = []
    for (;;) {
      port = await choosePort()
      writePortFiles(port)
      if ((await listen()) === 'listening') break
      // Taken between the OS saying it was free and sshd binding it: another port, found free now.
      tried.push(`port ${port}, held by ${describePortHolders(port)}`)
      if (tried.length >= SSHD_FIRST_START_PORT_ATTEMPTS) {
        throw new Error(`sshd could not listen on any of ${tried.length} ports found free, each taken before it bound it:\n${tried.join('\n')}\n${log}`)
      }
    }
  } catch (error) {
    killOnExit()
    process.removeListener('exit', killOnExit)
    throw error
  }

  /**
   * The running listener's pid; none once it exited (killed, or it could not bind): its pid may be
   * another process's by now, whose children are none of ours.
   */
  const listenerPid = (): number | undefined => (child === undefined || hasExited(child) ? undefined : child.pid)
  /** The listener's children (one privileged sshd per connection), oldest first. */
  const connectionProcesses = (): number[] => {
    const pid = listenerPid()
    return pid === undefined ? [] : childrenOf(pid)
  }

  const killAll = async (): Promise<void> => {
    const listener = child
    const pid = listenerPid()
    if (listener === undefined || pid === undefined) return
    const descendants = descendantsOf(pid)
    listener.kill('SIGKILL')
    for (const descendant of descendants) {
      try {
        // Only the per-connection sshd processes: the sessions' own programs see the link drop.
        const comm = readFileSync(`/proc/${descendant}/comm`, 'utf8').trim()
        if (comm.startsWith('sshd')) process.kill(descendant, 'SIGKILL')
      } catch {
        // Gone meanwhile.
      }
    }
    await waitForExit(listener)
  }

  const freeze = (): (() => void) => {
    const pid = listenerPid()
    const frozen: number[] = []
    for (const descendant of pid === undefined ? [] : descendantsOf(pid)) {
      try {
        if (!readFileSync(`/proc/${descendant}/comm`, 'utf8').trim().startsWith('sshd')) continue
        process.kill(descendant, 'SIGSTOP')
        frozen.push(descendant)
      } catch {
        // Gone meanwhile.
      }
    }
    return () => {
      for (const descendant of frozen.splice(0)) {
        try {
          process.kill(descendant, 'SIGCONT')
        } catch {
          // Gone meanwhile.
        }
      }
    }
  }

  const stall = async (ms: number): Promise<void> => {
    const thaw = freeze()
    try {
      await new Promise((resolve) => setTimeout(resolve, ms))
    } finally {
      thaw()
    }
  }

  return {
    host: '127.0.0.1',
    port,
    dir,
    clientKey: readFileSync(clientKeyPath, 'utf8'),
    clientKeyPlain: readFileSync(clientKeyPlainPath, 'utf8'),
    clientKeyPlainPath,
    wrongClientKey: readFileSync(wrongClientKeyPath, 'utf8'),
    knownHostsPath,
    wrongKnownHostsPath,
    hostPublicKey,
    log: () => log,
    connections: () => connectionProcesses().length,
    killNewestConnection: () => {
      const newest = connectionProcesses().at(-1)
      if (newest === undefined) throw new Error('the server holds no connection')
      // Only its sshd processes: the sessions' own programs see the link drop.
      for (const pid of [newest, ...descendantsOf(newest)]) {
        try {
          if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('sshd')) process.kill(pid, 'SIGKILL')
        } catch {
          // Gone meanwhile.
        }
      }
    },
    killAll,
    restart: async () => {
      await killAll()
      // The same port, whatever took it meanwhile (a connection's ephemeral port, a test's server):
      // the clients know this one. Wait for it, then say what holds it.
      const deadline = Date.now() + (options.restartBindTimeoutMs ?? SSHD_RESTART_BIND_TIMEOUT_MS)
      while ((await listen()) === 'port_taken') {
        if (Date.now() >= deadline) {
          throw new Error(
            `sshd could not listen again on port ${port}: it was still taken ${options.restartBindTimeoutMs ?? SSHD_RESTART_BIND_TIMEOUT_MS} ms after the restart began, ` +
              `held by ${describePortHolders(port)}`,
          )
        }
        await new Promise((resolve) => setTimeout(resolve, SSHD_RESTART_BIND_RETRY_MS))
      }
    },
    stall,
    freeze,
    async stop() {
      process.removeListener('exit', killOnExit)
      await killAll()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
