// Compiled by `scripts/check-consumer-types.mjs` against the packed declarations, in every module
// setting: the controller's events keep their payload types (a listener parameter that silently
// became `any` would make each `@ts-expect-error` below unused, which is an error).
import type { ExecutionHostId, PtyProvider } from 'ptykit/contracts'
import { createPtyController, type PtyControllerError } from 'ptykit/controller'
import type { TerminalExitCause } from 'ptykit/exit-cause'

export function checkEventPayloadTypes(provider: PtyProvider): void {
  const controller = createPtyController({ provider })

  const chained = controller
    .on('spawn', (event) => {
      const ptyId: string = event.ptyId
      const isReattach: boolean = event.isReattach
      // @ts-expect-error a spawn event has no exit cause
      void event.cause
      void [ptyId, isReattach]
    })
    .on('data', ({ ptyId, hostId, data, seq }) => {
      const text: string = data
      const sequence: number = seq
      const host: ExecutionHostId = hostId
      // @ts-expect-error data is a string, not a number
      const wrong: number = data
      void [ptyId, text, sequence, host, wrong]
    })
    .on('exit', (event) => {
      const cause: TerminalExitCause = event.cause
      const code: number = event.code
      // Every event about a PTY names its host; the exit, the host the ended incarnation ran on.
      const host: ExecutionHostId = event.hostId
      // @ts-expect-error the host is an id, not a number
      const wrongHost: number = event.hostId
      // @ts-expect-error the exit event carries `cause`, not `reason`
      void event.reason
      void [cause, code, host, wrongHost]
    })
    .once('liveness', ({ verdict, hostId }) => {
      const host: ExecutionHostId = hostId
      // @ts-expect-error a verdict is not a string
      const wrong: string = verdict
      void [host, wrong]
    })
    .on('error', (error) => {
      const typed: PtyControllerError = error
      void typed.code
    })
  const same: typeof controller = chained
  void same

  // @ts-expect-error not an event of the controller
  controller.on('output', () => {})
  // @ts-expect-error an exit listener receives an exit event, not a string
  controller.off('exit', (event: string) => void event)
  // @ts-expect-error emit checks the payload too
  controller.emit('data', { ptyId: 'x', data: 1, seq: 0 })
}
