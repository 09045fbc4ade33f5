/**
 * The remote `/proc` scripts, run by a local `/bin/sh` standing in for a connection's side shell
 * (a loopback remote is this machine): a program is judged by pid, start time and boot id, and a
 * shell on another boot — or machine — neither judges nor signals it.
 */
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { findLaunchesByNonce, inspectRemoteProcess, probeRemotePids, sweepRemoteSessions } from '../../src/ssh/remote-process.js'
import type { LaunchMarker } from '../../src/ssh/remote-launch.js'
import type { SshConnection } from '../../src/ssh/ssh-connection.js'
import { killIfStill, procRow, processIdentity, waitFor, type ProcessIdentity } from '../node-pty/pty-test-support.js'
import { isAlive } from './ssh-test-support.js'

/** A connection whose side shell is a local `shell` (a remote's `/bin/sh` may be dash or bash). */
const shellConnection = (shell: string): SshConnection =>
  ({
    run: (script: string, timeoutMs: number) =>
      new Promise((resolve) => {
        execFile(shell, ['-c', script], { timeout: timeoutMs }, (error, stdout) => {
          resolve({ stdout, code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1 })
        })
      }),
  }) as unknown as SshConnection
const localShell = shellConnection('/bin/sh')

/**
 * The budget of each script run: a bound for a hang, not a speed. A sweep of the fabricated /proc
 * below forks a few processes per read, and on a loaded machine it once took longer than 5 s.
 */
const SCRIPT_BUDGET_MS = 15_000

const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
const OTHER_BOOT_ID = BOOT_ID.replace(/^./, (c) => (c === '0' ? '1' : '0'))

/** The marker a launch on this machine prints for `pid`. */
function markerOf(pid: number, bootId: string | null = BOOT_ID): LaunchMarker {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return { pid, startTime: stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19]!, bootId }
}

/** What the tests started, known by pid and start time (a pid reused since is never signalled). */
const children: (ProcessIdentity | null)[] = []
afterEach(() => {
  for (const child of children.splice(0)) killIfStill(child, { group: true })
})

/** A program in a process group of its own (as a PTY's program is the leader of its session). */
function startSleeper(): number {
  const child = spawn('/bin/sleep', ['60'], { detached: true, stdio: 'ignore' })
  children.push(processIdentity(child.pid!))
  return child.pid!
}

describe('remote /proc scripts: identity by pid, start time and boot id', () => {
  it('answers alive, gone (also for a reused pid: another start time) and — on another boot — cannot tell, in one script', async () => {
    const sleeper = startSleeper()
    const gone = { pid: 2 ** 22 + 7, startTime: '1', bootId: BOOT_ID }
    const reused = { ...markerOf(sleeper), startTime: '1' }
    expect(await probeRemotePids(localShell, [markerOf(sleeper), gone, reused, markerOf(sleeper, OTHER_BOOT_ID), markerOf(sleeper, null)], SCRIPT_BUDGET_MS)).toEqual([
      true,
      false,
      false,
      null,
      true,
    ])
    expect(await probeRemotePids(localShell, [], SCRIPT_BUDGET_MS)).toEqual([])
  })

  it('signals the program only where its boot id matches: a shell elsewhere signals nothing', async () => {
    const sleeper = startSleeper()
    await sweepRemoteSessions(localShell, [{ marker: markerOf(sleeper, OTHER_BOOT_ID), signal: 'TERM' }], SCRIPT_BUDGET_MS)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(isAlive(sleeper)).toBe(true)
    await sweepRemoteSessions(localShell, [{ marker: markerOf(sleeper), signal: 'TERM' }], SCRIPT_BUDGET_MS)
    await waitFor(() => (isAlive(sleeper) ? undefined : true), 'the program to end on TERM')
  })

  it('a program that ended and is not yet reaped (a zombie) is gone; its process group is still signalled', async () => {
    // A group leader that exits under a parent that never reaps it, leaving a child in its group
    // (a shell whose background job outlived it, reparented to a pid 1 that reaps late). The parent
    // is a shell until it execs sleep, and a shell reaps a child that ends while it still runs: the
    // leader ends only once its parent is sleep. Each pid is named: the two echoes race.
    const leaderScript = [
      'sleep 60 & echo member $!',
      'i=0; until read -r comm < /proc/$PPID/comm && [ "$comm" = sleep ]; do i=$((i + 1)); [ $i -gt 1000 ] && exit 1; sleep 0.01; done',
      'exit 0',
    ].join('\n')
    const parent = spawn('/bin/sh', ['-c', 'setsid /bin/sh -c "$1" & echo leader $!; exec sleep 60', 'sh', leaderScript], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    children.push(processIdentity(parent.pid!))
    let out = ''
    parent.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const pidOf = (name: string): number | undefined => {
      const pid = Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(out)?.[1])
      return pid > 0 ? pid : undefined
    }
    const [leader, member] = await waitFor(() => {
      const pids = [pidOf('leader'), pidOf('member')]
      return pids.every((pid) => pid !== undefined) ? pids : undefined
    }, 'the two pids')
    children.push(processIdentity(leader!))
    await waitFor(() => (readFileSync(`/proc/${leader}/stat`, 'utf8').includes(') Z ') ? true : undefined), 'the leader to be a zombie')
    const marker = markerOf(leader!)
    // Before: the zombie answered alive, so a stop of it waited for an end that had come.
    expect(await probeRemotePids(localShell, [marker], SCRIPT_BUDGET_MS)).toEqual([false])
    expect(isAlive(member!)).toBe(true)
    await sweepRemoteSessions(localShell, [{ marker, signal: 'TERM' }], SCRIPT_BUDGET_MS)
    await waitFor(() => (isAlive(member!) ? undefined : true), 'the group member to end on TERM')
  })

  it.each(['/bin/sh', '/bin/bash'])('with %s, judges a program by its stat state: running or sleeping alive, a zombie or one being reaped (X, x) ended', async (shell) => {
    // A remote whose /proc is fabricated: the connection runs the script against a directory in
    // its place, so each state is read exactly as the kernel shows it, the reap's X included
    // (a real process shows it for microseconds, between its parent's waitpid and its pid's release).
    const root = mkdtempSync(join(tmpdir(), 'ptykit-proc-'))
    const fabricated = shellConnection(shell)
    const connection = { run: (script: string, timeoutMs: number) => fabricated.run(script.replaceAll('/proc/', `${root}/`), timeoutMs) } as unknown as SshConnection
    try {
      mkdirSync(join(root, 'sys/kernel/random'), { recursive: true })
      writeFileSync(join(root, 'sys/kernel/random/boot_id'), `${BOOT_ID}\n`)
      const states = ['R', 'S', 'Z', 'X', 'x']
      const markers = states.map((state, i) => {
        const pid = 4000 + i
        mkdirSync(join(root, String(pid)))
        // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
        writeFileSync(join(root, String(pid), 'stat'), `${pid} (prog) ${state} 1 ${pid} ${pid} 34817 ${pid} 4194560 0 0 0 0 0 0 0 0 20 0 ${state === 'X' ? 0 : 1} 0 777\n`)
        return { pid, startTime: '777', bootId: BOOT_ID }
      })
      expect(await probeRemotePids(connection, markers, SCRIPT_BUDGET_MS)).toEqual([true, true, false, false, false])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it.each(['/bin/sh', '/bin/bash'])('with %s, reads an X program again: one whose thread called execve runs on (X, then running) and is alive', async (shell) => {
    // The fabricated /proc answers each read of the stat file from a file of its own, counted by
    // the script's shell (`stat.1`, `stat.2`): X first, then the running program — as a live
    // program whose non-main thread calls execve shows for a moment; X then gone (a reaped
    // program's pid freed between the reads) is gone.
    const root = mkdtempSync(join(tmpdir(), 'ptykit-proc-'))
    const fabricated = shellConnection(shell)
    const connection = {
      run: (script: string, timeoutMs: number) =>
        fabricated.run(script.replaceAll('/proc/$p/stat', '/proc/$p/stat.$((reads = reads + 1))').replaceAll('/proc/', `${root}/`), timeoutMs),
    } as unknown as SshConnection
    try {
      mkdirSync(join(root, 'sys/kernel/random'), { recursive: true })
      writeFileSync(join(root, 'sys/kernel/random/boot_id'), `${BOOT_ID}\n`)
      // A /proc that has `self`: a stat file missing there proves the process gone.
      mkdirSync(join(root, 'self'))
      const line = (pid: number, state: string, threads: number) => `${pid} (prog) ${state} 1 ${pid} ${pid} 34817 ${pid} 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 777\n`
      const cases = [
        { first: 'X', again: 'R', alive: true },
        { first: 'X', again: 'X', alive: false },
        { first: 'X', again: 'Z', alive: false },
        { first: 'X', again: null, alive: false },
      ]
      for (const [i, { first, again, alive }] of cases.entries()) {
        const pid = 4100 + i
        mkdirSync(join(root, String(pid)))
        writeFileSync(join(root, String(pid), 'stat.1'), line(pid, first, 0))
        if (again !== null) writeFileSync(join(root, String(pid), 'stat.2'), line(pid, again, 1))
        expect({ first, again, alive: (await probeRemotePids(connection, [{ pid, startTime: '777', bootId: BOOT_ID }], SCRIPT_BUDGET_MS))[0] }).toEqual({ first, again, alive })
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it.each(['/bin/sh', '/bin/bash'])('inspects with %s: the working directory, unknown (never a wrong path) once it was deleted, and the children', async (shell) => {
    const connection = shellConnection(shell)
    const dir = mkdtempSync(join(tmpdir(), 'ptykit-cwd-'))
    const program = spawn('/bin/sh', ['-c', 'sleep 60 & wait'], { cwd: dir, detached: true, stdio: 'ignore' })
    children.push(processIdentity(program.pid!))
    await waitFor(() => (readFileSync(`/proc/${program.pid}/task/${program.pid}/children`, 'utf8').trim() !== '' ? true : undefined), 'the child')
    // No terminal: no foreground group, so the program's own directory.
    expect(await inspectRemoteProcess(connection, markerOf(program.pid!), SCRIPT_BUDGET_MS)).toEqual({ cwd: dir, leaderCwd: dir, foreground: null, hasChildren: true })
    rmSync(dir, { recursive: true })
    // Before the check: bash's `cd -P` into a deleted directory left `$PWD` at /proc/<pid>/cwd.
    expect(await inspectRemoteProcess(connection, markerOf(program.pid!), SCRIPT_BUDGET_MS)).toEqual({ cwd: null, leaderCwd: null, foreground: null, hasChildren: true })
  })

  it.each(['/bin/sh', '/bin/bash'])('sweeps with %s: every member of the session and group is found and signalled, also after the leader died', async (shell) => {
    const connection = shellConnection(shell)
    // A session leader (detached: setsid) whose background child ignores the hang-up it dies of.
    const leader = spawn('/bin/sh', ['-c', `sh -c "trap '' HUP; exec sleep 60" & echo $!; wait`], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
    children.push(processIdentity(leader.pid!))
    let out = ''
    leader.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const member = await waitFor(() => (/^\d+\n/.test(out) ? Number(out.trim()) : undefined), 'the member')
    await waitFor(() => (readFileSync(`/proc/${member}/comm`, 'utf8').trim() === 'sleep' ? true : undefined), 'the member to run sleep')
    const marker = markerOf(leader.pid!)
    const memberStart = markerOf(member).startTime!
    // A look signals nothing; a marker of another boot, or a pid now owned by another start time, looks up nothing.
    expect(await sweepRemoteSessions(connection, [{ marker, signal: null }, { marker: markerOf(leader.pid!, OTHER_BOOT_ID), signal: 'KILL' }, { marker: { ...marker, startTime: '1' }, signal: 'KILL' }], SCRIPT_BUDGET_MS)).toEqual([
      { survivors: [{ pid: member, startTime: memberStart }] },
      'unobservable',
      { survivors: [] },
    ])
    expect(isAlive(leader.pid!) && isAlive(member)).toBe(true)
    // HUP: the leader dies of it, the member ignores it.
    expect(await sweepRemoteSessions(connection, [{ marker, signal: 'HUP' }], SCRIPT_BUDGET_MS)).toEqual([{ survivors: [{ pid: member, startTime: memberStart }] }])
    await waitFor(() => (isAlive(leader.pid!) ? undefined : true), 'the leader to die of HUP')
    expect(isAlive(member)).toBe(true)
    // The leader gone, its session id lives on in the member: found, and killed.
    expect(await sweepRemoteSessions(connection, [{ marker, signal: 'KILL' }], SCRIPT_BUDGET_MS)).toEqual([{ survivors: [{ pid: member, startTime: memberStart }] }])
    await waitFor(() => (isAlive(member) ? undefined : true), 'the member to die of KILL')
    expect(await sweepRemoteSessions(connection, [{ marker, signal: null }], SCRIPT_BUDGET_MS)).toEqual([{ survivors: [] }])
  })

  it.each(['/bin/sh', '/bin/bash'])('sweeps with %s a fabricated /proc: members by session or group, the dead left out (X read twice, a one-thread zombie), pid 1 never', async (shell) => {
    const root = mkdtempSync(join(tmpdir(), 'ptykit-proc-'))
    const fabricated = shellConnection(shell)
    const killed: string[] = []
    // Each read of a process's stat file in the pass reads a file of its own (`stat.1`, `stat.2`),
    // counted in a file beside it; `kill` is recorded, not sent.
    const connection = {
      run: (script: string, timeoutMs: number) =>
        fabricated.run(
          `kill() { echo "kill $*" >>${root}/kills; }\n` +
            `nextstat() { n=$(cat "$1/reads" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"$1/reads"; echo "$1/stat.$n"; }\n` +
            script.replaceAll('/proc/$p/stat', '/proc/$p/stat.1').replaceAll('<$d/stat', '<$(nextstat $d)').replaceAll('/proc/', `${root}/`),
          timeoutMs,
        ),
    } as unknown as SshConnection
    try {
      mkdirSync(join(root, 'sys/kernel/random'), { recursive: true })
      mkdirSync(join(root, 'self'))
      writeFileSync(join(root, 'self/stat'), '3 (sh) R 1 3 3 0 -1\n')
      writeFileSync(join(root, 'sys/kernel/random/boot_id'), `${BOOT_ID}\n`)
      const line = (pid: number, state: string, pgrp: number, session: number, threads: number) =>
        `${pid} (p r) ${state} 1 ${pgrp} ${session} 34817 ${pgrp} 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 ${pid}00\n`
      const procs: Array<[number, string[]]> = [
        [500, [line(500, 'S', 500, 500, 1)]], // the leader
        [501, [line(501, 'S', 500, 500, 1)]], // its group
        [502, [line(502, 'S', 502, 500, 1)]], // a job in a group of its own
        [503, [line(503, 'Z', 503, 500, 1)]], // dead: a one-thread zombie
        [504, [line(504, 'Z', 504, 500, 3)]], // alive: its main thread exited, others run
        [505, [line(505, 'X', 505, 500, 0)]], // dead: X, then gone
        [506, [line(506, 'X', 506, 500, 0), line(506, 'X', 506, 500, 0)]], // dead: X twice
        [507, [line(507, 'X', 507, 500, 0), line(507, 'R', 507, 500, 1)]], // alive: X, then running (execve by a thread)
        [508, [line(508, 'S', 508, 508, 1)]], // another session
        [1, [line(1, 'S', 500, 500, 1)]], // never pid 1
      ]
      for (const [pid, reads] of procs) {
        mkdirSync(join(root, String(pid)))
        reads.forEach((text, i) => writeFileSync(join(root, String(pid), `stat.${i + 1}`), text))
      }
      const answers = await sweepRemoteSessions(connection, [{ marker: { pid: 500, startTime: '50000', bootId: BOOT_ID }, signal: 'TERM' }], SCRIPT_BUDGET_MS)
      expect(answers).toEqual([{ survivors: [501, 502, 504, 507].map((pid) => ({ pid, startTime: `${pid}00` })) }])
      killed.push(...readFileSync(join(root, 'kills'), 'utf8').trim().split('\n'))
      expect(killed).toEqual(['kill -s TERM -- -500', 'kill -s TERM 500', 'kill -s TERM 501', 'kill -s TERM 502', 'kill -s TERM 504', 'kill -s TERM 507'])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('remote /proc scripts: abandoned launches by nonce', () => {
  /** Live local processes whose environment holds `PTYKIT_SSH_LAUNCH=<value>` exactly. */
  function holders(value: string): number[] {
    const found: number[] = []
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      try {
        if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`PTYKIT_SSH_LAUNCH=${value}`) && isAlive(Number(name))) found.push(Number(name))
      } catch {
        // Gone meanwhile.
      }
    }
    return found
  }
  const nonce = (): string => randomBytes(8).toString('hex')
  /** `program` run as a launch runs it: in a session of its own, under `<nonce>`, then `<nonce>:$$`. */
  function startLaunch(n: string, program: string): number {
    const inner = `export PTYKIT_SSH_LAUNCH=${n}:$$; exec /bin/sh -c '${program}'`
    const child = spawn('/usr/bin/env', [`PTYKIT_SSH_LAUNCH=${n}`, '/bin/sh', '-c', inner], { detached: true, stdio: 'ignore' })
    children.push(processIdentity(child.pid!))
    return child.pid!
  }

  it.each(['/bin/sh', '/bin/bash'])("with %s, kills the launch's session and group; a holder in a session of its own (setsid) is left alone", async (shell) => {
    const n = nonce()
    const leader = startLaunch(n, 'sleep 60 & setsid sleep 61 & exec sleep 62')
    // Until the daemon has called setsid and exec'd its sleep, it is still in the launch's session.
    const isDaemon = (pid: number): boolean => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1') === 'sleep\x0061\x00' && procRow(pid)?.sid === pid
      } catch {
        return false
      }
    }
    const all = await waitFor(() => {
      const found = holders(`${n}:${leader}`)
      return found.length === 3 && found.some(isDaemon) ? found : undefined
    }, 'the launch and its children, the daemon in a session of its own')
    const daemon = all.find(isDaemon)!
    children.push(processIdentity(daemon))
    const look = await findLaunchesByNonce(shellConnection(shell), [n], 'KILL', SCRIPT_BUDGET_MS)
    expect(look === 'unobservable' || look === null ? look : look.get(n)?.signalled.map(({ pid }) => pid).sort()).toEqual(all.filter((pid) => pid !== daemon).sort())
    expect(look !== null && look !== 'unobservable' && look.get(n)?.leftAlone.map(({ pid }) => pid)).toEqual([daemon])
    await waitFor(() => (all.every((pid) => pid === daemon || !isAlive(pid)) ? true : undefined), 'the session killed')
    expect(isAlive(daemon)).toBe(true)
    // Its session is gone: a look now finds the daemon only, and leaves it alone.
    const again = await findLaunchesByNonce(shellConnection(shell), [n], 'KILL', SCRIPT_BUDGET_MS)
    expect(again).toEqual(new Map([[n, { signalled: [], leftAlone: [expect.objectContaining({ pid: daemon })], unreachable: false }]]))
  })

  it.each(['/bin/sh', '/bin/bash'])('with %s, a holder whose session cannot be told, or whose named pid another process owns: seen, nothing signalled', async (shell) => {
    // The bare nonce in a process that leads no session (here: of this test's session).
    const bare = nonce()
    const orphan = spawn('/usr/bin/env', [`PTYKIT_SSH_LAUNCH=${bare}`, 'sleep', '60'], { stdio: 'ignore' })
    children.push(processIdentity(orphan.pid!))
    // `<nonce>:<X>` where pid X is an unrelated program (the launch's pid reused).
    const unrelated = startSleeper()
    const reused = nonce()
    const holder = spawn('/usr/bin/env', [`PTYKIT_SSH_LAUNCH=${reused}:${unrelated}`, 'sleep', '60'], { detached: true, stdio: 'ignore' })
    children.push(processIdentity(holder.pid!))
    await waitFor(() => (holders(bare).length === 1 && holders(`${reused}:${unrelated}`).length === 1 ? true : undefined), 'the holders')
    const look = await findLaunchesByNonce(shellConnection(shell), [bare, reused], 'KILL', SCRIPT_BUDGET_MS)
    expect(look).toEqual(
      new Map([
        [bare, { signalled: [], leftAlone: [expect.objectContaining({ pid: orphan.pid })], unreachable: true }],
        [reused, { signalled: [], leftAlone: [expect.objectContaining({ pid: holder.pid })], unreachable: true }],
      ]),
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect([isAlive(orphan.pid!), isAlive(unrelated), isAlive(holder.pid!)]).toEqual([true, true, true])
  })

  it('a grep that refuses -a, -o, -H or -E: cannot see (unobservable), not "found nothing"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ptykit-grep-'))
    try {
      writeFileSync(join(dir, 'grep'), "#!/bin/sh\necho 'grep: unrecognized option' >&2\nexit 2\n")
      chmodSync(join(dir, 'grep'), 0o755)
      const connection = { run: (script: string, timeoutMs: number) => localShell.run(`PATH='${dir}':$PATH\n${script}`, timeoutMs) } as unknown as SshConnection
      expect(await findLaunchesByNonce(connection, [nonce()], 'KILL', SCRIPT_BUDGET_MS)).toBe('unobservable')
      expect(await findLaunchesByNonce(localShell, [nonce()], 'KILL', SCRIPT_BUDGET_MS)).toEqual(new Map([[expect.any(String), { signalled: [], leftAlone: [], unreachable: false }]]))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
