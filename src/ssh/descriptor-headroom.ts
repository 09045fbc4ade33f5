import { closeSync, openSync } from 'node:fs'
import { devNull } from 'node:os'

/**
 * Descriptors that must be free before `ssh2` is loaded: loading it opens files one or two at a
 * time (package.json lookups, its JavaScript files); 4 leaves a margin. The node-pty provider
 * checks the same before loading node-pty (a module of its own: the two providers do not import
 * each other).
 */
export const SSH2_LOAD_DESCRIPTOR_HEADROOM = 4

/**
 * Whether `count` more descriptors can be opened now: `null` when they can, else the error code
 * that refused one (`EMFILE`: this process's limit; `ENFILE`: the system's file table).
 *
 * Why before loading `ssh2`: Node's module resolution remembers a `package.json` it could not read
 * — also for want of a descriptor — as absent for the life of the process, so a load tried then
 * failed as "not installed", and every later load too.
 */
export function descriptorShortage(count: number): string | null {
  const opened: number[] = []
  try {
    for (let i = 0; i < count; i += 1) opened.push(openSync(devNull, 'r'))
    return null
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return code === 'EMFILE' || code === 'ENFILE' ? code : null
  } finally {
    for (const fd of opened) closeSync(fd)
  }
}
