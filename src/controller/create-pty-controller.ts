import type { PtyControllerOptions } from './controller-options.js'
import { PtyController } from './pty-controller.js'

/**
 * Create the default controller.
 *
 * @example
 * ```ts
 * const controller = createPtyController({ provider: createNodePtyProvider() })
 * controller.on('exit', ({ ptyId, cause }) => console.log(ptyId, describeTerminalExitCause(cause)))
 * const { id } = await controller.spawn({ cols: 80, rows: 24 })
 * controller.write(id, 'exit 3\r', 'driving')
 * ```
 *
 * @throws TypeError naming the option when the options are malformed (for example both or
 * neither of `provider` and `providers`), or name an option it does not know (a misspelling such
 * as `flowcontrol` or `stop.forceAfter`, which would otherwise be ignored).
 */
export function createPtyController(options: PtyControllerOptions): PtyController {
  return new PtyController(options)
}
