// Reads `strace -f -tt` traces of `bench/strace-spawn.ts` and prints syscalls per spawn cycle, by
// phase and by thread kind, side by side (the first trace is the baseline; the rest add a diff
// column). Phases, cut by the script's marks and the PTY child's own end in the trace:
//   spawn → first byte | first byte → child's death | child's death → exit event | exit → next spawn
// Threads: `main` (the event loop's thread, the first pid of the trace) and `other` (libuv's
// thread pool, node-pty's waitpid thread; the PTY children themselves are not counted).
import { readFileSync } from 'node:fs'

const PHASES = ['spawn→first-byte', 'first-byte→death', 'death→exit', 'exit→next']
const LINE = /^(\d+)\s+(\d\d):(\d\d):(\d\d\.\d+)\s+(.*)$/

function parse(path) {
  const lines = readFileSync(path, 'utf8').split('\n')
  const events = []
  let mainPid = null
  const childPids = new Set()
  const deaths = new Map()
  for (const line of lines) {
    const m = LINE.exec(line)
    if (m === null) continue
    const pid = Number(m[1])
    mainPid ??= pid
    const t = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4])
    const rest = m[5]
    const mark = /"\/ptykit-strace-mark\/\w+\/(-?\d+)\/([\w-]+)"/.exec(rest)
    if (mark !== null && !rest.startsWith('<...')) {
      events.push({ kind: 'mark', t, i: Number(mark[1]), moment: mark[2] })
      continue
    }
    if (rest.startsWith('+++ exited') || rest.startsWith('+++ killed')) {
      deaths.set(pid, t)
      continue
    }
    if (rest.startsWith('---')) continue
    // A forked child: it execs (threads never do).
    if (rest.startsWith('execve(') && pid !== mainPid) childPids.add(pid)
    // Count a call once: at its start (an `<unfinished ...>` start, or a whole line), not at its `<... resumed>` end.
    if (rest.startsWith('<...')) continue
    const call = /^([a-z_0-9]+)\(/.exec(rest)
    if (call === null) continue
    events.push({ kind: 'call', t, pid, name: call[1] })
  }
  return { events, mainPid, childPids, deaths }
}

function summarize(path) {
  const { events, mainPid, childPids, deaths } = parse(path)
  // Cycle boundaries from the marks.
  const cycles = new Map()
  for (const e of events) {
    if (e.kind !== 'mark' || e.i < 0) continue
    const c = cycles.get(e.i) ?? {}
    c[e.moment] ??= e.t
    cycles.set(e.i, c)
  }
  // The child's death: the first PTY child (an exec'ing pid) that ends after the cycle's first byte.
  const deathTimes = [...deaths].filter(([pid]) => childPids.has(pid)).map(([, t]) => t).sort((a, b) => a - b)
  const ids = [...cycles.keys()].sort((a, b) => a - b)
  const bounds = ids.map((i, k) => {
    const c = cycles.get(i)
    const death = deathTimes.find((t) => t >= c['first-byte'] && t <= c.exit) ?? c.exit
    const next = k + 1 < ids.length ? cycles.get(ids[k + 1]).spawn : c.exit
    return [c.spawn, c['first-byte'], death, c.exit, next]
  })
  const counts = {}
  for (const e of events) {
    if (e.kind !== 'call' || childPids.has(e.pid)) continue
    const thread = e.pid === mainPid ? 'main' : 'other'
    for (const b of bounds) {
      for (let p = 0; p < PHASES.length; p++) {
        if (e.t >= b[p] && e.t < b[p + 1]) {
          const key = `${PHASES[p]}|${thread}|${e.name}`
          counts[key] = (counts[key] ?? 0) + 1
        }
      }
    }
  }
  return { counts, cycles: ids.length }
}

const paths = process.argv.slice(2)
const sums = paths.map(summarize)
const keys = [...new Set(sums.flatMap((s) => Object.keys(s.counts)))].sort((a, b) => {
  const [pa, ta, na] = a.split('|')
  const [pb, tb, nb] = b.split('|')
  return PHASES.indexOf(pa) - PHASES.indexOf(pb) || ta.localeCompare(tb) || na.localeCompare(nb)
})
const per = (s, k) => (s.counts[k] ?? 0) / s.cycles
const fmt = (x) => x.toFixed(2).padStart(7)
console.log(`cycles: ${sums.map((s) => s.cycles).join(', ')}   (syscalls per cycle)`)
console.log(`${'phase'.padEnd(18)} ${'thread'.padEnd(6)} ${'syscall'.padEnd(18)} ${paths.map((_, i) => `  #${i}`.padStart(7)).join(' ')} ${paths.slice(1).map((_, i) => ` #${i + 1}-#0`.padStart(7)).join(' ')}`)
let lastPhase = null
const totals = {}
for (const k of keys) {
  const [phase, thread, name] = k.split('|')
  const values = sums.map((s) => per(s, k))
  if (values.every((v) => v < 0.05)) continue
  if (phase !== lastPhase && lastPhase !== null) console.log('')
  lastPhase = phase
  console.log(`${phase.padEnd(18)} ${thread.padEnd(6)} ${name.padEnd(18)} ${values.map(fmt).join(' ')} ${values.slice(1).map((v) => fmt(v - values[0])).join(' ')}`)
}
console.log('')
for (const phase of PHASES) {
  for (const thread of ['main', 'other']) {
    const values = sums.map((s) => keys.filter((k) => k.startsWith(`${phase}|${thread}|`)).reduce((a, k) => a + per(s, k), 0))
    console.log(`${'total'.padEnd(18)} ${`${phase} ${thread}`.padEnd(25)} ${values.map(fmt).join(' ')} ${values.slice(1).map((v) => fmt(v - values[0])).join(' ')}`)
  }
}
for (const thread of ['main', 'other']) {
  const values = sums.map((s) => keys.filter((k) => k.split('|')[1] === thread).reduce((a, k) => a + per(s, k), 0))
  console.log(`${'total'.padEnd(18)} ${`whole cycle ${thread}`.padEnd(25)} ${values.map(fmt).join(' ')} ${values.slice(1).map((v) => fmt(v - values[0])).join(' ')}`)
}
