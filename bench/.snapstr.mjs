import { readFileSync } from 'node:fs'
const s = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const f = s.snapshot.meta.node_fields, types = s.snapshot.meta.node_types[0]
const nf = f.length, ti = f.indexOf('type'), ni = f.indexOf('name'), si = f.indexOf('self_size')
const want = process.argv[3]
const m = new Map()
for (let i = 0; i < s.nodes.length; i += nf) {
  if (types[s.nodes[i + ti]] !== want) continue
  const name = s.strings[s.nodes[i + ni]].slice(0, 50).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, 'UUID').replace(/\d+/g, 'N')
  m.set(name, (m.get(name) ?? 0) + 1)
}
for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v, JSON.stringify(k))
