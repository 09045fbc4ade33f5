import { readFileSync } from 'node:fs'
const s = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const meta = s.snapshot.meta, nf = meta.node_fields.length, ef = meta.edge_fields.length
const types = meta.node_types[0], etypes = meta.edge_types[0]
const ti = meta.node_fields.indexOf('type'), ni = meta.node_fields.indexOf('name'), eci = meta.node_fields.indexOf('edge_count')
const eti = meta.edge_fields.indexOf('type'), eni = meta.edge_fields.indexOf('name_or_index'), eto = meta.edge_fields.indexOf('to_node')
const N = s.nodes.length / nf
const firstEdge = new Int32Array(N + 1)
for (let i = 0, e = 0; i < N; i++) { firstEdge[i] = e; e += s.nodes[i * nf + eci] * ef }
const retainers = new Map()
for (let i = 0; i < N; i++) {
  const start = firstEdge[i], cnt = s.nodes[i * nf + eci]
  for (let k = 0; k < cnt; k++) {
    const e = start + k * ef; const to = s.edges[e + eto] / nf
    const et = etypes[s.edges[e + eti]]; if (et === 'weak') continue
    const name = et === 'element' || et === 'hidden' ? s.edges[e + eni] : s.strings[s.edges[e + eni]]
    if (!retainers.has(to)) retainers.set(to, [])
    retainers.get(to).push([i, `${et}:${name}`])
  }
}
const desc = (i) => `${types[s.nodes[i * nf + ti]]}:${String(s.strings[s.nodes[i * nf + ni]]).slice(0, 40)}`
const want = process.argv[3], depth = Number(process.argv[4] ?? 4)
const idi = meta.node_fields.indexOf('id')
const old = new Set(); if (process.argv[5]) { const a = JSON.parse(readFileSync(process.argv[5], 'utf8')); const anf = a.snapshot.meta.node_fields.length; for (let i = 0; i < a.nodes.length; i += anf) old.add(a.nodes[i + idi]) }
const chains = new Map()
let seen = 0
for (let i = 0; i < N && seen < 3000; i++) {
  if (desc(i).split(':')[0] !== want || old.has(s.nodes[i * nf + idi])) continue
  seen++
  let cur = i, chain = []
  for (let d = 0; d < depth; d++) { const r = retainers.get(cur)?.[0]; if (!r) break; chain.push(`${r[1]} <- ${desc(r[0])}`); cur = r[0] }
  const k = chain.join(' | '); chains.set(k, (chains.get(k) ?? 0) + 1)
}
for (const [k, v] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(v, k)
