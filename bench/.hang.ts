import { readdirSync, readlinkSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
const n = Number(process.argv[2] ?? 100)
const c = createPtyController({ provider: createNodePtyProvider() })
const ids: string[] = []
let lastStuck = 0
for (let i = 0; i < n; i += 50) {
  ids.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => c.spawn({ file: '/bin/sleep', args: ['600'], cols: 80, rows: 24 })))).map((h) => h.id))
  await sleep(50)
  const stuck = readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).filter((t) => t.startsWith('/proc/'))
  if (ids.length % 100 === 0 || stuck.length !== lastStuck) { console.log(`after ${ids.length}: ${stuck.length} /proc fds open, e.g. ${stuck.slice(0, 3).join(' ')}`); lastStuck = stuck.length }
}
await sleep(3000)
console.log('after 3 s idle:', readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).filter((t) => t.startsWith('/proc/')).length)
for (const t of readdirSync('/proc/self/task').slice(0, 12)) {
  let comm = '', wchan = '', stat = '', sys = ''
  try { comm = readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); wchan = readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'); sys = readFileSync(`/proc/self/task/${t}/syscall`, 'utf8').trim().slice(0, 40) } catch {}
  console.log(t, comm, wchan, sys)
}
const m = /(\d+)\/stat/.exec(readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).find((t) => t.startsWith('/proc/')) ?? '')
if (m) { const pid = m[1]; try { console.log('target', pid, readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), readFileSync(`/proc/${pid}/wchan`, 'utf8'), readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').filter((l) => /State|PPid/.test(l)).join(' ')) } catch (e) { console.log('target read failed', String(e)) } }
await c.dispose(); process.exit(0)
