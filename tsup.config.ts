import { defineConfig } from 'tsup'
import type { Plugin } from 'esbuild'
import path from 'node:path'

/**
 * `src/testing/testing-peers.ts` loads the optional peers of `ptykit/testing` (fast-check, vitest)
 * with a top-level `await import()`, so a missing one is a typed error that names it instead of
 * Node's bare "Cannot find package". CommonJS has no top-level `await`, and vitest is ESM-only (its
 * CommonJS entry throws as soon as it is required): the CJS build gets `testing-peers-cjs.ts`
 * instead, which `require`s fast-check and leaves vitest out (`describePtyProviderConformance` then
 * explains that it needs an ESM vitest test file; the conformance checks run without it).
 */
const testingPeersPerFormat: Plugin = {
  name: 'testing-peers-per-format',
  setup(build) {
    // Why not `format`: with code splitting, tsup bundles the CJS output as ESM and converts it
    // afterwards, so the output extension is the one reliable sign of the CJS build.
    const cjs = build.initialOptions.format === 'cjs' || build.initialOptions.outExtension?.['.js'] === '.cjs'
    if (!cjs) return
    build.onResolve({ filter: /^\.\/testing-peers\.js$/ }, (args) => ({ path: path.join(args.resolveDir, 'testing-peers-cjs.ts') }))
  },
}

// One entry per subpath export; ESM and CJS with their own declaration files.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'exit-cause/index': 'src/exit-cause/index.ts',
    'contracts/index': 'src/contracts/index.ts',
    'spawn/index': 'src/spawn/index.ts',
    'controller/index': 'src/controller/index.ts',
    'node-pty/index': 'src/node-pty/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/fake/index': 'src/testing/fake/index.ts',
    'ssh/index': 'src/ssh/index.ts',
    'pty-host/index': 'src/pty-host/index.ts',
    'pty-host/host-main': 'src/pty-host/host-main.ts',
  },
  format: ['esm', 'cjs'],
  // typed-emitter is a dev dependency: its declarations (types only, no JS) are inlined into ours,
  // so a consumer installs neither it nor its optional rxjs, and its CommonJS-style
  // `export default` interface cannot turn into a namespace under NodeNext/Node16 ESM.
  dts: { resolve: ['typed-emitter'] },
  // The maps embed their sources (esbuild's default `sourcesContent`): they name `../src/*.ts`, which the
  // package does not ship. check-packed-consumer.mjs fails on a source neither shipped nor embedded.
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  // Optional peers stay external: a consumer that never imports them never loads them.
  external: ['node-pty', 'fast-check', 'vitest', 'ssh2', '@xterm/headless', '@xterm/addon-serialize'],
  // How ptykit/testing loads fast-check and vitest differs between the ESM and the CJS build.
  esbuildPlugins: [testingPeersPerFormat],
})
