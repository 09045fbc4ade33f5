// Temporary: per-PTY memory by slope (N1 → N2), sides raw | provider | controller; optional heap snapshot diff.
import { setTimeout as sleep } from 'node:timers/promises'
import { writeHeapSnapshot } from 'node:v8'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { pty, rawSpawnOptions } from './raw-pty.js'
const side = process.argv[2] as 'raw' | 'provider' | 'controller'
const n1 = Number(process.argv[3] ?? 100), n2 = Number(process.argv[4] ?? 300)
const snap = process.argv[5]
const gc = (globalThis as any).gc as () => void
function read() { gc(); gc(); const m = process.memoryUsage(); return { rss: m.rss, heap: m.heapUsed, ext: m.external, ab: m.arrayBuffers } }
const keep: unknown[] = []
let open: (k: number) => Promise<void>
if (side === 'raw') {
  open = async (k) => { for (let i = 0; i < k; i++) { const p = pty.spawn('/bin/sleep', ['600'], rawSpawnOptions()); p.onData(() => {}); p.onExit(() => {}); keep.push(p) } }
} else if (side === 'provider') {
  const provider = createNodePtyProvider({ drainOutputAtExit: process.env.DRAIN !== '0' }); provider.onData(() => {}); provider.onExit(() => {})
  open = async (k) => { for (let i = 0; i < k; i++) keep.push((await provider.spawn({ file: '/bin/sleep', args: ['600'], cols: 80, rows: 24 })).pid) }
} else {
  const c = createPtyController({ provider: createNodePtyProvider() }); c.on('data', (e) => c.acknowledgeData(e.ptyId, e.data.length)); c.on('exit', () => {})
  open = async (k) => { for (let i = 0; i < k; i++) keep.push((await c.spawn({ file: '/bin/sleep', args: ['600'], cols: 80, rows: 24 })).pid) }
}
await open(n1); await sleep(300)
const a = read(); if (snap) writeHeapSnapshot(`${snap}-a.heapsnapshot`)
await open(n2 - n1); await sleep(300)
const b = read(); if (snap) writeHeapSnapshot(`${snap}-b.heapsnapshot`)
const per = (k: "rss" | "heap" | "ext" | "ab") => ((b[k] - a[k]) / (n2 - n1) / 1024).toFixed(2)
console.log(JSON.stringify({ side, rss: per('rss'), heap: per('heap'), ext: per("ext"), ab: per("ab") }))
for (const p of keep) if (typeof p === 'number') try { process.kill(p, 'SIGKILL') } catch {} else (p as any).kill('SIGKILL')
process.exit(0)
