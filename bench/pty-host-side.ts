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

/** Creates a controller over a pty host provider (the host runs in its own process). */
export function createPtyHostSide(): PtykitSide {
  const dir = mkdtempSync(join(tmpdir(), 'ptykit-bench-host-'))
  const socketPath = join(dir, 'host.sock')
  const provider = createPtyHostProvider({
    socketPath,
    idleExitMs: 1_000,
    hostCommand: { file: process.execPath, args: [join(REPO_ROOT, 'dist/pty-host/host-main.js')] },
  })
  const controller = createPtyController({ provider })
  const tracker = trackPtys(controller)
  return {
    controller,
    tracker,
    dispose: async () => {
      tracker.detach()
      await controller.dispose()
      await provider.dispose()
      try {
        process.kill(Number(readFileSync(`${socketPath}.lock`, 'utf8')), 'SIGKILL')
      } catch {
        // Already gone.
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
