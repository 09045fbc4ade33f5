// The terminals the pages share: opened by any page, kept by the server until a page closes them
// (or the server stops). A page that leaves only detaches from them.
import type { createPtyController } from 'ptykit/controller'
import type { WebTerminalServerOptions } from './server.js'
import { TerminalSession } from './terminal-session.js'

/** The registry of terminals the pages share. */
export type TerminalRegistry = {
  /** Every terminal not closed yet, in the order they were opened. */
  sessions: Map<string, TerminalSession>
  /** Open a terminal; rejects when the spawn fails. */
  open(request: { cols: number; rows: number; command?: string }): Promise<TerminalSession>
  /** Stop a terminal with a verified stop and forget it. */
  close(id: string): Promise<boolean>
}

/** The registry over `controller`: spawns with the server's shell, working directory and environment. */
export function createTerminalRegistry(
  controller: ReturnType<typeof createPtyController>,
  options: WebTerminalServerOptions,
): TerminalRegistry {
  const sessions = new Map<string, TerminalSession>()
  const shell = options.shell ?? process.env['SHELL'] ?? '/bin/sh'
  return {
    sessions,
    async open({ cols, rows, command }) {
      const terminal = await controller.spawnTerminal({
        file: command === undefined ? shell : '/bin/sh',
        args: command === undefined ? [] : ['-c', command],
        cols,
        rows,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        env: { TERM: 'xterm-256color', COLORTERM: 'truecolor', ...options.env },
      })
      // In the turn the handle was handed over, so the session hears the output that came before.
      const session = new TerminalSession(terminal, command ?? shell)
      sessions.set(session.id, session)
      return session
    },
    async close(id) {
      const session = sessions.get(id)
      if (session === undefined) return false
      sessions.delete(id)
      return session.stop()
    },
  }
}
