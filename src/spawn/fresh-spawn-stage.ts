import type { ProviderSpawnOptions, PtySpawnOptions, PtySpawnResult } from '../contracts/index.js'
import { definedFields } from '../contracts/defined-fields.js'
import { watchExits } from './exit-watch.js'
import { assertProviderReply, checkAbort, providerFor, rejectExitedReply, reportSpawnCommitted, takeChargeOfStartedProcess } from './provider-call.js'
import type { RuntimePtySpawnState } from './spawn-state.js'

/** The provider options of a fresh spawn: the caller's launch fields, the commit hook, and the ownership keys. */
function freshSpawnOptions(state: RuntimePtySpawnState, onPtySpawnCommitted: () => void): ProviderSpawnOptions {
  const a = state.args
  const options: ProviderSpawnOptions = { onPtySpawnCommitted }
  if (a.file !== undefined) options.file = a.file
  if (a.args !== undefined) options.args = a.args
  if (a.command !== undefined) options.command = a.command
  if (a.cols !== undefined) options.cols = a.cols
  if (a.rows !== undefined) options.rows = a.rows
  if (a.cwd !== undefined) options.cwd = a.cwd
  if (a.env !== undefined) options.env = a.env
  if (a.envToDelete !== undefined) options.envToDelete = a.envToDelete
  if (a.sessionId !== undefined) options.sessionId = a.sessionId
  if (a.isNewSession !== undefined) options.isNewSession = a.isNewSession
  // Same precedence as the controller's record; a claim's scope must reach the listing rows, where
  // another controller imports the owner from (a row without it would read as another scope).
  const scopeId = a.scopeId ?? a.slot?.scopeId ?? a.claim?.scopeId
  if (scopeId !== undefined) options.scopeId = scopeId
  if (a.slot !== undefined) options.slotKey = a.slot.key
  if (a.claim !== undefined) options.claimKey = a.claim.key
  if (a.metadata !== undefined) options.metadata = a.metadata
  return options
}

/**
 * The caller's name of a provider spawn option that {@link freshSpawnOptions} renamed, so a
 * provider's refusal of it names the option the caller wrote: `slotKey` is the caller's `slot.key`,
 * `claimKey` its `claim.key`, `scopeId` whichever of `scopeId`, `slot.scopeId` and `claim.scopeId`
 * it came from. Others keep their names.
 */
export function callerSpawnOptionName(args: PtySpawnOptions, providerOption: string): string {
  if (providerOption === 'slotKey') return 'slot.key'
  if (providerOption === 'claimKey') return 'claim.key'
  if (providerOption === 'scopeId' && args.scopeId === undefined) {
    if (args.slot?.scopeId !== undefined) return 'slot.scopeId'
    if (args.claim?.scopeId !== undefined) return 'claim.scopeId'
  }
  return providerOption
}

/**
 * Stages 6–9 of a fresh spawn (branch 7c): the abort check, the physical call (watching the
 * provider's exits from just before it), taking charge of the started process, the commit report,
 * the reply check.
 */
export async function spawnFresh(state: RuntimePtySpawnState): Promise<PtySpawnResult> {
  const provider = providerFor(state, state.hostId)
  checkAbort(state)
  state.stage = 'provider_spawn'
  watchExits(state, provider)
  // The commit hook the provider gets reaches this run only while the provider's spawn is out:
  // a provider may keep its spawn options for as long as the PTY lives, or longer (the fake keeps
  // them for `getPty(id).spawnOptions`), and this run's hook held the whole run — its journal, its
  // arguments and, through its dependencies, the controller — for every PTY ever spawned. Once the
  // provider answered, the pipeline reports the commit itself (stage 8, once).
  let run: RuntimePtySpawnState | undefined = state
  let result: unknown
  try {
    result = await provider.spawn(freshSpawnOptions(state, () => run?.reportPtySpawnCommitted()))
  } finally {
    run = undefined
  }
  assertProviderReply(state, provider, result)
  state.result = definedFields(result)
  // A `sessionId` the provider answered by attaching to its live session started nothing: that
  // process is someone else's, neither reported as committed nor stopped by a rollback.
  if (result.isReattach !== true) {
    takeChargeOfStartedProcess(state, provider, result)
    reportSpawnCommitted(state)
  }
  rejectExitedReply(state, result)
  return result
}
