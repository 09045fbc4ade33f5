// Drives reader.c (see README.md): alternates, in each pair, the kernel loop
// (bench/kernel-pty-read.py), the native reader thread in three modes, and raw node-pty's bytes
// path, each reading the same flood as the throughput figure; prints each sample and the medians
// of the per-pair ratios to the kernel loop. Usage: node run.cjs [MB] [pairs]
'use strict'
const { execFileSync } = require('node:child_process')
const path = require('node:path')
const repo = path.resolve(__dirname, '../../..')
const pty = require(path.join(repo, 'node_modules/node-pty'))
const reader = require(process.env.READER ?? '/tmp/ptykit-native-reader.node')

const MB = 1024 * 1024
const bytes = Number(process.argv[2] ?? 100) * MB
const pairs = Number(process.argv[3] ?? 8)
const flood = ['-c', `head -c ${bytes} /dev/zero | tr '\\0' a`]
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const sample = (got, t0, last, cpu, reads) => ({ mbps: got / MB / ((last - t0) / 1000), cpuMsPerMB: cpu / (got / MB), bytesPerWake: got / reads, got })

function kernel() {
  const out = execFileSync('python3', [path.join(repo, 'bench/kernel-pty-read.py'), String(bytes)]).toString()
  const k = JSON.parse(out.trim().split('\n').pop())
  return { mbps: k.bytes / MB / k.seconds, cpuMsPerMB: (k.cpuSeconds * 1000) / (k.bytes / MB), bytesPerWake: k.bytes / k.reads, got: k.bytes }
}

/** node-pty spawns and owns the fd; its socket is stopped for good so that only the thread reads. */
function native(blocking, pull) {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const c0 = cpuMs()
    const p = pty.spawn('/bin/sh', flood, { encoding: null, cols: 80, rows: 24 })
    const handle = p._socket._handle
    handle.readStop()
    handle.readStart = () => 0
    let got = 0
    let wakes = 0
    let last = t0
    let done = false
    const take = (buf) => {
      if (buf === null) return
      got += buf.length
      wakes++
      last = performance.now()
    }
    const finish = () => {
      done = true
      const cpu = cpuMs() - c0
      p.kill()
      resolve(sample(got, t0, last, cpu, wakes))
    }
    const tick = () => {
      const x = reader.pull(h)
      if (x === null) return
      take(x.buf)
      if (x.ended) finish()
      else setTimeout(tick, 1)
    }
    const h = reader.start(p._fd, (buf, ended) => {
      take(buf)
      if (ended) {
        if (!done) finish()
      } else if (pull) setTimeout(tick, 1)
    }, blocking ? 1 : 0, pull ? 1 : 0)
  })
}

function raw() {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const c0 = cpuMs()
    const p = pty.spawn('/bin/sh', flood, { encoding: null, cols: 80, rows: 24 })
    let got = 0
    let reads = 0
    let last = t0
    p.onData((d) => {
      got += d.length
      reads++
      last = performance.now()
    })
    p.onExit(() => setTimeout(() => resolve(sample(got, t0, last, cpuMs() - c0, reads)), 50))
  })
}

const sides = {
  kernel: async () => kernel(),
  'thread, poll': () => native(false, false),
  'thread, blocking read': () => native(true, false),
  'thread, blocking read, pulled every 1 ms': () => native(true, true),
  'raw node-pty bytes': raw,
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

;(async () => {
  const ratios = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  const cpu = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  for (let pair = 0; pair < pairs; pair++) {
    const order = Object.keys(sides)
    if (pair % 2 === 1) order.reverse()
    const s = {}
    for (const name of order) {
      s[name] = await sides[name]()
      // raw node-pty loses its tail at exit (docs/reference: node-pty's tail loss); the others may not.
      if (s[name].got !== bytes && name !== 'raw node-pty bytes') throw new Error(`${name} received ${s[name].got} of ${bytes} bytes`)
    }
    for (const name of order) {
      ratios[name].push(s[name].mbps / s.kernel.mbps)
      cpu[name].push(s[name].cpuMsPerMB)
    }
    console.log(`pair ${pair}: ` + Object.keys(sides).map((n) => `${n} ${s[n].mbps.toFixed(1)} MB/s ${s[n].cpuMsPerMB.toFixed(2)} ms/MB ${Math.round(s[n].bytesPerWake)} B/wake`).join(' | '))
  }
  for (const name of Object.keys(sides)) {
    console.log(`${name.padEnd(42)} ${median(ratios[name]).toFixed(3)}× the kernel loop, ${median(cpu[name]).toFixed(2)} ms CPU per MB`)
  }
})()
