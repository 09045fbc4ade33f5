/**
 * The pty-host side: the default controller over `createPtyHostProvider`, its host started from
 * the build (`dist/pty-host/host-main.js`, the package's `ptykit-pty-host` bin) in a private temp
 * directory, and stopped (SIGKILL via its lock file) on dispose.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import { createPtyHostProvider } from 'ptykit/pty-host'
import { REPO_ROOT } from './child.js'
import { trackPtys, type PtykitSide } from './ptykit-side.js'

/** Options of {@link createPtyHostSide}. */
export type PtyHostSideOptions = {
  /** How to start the host (default: this Node running `dist/pty-host/host-main.js`). */
  hostCommand?: { file: string; args: string[] }
  /** The signal that stops the host on dispose (default SIGKILL; SIGTERM lets a profiled host write its profile). */
  stopSignal?: NodeJS.Signals
  /** Whether the tracker acknowledges every chunk at once (default `true`; `false`: the caller acknowledges). */
  acknowledge?: boolean
}

/** The pty-host side: a {@link PtykitSide} whose host's pid can be read (from its lock file). */
export type PtyHostSide = PtykitSide & {
  /** The host's pid; `null` when the host never started or has gone. */
  hostPid(): number | null
}

/** Creates a controller over a pty host provider (the host runs in its own process). */
export function createPtyHostSide(options: PtyHostSideOptions = {}): PtyHostSide {
  const dir = mkdtempSync(join(tmpdir(), 'ptykit-bench-host-'))
  const socketPath = join(dir, 'host.sock')
  const provider = createPtyHostProvider({
    socketPath,
    idleExitMs: 1_000,
    hostCommand: options.hostCommand ?? { file: process.execPath, args: [join(REPO_ROOT, 'dist/pty-host/host-main.js')] },
  })
  const controller = createPtyController({ provider })
  const tracker = trackPtys(controller, { acknowledge: options.acknowledge ?? true })
  const hostPid = (): number | null => {
    try {
      // The lock holds the host's pid, then (on Linux) its start time on a second line.
      const pid = Number(readFileSync(`${socketPath}.lock`, 'utf8').trim().split(/\s+/)[0])
      return Number.isInteger(pid) && pid > 0 ? pid : null
    } catch {
      return null
    }
  }
  return {
    controller,
    tracker,
    hostPid,
    dispose: async () => {
      const pid = hostPid()
      tracker.detach()
      await controller.dispose()
      await provider.dispose()
      try {
        if (pid !== null) process.kill(pid, options.stopSignal ?? 'SIGKILL')
      } catch {
        // Already gone.
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
