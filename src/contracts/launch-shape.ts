import { ENVIRONMENT_KEYS_EXPECTED, ENVIRONMENT_RECORD_EXPECTED, isEnvironmentRecord, isEnvironmentVariableName } from './environment-record.js'
import type { PtyProcessLaunch } from './spawn-options.js'

/**
 * How a provider refuses a launch field: its own option error (`NodePtyOptionError`, the fake's
 * coded `TypeError`), naming `option` and showing `value` — never a secret one (an environment
 * value: a token, a password).
 */
export type LaunchFieldRefusal = (option: string, expected: string, value: unknown, secret: boolean) => Error

/** A string fit to cross into C (`execve`'s arguments and environment): NUL would truncate it there. */
export function checkLaunchText(option: string, value: unknown, allowEmpty: boolean, refuse: LaunchFieldRefusal, secret = false): asserts value is string {
  if (typeof value !== 'string') throw refuse(option, 'a string', value, secret)
  if (!allowEmpty && value.length === 0) throw refuse(option, 'a non-empty string', value, secret)
  if (value.includes('\0')) throw refuse(option, 'a string without NUL characters', value, secret)
}

/**
 * Refuse the launch fields of a fresh spawn that every local provider refuses by their shape
 * alone — `cwd`, `args`, `env`, `envToDelete`, `file`, `command` — in that order, in one wording
 * (the node-pty provider's, which the fake repeats so a test suite sees production's refusal).
 * What only the host can tell (a program or a `cwd` that does not exist) is not looked at.
 */
export function checkLaunchShape(launch: Pick<PtyProcessLaunch, 'cwd' | 'args' | 'env' | 'envToDelete' | 'file' | 'command'>, refuse: LaunchFieldRefusal): void {
  if (launch.cwd !== undefined) checkLaunchText('cwd', launch.cwd, false, refuse)
  if (launch.args !== undefined) {
    if (!Array.isArray(launch.args)) throw refuse('args', 'an array of strings', launch.args, false)
    launch.args.forEach((arg: unknown, index) => checkLaunchText(`args[${index}]`, arg, true, refuse))
  }
  if (launch.env !== undefined) {
    if (!isEnvironmentRecord(launch.env)) throw refuse('env', ENVIRONMENT_RECORD_EXPECTED, launch.env, true)
    for (const [key, value] of Object.entries(launch.env)) {
      if (!isEnvironmentVariableName(key)) throw refuse('env', ENVIRONMENT_KEYS_EXPECTED, key, false)
      checkLaunchText(`env.${key}`, value, true, refuse, true)
    }
  }
  if (launch.envToDelete !== undefined) {
    if (!Array.isArray(launch.envToDelete)) throw refuse('envToDelete', 'an array of variable names', launch.envToDelete, false)
    launch.envToDelete.forEach((name: unknown, index) => checkLaunchText(`envToDelete[${index}]`, name, false, refuse))
  }
  if (launch.file !== undefined) checkLaunchText('file', launch.file, false, refuse)
  if (launch.command !== undefined) checkLaunchText('command', launch.command, true, refuse)
}
