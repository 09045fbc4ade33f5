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
    const owner = hosts.find((provider, index) => answers[index]?.kind === 'present' || safeHas(provider, ptyId) === true)
    if (owner === undefined) return answers.every((answer) => answer.kind === 'absent')
    const stopped = await Promise.race([
      dispatchShutdown(core.report, owner, ptyId, undefined, true, shutdownOptionsFor(true, undefined, budget.remainingMs(), request.keepHistory)),
      budget.deadlinePassed,
    ])
    if (stopped !== 'resolved') return false
    const verified = await verifyStop({ provider: owner, ptyId, incarnationId: undefined }, budget, request.keepHistory === true)
    return verified.kind === 'absent'
  } finally {
    budget.close()
  }
}

function safeHas(provider: PtyProvider, ptyId: string): boolean | null {
  try {
    const answer = provider.hasPty?.(ptyId)
    return typeof answer === 'boolean' ? answer : null
  } catch {
    return null
  }
}
