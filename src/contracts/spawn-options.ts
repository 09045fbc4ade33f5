import type { ExecutionHostId } from './execution-host.js'
import type { PtyIncarnationId } from './incarnation.js'
import { spawnOptionFieldRefusal } from './spawn-option-refusal.js'
import { nearMissOption, optionNamesOf } from './known-options.js'

/**
 * A stable surface that owns one PTY at a time — a tab's pane, a named panel, an agent's seat.
 * Respawning a slot first tries to re-attach to its current owner, and spawns fresh only after
 * the owning host proved the owner absent.
 */
export type PtySlot = {
  /** The scope the slot belongs to; slots in different scopes never collide. */
  scopeId?: string | undefined
  /** The slot's key, unique within its scope. */
  key: string
}

/**
 * A single-flight claim: "exactly one live PTY for this key". Concurrent spawns with the same
 * claim key join one spawn; a live owner already holding the key is adopted instead of spawning.
 */
export type PtyClaim = {
  /** The identity being claimed (for example an agent session id). */
  key: string
  /** The scope the claim belongs to; the same key in another scope is a conflict. */
  scopeId?: string | undefined
}

/**
 * How the provider's output sequence relates to the controller's: returned on spawn or attach so
 * the controller can rebase its count of raw output chars.
 */
export type ProviderSequence = {
  /** The provider's absolute count of raw chars produced by this PTY so far. */
  value: number
  /**
   * `continued`: the same output stream as before (a re-attach); `reset`: a new stream (a
   * respawn, a cold restore), which also clears any stop intent recorded for the old one.
   */
  generation: 'continued' | 'reset'
}

/** Fields shared by the controller's spawn options and the provider's. */
export type PtyProcessLaunch = {
  /** The program to run as the PTY's process. Default: the host's default shell. */
  file?: string | undefined
  /** Arguments for `file`. */
  args?: readonly string[] | undefined
  /**
   * A startup command written into the shell, with input kind `launch`, once it runs. Use it to
   * start something inside an interactive shell that outlives it.
   */
  command?: string | undefined
  /** Columns; a positive integer. Default 80. */
  cols?: number | undefined
  /** Rows; a positive integer. Default 24. */
  rows?: number | undefined
  /** Working directory; must exist and be a directory. Default: the host's choice. */
  cwd?: string | undefined
  /** Environment variables to set on top of the host's environment. */
  env?: Readonly<Record<string, string>> | undefined
  /** Environment variable names to remove from the inherited environment. */
  envToDelete?: readonly string[] | undefined
}

/**
 * What a host asks the controller (or the spawn pipeline) to spawn.
 *
 * Only the launch fields reach the process; the rest tell the controller how to route, serialize,
 * fence and attribute the spawn.
 */
export type PtySpawnOptions = PtyProcessLaunch & {
  /** The host to run on. Default `'local'`. */
  hostId?: ExecutionHostId | undefined
  /** The scope the spawn belongs to; spawns are serialized per scope by the runtime's lease. */
  scopeId?: string | undefined
  /** The stable surface that will own this PTY; re-attaches to its live owner when there is one. */
  slot?: PtySlot | undefined
  /**
   * With `slot`: a release returned by the controller's `claimSlotCreate` for this slot, held by
   * the caller. The spawn runs inside that claim instead of waiting behind it.
   */
  slotCreateClaim?: (() => void) | undefined
  /** Single-flight claim; mutually exclusive with `slot`. */
  claim?: PtyClaim | undefined
  /**
   * A session id to attach to or create under, for providers with persistent sessions. The default
   * controller keeps one PTY per id across its hosts: an id live (or being spawned) on another host
   * is refused (`invalid_spawn_options`, option `sessionId`).
   */
  sessionId?: string | undefined
  /** True when `sessionId` was minted fresh by the caller (create, don't attach). */
  isNewSession?: boolean | undefined
  /** A handle the caller pre-allocated for this terminal; admitted for this spawn only. */
  preAllocatedHandle?: string | undefined
  /**
   * Cancels the spawn only before the physical provider call; afterwards the spawn completes or
   * rolls back, and never leaves a live PTY unregistered.
   */
  signal?: AbortSignal | undefined
  /**
   * Called exactly once, as soon as a process physically exists — even if the spawn is later
   * rejected. A hook that throws fails the spawn (`commit_failed`, rolled back); a promise it returns
   * is not waited for, and its rejection is reported on the controller's `error` (`listener_threw`).
   */
  onPtySpawnCommitted?: (() => void) | undefined
  /** Free-form data the host carries with the PTY (agent name, telemetry ids…); never interpreted. */
  metadata?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What a provider receives from the pipeline. Launch fields are cleared on an attach, so an
 * attach can never launch anything.
 */
export type ProviderSpawnOptions = PtyProcessLaunch & {
  /** Attach to (or create) this provider session id rather than mint a new id. */
  sessionId?: string | undefined
  /** True when `sessionId` was minted fresh (create it). */
  isNewSession?: boolean | undefined
  /** Only attach to an existing PTY; never start a process. A missing PTY is a typed absence. */
  attachOnly?: boolean | undefined
  /** With `attachOnly`: attach only if the live process is this incarnation. */
  expectedIncarnationId?: PtyIncarnationId | undefined
  /** The scope, slot key and claim key, for the provider's listings. */
  scopeId?: string | undefined
  /** The slot key, if any, for listings. */
  slotKey?: string | undefined
  /** The claim key, if any, for listings. */
  claimKey?: string | undefined
  /** Host metadata, passed through unchanged. */
  metadata?: Readonly<Record<string, unknown>> | undefined
  /** The provider calls this once, as soon as the native process exists. */
  onPtySpawnCommitted?: (() => void) | undefined
}

/**
 * A provider's reply to a spawn or attach. A provider may give any optional field as `undefined`
 * (a host compiled with `exactOptionalPropertyTypes` builds it from values it holds as
 * `T | undefined`): the pipeline and the controller read `undefined` exactly as an absent field.
 */
export type PtySpawnResult = {
  /**
   * The PTY id, globally routable within its host: a non-empty string. The spawn pipeline checks
   * every reply (`provider_spawn_failed` naming the field, the started process stopped again) —
   * this field and those below, each as its description says.
   */
  id: string
  /** The root process id, a positive integer; `null` (or absent) when the provider does not publish it. */
  pid?: number | null | undefined
  /** The incarnation the provider minted for this process; absent (or `undefined`) when it attests none. */
  incarnationId?: PtyIncarnationId | undefined
  /** True when this attached to an existing process instead of starting one (absent or `undefined`: false). */
  isReattach?: boolean | undefined
  /**
   * True when the provider saw **this** spawn's process exit before it replied. The pipeline
   * rejects such a reply (`exited_during_start`) rather than publish a dead PTY. Absent or
   * `undefined`: false.
   */
  exitedBeforeSpawnReply?: boolean | undefined
  /**
   * The provider's output sequence, to rebase the controller's count. Output the provider
   * delivered while this call was in flight counts after `value` (the controller holds it during
   * the call and places it there): `value` is where the first of it began. Absent or `undefined`:
   * the provider keeps no sequence.
   */
  providerSequence?: ProviderSequence | undefined
  /**
   * `false` when a wrapper owns the reported exit status (its code and signal describe the
   * wrapper, not the child). Exits of this PTY then resolve to `unknown/host_status_unavailable`.
   * Absent or `undefined`: the status is the child's.
   */
  hostReportsChildExitStatus?: boolean | undefined
  /** Columns the PTY actually has: an integer from 1 to `MAX_PTY_DIMENSION` (absent or `undefined`: the size asked for). */
  cols?: number | undefined
  /** Rows the PTY actually has: an integer from 1 to `MAX_PTY_DIMENSION` (absent or `undefined`: the size asked for). */
  rows?: number | undefined
}

/**
 * Internal (not exported from `ptykit/contracts`): every spawn option name, of the controller's
 * spawn options and of a provider's — the one list the pipeline's, every bundled provider's and
 * a custom provider's misspelt-option check reads ({@link findMisspeltSpawnOption}). `optionNamesOf` makes it a type
 * error to leave a key of either type out or to list a name that is none.
 */
export const SPAWN_OPTION_NAMES = optionNamesOf<PtySpawnOptions & ProviderSpawnOptions>()(
  'file',
  'args',
  'command',
  'cols',
  'rows',
  'cwd',
  'env',
  'envToDelete',
  'hostId',
  'scopeId',
  'slot',
  'slotCreateClaim',
  'claim',
  'sessionId',
  'isNewSession',
  'preAllocatedHandle',
  'signal',
  'onPtySpawnCommitted',
  'metadata',
  'attachOnly',
  'expectedIncarnationId',
  'slotKey',
  'claimKey',
)

/**
 * Likely mistakes that are no near miss of the option meant, by their name compared ignoring case,
 * `_` and `-`: the option meant and the hint. Kept small: each is a name a consumer of another
 * PTY library writes for one of ours, and that a spawn would otherwise ignore.
 */
const SESSION_ID_HINT = 'did you mean `sessionId`, the id to attach to or create under? A host\'s own data goes in `metadata`'
const SPAWN_OPTION_ALIASES: ReadonlyMap<string, { meant: string; hint: string }> = new Map([
  ['id', { meant: 'sessionId', hint: SESSION_ID_HINT }],
  ['ptyid', { meant: 'sessionId', hint: SESSION_ID_HINT }],
  ['cmd', { meant: 'file', hint: 'did you mean `file`, the program to run, or `command`, a startup command written into the shell?' }],
])

/**
 * A spawn option that likely misspells a known one, as {@link findMisspeltSpawnOption} finds it:
 * enough to refuse it in a provider's own words and error type. Or let
 * {@link assertNoMisspeltSpawnOption} throw the standard refusal.
 */
export type MisspeltSpawnOption = {
  /** The name as given (`cdw`, `sessionID`, `id`). */
  name: string
  /** The spawn option it likely means (`cwd`, `sessionId`): a key of `PtySpawnOptions` or `ProviderSpawnOptions`. */
  meant: string
  /**
   * The value given under the misspelt name. When {@link MisspeltSpawnOption.secret} is `true`, a
   * refusal neither shows it in its message nor keeps it on the error.
   */
  value: unknown
  /** True when the option meant is `env`: the value may hold secrets (tokens, keys), and is neither shown nor kept. */
  secret: boolean
  /**
   * What the option is expected to be, with the hint at the option meant — "left out (no such
   * spawn option, it would be ignored — did you mean `cwd`?)" — for a refusal phrased as the
   * bundled providers phrase theirs: "Expected the `cdw` option to be (this), got "/tmp" (string)".
   */
  expected: string
}

/**
 * The first key of a spawn's `options` that is no spawn option but likely misspells one; `undefined`
 * when there is none. What the spawn pipeline and every bundled provider (node-pty, SSH, the pty
 * host, the fake) refuse, exported so that a custom provider called without the controller — whose
 * pipeline would refuse it first — refuses the same keys.
 *
 * A key is refused when it is a near miss of a spawn option's name — compared ignoring case, `_`
 * and `-` (`sessionID`, `session_id`, `CWD`); else, by the length of the name meant, two neighbours
 * swapped for a name of three letters (`cdw`, `evn`), one edit for four to eight letters (`col`,
 * `argv`, `fiel`), two edits for longer ones (`session`) — or a likely mistake from a small table
 * (`id` and `ptyId` for `sessionId`, `cmd` for `file`). Any other key passes: spawn options are
 * records a host may pass around whole, carrying keys of its own (`name`, `title`, `pwd`, `color`).
 *
 * Why: in plain JavaScript, or with options built elsewhere, a misspelt spawn option was silently
 * ignored — `spawn({ sessionID: 'x' })` minted a fresh id, `{ cdw: '/tmp' }` ran in the default
 * directory, `{ col: 100 }` at 80 columns.
 *
 * @param options - the spawn options as given (`PtySpawnOptions` or `ProviderSpawnOptions`); only
 * their own enumerable keys are read.
 * @returns the first such key, the option it likely means, its value and whether that value may be
 * a secret; `undefined` when every key is a spawn option or none is close to one.
 *
 * @example
 * ```ts
 * const misspelt = findMisspeltSpawnOption(spawnOptions)
 * if (misspelt !== undefined) throw new MyProviderOptionError(misspelt.name, misspelt.meant) // e.g. 'cdw', 'cwd'
 * ```
 */
export function findMisspeltSpawnOption(options: object): MisspeltSpawnOption | undefined {
  for (const name of Object.keys(options)) {
    if ((SPAWN_OPTION_NAMES as readonly string[]).includes(name)) continue
    const alias = SPAWN_OPTION_ALIASES.get(name.toLowerCase().replaceAll('_', '').replaceAll('-', ''))
    const meant = alias?.meant ?? nearMissOption(name, SPAWN_OPTION_NAMES)
    if (meant === undefined) continue
    const hint = alias?.hint ?? `did you mean \`${meant}\`?`
    const secret = meant === 'env'
    const value: unknown = (options as Record<string, unknown>)[name]
    return { name, meant, value, secret, expected: `left out (no such spawn option, it would be ignored — ${hint})` }
  }
  return undefined
}

/**
 * Throw the standard refusal of a misspelt spawn option, if `options` holds one
 * ({@link findMisspeltSpawnOption}): a `TypeError` with `code: 'invalid_spawn_option'`, `option`
 * (the key as given) and `value` (`undefined` when the value may be a secret), whose message names
 * the key and the option it likely means — "Expected the `cdw` option to be left out (no such
 * spawn option, it would be ignored — did you mean `cwd`?), got "/tmp" (string)" — and shows
 * the value, or only its type when it may be a secret (a misspelt `env`).
 *
 * For a custom provider's `spawn`, before it starts, connects to or sends anything: the controller's
 * spawn pipeline reports such an error as `invalid_spawn_options` naming the option, and a caller of
 * the provider itself gets it as the bundled providers' refusals (`code`, `option`, `value`). A
 * provider with an option error of its own calls {@link findMisspeltSpawnOption} instead.
 *
 * @param options - the spawn options as given.
 * @throws TypeError (`code: 'invalid_spawn_option'`) naming the first misspelt key.
 *
 * @example
 * ```ts
 * async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
 *   assertNoMisspeltSpawnOption(spawnOptions) // { cdw: '/tmp' } rejects, naming `cdw` and `cwd`
 *   // …start the process
 * }
 * ```
 */
export function assertNoMisspeltSpawnOption(options: object): void {
  const misspelt = findMisspeltSpawnOption(options)
  if (misspelt !== undefined) throw spawnOptionFieldRefusal(misspelt.name, misspelt.expected, misspelt.value, misspelt.secret)
}
