import { createHash, createHmac } from 'node:crypto'
import { describeValue } from '../contracts/describe-value.js'
import { appendFile, readFile } from 'node:fs/promises'
import { SshProviderError } from './ssh-provider-error.js'

/** What a `hostVerifier` callback is shown about the server's host key. */
export type SshHostKeyInfo = {
  /** The host as configured. */
  host: string
  /** The port as configured. */
  port: number
  /** The key type (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`…). */
  keyType: string
  /** The `SHA256:…` fingerprint, as `ssh-keygen -lf` prints it. */
  fingerprint: string
  /** The key in SSH wire format, base64 (the second field of a known_hosts line). */
  keyBase64: string
}

/**
 * Whether to accept the server's host key. Return `true` to accept. Called only for keys the
 * known_hosts file (if any) does not list; a key that contradicts known_hosts is refused before.
 */
export type SshHostVerifier = (key: SshHostKeyInfo) => boolean | Promise<boolean>

/**
 * How a host key that nobody vouches for is treated:
 * - `'strict'` (default): refused with `host_key_unknown`;
 * - `'trust-on-first-use'`: accepted once and appended to `knownHostsPath`, so a later change is
 *   refused. Opt in by this name only: it trusts whoever answers the first connection.
 */
export type SshHostKeyPolicy = 'strict' | 'trust-on-first-use'

/**
 * The `SHA256:…` fingerprint of a host key in SSH wire format.
 *
 * @throws TypeError when `key` is not a `Buffer`.
 */
export function sshKeyFingerprint(key: Buffer): string {
  assertKeyArgument(key)
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}

/**
 * The type name at the head of a key in SSH wire format (`ssh-ed25519`); `'unknown'` when malformed.
 *
 * @throws TypeError when `key` is not a `Buffer`.
 */
export function sshKeyType(key: Buffer): string {
  assertKeyArgument(key)
  if (key.length < 4) return 'unknown'
  const length = key.readUInt32BE(0)
  return length > 0 && 4 + length <= key.length ? key.subarray(4, 4 + length).toString('latin1') : 'unknown'
}

/** Throw a `TypeError` naming the argument unless it is a string (a plain-JavaScript caller may pass anything). */
function assertStringArgument(name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string') throw new TypeError(`Expected the \`${name}\` argument to be a string, got ${describeValue(value)}`)
}

/** Throw a `TypeError` unless `key` is a `Buffer` (a key in SSH wire format, as ssh2 hands it over). */
function assertKeyArgument(key: unknown): asserts key is Buffer {
  if (!Buffer.isBuffer(key)) throw new TypeError(`Expected the \`key\` argument to be a Buffer (a host key in SSH wire format), got ${describeValue(key)}`)
}

/**
 * The name a host has in known_hosts: `host` on port 22, `[host]:port` elsewhere.
 *
 * @throws TypeError when `host` is not a string or `port` not an integer from 1 to 65535 (a
 * string `'22'` included).
 */
export function knownHostsName(host: string, port: number): string {
  assertStringArgument('host', host)
  // Why: a port given as a string (`'22'`) made `[host]:22`, a name no known_hosts line uses for port 22.
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new TypeError(`Expected the \`port\` argument to be a TCP port (an integer from 1 to 65535), got ${describeValue(port)}`)
  }
  return port === 22 ? host : `[${host}]:${port}`
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${escaped}$`, 'i')
}

/** Whether one known_hosts host field (`a,b,!c`, `|1|salt|hash`, wildcards) names `name`. */
function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|')
    if (salt === undefined || hash === undefined) return false
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash
  }
  let matched = false
  for (const pattern of field.split(',')) {
    const negated = pattern.startsWith('!')
    const bare = negated ? pattern.slice(1) : pattern
    if (!globToRegExp(bare).test(name)) continue
    if (negated) return false
    matched = true
  }
  return matched
}

/** What known_hosts says about a host key: listed, contradicted (another key, or revoked), or silent. */
export type KnownHostsVerdict = 'match' | 'mismatch' | 'unknown'

/**
 * Look `key` up for `name` in the text of a known_hosts file.
 *
 * @throws TypeError when `text` or `name` is not a string, or `key` not a `Buffer`.
 */
export function lookUpKnownHosts(text: string, name: string, key: Buffer): KnownHostsVerdict {
  assertStringArgument('text', text)
  assertStringArgument('name', name)
  assertKeyArgument(key)
  const keyBase64 = key.toString('base64')
  const keyType = sshKeyType(key)
  let sawOtherKey = false
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim()
    if (line === '' || line.startsWith('#')) continue
    const fields = line.split(/\s+/)
    let marker: string | undefined
    if (fields[0]?.startsWith('@')) marker = fields.shift()
    const [hosts, type, blob] = fields
    if (hosts === undefined || type === undefined || blob === undefined) continue
    if (marker === '@cert-authority') continue
    if (!hostFieldMatches(hosts, name)) continue
    if (marker === '@revoked') {
      if (blob === keyBase64) return 'mismatch'
      continue
    }
    if (blob === keyBase64) return 'match'
    // Why per type: a host may list one key per algorithm; only the same algorithm contradicts.
    if (type === keyType) sawOtherKey = true
  }
  return sawOtherKey ? 'mismatch' : 'unknown'
}

/** The inputs of {@link verifyHostKey}. */
export type HostKeyCheck = {
  host: string
  port: number
  knownHostsPath: string | undefined
  hostVerifier: SshHostVerifier | undefined
  policy: SshHostKeyPolicy
}

/**
 * Decide on the server's host key. Resolves when it is trusted; rejects with a typed
 * `host_key_unknown` / `host_key_changed` / `host_key_rejected` error naming the fingerprint.
 */
export async function verifyHostKey(check: HostKeyCheck, key: Buffer): Promise<void> {
  const fingerprint = sshKeyFingerprint(key)
  const name = knownHostsName(check.host, check.port)
  const where = `${check.host}:${check.port}`
  if (check.knownHostsPath !== undefined) {
    let text = ''
    try {
      text = await readFile(check.knownHostsPath, 'utf8')
    } catch (error) {
      // A missing file lists nothing (trust on first use may create it); any other failure is not silence.
      if ((error as { code?: unknown }).code !== 'ENOENT') {
        throw new SshProviderError('host_key_unknown', `Cannot read the known_hosts file ${check.knownHostsPath} to verify ${where} (host key ${fingerprint})`, {
          cause: error,
          fingerprint,
        })
      }
    }
    const verdict = lookUpKnownHosts(text, name, key)
    if (verdict === 'match') return
    if (verdict === 'mismatch') {
      throw new SshProviderError(
        'host_key_changed',
        `The host key of ${where} changed: the server offered ${sshKeyType(key)} ${fingerprint}, which ${check.knownHostsPath} contradicts. Refusing to connect (someone may be impersonating the host); if the change is expected, update known_hosts.`,
        { fingerprint },
      )
    }
  }
  const info: SshHostKeyInfo = { host: check.host, port: check.port, keyType: sshKeyType(key), fingerprint, keyBase64: key.toString('base64') }
  if (check.hostVerifier !== undefined) {
    let accepted: boolean
    try {
      accepted = (await check.hostVerifier(info)) === true
    } catch (error) {
      throw new SshProviderError('host_key_rejected', `The hostVerifier threw for ${where} (host key ${fingerprint})`, { cause: error, fingerprint })
    }
    if (accepted) return
    throw new SshProviderError('host_key_rejected', `The hostVerifier refused the host key of ${where}: ${info.keyType} ${fingerprint}`, { fingerprint })
  }
  if (check.policy === 'trust-on-first-use' && check.knownHostsPath !== undefined) {
    await appendFile(check.knownHostsPath, `${name} ${info.keyType} ${info.keyBase64}\n`, { mode: 0o600 })
    return
  }
  throw new SshProviderError(
    'host_key_unknown',
    `The host key of ${where} is unknown: ${info.keyType} ${fingerprint} is not in ${check.knownHostsPath ?? 'any known_hosts file'}. ` +
      "Refusing to connect. Verify the fingerprint out of band and add it to known_hosts, pass a `hostVerifier`, or opt in with `hostKeyPolicy: 'trust-on-first-use'`.",
    { fingerprint },
  )
}
