import { closeSync, openSync } from 'node:fs'
import { devNull } from 'node:os'

/**
 * Descriptors that must be free before node-pty is loaded. Loading it opens files one or two at a
 * time (package.json lookups, the JavaScript files, the native module): 4 leaves a margin.
 */
export const NODE_PTY_LOAD_DESCRIPTOR_HEADROOM = 4

/** What a descriptor shortage's code means, in words for an error message. */
export function describeDescriptorShortage(code: 'EMFILE' | 'ENFILE'): string {
  return code === 'EMFILE'
    ? 'this process has no file descriptor free (EMFILE: its open-file limit, `ulimit -n`, is reached; each PTY holds one)'
    : "the system's open-file table is full (ENFILE: fs.file-max)"
}

/**
 * Whether `count` more descriptors can be opened now: `null` when they can, else the error code
 * that refused one (`EMFILE`: this process's limit; `ENFILE`: the system's file table).
 *
 * Why before loading node-pty: Node's module resolution reads each `package.json` on the way and
 * remembers one it could not read — also for want of a descriptor — as absent, for the life of
 * the process. A first load made out of descriptors failed as "not installed" (`ERR_MODULE_NOT_FOUND`),
 * and every later load failed the same way once descriptors were back.
 */
export function descriptorShortage(count: number): 'EMFILE' | 'ENFILE' | null {
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
