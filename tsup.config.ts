import { defineConfig } from 'tsup'
import type { Plugin } from 'esbuild'

/**
 * vitest is ESM-only: its CommonJS entry throws as soon as it is required. The CJS build of
 * `ptykit/testing` must still load (a Jest or plain-Node suite uses the fake provider and the
 * arbitraries), so there `vitest` resolves to a stand-in whose functions explain, when called,
 * that the conformance suite needs an ESM test file. The ESM build imports the real vitest.
 */
const vitestIsEsmOnly: Plugin = {
  name: 'vitest-is-esm-only',
  setup(build) {
    // Why not `format`: with code splitting, tsup bundles the CJS output as ESM and converts it
    // afterwards, so the output extension is the one reliable sign of the CJS build.
    const cjs = build.initialOptions.format === 'cjs' || build.initialOptions.outExtension?.['.js'] === '.cjs'
    build.onResolve({ filter: /^vitest$/ }, () =>
      cjs ? { path: 'vitest', namespace: 'vitest-cjs-stand-in' } : { path: 'vitest', external: true },
    )
    build.onLoad({ filter: /.*/, namespace: 'vitest-cjs-stand-in' }, () => ({
      loader: 'js',
      contents: `
        const unavailable = (name) => () => {
          throw new Error(
            'ptykit/testing: ' + name + '() needs vitest, which cannot be required from CommonJS. ' +
              'Run describePtyProviderConformance from a vitest test file (ESM), where it uses the real vitest.',
          )
        }
        export const describe = unavailable('describe')
        export const it = unavailable('it')
        export const expect = unavailable('expect')
      `,
    }))
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
  external: ['node-pty', 'fast-check', 'ssh2', '@xterm/headless', '@xterm/addon-serialize'],
  // vitest is resolved by the plugin below (external for ESM, a stand-in for CJS), not by tsup.
  noExternal: ['vitest'],
  esbuildPlugins: [vitestIsEsmOnly],
})
