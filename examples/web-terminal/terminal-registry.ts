// The terminals the pages share: opened by any page, kept by the server until a page closes them
// (or the server stops). A page that leaves only detaches from them.
import type { createPtyController } from 'ptykit/controller'
import type { WebTerminalServerOptions } from './server.js'
import { TerminalSession, type TerminalViewer } from './terminal-session.js'

/** The registry of terminals the pages share. */
export type TerminalRegistry = {
  /** Every terminal not closed yet, in the order they were opened. */
  sessions: Map<string, TerminalSession>
  /**
   * Show `page` every terminal, taking each from any page that showed it (the page's `attach`,
   * sent on connect). From now on `page` is also where a terminal goes whose page left while it
   * was starting (see {@link TerminalRegistry.open}), until another page attaches or `page` leaves.
   */
  attachAll(page: TerminalViewer): void
  /** `page` left (its socket closed): it stops showing every terminal, and is given none any more. */
  detachAll(page: TerminalViewer): void
  /**
   * Open a terminal for `page` and show it there (`opened: true`); rejects when the spawn fails.
   * When `page` left while the spawn was in flight — a reload — the terminal is shown, as a new
   * one, on the connected page that attached last (the reloaded page); with no page connected it
   * runs detached until one attaches, like every terminal of a page that left.
   */
  open(request: { cols: number; rows: number; command?: string }, page: TerminalViewer): Promise<TerminalSession>
  /**
   * Stop a terminal with a verified stop and forget it; `false` for an unknown id. The page showing
   * it, when that is not `page` (the one that asked), is sent `closed` too. A close of a terminal
   * whose stop is already running joins that stop: it answers the same verdict, once it is known.
   */
  close(id: string, page?: TerminalViewer): Promise<boolean>
  /**
   * Server shutdown, before the pages' sockets are closed: from now on a spawn that answers is
   * stopped and never kept (as after {@link TerminalRegistry.dispose}); then every terminal is
   * stopped, each with a verified stop, and the page showing it is sent `closed` with the verdict.
   * Resolves once every stop, including those pages asked for before, has answered.
   */
  stopAll(): Promise<void>
  /**
   * Server shutdown, before the controller is disposed (its dispose stops every PTY it owns):
   * dispose every terminal's session and forget it. A spawn that answers afterwards is stopped and
   * never kept — no session, no mirror — and its `open` rejects.
   */
  dispose(): void
}

/** The registry over `controller`: spawns with the server's shell, working directory and environment. */
export function createTerminalRegistry(
  controller: ReturnType<typeof createPtyController>,
  options: WebTerminalServerOptions,
): TerminalRegistry {
  const sessions = new Map<string, TerminalSession>()
  const shell = options.shell ?? process.env['SHELL'] ?? '/bin/sh'
  /** The connected pages that sent `attach`, the latest last. */
  const attachedPages: TerminalViewer[] = []
  /**
   * The pages that left. Why kept: a spawn that answers after its page left must not bind the
   * terminal to that page (nobody would ever see or acknowledge its output).
   */
  const leftPages = new WeakSet<TerminalViewer>()
  /**
   * The stops running, by terminal id. Why kept: the session is forgotten when its stop starts (no
   * key or ack reaches it any more), yet a second close of it — the page's × clicked twice — must
   * get the stop's verdict, not an early `false` while the process may still be running.
   */
  const stopping = new Map<string, Promise<boolean>>()
  let disposed = false
  const forget = (page: TerminalViewer): void => {
    const at = attachedPages.indexOf(page)
    if (at !== -1) attachedPages.splice(at, 1)
  }
  const close = (id: string, page?: TerminalViewer): Promise<boolean> => {
    const running = stopping.get(id)
    if (running !== undefined) return running
    const session = sessions.get(id)
    if (session === undefined) return Promise.resolve(false)
    sessions.delete(id)
    const stop = session.stop(page).finally(() => stopping.delete(id))
    stopping.set(id, stop)
    return stop
  }
  return {
    sessions,
    attachAll(page) {
      if (leftPages.has(page)) return
      forget(page)
      attachedPages.push(page)
      for (const session of sessions.values()) session.attach(page, false)
    },
    detachAll(page) {
      leftPages.add(page)
      forget(page)
      for (const session of sessions.values()) session.detach(page)
    },
    async open({ cols, rows, command }, page) {
      const terminal = await controller.spawnTerminal({
        file: command === undefined ? shell : '/bin/sh',
        args: command === undefined ? [] : ['-c', command],
        cols,
        rows,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        env: { TERM: 'xterm-256color', COLORTERM: 'truecolor', ...options.env },
      })
      if (disposed) {
        // The server closed while the spawn was in flight, after it disposed every session: a
        // session made now would be nobody's to dispose. The PTY is stopped here because the
        // controller may not be disposed yet (once it is, its dispose stops the PTY, and this
        // stop answers `false`).
        void terminal.stop()
        throw new Error('the server closed while the terminal was starting')
      }
      // In the turn the handle was handed over, so the session hears the output that came before.
      const session = new TerminalSession(terminal, command ?? shell)
      sessions.set(session.id, session)
      // A page that reloaded while the spawn was in flight is a new page, which attached (and was
      // shown every terminal) before this one existed: it gets this one too, as the user who asked
      // for it expects. Still a new terminal to the user, so `opened`: the page shows its tab.
      const shownOn = leftPages.has(page) ? attachedPages.at(-1) : page
      if (shownOn !== undefined) session.attach(shownOn, true)
      return session
    },
    close,
    async stopAll() {
      disposed = true
      const stops = [...sessions.keys()].map((id) => close(id))
      // A stop that fails is not waited for again here: the controller's dispose, which follows,
      // stops every PTY it still owns.
      await Promise.allSettled([...stops, ...stopping.values()])
    },
    dispose() {
      disposed = true
      for (const session of sessions.values()) session.dispose()
      sessions.clear()
    },
  }
}
