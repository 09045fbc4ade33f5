import { defineConfig } from 'tsup'

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
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  // Optional peers stay external: a consumer that never imports them never loads them.
  external: ['node-pty', 'fast-check', 'vitest', 'typed-emitter'],
})
