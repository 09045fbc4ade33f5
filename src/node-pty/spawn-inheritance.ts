/**
 * Internal (not exported from `ptykit/node-pty`): what one spawn inherits when it is made on behalf
 * of another process — the pty host spawns for an app, and a PTY must start with that app's
 * environment and working directory, as it would under the app's own node-pty provider, not with
 * the host process's. Kept beside the spawn's options rather than in them: `ProviderSpawnOptions`
 * is the public contract, and no caller of the provider sets these.
 */

/** A spawn's inherited environment and default working directory, replacing the process's own. */
export type SpawnInheritance = {
  /**
   * The environment the spawn inherits, in place of `process.env`: the host-terminal variables
   * (`NODE_PTY_INHERITED_ENV_EXCLUDED`) are removed from it, then the spawn's `env` and
   * `envToDelete` apply. A valid environment (checked by the caller: string values, keys without
   * `=` or NUL).
   */
  readonly env?: Readonly<Record<string, string>>
  /**
   * The directory a spawn without `cwd` starts in (and a relative `cwd` resolves against), in place
   * of `process.cwd()`: an absolute path, checked to be a directory at the spawn (a refusal names
   * `cwd`, saying it is the app's working directory).
   */
  readonly defaultCwd?: string
}

const inheritances = new WeakMap<object, SpawnInheritance>()

/**
 * Make `spawnOptions` (a fresh object the caller hands to the provider's `spawn`) inherit from
 * `inheritance` rather than from this process. The provider's own `inheritedEnv` and `defaultCwd`
 * options, when set, still win: they are the host's explicit choice for every spawn.
 */
export function inheritFrom(spawnOptions: object, inheritance: SpawnInheritance): void {
  inheritances.set(spawnOptions, inheritance)
}

/** What {@link inheritFrom} set for `spawnOptions`, or `undefined` (inherit from this process). */
export function inheritanceOf(spawnOptions: object): SpawnInheritance | undefined {
  return inheritances.get(spawnOptions)
}
