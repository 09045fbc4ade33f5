import { closeSync, constants, openSync } from 'node:fs'
import { describeDescriptorShortage } from './descriptor-headroom.js'

/**
 * What ran out when node-pty's `forkpty` failed, in words for the spawn's error. node-pty 1.1
 * throws `forkpty(3) failed.` and drops `errno`, so a host that spawns hundreds of PTYs could not
 * tell a descriptor limit from a full `/dev/pts` or a process limit. Asked right after the failure,
 * the way `forkpty` would: open a PTY master (`/dev/ptmx`) and one more descriptor (the slave).
 * A refusal names the resource; when both open, descriptors and PTYs were there and the fork
 * itself failed (a process limit, or memory). Asked after the fact, so worded as what was seen
 * then. `null` where there is no `/dev/ptmx` to ask (Windows).
 */
export function describeForkFailure(): string | null {
  const opened: number[] = []
  try {
    opened.push(openSync('/dev/ptmx', constants.O_RDWR | constants.O_NOCTTY))
    opened.push(openSync('/dev/null', 'r'))
  } catch (error) {
    const code = (error as { code?: unknown }).code
    switch (code) {
      case 'EMFILE':
      case 'ENFILE':
        return describeDescriptorShortage(code)
      case 'ENOSPC':
        return 'no pseudo-terminal is left (ENOSPC: kernel.pty.max is reached, see /proc/sys/kernel/pty/nr)'
      case 'ENOENT':
        return null
      default:
        return typeof code === 'string' ? `opening a PTY master fails now with ${code}` : null
    }
  } finally {
    for (const fd of opened) closeSync(fd)
  }
  return 'a descriptor and a pseudo-terminal were free right after, so the fork itself likely failed (EAGAIN: the process limit, `ulimit -u`, or pid_max; or ENOMEM)'
}
