import { readdirSync, readlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createNodePtyProvider } from 'ptykit/node-pty'
const procFds = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).filter((t) => t.startsWith('/proc/')).length
const p = createNodePtyProvider()
const pids: number[] = []
for (let i = 0; i < 20; i++) pids.push((await p.spawn({ file: '/bin/sleep', args: ['600'] })).pid!)
for (const ms of [0, 50, 500, 2000]) { await sleep(ms); console.log(`+${ms}ms: ${procFds()} /proc fds`) }
await p.dispose(); process.exit(0)
