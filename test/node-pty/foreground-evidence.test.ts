import { describe, expect, it } from 'vitest'
import { confirmForegroundProcess } from '../../src/node-pty/foreground-evidence.js'
import type { ProcessInspector, ProcessStat } from '../../src/node-pty/process-inspector.js'

const SHELL = 100

function stat(pid: number, name: string, pgid: number, tpgid: number, state = 'S', startTime = String(pid * 10)): ProcessStat {
  return { pid, ppid: 1, pgid, sid: SHELL, tpgid, state, name, startTime }
}

/** An inspector whose process table is replaced between the two reads (`tables[0]`, then `tables[1]`). */
function scripted(tables: ProcessStat[][], kind: ProcessInspector['kind'] = 'procfs'): ProcessInspector {
  let reads = 0
  const table = (): ProcessStat[] => tables[Math.min(Math.floor(reads / 2), tables.length - 1)] ?? []
  return {
    kind,
    async read(pid) {
      // Each reading reads the leader, then (maybe) the foreground leader: count leader reads.
      if (pid === SHELL) reads += 1
      return table().find((row) => row.pid === pid) ?? null
    },
    async list() {
      return table()
    },
    async cwd() {
      return null
    },
    readNow: () => null,
    isGone: () => false,
    isReaped: () => false,
  }
}

const shellForeground = [stat(SHELL, 'sh', SHELL, SHELL)]
const vimForeground = [stat(SHELL, 'sh', SHELL, 200), stat(200, 'vim', 200, 200)]

describe('confirmForegroundProcess (node-pty, two reads of the tty’s foreground group)', () => {
  it('confirms the shell, or a job, when both reads agree', async () => {
    expect(await confirmForegroundProcess(scripted([shellForeground, shellForeground]), SHELL, 0)).toEqual({ foregroundProcess: 'sh', shellForeground: true })
    expect(await confirmForegroundProcess(scripted([vimForeground, vimForeground]), SHELL, 0)).toEqual({ foregroundProcess: 'vim', shellForeground: false })
  })

  it('answers null when the foreground changed between the reads (a job in the middle of exiting), never a guess', async () => {
    expect(await confirmForegroundProcess(scripted([vimForeground, shellForeground]), SHELL, 0)).toBeNull()
    expect(await confirmForegroundProcess(scripted([shellForeground, vimForeground]), SHELL, 0)).toBeNull()
    // Same pid, another process (pid reuse): not the same foreground.
    const reused = [stat(SHELL, 'sh', SHELL, 200), stat(200, 'vim', 200, 200, 'S', '999')]
    expect(await confirmForegroundProcess(scripted([vimForeground, reused]), SHELL, 0)).toBeNull()
  })

  it('answers null for a zombie foreground leader with no live member, a dead leader, no tty, or no way to read', async () => {
    const zombie = [stat(SHELL, 'sh', SHELL, 200), stat(200, 'vim', 200, 200, 'Z')]
    expect(await confirmForegroundProcess(scripted([zombie, zombie]), SHELL, 0)).toBeNull()
    expect(await confirmForegroundProcess(scripted([[], []]), SHELL, 0)).toBeNull()
    const noTty = [stat(SHELL, 'sh', SHELL, -1)]
    expect(await confirmForegroundProcess(scripted([noTty, noTty]), SHELL, 0)).toBeNull()
    expect(await confirmForegroundProcess(scripted([shellForeground, shellForeground], 'none'), SHELL, 0)).toBeNull()
  })

  it('names the job by a live member when its group leader has gone', async () => {
    const orphaned = [stat(SHELL, 'sh', SHELL, 200), stat(201, 'less', 200, 200)]
    expect(await confirmForegroundProcess(scripted([orphaned, orphaned]), SHELL, 0)).toEqual({ foregroundProcess: 'less', shellForeground: false })
  })
})
