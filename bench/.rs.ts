import { readdirSync } from 'node:fs'
import { readSmallProcFile, createProcFsInspector } from '../src/node-pty/process-inspector.js'
const before = readdirSync('/proc/self/fd').length
const texts = await Promise.all(Array.from({ length: 100 }, () => readSmallProcFile(`/proc/${process.pid}/stat`)))
console.log('read', texts.filter(Boolean).length, 'fds delta', readdirSync('/proc/self/fd').length - before)
const st = await Promise.all(Array.from({ length: 100 }, () => createProcFsInspector().startTimeOf(process.pid)))
console.log('start', st[0], 'fds delta', readdirSync('/proc/self/fd').length - before)
