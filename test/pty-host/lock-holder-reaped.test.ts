/**
 * A lock holder that dies between the liveness signal and the read of its `/proc` stat: Linux
 * answers the read of a process that died after the file was opened with `ESRCH`. Such a holder is
 * gone, like one whose file no longer exists — not a live host keeping its lock. `node:fs` is
 * mocked so the read fails exactly that way, which no real process can be timed to do.
 */
import { describe, expect, it, vi } from 'vitest'

const failures = vi.hoisted(() => new Map<string, string>())
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const readFileSync = ((path: unknown, ...rest: unknown[]) => {
    const code = failures.get(String(path))
    if (code !== undefined) throw Object.assign(new Error(`${code}: read of ${String(path)}`), { code })
    return Reflect.apply(fs.readFileSync, fs, [path, ...rest])
  }) as typeof fs.readFileSync
  return { ...fs, default: { ...fs, readFileSync }, readFileSync }
})

const { isHolderAlive } = await import('../../src/pty-host/socket-security.js')

describe('isHolderAlive (Linux), on a stat read that fails', () => {
  it('counts a holder whose stat read answers ESRCH (it died after the open) or ENOENT as gone, and one it cannot read (EACCES) as holding', () => {
    const self = { pid: process.pid, startTime: null }
    expect(isHolderAlive(self)).toBe(true)
    for (const [code, alive] of [['ESRCH', false], ['ENOENT', false], ['EACCES', true]] as const) {
      failures.set(`/proc/${process.pid}/stat`, code)
      expect({ code, alive: isHolderAlive(self) }).toEqual({ code, alive })
    }
    failures.clear()
  })
})
