import { readFileSync } from 'node:fs'
function agg(path) {
  const s = JSON.parse(readFileSync(path, 'utf8'))
  const f = s.snapshot.meta.node_fields, types = s.snapshot.meta.node_types[0]
  const nf = f.length, ti = f.indexOf('type'), ni = f.indexOf('name'), si = f.indexOf('self_size')
  const m = new Map()
  for (let i = 0; i < s.nodes.length; i += nf) {
    const type = types[s.nodes[i + ti]]
    let name = s.strings[s.nodes[i + ni]]
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '(string)'
    if (type === 'code') name = '(code)'
    if (type === 'number') name = '(number)'
    const k = `${type}:${name.slice(0, 60)}`
    const e = m.get(k) ?? [0, 0]; e[0]++; e[1] += s.nodes[i + si]; m.set(k, e)
  }
  return m
}
const a = agg(process.argv[2]), b = agg(process.argv[3]), n = Number(process.argv[4])
const rows = []
for (const [k, [c, sz]] of b) { const [c0, s0] = a.get(k) ?? [0, 0]; rows.push([k, (c - c0) / n, (sz - s0) / n]) }
rows.sort((x, y) => y[2] - x[2]); let tot = 0
for (const r of rows) tot += r[2]
console.log('total B/PTY', tot.toFixed(0))
for (const r of rows.slice(0, Number(process.argv[5] ?? 40))) console.log(`${r[2].toFixed(0).padStart(6)} B  ${r[1].toFixed(2).padStart(6)}/PTY  ${r[0]}`)
