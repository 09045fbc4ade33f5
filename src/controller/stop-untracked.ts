import type { PtyProvider } from '../contracts/index.js'
import type { ControllerCore } from './controller-core.js'
import { dispatchShutdown } from './shutdown-dispatch.js'
import { abortOf, deadlineOf, shutdownOptionsFor, type StopAndWaitRequest } from './stop-and-wait.js'
import { verifyStop } from './verify-stop.js'

/**
 * `stopAndWait` for an id this controller does not track: ask the hosts. The host that lists the
 * id (or says `hasPty` true) owns it and is stopped and verified like a tracked PTY's; no host
 * claiming it, and every host proving it absent, is `true`; any doubt is `false`.
 */
export async function stopUntracked(core: ControllerCore, ptyId: string, request: StopAndWaitRequest): Promise<boolean> {
  const remaining = (): number => Math.max(0, request.deadlineAt - core.clock.now())
  const deadline = deadlineOf(core.timers, core.clock, request.deadlineAt, core.disposed)
  const aborted = abortOf(request.signal)
  const deadlinePassed = Promise.race([deadline.promise, aborted.promise.then(() => 'deadline' as const)])
  const timing = { deadlinePassed, remainingMs: remaining, sleep: (ms: number) => core.timers.after(ms).promise }
  try {
    const hosts = [...core.options.providers.values()]
    const answers = await Promise.all(hosts.map((provider) => verifyStop({ provider, ptyId, incarnationId: undefined }, timing)))
    if (answers.some((answer) => answer.kind === 'deadline')) return false
    const owner = hosts.find((provider, index) => answers[index]?.kind === 'present' || safeHas(provider, ptyId) === true)
    if (owner === undefined) return answers.every((answer) => answer.kind === 'absent')
    const stopped = await Promise.race([
      dispatchShutdown(core.report, owner, ptyId, undefined, true, shutdownOptionsFor(true, undefined, remaining(), request.keepHistory)),
      deadlinePassed,
    ])
    if (stopped !== 'resolved') return false
    const verified = await verifyStop({ provider: owner, ptyId, incarnationId: undefined }, timing, request.keepHistory === true)
    return verified.kind === 'absent'
  } finally {
    deadline.cancel()
    aborted.cancel()
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
