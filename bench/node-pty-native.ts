/**
 * node-pty's native module (`pty.node`), for the research scripts that time its fork or go around
 * its JavaScript terminal (`spawn-round-timeline.ts`, `lean-spawn.ts`). Private API of node-pty
 * 1.1.0 on Unix: `fork(file, args, env, cwd, cols, rows, uid, gid, utf8, helperPath, onexit)`.
 * Not used by ptykit itself.
 */
import { createRequire } from 'node:module'
import { resolve } from 'node:path'

/** What `pty.fork` returns: the master fd, the child's pid, the slave's path. */
export type NativeForkResult = { fd: number; pid: number; pty: string }

/** The part of node-pty's native module these scripts use. */
export type NodePtyNative = {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onexit: (code: number, signal: number) => void,
  ): NativeForkResult
}

const require = createRequire(import.meta.url)
const loaded = (require('node-pty/lib/utils') as { loadNativeModule(name: string): { dir: string; module: NodePtyNative } }).loadNativeModule('pty')

/** The native module object node-pty's `UnixTerminal` calls (the same object: patching it patches node-pty's forks). */
export const nodePtyNative: NodePtyNative = loaded.module

/** The helper path node-pty passes to `fork` (used on macOS only). */
export const nodePtyHelperPath = resolve(require.resolve('node-pty/lib/utils'), '..', loaded.dir, 'spawn-helper')
