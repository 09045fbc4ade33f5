import { randomBytes, timingSafeEqual } from 'node:crypto'
import { closeSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, type Stats } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { invalidPtyHostOption, PtyHostError } from './pty-host-error.js'
import { createProcFsInspector, parseProcStat } from '../node-pty/process-inspector.js'

/** How {@link isHolderAlive} reads a lock holder's `/proc` row (Linux). */
const procFs = createProcFsInspector()

/**
 * Where a host's files live: the socket, and next to it the secret (`<socket>.secret`) and the
 * lock (`<socket>.lock`). The directory is private to the user (0700).
 */
export type PtyHostPaths = {
  /** The Unix domain socket. */
  socketPath: string
  /** The per-host secret a client presents (0600). */
  secretPath: string
  /** The lock that keeps a second host off the same socket path. */
  lockPath: string
  /** The session journal (`session-journal.ts`): how a successor finds this host's sessions again. */
  journalPath: string
  /** The host's log (`host-log.ts`): the stderr of every host this app starts on the socket (0600). */
  logPath: string
}

/** What a host's `name` ({@link defaultPtyHostSocketPath}) may hold: it becomes a file name. */
const HOST_NAME_PATTERN = /^[A-Za-z0-9_-]+$/

/** The name of the default socket's file (`pty-host.sock`), shared by every app that names none. */
const DEFAULT_HOST_NAME = 'pty-host'

/**
 * The user's default socket path, always absolute: `$XDG_RUNTIME_DIR/ptykit/pty-host.sock`, else
 * `<tmpdir>/ptykit-<uid>/pty-host.sock`. A relative `XDG_RUNTIME_DIR` is ignored, as the XDG base
 * directory spec says, and a relative temporary directory is resolved against the working
 * directory (an app and the host it starts must name the same socket).
 *
 * Every app that uses the default shares one host: each lists, attaches and stops the others'
 * sessions (each spawn still starts from the environment and directory of the app that asks, its
 * provider's `spawnEnvironment: 'app'`). With `name`, the socket of a host of that name in the same
 * private directory, `<dir>/<name>.sock` (its log `<dir>/<name>.sock.log`):
 * an app that passes it as `socketPath` (to the provider, `stopPtyHost`, `launchPtyHost`,
 * `startPtyHost`) has a host of its own, which apps using the default neither see nor stop.
 *
 * @param name - the host's name, e.g. the app's (`'my-extension'`): letters, digits, `_` and `-`,
 * not `'pty-host'` (the default socket's own name)
 * @throws PtyHostError `invalid_option` naming `name` when it is not such a string, or makes a
 * path longer than a Unix socket address holds.
 */
export function defaultPtyHostSocketPath(name?: string): string {
  if (name !== undefined && (typeof name !== 'string' || !HOST_NAME_PATTERN.test(name))) {
    throw invalidPtyHostOption('name', 'a non-empty string of letters, digits, `_` and `-` (it names a file)', name)
  }
  // Why: `<dir>/pty-host.sock` is the default socket itself — the name would give the app the host
  // every app shares, not one of its own.
  if (name === DEFAULT_HOST_NAME) {
    throw invalidPtyHostOption('name', `a name other than ${JSON.stringify(DEFAULT_HOST_NAME)}, which names the default socket every app shares`, name)
  }
  const uid = process.getuid?.() ?? 0
  const runtimeDir = process.env.XDG_RUNTIME_DIR
  const dir = runtimeDir !== undefined && isAbsolute(runtimeDir) ? join(runtimeDir, 'ptykit') : resolve(tmpdir(), `ptykit-${uid}`)
  const socketPath = join(dir, `${name ?? DEFAULT_HOST_NAME}.sock`)
  const max = maxSocketPathBytes()
  if (name !== undefined && max !== undefined && Buffer.byteLength(socketPath) > max) {
    throw invalidPtyHostOption('name', `short enough for the socket path ${JSON.stringify(socketPath)} to fit a Unix socket address (${max} bytes)`, name)
  }
  return socketPath
}

/**
 * The longest socket path, in bytes, a Unix socket address holds here (`sun_path` less its NUL:
 * 107 on Linux, 103 on macOS and the BSDs); `undefined` on Windows (named pipes).
 */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number | undefined {
  if (platform === 'win32') return undefined
  return platform === 'linux' || platform === 'android' ? 107 : 103
}

/**
 * Check a `socketPath` option: a non-empty absolute path without NUL characters that fits a Unix socket address. Why
 * absolute: the app, the host it starts (in another working directory) and `stopPtyHost` must all
 * name the same socket, lock and secret.
 */
export function assertSocketPathOption(socketPath: unknown): asserts socketPath is string {
  if (typeof socketPath !== 'string' || socketPath.length === 0) throw invalidPtyHostOption('socketPath', 'a non-empty string', socketPath)
  if (!isAbsolute(socketPath)) throw invalidPtyHostOption('socketPath', 'an absolute path', socketPath)
  // No file has such a name: refused here, not at the first call, with Node's own TypeError
  // (after the socket's directory was created).
  if (socketPath.includes('\0')) throw invalidPtyHostOption('socketPath', 'an absolute path without NUL characters', socketPath)
  assertSocketPathFits(socketPath)
}

/**
 * Refuse a socket path longer than a Unix socket address holds: the kernel would bind a truncated
 * path — outside the directory whose privacy was checked — and a client would never find it.
 *
 * @throws PtyHostError `invalid_option` naming `socketPath`, its value and the limit.
 */
export function assertSocketPathFits(socketPath: string): void {
  const max = maxSocketPathBytes()
  if (max !== undefined && Buffer.byteLength(socketPath) > max) {
    throw invalidPtyHostOption('socketPath', `a path of at most ${max} bytes (the longest a Unix socket address holds)`, socketPath)
  }
}

/** The files of the host on `socketPath`. */
export function ptyHostPaths(socketPath: string): PtyHostPaths {
  return { socketPath, secretPath: `${socketPath}.secret`, lockPath: `${socketPath}.lock`, journalPath: `${socketPath}.journal`, logPath: `${socketPath}.log` }
}

function currentUid(): number | null {
  return process.getuid?.() ?? null
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/** Refuse a path not owned by this user, or open to group or others (any of the mode bits 077). */
export function assertPrivate(path: string, stats: Stats, what: string): void {
  const uid = currentUid()
  if (uid !== null && stats.uid !== uid) {
    throw new PtyHostError('insecure_socket', `Refusing the pty host ${what} ${path}: it is owned by uid ${stats.uid}, not by this user (uid ${uid})`)
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new PtyHostError('insecure_socket', `Refusing the pty host ${what} ${path}: its mode ${(stats.mode & 0o777).toString(8)} lets others in (expected no group/other bits)`)
  }
}

/** Create the socket directory (0700) if needed, and check that it is this user's and private. */
export function ensurePrivateSocketDir(socketPath: string): void {
  const dir = dirname(socketPath)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  assertSocketDirPrivate(socketPath)
}

/** Check the socket's directory: a real directory, owned by this user, mode 0700 (no group/other bits). */
export function assertSocketDirPrivate(socketPath: string): void {
  const dir = dirname(socketPath)
  const stats = lstatOrNull(dir)
  if (stats === null) throw new PtyHostError('host_unavailable', `No pty host: the socket directory ${dir} does not exist`)
  if (!stats.isDirectory()) throw new PtyHostError('insecure_socket', `Refusing the pty host socket directory ${dir}: it is not a directory`)
  assertPrivate(dir, stats, 'socket directory')
}

/**
 * What a client checks before it connects: the directory is private, the socket (if any) is a
 * socket owned by this user with mode 0600, and the secret file likewise. Throws `insecure_socket`
 * (refuse) or `host_unavailable` (nothing there).
 */
export function assertSocketSafeToConnect(paths: PtyHostPaths): void {
  assertSocketDirPrivate(paths.socketPath)
  const socket = lstatOrNull(paths.socketPath)
  if (socket === null) throw new PtyHostError('host_unavailable', `No pty host listens on ${paths.socketPath}`)
  if (!socket.isSocket()) throw new PtyHostError('insecure_socket', `Refusing ${paths.socketPath}: it is not a socket`)
  assertPrivate(paths.socketPath, socket, 'socket')
}

/** Read the host's secret, after checking the file is this user's and 0600. */
export function readHostSecret(paths: PtyHostPaths): string {
  const stats = lstatOrNull(paths.secretPath)
  if (stats === null) throw new PtyHostError('host_unavailable', `No pty host secret at ${paths.secretPath}`)
  if (!stats.isFile()) throw new PtyHostError('insecure_socket', `Refusing the pty host secret ${paths.secretPath}: not a regular file`)
  assertPrivate(paths.secretPath, stats, 'secret file')
  return readFileSync(paths.secretPath, 'utf8').trim()
}

/** Mint a fresh secret and write it (0600, atomically by rename) next to the socket. */
export function writeHostSecret(paths: PtyHostPaths): string {
  const secret = randomBytes(32).toString('hex')
  const temporary = `${paths.secretPath}.${process.pid}.tmp`
  writeFileSync(temporary, `${secret}\n`, { mode: 0o600, flag: 'w' })
  renameSync(temporary, paths.secretPath)
  return secret
}

/** Compare a presented secret with the host's, in constant time. */
export function secretsMatch(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string') return false
  const a = Buffer.from(presented, 'utf8')
  const b = Buffer.from(expected, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Who holds a lock: a pid and, where the OS tells it (Linux), that process's start time. */
export type LockHolder = { pid: number; startTime: string | null }

/** This process's start time (clock ticks since boot, `/proc/<pid>/stat`), or `null` without procfs (macOS). */
function ownStartTime(): string | null {
  try {
    return parseProcStat(readFileSync('/proc/self/stat', 'utf8'))?.startTime ?? null
  } catch {
    return null
  }
}

/**
 * The second name of a lock, a hard link to the same file, which carries the holder's start time:
 * `<socket>.lock.held-<pid>-<start time>`. Why not in the lock's content: every host before 4 Dec
 * read the lock as `Number(content.trim())`, the pid alone — a second line made it `NaN`, so such a
 * host took a live host's lock for a stale one, removed it and the socket, and served beside it
 * (the live host's sessions unreachable). The content stays the pid alone, as every version reads
 * it; the link is the holder's only while it is the same file as the lock (a stale one, left by a
 * host that died, names another file).
 */
function holderLinkPrefix(paths: PtyHostPaths, pid: number): string {
  return `${basename(paths.lockPath)}.held-${pid}-`
}

/** A lock as read: its content, the file it is (`dev`/`ino`), and the holder it names. */
type LockRead = { content: string; dev: number; ino: number; holder: LockHolder | null }

/**
 * The holder a lock's content names, or `null` when it names none (empty, or no pid: a stale
 * lock). A start time on a second line is a lock of a host of 4–6 Dec, which wrote it there.
 */
function parseLockHolder(content: string): LockHolder | null {
  const [pidLine = '', startLine = ''] = content.split('\n')
  const pid = Number(pidLine.trim())
  if (!Number.isSafeInteger(pid) || pid <= 0) return null
  const startTime = startLine.trim()
  return { pid, startTime: /^\d+$/.test(startTime) ? startTime : null }
}

/** The start time in the holder link of the lock file `read` (same file, same pid), or `null`. */
function linkedStartTime(paths: PtyHostPaths, read: { dev: number; ino: number }, pid: number): string | null {
  const prefix = holderLinkPrefix(paths, pid)
  let names: string[]
  try {
    names = readdirSync(dirname(paths.lockPath))
  } catch {
    return null
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) continue
    const stats = lstatOrNull(join(dirname(paths.lockPath), name))
    if (stats !== null && stats.dev === read.dev && stats.ino === read.ino) return name.slice(prefix.length)
  }
  return null
}

/** Read the lock (content and file in one open), or `null` when there is none. */
function readLock(paths: PtyHostPaths): LockRead | null {
  let fd: number
  try {
    fd = openSync(paths.lockPath, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  let content: string
  let stats: Stats
  try {
    stats = fstatSync(fd)
    content = readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
  const named = parseLockHolder(content)
  const holder = named === null || named.startTime !== null ? named : { pid: named.pid, startTime: linkedStartTime(paths, stats, named.pid) }
  return { content, dev: stats.dev, ino: stats.ino, holder }
}

/** Whether `read` is still the lock: the same file with the same content. */
function isStillLock(paths: PtyHostPaths, read: LockRead): boolean {
  const now = readLock(paths)
  return now !== null && now.dev === read.dev && now.ino === read.ino && now.content === read.content
}

/** Remove the holder links in the lock's directory that are not the current lock's file (left by hosts that died). */
function removeStrayHolderLinks(paths: PtyHostPaths, keep: { dev: number; ino: number } | null): void {
  const dir = dirname(paths.lockPath)
  const prefix = `${basename(paths.lockPath)}.held-`
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const path = join(dir, name)
    const stats = lstatOrNull(path)
    if (stats === null || (keep !== null && stats.dev === keep.dev && stats.ino === keep.ino)) continue
    try {
      unlinkIfPresent(path)
    } catch {
      // Not ours to remove, or gone: a stray link misleads no one (it names another file).
    }
  }
}

/**
 * The holder the host lock of `paths` names, alive or not: `null` when there is no lock or it
 * names no pid. (Whether that process still runs, and is the one that wrote the lock:
 * {@link isHolderAlive}.)
 */
export function readLockHolder(paths: PtyHostPaths): LockHolder | null {
  return readLock(paths)?.holder ?? null
}

/**
 * Whether the lock's holder still runs. A zombie does not count (Linux: state `Z` in
 * `/proc/<pid>/stat`): a host that died stays a zombie until its parent reaps it — often the app
 * that started it, which may be restarting a host at that very moment — and its lock is stale. Nor
 * does another process with the holder's pid: a lock written with a start time is held only by the
 * process that started then — without it, a host killed in a container that restarted (pids
 * counting from 1 again) left a lock no later host could take while any process had that pid.
 */
export function isHolderAlive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: the pid runs as another user; its start time (below) tells whether it is the holder.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  // No procfs (macOS and other Unixes): the signal's answer stands.
  if (process.platform !== 'linux') return true
  // The provider's own look at a pid: gone (no such process, or it died mid-read), a zombie or one
  // being reaped (an `X` is read twice), or a pid now naming a process started at another time.
  return !procFs.isGone(holder.pid, holder.startTime)
}

/**
 * How long a lock breaker (`<socket>.lock.break`) may stand before it counts as abandoned. A
 * process holds it only while it removes a stale lock (microseconds); one that stands longer was
 * left by a process that died in that window.
 */
const LOCK_BREAKER_ABANDONED_MS = 10_000

/**
 * Create `path` holding `content`, only if no file is there: the content is written to a private
 * temporary file first and hard-linked into place, so no process ever sees the file empty or half
 * written (an `O_EXCL` create followed by a write would show an empty lock for a moment, which a
 * contender would take for a stale one). `false` when `path` exists.
 */
function createExclusively(path: string, content: string): boolean {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' })
  try {
    linkSync(temporary, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    unlinkIfPresent(temporary)
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

function anotherHostIsStarting(paths: PtyHostPaths): PtyHostError {
  return new PtyHostError('host_already_running', `Could not take the pty host lock ${paths.lockPath}: another host is starting`)
}

/**
 * Remove the lock `stale` (its process is gone) — only while holding the lock breaker, and only if
 * the lock is still that file with that content. Without the breaker, two processes that both read
 * the stale lock could both remove "it": the second would remove the lock the first had just
 * created in its place, and both would run as the host.
 */
function breakStaleLock(paths: PtyHostPaths, stale: LockRead): void {
  const breaker = `${paths.lockPath}.break`
  if (!createExclusively(breaker, String(process.pid))) {
    const since = lstatOrNull(breaker)?.mtimeMs
    if (since !== undefined && Date.now() - since > LOCK_BREAKER_ABANDONED_MS) {
      unlinkIfPresent(breaker)
      return
    }
    // Another process is taking the stale lock over: it (or one that comes after it) is the host.
    throw anotherHostIsStarting(paths)
  }
  try {
    if (isStillLock(paths, stale)) unlinkIfPresent(paths.lockPath)
  } finally {
    unlinkIfPresent(breaker)
  }
}

/**
 * Create the lock holding this pid, with the holder link that names this process's start time
 * (when known) made first, to the same file: whoever sees the lock sees its link. `null` when a
 * lock is there; else the lock's file (`dev`/`ino`) and its holder link.
 */
function createLock(paths: PtyHostPaths, startTime: string | null): { dev: number; ino: number; link: string | null } | null {
  const temporary = `${paths.lockPath}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(temporary, String(process.pid), { mode: 0o600, flag: 'wx' })
  const link = startTime === null ? null : join(dirname(paths.lockPath), `${holderLinkPrefix(paths, process.pid)}${startTime}`)
  let linked = false
  try {
    if (link !== null) {
      // A link of this name is this very process's (same pid, same start time): the link of the
      // lock it holds, left alone (a second take in this process is then refused), or of one it
      // released, replaced.
      const existing = lstatOrNull(link)
      const lock = lstatOrNull(paths.lockPath)
      if (existing === null || lock === null || existing.dev !== lock.dev || existing.ino !== lock.ino) {
        unlinkIfPresent(link)
        linkSync(temporary, link)
        linked = true
      }
    }
    const stats = lstatSync(temporary)
    try {
      linkSync(temporary, paths.lockPath)
    } catch (error) {
      if (linked && link !== null) unlinkIfPresent(link)
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null
      throw error
    }
    return { dev: stats.dev, ino: stats.ino, link }
  } finally {
    unlinkIfPresent(temporary)
  }
}

/**
 * Take the host lock (`<socket>.lock`, created whole in one step: this pid, and on Linux a holder
 * link naming its start time, see `holderLinkPrefix`). A lock held by a live process refuses with `host_already_running`; a
 * stale one (its process is gone, its pid runs with another start time, or no pid in it) is taken
 * over — by one process only, however many start at once. Returns the release.
 */
export function acquireHostLock(paths: PtyHostPaths): () => void {
  return takeHostLock(paths).release
}

/**
 * {@link acquireHostLock}, also saying whether the lock was taken over from a host that died
 * without releasing it (`succeedsDeadHost`). Why it matters: a host that exits cleanly stops its
 * sessions first, but one killed (SIGKILL, a crash) leaves processes that ignored their terminal's
 * hang-up running, which its successor never held — so the successor's "no such session" proves
 * nothing for an id it never held.
 */
export function takeHostLock(paths: PtyHostPaths): { release: () => void; succeedsDeadHost: boolean } {
  const startTime = ownStartTime()
  let succeedsDeadHost = false
  for (let attempt = 0; attempt < 3; attempt++) {
    const own = createLock(paths, startTime)
    if (own !== null) {
      removeStrayHolderLinks(paths, own)
      const release = (): void => {
        try {
          const now = readLock(paths)
          if (now !== null && now.dev === own.dev && now.ino === own.ino) unlinkIfPresent(paths.lockPath)
          if (own.link !== null && lstatOrNull(own.link)?.ino === own.ino) unlinkIfPresent(own.link)
        } catch {
          // Unreadable now: nothing of ours to remove.
        }
      }
      return { release, succeedsDeadHost }
    }
    const read = readLock(paths)
    if (read === null) continue // Released (or broken) since: try again.
    const { holder } = read
    // This very process holds it only if it wrote it (same start time); a lock with this pid and
    // no start time was left by an earlier process that had the pid.
    const held = holder !== null && (holder.pid === process.pid ? startTime !== null && holder.startTime === startTime : isHolderAlive(holder))
    if (held) {
      throw new PtyHostError('host_already_running', `A pty host (pid ${holder.pid}) already serves ${paths.socketPath}; refusing to start a second one`)
    }
    breakStaleLock(paths, read)
    succeedsDeadHost = true
  }
  throw anotherHostIsStarting(paths)
}

/** Remove a stale socket file left by a dead host (only called with the lock held). */
export function removeStaleSocket(paths: PtyHostPaths): void {
  const stats = lstatOrNull(paths.socketPath)
  if (stats === null) return
  if (!stats.isSocket()) throw new PtyHostError('insecure_socket', `Refusing to replace ${paths.socketPath}: it is not a socket`)
  unlinkSync(paths.socketPath)
}
