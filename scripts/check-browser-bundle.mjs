#!/usr/bin/env node
// Proves the platform-free entries stay platform-free where it matters: in a consumer's bundle.
// Bundles exit-cause, contracts and spawn for the browser and fails if a `node:` module or
// node-pty is pulled in; bundles ptykit/testing for node and fails if node-pty is pulled in
// (the fake provider must load without node-pty installed); bundles ptykit/testing/fake for node and
// fails if it pulls in vitest or fast-check (it is the entry for suites without those optional peers).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const problems = []

async function inputsOf(entry, platform, external) {
  try {
    const result = await build({
      entryPoints: [path.join(root, 'src', entry, 'index.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform,
      format: 'esm',
      external,
      logLevel: 'silent',
    })
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path))
    return { inputs: Object.keys(result.metafile.inputs), imports }
  } catch (error) {
    const messages = (error.errors ?? []).map((e) => e.text).join('; ')
    problems.push(`${entry} (${platform}): does not bundle: ${messages || error.message}`)
    return { inputs: [], imports: [] }
  }
}

for (const entry of ['exit-cause', 'contracts', 'spawn']) {
  const { inputs, imports } = await inputsOf(entry, 'browser', [])
  for (const spec of imports) {
    if (spec.startsWith('node:') || spec === 'node-pty') problems.push(`${entry} (browser): imports ${spec}`)
  }
  for (const input of inputs) {
    if (input.includes('node_modules/')) problems.push(`${entry} (browser): bundles a package: ${input}`)
  }
}

{
  const { inputs, imports } = await inputsOf('testing', 'node', ['fast-check', 'vitest', 'typed-emitter'])
  for (const spec of [...inputs, ...imports]) {
    if (spec === 'node-pty' || spec.includes('node_modules/node-pty')) problems.push(`testing: pulls in node-pty (${spec})`)
  }
}

{
  const { inputs, imports } = await inputsOf('testing/fake', 'node', ['fast-check', 'vitest', 'node-pty', 'typed-emitter'])
  for (const spec of [...inputs, ...imports]) {
    const peer = /(?:^|node_modules\/)(fast-check|vitest|node-pty)(?:\/|$)/.exec(spec)?.[1]
    if (peer !== undefined) problems.push(`testing/fake: pulls in ${peer} (${spec}); only ptykit/testing may`)
  }
}

if (problems.length > 0) {
  console.error('check-browser-bundle: platform leaks found:')
  for (const p of problems) console.error(`  - ${p}`)
  process.exit(1)
}
console.log('check-browser-bundle: OK (exit-cause, contracts, spawn bundle for the browser; testing bundles without node-pty; testing/fake without vitest and fast-check)')
