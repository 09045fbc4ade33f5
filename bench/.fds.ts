import { readdirSync, readlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
const n = Number(process.argv[2] ?? 100)
const c = createPtyController({ provider: createNodePtyProvider() })
c.on('data', (e) => c.acknowledgeData(e.ptyId, e.data.length))
const ids: string[] = []
for (let i = 0; i < n; i += 50) ids.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => c.spawn({ file: '/bin/sleep', args: ['600'], cols: 80, rows: 24 })))).map((h) => h.id))
await sleep(1000)
const res = new Map<string, number>(); for (const r of process.getActiveResourcesInfo()) res.set(r, (res.get(r) ?? 0) + 1); console.log('active', [...res])
{ const { readFile } = await import('node:fs/promises'); const t = performance.now(); await readFile('/proc/self/status'); console.log('pool latency', (performance.now() - t).toFixed(0), 'ms') }
const kinds = new Map<string, number>()
for (const fd of readdirSync('/proc/self/fd')) { let t = '?'; try { t = readlinkSync(`/proc/self/fd/${fd}`).replace(/\d+/g, 'N') } catch {} kinds.set(t, (kinds.get(t) ?? 0) + 1) }
console.log([...kinds].sort((a, b) => b[1] - a[1]).slice(0, 6))
let t0 = performance.now(); const rows = await c.listProcesses(); console.log('list', rows.length, (performance.now() - t0).toFixed(0), 'ms')
t0 = performance.now(); const ok = await Promise.all(ids.map((id) => c.stopAndWait(id))); console.log('stopall', ok.filter(Boolean).length, (performance.now() - t0).toFixed(0), 'ms')
await c.dispose(); process.exit(0)
