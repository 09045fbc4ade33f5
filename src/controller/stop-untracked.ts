import type { PtyProvider } from '../contracts/index.js'
import type { ControllerCore } from './controller-core.js'
import { dispatchShutdown, shutdownOptionsFor } from './shutdown-dispatch.js'
import type { StopAndWaitRequest } from './stop-and-wait-request.js'
import { openStopBudget } from './stop-budget.js'
import { verifyStop } from './verify-stop.js'

/**
 * `stopAndWait` for an id this controller does not track: ask the hosts. The host that lists the
 * id (or says `hasPty` true) owns it and is stopped and verified like a tracked PTY's; no host
 * claiming it, and every host proving it absent, is `true`; any doubt is `false`.
 */
export async function stopUntracked(core: ControllerCore, ptyId: string, request: StopAndWaitRequest): Promise<boolean> {
  const budget = openStopBudget(core, request)
  try {
    const hosts = [...core.options.providers.values()]
    const answers = await Promise.all(hosts.map((provider) => verifyStop({ provider, ptyId, incarnationId: undefined }, budget)))
    if (answers.some((answer) => answer.kind === 'deadline')) return false
    // Every host that holds the id is stopped: two hosts may each run a PTY under one id (another
    // app's tabs), and `true` means no host runs it any more.
    const owners = hosts.filter((provider, index) => answers[index]?.kind === 'present' || safeHas(provider, ptyId) === true)
    if (owners.length === 0) return answers.every((answer) => answer.kind === 'absent')
    if (answers.some((answer, index) => answer.kind !== 'absent' && !owners.includes(hosts[index]!))) {
      // A host that could not answer may hold it too: stop the owners all the same, then doubt.
      await Promise.all(owners.map((owner) => stopOwner(core, owner, ptyId, budget, request)))
      return false
    }
    const stopped = await Promise.all(owners.map((owner) => stopOwner(core, owner, ptyId, budget, request)))
    return stopped.every(Boolean)
  } finally {
    budget.close()
  }
}

async function stopOwner(
  core: ControllerCore,
  owner: PtyProvider,
  ptyId: string,
  budget: ReturnType<typeof openStopBudget>,
  request: StopAndWaitRequest,
): Promise<boolean> {
  const stopped = await Promise.race([
    dispatchShutdown(core, owner, ptyId, undefined, true, shutdownOptionsFor(true, undefined, budget.remainingMs(), request.keepHistory)),
    budget.deadlinePassed,
  ])
  if (stopped !== 'resolved') return false
  const verified = await verifyStop({ provider: owner, ptyId, incarnationId: undefined }, budget, request.keepHistory === true)
  return verified.kind === 'absent'
}

function safeHas(provider: PtyProvider, ptyId: string): boolean | null {
  try {
    const answer = provider.hasPty?.(ptyId)
    return typeof answer === 'boolean' ? answer : null
  } catch {
    return null
  }
}
