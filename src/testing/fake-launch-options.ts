import { checkLaunchShape } from '../contracts/launch-shape.js'
import { MAX_PTY_DIMENSION, type ProviderSpawnOptions } from '../contracts/index.js'
import { isPtyDimension } from '../contracts/pty-dimension.js'
import { spawnOptionFieldRefusal } from '../contracts/spawn-option-refusal.js'

// The launch fields a real provider refuses by their shape alone, refused by the fake the same way
// (option name, wording, `code: 'invalid_spawn_option'`), so a test suite over the fake sees the
// refusal production sees. What only a real host can tell — a program or a `cwd` that does not
// exist — the fake does not check: it runs nothing (script a spawn's `fail` to play that).

/**
 * Refuse the launch fields of a fresh spawn (`cwd`, `args`, `env`, `envToDelete`, `file`,
 * `command`) that every real provider refuses by their shape, with the node-pty provider's checks
 * (`checkLaunchShape`) and words.
 *
 * @throws TypeError with `code: 'invalid_spawn_option'`, naming the option and the value.
 */
export function checkFakeLaunchOptions(options: ProviderSpawnOptions): void {
  checkLaunchShape(options, spawnOptionFieldRefusal)
}

/**
 * Refuse a spawn's `cols` or `rows` that is not an integer from 1 to `MAX_PTY_DIMENSION`, as the
 * real providers refuse it: with `code: 'invalid_spawn_option'`, `option` and `value` (a plain
 * `TypeError` before, which a caller matching on `code` did not recognise as a refused option).
 *
 * @throws TypeError with `code: 'invalid_spawn_option'`, naming the option and the value.
 */
export function checkFakeDimension(option: 'cols' | 'rows', value: unknown): void {
  if (!isPtyDimension(value)) throw spawnOptionFieldRefusal(option, `an integer from 1 to ${MAX_PTY_DIMENSION}`, value)
}
