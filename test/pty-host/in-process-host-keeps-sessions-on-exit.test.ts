// A pty host's provider does not kill its sessions when the host's process ends (its
// `killOnProcessExit` defaults to false): they are its successor's. So in a process that runs
// `startPtyHost` itself — also when the app passes the option through unset.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { isDead } from '../node-pty/pty-test-support.js'

const APP = resolve(import.meta.dirname, 'fixtures', 'app-hosts-in-process.ts')
const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

describe('startPtyHost in the app\'s own process, which exits without closing it', () => {
  it.each(['none', 'undefined-kill'])('nodePty options %s: the session outlives the process', (variant) => {
    const dir = mkdtempSync(join(tmpdir(), 'ptykit-inproc-host-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const run = spawnSync(process.execPath, [...nodeArgsFor(APP), join(dir, 'host.sock'), variant], { encoding: 'utf8', timeout: 8_000 })
    const pid = Number(/session (\d+)/.exec(run.stdout)?.[1])
    expect(pid, run.stdout + run.stderr).toBeGreaterThan(0)
    cleanups.push(() => {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    })
    expect(run.status).toBe(0)
    expect(isDead(pid)).toBe(false)
  })
})
